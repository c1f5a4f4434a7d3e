"""OpenRLHF glue: its remote-reward request in, its reward dict out.

One place for the conversion, used by both ``POST /get_reward`` (``adapters/serve/reward_server.py``)
and the file ``rewardsmith export openrlhf`` writes (loaded by OpenRLHF as
``--reward.remote_url reward_func.py``), so the two can never disagree. With ``--url`` the exported
file is instead a client of a running server (:func:`export_client_source`), which sends the
server's bearer token: OpenRLHF's own HTTP client sends no headers.

Contract matched: OpenRLHF 0.11.2 (``openrlhf/utils/agent.py``, ``SingleTurnAgentExecutor``;
``trainer/ppo_utils/samples_generator.py``; ``trainer/ray/ppo_actor.py``), read from its wheel:

* request: ``{"query": [q], "prompts": [p], "labels": [l]}``, ONE query per request (per
  call of an exported ``reward_func``), where ``q`` is ``tokenizer.decode(prompt + response
  tokens, skip_special_tokens=False)``: the prompt text (chat template applied, cut from the
  left to fit ``max_len`` when too long) followed by the response, special tokens kept;
  ``p`` is the full templated prompt and ``l`` the dataset's ``--data.label_key`` column.
* response: ``{"rewards": [N], "scores": [N], "extra_logs": {key: [N]}}``. ``rewards``
  feed the advantage; ``scores`` are the 0-1 signal for dynamic filtering; each
  ``extra_logs`` key becomes a per-sample ``info`` entry that OpenRLHF merges across samples
  (so the key set must be the same in every answer: it is fixed per verifier here) and logs
  as a plain mean over each micro-batch (so a NaN would poison the whole step's value).
* failures: the client swallows any exception from the reward call into a log line and
  leaves the row's reward ``None``; it cannot take a missing reward, so ``on_error`` here is
  ``zero`` or ``raise`` (:mod:`rewardsmith.adapters.on_error`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.adapters.fields import DEFAULT_LABEL_FIELD, label_fields
from rewardsmith.adapters.health import InputHealth
from rewardsmith.adapters.on_error import NO_MISSING, OnError, apply_on_error, check_on_error, raise_on_errors
from rewardsmith.verifiers import STATUSES, Sample, Verdict, Verifier
from rewardsmith.verifiers.core import COMPLETION_ERROR

CONSUMER = "OpenRLHF"

# End-of-turn / padding tokens a decoded query ends with; a strict format reward would
# otherwise fail every completion on them.
_TRAILING_SPECIAL = re.compile(
    r"(?:\s*(?:<\|(?:im_end|endoftext|eot_id|end_of_text|end|eos)\|>|</s>|<eos>|<end_of_turn>|<\|end▁of▁sentence\|>))+\s*$"
)

_LEADING_SPECIAL = re.compile(r"^(?:\s*(?:<\|[^|<>\s]{1,40}\|>|<s>|<bos>|<BOS>|\[BOS\]|\[CLS\]))*")
MIN_PROMPT_OVERLAP = 32  # characters of a truncated prompt's tail the query must start with


def split_response(query: str, prompt: str | None) -> str | None:
    """The response part of an OpenRLHF query (prompt + response, special tokens kept), or
    None when it cannot be told apart from the prompt.

    The query starts with the prompt (after any special tokens the decoder put back), or,
    when OpenRLHF cut a long prompt to ``prompt_max_len``, with a tail of it: the response is
    what follows the longest tail of the prompt the query *starts* with. Anchored at the
    start, so a response that repeats the prompt cannot move the split; and a query that
    starts with no tail of the prompt is None, never scored whole (the prompt's own numbers
    would then be graded as the answer).
    """
    if not prompt:
        return _TRAILING_SPECIAL.sub("", query)
    lead = _LEADING_SPECIAL.match(query)
    bodies = [query] if lead is None or not lead.group(0) else [query, query[lead.end():]]
    for body in bodies:
        if body.startswith(prompt):
            return _TRAILING_SPECIAL.sub("", body[len(prompt):])
    shortest = min(len(prompt), MIN_PROMPT_OVERLAP)
    for body in bodies:
        for start in range(1, len(prompt) - shortest + 1):  # longest tail first
            if body.startswith(prompt[start:]):
                return _TRAILING_SPECIAL.sub("", body[len(prompt) - start:])
    return None


def to_samples(
    queries: Sequence[str],
    prompts: Sequence[str] | None,
    labels: Sequence[Any] | None,
    label_field: str = DEFAULT_LABEL_FIELD,
) -> list[Sample]:
    """Samples from OpenRLHF's three lists; each label becomes fields as
    :func:`~rewardsmith.adapters.fields.label_fields` says (a JSON object is spread, so one
    column can carry the answer and a routing field; anything else fills ``label_field``).

    A query whose response cannot be told apart from its prompt gets no completion, which the
    verifiers score ``invalid_input`` (``missing_field="completion"``) with the reason.
    """
    out = []
    for i, query in enumerate(queries):
        prompt = prompts[i] if prompts is not None else ""
        fields = label_fields(labels[i] if labels is not None else None, label_field)
        response = split_response(query, prompt)
        if response is None:
            fields[COMPLETION_ERROR] = ("the query does not start with the prompt or a tail of it, so the response "
                                        "cannot be told apart from the prompt; was the prompt changed after "
                                        "OpenRLHF templated it?")
        out.append(Sample(prompt=prompt or "", completion=response, fields=fields))  # type: ignore[arg-type]
    return out


# ---------------------------------------------------------------- extra_logs


def component_paths(verifier: Verifier) -> list[str]:
    """Dotted paths of every part inside ``verifier``, depth first, named as
    :meth:`Verdict.walk` names the part verdicts (``gsm8k``, ``gsm8k.math``, ``gsm8k.format``).

    Read from the verifier (:meth:`Verifier.walk`), not from verdicts, so the set is the same
    for every batch.
    """
    return [path for path, _ in verifier.walk() if path]


def log_keys(verifier: Verifier) -> list[str]:
    """The fixed ``extra_logs`` keys for this verifier (the same in every answer).

    A row has a value for ``correct`` or a component only sometimes (a route part it did not
    take, a gate's ``then`` not reached, an ``error`` part, no notion of correctness). OpenRLHF
    logs plain means, so neither a 0 (an invented score) nor a NaN (poisons the mean) can stand
    for "absent": each such key comes with ``<key>/present`` (1 where the row has it), and the
    value is 0 where it does not. Mean over the rows that have it = mean(key) / mean(key/present).
    """
    optional = ["correct", *(f"component/{p}" for p in component_paths(verifier))]
    return [*(f"status_{s}" for s in STATUSES), *(k for key in optional for k in (key, f"{key}/present"))]


def row_logs(verdict: Verdict, paths: Sequence[str]) -> dict[str, float]:
    """One row's ``extra_logs`` values, for the keys :func:`log_keys` lists."""
    row = {"correct": 1.0 if verdict.correct else 0.0, "correct/present": float(verdict.correct is not None)}
    for s in STATUSES:
        row[f"status_{s}"] = float(verdict.status == s)
    parts = dict(verdict.walk())
    for path in paths:
        part = parts.get(path)
        present = part is not None and part.status != "error"  # an error part has no honest score
        row[f"component/{path}"] = float(part.score) if present and part is not None else 0.0
        row[f"component/{path}/present"] = float(present)
    return row


def reward_dict(verdicts: Sequence[Verdict], verifier: Verifier, on_error: str = "zero") -> dict[str, Any]:
    """OpenRLHF's reward dict (plain lists) from verdicts.

    ``on_error="zero"``: an error verdict's reward is 0 and it is counted in
    ``extra_logs["status_error"]``; ``"raise"``: :class:`~rewardsmith.adapters.on_error.RewardError`
    (``none`` is refused: OpenRLHF cannot take a missing reward).
    """
    policy = check_on_error(on_error, NO_MISSING, CONSUMER)
    raise_on_errors(verdicts, policy, CONSUMER)
    rewards = [apply_on_error(v, policy, CONSUMER) for v in verdicts]
    paths = component_paths(verifier)
    logs: dict[str, list[float]] = {key: [] for key in log_keys(verifier)}
    for verdict in verdicts:
        for key, value in row_logs(verdict, paths).items():
            logs[key].append(value)
    return {"rewards": rewards, "scores": [_score01(v) for v in verdicts], "extra_logs": logs}


def _score01(verdict: Verdict) -> float:
    # Dynamic filtering wants 0/1 correctness; a reward without a notion of correct
    # falls back to its score clipped to [0, 1].
    if verdict.status == "error":
        return 0.0
    if verdict.correct is not None:
        return 1.0 if verdict.correct else 0.0
    return min(1.0, max(0.0, float(verdict.score)))


# ---------------------------------------------------------------- input health

# OpenRLHF 0.11.2 sends one query per request: a warning needs more rows than that to judge.
HEALTH_MIN_ROWS = 16


def label_fix(label_field: str = DEFAULT_LABEL_FIELD) -> Callable[[str | None], str]:
    """What to do when rows lack ``field``, said in OpenRLHF's and rewardsmith's flags."""

    def fix(field: str | None) -> str:
        if field == "completion":
            return ("the response could not be found after the prompt in OpenRLHF's query (see the verdicts' "
                    "feedback); the prompt must reach the reward exactly as OpenRLHF templated it")
        if field is None or field == label_field:
            return (f"OpenRLHF's labels fill the {label_field!r} field: pass --data.label_key <column with the "
                    f"{label_field}> to OpenRLHF (or --label-field on rewardsmith serve/export if the label "
                    "is another field)")
        return (f"OpenRLHF sends only query, prompts and labels: put {field!r} in the label as a JSON object "
                f'(e.g. {{"{label_field}": ..., "{field}": ...}}) through --data.label_key, or use '
                f"--label-field {field} if the label is the {field}")

    return fix


def openrlhf_health(label_field: str = DEFAULT_LABEL_FIELD, adapter: str = "rewardsmith (OpenRLHF)",
                    emit: Callable[[str], None] | None = None) -> InputHealth:
    """The input-health check for one OpenRLHF reward service or exported ``reward_func`` (one row a
    request: judged over at least ``HEALTH_MIN_ROWS`` rows)."""
    return InputHealth(adapter, label_fix(label_field), emit=emit, min_rows=HEALTH_MIN_ROWS)


# ---------------------------------------------------------------- in-process reward_func


def as_tensors(result: dict[str, Any]) -> dict[str, Any]:
    """Lists to torch tensors, what OpenRLHF's in-process ``reward_func`` must return."""
    import torch

    return {
        "rewards": torch.tensor(result["rewards"], dtype=torch.float),
        "scores": torch.tensor(result["scores"], dtype=torch.float),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float) for k, v in result["extra_logs"].items()},
    }


