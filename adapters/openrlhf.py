"""OpenRLHF glue: its remote-reward request in, its reward dict out.

One place for the conversion, used by both ``POST /get_reward`` (``adapters/server.py``)
and the file ``rewardsmith export openrlhf`` writes (loaded by OpenRLHF as
``--reward.remote_url reward_func.py``, OpenRLHF 0.11), so the two can never disagree.

Contract matched: OpenRLHF main (``openrlhf/trainer/ppo_utils/experience_maker.py`` at
commit 89308a0, the 0.8/0.9 release line; ``examples/python/reward_func.py``):

* request: ``{"query": [...], "prompts": [...], "labels": [...]}``, where each query is
  ``tokenizer.batch_decode(prompt + response tokens, skip_special_tokens=False)``: the
  prompt text (chat template applied) followed by the response, special tokens kept;
  ``prompts`` are the templated prompts and ``labels`` the dataset's ``--data.label_key``.
* response: ``{"rewards": [N], "scores": [N], "extra_logs": {key: [N]}}``. ``rewards``
  feed the advantage; ``scores`` are the 0-1 signal for dynamic filtering; every
  ``extra_logs`` value is per sample, because OpenRLHF concatenates each key across
  requests and splits it back per sample (so the key set must be the same in every
  answer: it is fixed here, independent of the batch).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from rewardsmith.verifiers import STATUSES, Sample, Verdict, Verifier
from rewardsmith.verifiers.core import COMPLETION_ERROR

OnError = Literal["zero", "raise"]
ON_ERROR_CHOICES: tuple[str, ...] = ("zero", "raise")

# End-of-turn / padding tokens a decoded query ends with; a strict format reward would
# otherwise fail every completion on them.
_TRAILING_SPECIAL = re.compile(
    r"(?:\s*(?:<\|(?:im_end|endoftext|eot_id|end_of_text|end|eos)\|>|</s>|<eos>|<end_of_turn>|<\|end▁of▁sentence\|>))+\s*$"
)


class RewardError(RuntimeError):
    """A verdict had ``status=error`` and the policy is ``raise``."""


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
    label_field: str = "answer",
) -> list[Sample]:
    """Samples from OpenRLHF's three lists; the label goes to ``label_field``.

    A label that is a JSON object (or a dict) is spread into fields instead, so one
    dataset column can carry the answer and a routing field (``data_source``) together.
    """
    out = []
    for i, query in enumerate(queries):
        prompt = prompts[i] if prompts is not None else ""
        label = labels[i] if labels is not None else None
        fields: dict[str, Any] = {}
        if isinstance(label, str) and label.lstrip().startswith("{"):
            with contextlib.suppress(ValueError):
                label = json.loads(label)
        if isinstance(label, Mapping):
            fields.update(label)
        elif label is not None:
            fields[label_field] = label
        response = split_response(query, prompt)
        if response is None:
            fields[COMPLETION_ERROR] = ("the query does not start with the prompt or a tail of it, so the response "
                                        "cannot be told apart from the prompt; was the prompt changed after "
                                        "OpenRLHF templated it?")
        out.append(Sample(prompt=prompt or "", completion=response, fields=fields))
    return out


def log_keys(verifier: Verifier) -> list[str]:
    """The fixed ``extra_logs`` keys for this verifier (same in every answer)."""
    parts = [] if list(verifier.components()) == [verifier.name] else list(verifier.components())
    return ["correct", *(f"status_{s}" for s in STATUSES), *(f"component/{p}" for p in parts)]


def reward_dict(verdicts: Sequence[Verdict], verifier: Verifier, on_error: OnError = "zero") -> dict[str, Any]:
    """OpenRLHF's reward dict (plain lists) from verdicts.

    ``on_error="zero"``: an error verdict's reward is 0 (OpenRLHF cannot take None) and it
    is counted in ``extra_logs["status_error"]``; ``"raise"``: :class:`RewardError`.
    """
    errors = [v for v in verdicts if v.status == "error"]
    if errors and on_error == "raise":
        raise RewardError(f"{len(errors)} of {len(verdicts)} verdicts have status=error: {errors[0].feedback}")
    rewards = [0.0 if v.status == "error" else float(v.score) for v in verdicts]
    scores = [_score01(v) for v in verdicts]
    logs: dict[str, list[float]] = {key: [] for key in log_keys(verifier)}
    for v in verdicts:
        logs["correct"].append(1.0 if v.correct else 0.0)
        for s in STATUSES:
            logs[f"status_{s}"].append(1.0 if v.status == s else 0.0)
        for key in logs:
            if key.startswith("component/"):
                value = v.components.get(key.removeprefix("component/"))
                logs[key].append(0.0 if value is None else float(value))
    return {"rewards": rewards, "scores": scores, "extra_logs": logs}


def _score01(verdict: Verdict) -> float:
    # Dynamic filtering wants 0/1 correctness; a reward without a notion of correct
    # falls back to its score clipped to [0, 1].
    if verdict.status == "error":
        return 0.0
    if verdict.correct is not None:
        return 1.0 if verdict.correct else 0.0
    return min(1.0, max(0.0, float(verdict.score)))


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
    label_field: str = "answer",
    on_error: OnError = "zero",
) -> dict[str, Any]:
    """The whole OpenRLHF round trip in one call (plain lists)."""
    verdicts = verifier.verify_batch(to_samples(queries, prompts, labels, label_field))
    return reward_dict(verdicts, verifier, on_error)


EXPORT_TEMPLATE = '''\
"""OpenRLHF reward function generated by `rewardsmith export openrlhf`.

Use with (OpenRLHF 0.11): --reward.remote_url {filename} --data.label_key <label column>
The reward spec is embedded below and built once, when OpenRLHF loads this file.
"""

import json

from rewardsmith.adapters.openrlhf import as_tensors, score_queries
from rewardsmith.verifiers import build

SPEC = json.loads({spec_json!r})
LABEL_FIELD = {label_field!r}
ON_ERROR = {on_error!r}
_VERIFIER = build(SPEC)


def reward_func(queries, prompts, labels, **kwargs):
    """Same dict as the reward server's /get_reward, as torch tensors."""
    result = score_queries(_VERIFIER, queries, prompts, labels, LABEL_FIELD, ON_ERROR)
    try:
        return as_tensors(result)
    except ImportError:  # no torch here: plain lists
        return result
'''


def export_source(spec: Any, label_field: str = "answer", on_error: OnError = "zero",
                  filename: str = "reward_func.py") -> str:
    """Source of a ``reward_func.py`` for OpenRLHF embedding ``spec`` (a name, dict or loaded file)."""
    return EXPORT_TEMPLATE.format(spec_json=json.dumps(spec), label_field=label_field, on_error=on_error,
                                  filename=filename)
