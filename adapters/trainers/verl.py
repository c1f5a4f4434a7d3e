"""verl glue: rewardsmith's reward as verl's custom reward function. Checked against verl 0.9.1.

verl 0.9.1's ``main_ppo`` reads the custom reward function from ``reward.custom_reward_function``;
the top-level ``custom_reward_function`` block its configs still carry is ignored there (only the
fully-async entry point migrates it) and verl then scores with its own default scorer, silently::

    reward.custom_reward_function.path=<repo>/adapters/trainers/verl.py      # or pkg://rewardsmith.adapters.trainers.verl
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.reward=/abs/reward.yaml   # default: $REWARDSMITH_REWARD, else math
    +reward.custom_reward_function.reward_kwargs.on_error=raise            # default: $REWARDSMITH_ON_ERROR, else zero

verl's default ``naive`` reward manager then calls ``compute_score(data_source=, solution_str=,
ground_truth=, extra_info=, **reward_kwargs)`` once per sample. To score many rows through one
``verify_batch`` (what keeps the math worker pool busy), use the reward manager in
:mod:`rewardsmith.adapters.trainers.verl_manager` instead. ``compute_score_batch`` is the form older verl's
``batch`` reward manager called (0.9.1 has none).

A row becomes a sample in one place (:func:`row_sample`): the ground truth through
:func:`rewardsmith.adapters.fields.label_fields` (a dict or JSON-object string is spread into
fields, anything else is ``answer``), ``extra_info`` entries as fields, and ``data_source`` as a
field, so a ``route`` spec picks the reward per row.

Every row returns the same keys (verl stacks them into per-row arrays): ``score``, ``acc`` (1.0
correct), ``status``, ``pred`` (the extracted answer), and numeric ``error`` and ``invalid`` flags
(verl's metrics skip strings). verl cannot take a missing reward, so ``on_error`` is ``zero``
(the row scores 0.0 with ``error: 1.0``, and the first such batch logs a warning) or ``raise``
(:class:`~rewardsmith.adapters.on_error.RewardError`, which stops the run); ``none`` is refused.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.adapters import fields
from rewardsmith.adapters.health import InputHealth
from rewardsmith.adapters.on_error import NO_MISSING, OnError, apply_on_error, check_on_error, raise_on_errors
from rewardsmith.verifiers.core import Sample, Verdict, Verifier
from rewardsmith.verifiers.registry import build

DEFAULT_SPEC = "math"
ENV_SPEC = "REWARDSMITH_REWARD"
ENV_ON_ERROR = "REWARDSMITH_ON_ERROR"
EXTRA_KEYS = ("acc", "status", "pred", "error", "invalid")
# verl 0.9.1 calls compute_score once per row: judge the input's health over this many rows, so
# one row without a label among good ones does not read as "mostly invalid".
HEALTH_WINDOW = 16

logger = logging.getLogger("rewardsmith")  # the name users and tests filter warnings by
_lock = threading.Lock()
_configured: Verifier | None = None
_built: dict[str, Verifier] = {}
_errors_warned = False


def _advice(field: str | None) -> str:
    """What to change in a verl job when rows lack ``field``."""
    if field in (None, "answer"):
        return ("verl hands the reward the row's reward_model.ground_truth as the answer: have your preprocessing "
                "write reward_model={'style': 'rule', 'ground_truth': ANSWER} (a dict ground truth is spread into "
                "fields) and data_source for a route spec")
    return (f"put {field!r} in the row's ground-truth dict (reward_model.ground_truth={{{field!r}: ...}}, spread "
            f"into fields) or in its extra_info")


# One per process (verl loads this file once per reward worker); the `invalid` key per row is the metric.
HEALTH = InputHealth("verl", _advice, min_rows=HEALTH_WINDOW)


def configure(spec: str | Path | Mapping[str, Any] | Verifier | None) -> Verifier | None:
    """Use ``spec`` for every later call without a ``reward`` kwarg (``None``: back to the default)."""
    global _configured
    with _lock:
        _configured = spec if isinstance(spec, Verifier) else (build(spec) if spec is not None else None)
        return _configured


def plain_value(value: Any) -> Any:
    """Python values for verl's: numpy scalars and arrays (from parquet) and OmegaConf containers."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes | Path):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain_value(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return plain_value(value.tolist())
    if isinstance(value, Sequence):
        return [plain_value(v) for v in value]
    return value


def verifier(spec: Any = None) -> Verifier:
    """The verifier for ``spec`` (a registry name, a YAML/JSON path or a mapping), built once per
    process; ``None``: :func:`configure`'s, else ``$REWARDSMITH_REWARD``, else ``math``."""
    with _lock:
        if spec is None and _configured is not None:
            return _configured
        spec = plain_value(spec if spec is not None else os.environ.get(ENV_SPEC) or DEFAULT_SPEC)
        if isinstance(spec, Verifier):
            return spec
        key = str(spec) if isinstance(spec, str | Path) else json.dumps(spec, sort_keys=True, default=str)
        if key not in _built:
            _built[key] = build(spec)
        return _built[key]