def score_queries(
    verifier: Verifier,
    queries: Sequence[str],
    prompts: Sequence[str] | None,
    labels: Sequence[Any] | None,
    label_field: str = DEFAULT_LABEL_FIELD,
    on_error: str = "zero",
    health: InputHealth | None = None,
) -> dict[str, Any]:
    """The whole OpenRLHF round trip in one call (plain lists)."""
    policy: OnError = check_on_error(on_error, NO_MISSING, CONSUMER)
    verdicts = verifier.verify_batch(to_samples(queries, prompts, labels, label_field))
    if health is not None:
        health.check(verdicts)
    return reward_dict(verdicts, verifier, policy)


EXPORT_TEMPLATE = '''\
"""OpenRLHF reward function generated by `rewardsmith export openrlhf`.

Use with (OpenRLHF 0.11.2): --reward.remote_url {filename} --data.label_key <label column>
The reward spec is embedded below and built once, when OpenRLHF loads this file. Labels fill
the {label_field!r} field (a JSON object label is spread into fields); status=error verdicts:
on_error={on_error!r}.
"""

import json

from rewardsmith.adapters.trainers.openrlhf import as_tensors, openrlhf_health, score_queries
from rewardsmith.verifiers import build

SPEC = json.loads({spec_json!r})
LABEL_FIELD = {label_field!r}
ON_ERROR = {on_error!r}
_VERIFIER = build(SPEC)
_HEALTH = openrlhf_health(LABEL_FIELD)  # warns once in the log when most rows lack their label


def reward_func(queries, prompts, labels, **kwargs):
    """Same dict as the reward server's /get_reward, as torch tensors."""
    result = score_queries(_VERIFIER, queries, prompts, labels, LABEL_FIELD, ON_ERROR, _HEALTH)
    try:
        return as_tensors(result)
    except ImportError:  # no torch here: plain lists
        return result
'''


def export_source(spec: Any, label_field: str = DEFAULT_LABEL_FIELD, on_error: str = "zero",
                  filename: str = "reward_func.py") -> str:
    """Source of a ``reward_func.py`` for OpenRLHF embedding ``spec`` (a name, dict or loaded file)."""
    check_on_error(on_error, NO_MISSING, CONSUMER)
    return EXPORT_TEMPLATE.format(spec_json=json.dumps(spec), label_field=label_field, on_error=on_error,
                                  filename=filename)


# ---------------------------------------------------------------- a client of the reward server

CLIENT_TEMPLATE = '''\
"""OpenRLHF reward function generated by `rewardsmith export openrlhf --url`: a client of the
reward server at {url} (`rewardsmith serve`). Standard library only: the trainer's nodes need
neither rewardsmith nor the reward's dependencies.

Use with (OpenRLHF 0.11.2): --reward.remote_url {filename} --data.label_key <label column>
Each call posts OpenRLHF's rows to {url}/get_reward and returns the server's answer (torch
tensors when torch is importable). The bearer token is read at each call from {token_where};
it is not written in this file. A busy server (503) is retried after its Retry-After and an
unreachable one every second, for up to RETRY_S seconds; any other refusal raises with the
server's own message.
"""

import json
import os
import time
import urllib.error
import urllib.request

URL = {url!r}
TOKEN_FILE = {token_file!r}  # None: the environment variable TOKEN_ENV, if set
TOKEN_ENV = {token_env!r}
TIMEOUT_S = 180.0  # one request, as OpenRLHF's own client
RETRY_S = 120.0  # how long a busy or unreachable server is retried
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))  # no proxy, as OpenRLHF's client


def _token():
    if TOKEN_FILE is not None:
        with open(TOKEN_FILE, encoding="utf-8") as file:
            return file.read().strip()
    return os.environ.get(TOKEN_ENV, "").strip() or None


def _error(exc):
    text = exc.read().decode("utf-8", "replace")
    try:
        return json.loads(text).get("error", text)
    except (ValueError, AttributeError):
        return text


def _post(body):
    headers = {{"Content-Type": "application/json"}}
    token = _token()
    if token:
        headers["Authorization"] = "Bearer " + token
    give_up = time.monotonic() + RETRY_S
    while True:
        request = urllib.request.Request(URL + "/get_reward", data=body, headers=headers, method="POST")
        try:
            with _OPENER.open(request, timeout=TIMEOUT_S) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            message = _error(exc)
            if exc.code == 503 and time.monotonic() < give_up:
                try:
                    time.sleep(max(0.0, float(exc.headers.get("Retry-After", "1"))))
                except ValueError:
                    time.sleep(1.0)
                continue
            where = TOKEN_FILE if TOKEN_FILE is not None else "$" + TOKEN_ENV
            hint = f" (the token is read from {{where}})" if exc.code == 401 else ""
            raise RuntimeError(f"reward server {{URL}} answered {{exc.code}}: {{message}}{{hint}}") from None
        except (urllib.error.URLError, OSError) as exc:
            if time.monotonic() < give_up:
                time.sleep(1.0)
                continue
            raise RuntimeError(f"cannot reach the reward server at {{URL}}: {{exc}}") from None


def reward_func(queries, prompts, labels, **kwargs):
    """The server's /get_reward answer for these rows, as torch tensors (plain lists without torch)."""
    result = _post(json.dumps({{"query": list(queries), "prompts": list(prompts), "labels": list(labels)}}).encode())
    try:
        import torch
    except ImportError:
        return result
    return {{"rewards": torch.tensor(result["rewards"], dtype=torch.float),
            "scores": torch.tensor(result["scores"], dtype=torch.float),
            "extra_logs": {{k: torch.tensor(v, dtype=torch.float) for k, v in result["extra_logs"].items()}}}}
'''