def resolve_on_error(value: str | None = None) -> OnError:
    """``value``, else ``$REWARDSMITH_ON_ERROR``, else ``zero``; refuses ``none`` (verl has no missing reward)."""
    chosen = value if value is not None else (os.environ.get(ENV_ON_ERROR) or "zero")
    return check_on_error(str(chosen), NO_MISSING, "verl")


def row_sample(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any,
               prompt: Any = None) -> Sample:
    """One verl row as a sample: the row :func:`rewardsmith.adapters.fields.row_sample` reads, made
    of ``extra_info`` entries, then the label's fields, then ``data_source``; the prompt is the one
    given, else ``extra_info``'s."""
    row: dict[str, Any] = dict(plain_value(extra_info)) if isinstance(extra_info, Mapping) else {}
    row.update(fields.label_fields(plain_value(ground_truth)))
    if data_source is not None:
        row["data_source"] = plain_value(data_source)
    extra_prompt = row.pop("prompt", None)
    prompt = plain_value(prompt) if prompt is not None else extra_prompt
    row["prompt"] = prompt if isinstance(prompt, str | list) else ("" if prompt is None else str(prompt))
    row["completion"] = solution_str
    return fields.row_sample(row)


def result(verdict: Verdict, on_error: OnError) -> dict[str, Any]:
    """What verl gets for one row: the same keys for every row, numbers where verl aggregates."""
    extracted = verdict.detail("extracted")
    return {
        "score": apply_on_error(verdict, on_error, "verl"),
        "acc": 1.0 if verdict.correct else 0.0,
        "status": verdict.status,
        "pred": "" if extracted is None else str(extracted),
        "error": 1.0 if verdict.status == "error" else 0.0,
        "invalid": 1.0 if verdict.status == "invalid_input" else 0.0,
    }


def _watch(verdicts: Sequence[Verdict], on_error: OnError) -> None:
    """Feed the input-health check; say once when errors are being scored 0.0."""
    global _errors_warned
    HEALTH.check(verdicts)
    with _lock:
        errors = [v for v in verdicts if v.status == "error"]
        if errors and on_error == "zero" and not _errors_warned:
            _errors_warned = True
            logger.warning("verl: %d of %d rows have status=error (%s); on_error=zero scores them 0.0 and counts "
                           "them in the `error` key; set on_error=raise to stop the run instead",
                           len(errors), len(verdicts), errors[0].feedback)


def score_samples(samples: Sequence[Sample], *, reward: Any = None,
                  on_error: str | None = None) -> list[dict[str, Any]]:
    """Score ``samples`` with one ``verify_batch``: the path every verl entry point takes."""
    policy = resolve_on_error(on_error)
    verdicts = verifier(reward).verify_batch(list(samples))
    _watch(verdicts, policy)
    raise_on_errors(verdicts, policy, "verl")
    return [result(v, policy) for v in verdicts]


def compute_score(data_source: Any = None, solution_str: str = "", ground_truth: Any = None,
                  extra_info: Mapping[str, Any] | None = None, reward: Any = None, on_error: str | None = None,
                  **kwargs: Any) -> dict[str, Any]:
    """verl's per-row reward: ``{"score", "acc", "status", "pred", "error", "invalid"}``.

    ``reward`` and ``on_error`` come from ``reward.custom_reward_function.reward_kwargs``; other
    keyword arguments verl adds (a reward-model router's address) are not used.
    """
    sample = row_sample(data_source, solution_str, ground_truth, extra_info)
    return score_samples([sample], reward=reward, on_error=on_error)[0]


def compute_score_batch(data_sources: Sequence[Any] = (), solution_strs: Sequence[str] = (),
                        ground_truths: Sequence[Any] | None = None,
                        extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
                        reward: Any = None, on_error: str | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """Older verl's ``batch`` reward manager form: one dict per row, one ``verify_batch`` in all."""
    per_sample = sorted(k for k in ("data_source", "solution_str", "ground_truth", "extra_info") if k in kwargs)
    if per_sample:  # a per-sample reward manager calling the batch form would get [] and train on nothing
        raise TypeError(f"compute_score_batch was called per sample (with {', '.join(per_sample)}): set "
                        "reward.custom_reward_function.name=compute_score, or use rewardsmith's reward manager "
                        "(rewardsmith.adapters.trainers.verl_manager) to score whole batches")
    n = len(solution_strs)
    truths = list(ground_truths) if ground_truths is not None else [None] * n
    infos = list(extra_infos) if extra_infos is not None else [None] * n
    sources = list(data_sources) if len(data_sources) else [None] * n
    samples = [row_sample(*row) for row in zip(sources, solution_strs, truths, infos, strict=True)]
    return score_samples(samples, reward=reward, on_error=on_error)