def export_client_source(url: str, token_file: str | None = None, filename: str = "reward_func.py") -> str:
    """Source of a ``reward_func.py`` for OpenRLHF that posts to the reward server at ``url``, sending
    the bearer token it reads at each call from ``token_file`` (stored as an absolute path, checked
    now) or ``$REWARDSMITH_SERVER_TOKEN``. Why a file and not ``--reward.remote_url http://...``:
    OpenRLHF 0.11.2's HTTP client sends no headers, so it cannot carry a token."""
    from rewardsmith.adapters.serve.auth import TOKEN_ENV, load_token

    base = url.strip().rstrip("/")
    base = base.removesuffix("/get_reward")
    if not re.match(r"^https?://[^/\s]+(/\S*)?$", base):
        raise ValueError(f"--url {url!r} is not an http:// or https:// address, e.g. http://HOST:8000")
    if token_file is not None:
        load_token(token_file)  # unreadable, empty or unusable: said now, not at the first rollout
        token_file = str(Path(token_file).resolve())
    where = f"the file {token_file}" if token_file is not None else f"${TOKEN_ENV} (no token when it is unset)"
    return CLIENT_TEMPLATE.format(url=base, token_file=token_file, token_env=TOKEN_ENV, token_where=where,
                                  filename=filename)
