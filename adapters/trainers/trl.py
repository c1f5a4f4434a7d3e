"""TRL glue: reward functions for ``GRPOTrainer`` and exporters to ``RewardTrainer`` / DPO pairs.

``GRPOTrainer(..., reward_funcs=reward_funcs("reward.yaml"), args=GRPOConfig(...,
reward_weights=reward_weights("reward.yaml")))``: TRL sums its reward functions, weighted,
so a spec is split into one callable per part only where that sum IS the spec's reward: the
parts of a top-level ``weighted`` spec, each named ``rewardsmith_<part>`` (TRL logs
``rewards/rewardsmith_<part>/mean``) with the part's weight in ``reward_weights``. Every other
spec (``gate``, ``min``, ``max``, ``route``, a plain verifier) is ONE callable returning the
spec's score, and its components are logged as metrics (``log_metric``:
``rewardsmith_<name>/component/<part>``): summing a gate's parts would pay a well-formatted
wrong answer.

TRL calls each reward function with ``prompts``, ``completions`` (strings, or chat messages
when the prompts are chat: with ``tools`` or ``environment_factory``, the whole rollout, tool calls and
tool results included, read as a :class:`~rewardsmith.verifiers.trajectory.Trajectory`), ``completion_ids``,
every dataset column as a list, and ``trainer_state`` / ``log_extra`` / ``log_metric`` / ``environments``.
An environment that subclasses :class:`~rewardsmith.adapters.trainers.recorded_tools.RecordsCalls` gives
each tool result the status it recorded; otherwise statuses are ``unknown`` (never read from the text).
The callables of one ``reward_funcs`` result
share a scorer: the whole spec is verified ONCE per batch (so each part's ``verify_batch``
runs once, with its pools and caches) and every callable returns its own part.

Each split callable returns its part's raw score, so ``reward_weights(spec)`` makes TRL's
weighted sum equal the ``weighted`` spec's score.

Error policy (``on_error``, :mod:`rewardsmith.adapters.on_error`) for ``status=error`` verdicts:
``"none"`` (default) returns None, which TRL turns into NaN and leaves out of the sum and the
means; ``"zero"`` returns 0.0; ``"raise"`` raises :class:`RewardError`, stopping the run. In a
split spec a row whose spec verdict is an error gets that treatment from EVERY callable (TRL
would otherwise add the other parts' rewards and pay the row as if the failed part scored 0).

A batch that is mostly ``invalid_input`` (no ``answer`` column reached the reward, typically)
is warned about once, naming the missing field and the ``columns=`` mapping that fixes it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.adapters.fields import label_fields, map_fields
from rewardsmith.adapters.health import InputHealth
from rewardsmith.adapters.on_error import ON_ERROR, OnError, RewardError, apply_on_error, check_on_error
from rewardsmith.adapters.trainers.recorded_tools import with_statuses
from rewardsmith.verifiers.core import Sample, Verdict, Verifier
from rewardsmith.verifiers.registry import build

__all__ = ["RewardError", "RewardFunc", "async_reward_funcs", "dpo_pairs", "preference_pairs", "reward_funcs",
           "reward_weights"]

Spec = str | Path | Mapping[str, Any] | Verifier
PREFIX = "rewardsmith_"
# Keyword arguments TRL passes that are not dataset columns.
TRL_KWARGS = ("trainer_state", "log_extra", "log_metric", "completion_ids", "environments")


def _recorded(completion: Any, environment: Any) -> Any:
    """A rollout's messages with the statuses its environment recorded (:mod:`.recorded_tools`)."""
    if environment is None or isinstance(completion, str) or not isinstance(completion, Sequence):
        return completion
    return with_statuses(completion, environment)


def _columns_fix(field: str | None) -> str:
    if field is None:
        return "check the dataset columns the reward spec reads"
    return (f"add a {field!r} column to the dataset, or map yours with "
            f"reward_funcs(spec, columns={{{field!r}: '<your column>'}})")


# --------------------------------------------------------------------------- the shared scorer


class _Scorer:
    """Verifies a whole batch once and keeps the verdicts for the batch's other callables.

    The cache key is the identity of the ``prompts`` and ``completions`` lists TRL hands to
    every reward function of one step; the cache holds those lists, so their ids cannot be
    reused by other objects while the entry lives. Locks and the cache are process-local
    and dropped on pickling.
    """

    def __init__(self, verifier: Verifier, columns: Mapping[str, str], label_column: str | None = None) -> None:
        self.verifier = verifier
        self.columns = dict(columns)  # verifier field -> dataset column (or dotted path into one)
        self.label_column = label_column  # a column spread into fields (a dict, or JSON object text)
        self.batches = 0  # full-spec verifications actually run (for tests and logging)
        self.health = InputHealth("rewardsmith TRL reward", _columns_fix)
        self._init_local()

    def _init_local(self) -> None:
        self._lock = threading.Lock()
        self._cached: tuple[Any, Any, list[Verdict]] | None = None
        self._pending: tuple[Any, Any, asyncio.Future[list[Verdict]]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"verifier": self.verifier, "columns": self.columns, "label_column": self.label_column,
                "batches": self.batches, "health": self.health}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_local()

    def samples(self, prompts: Sequence[Any], completions: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Sample]:
        columns = {k: v for k, v in kwargs.items() if k not in TRL_KWARGS and isinstance(v, Sequence)
                   and not isinstance(v, str) and len(v) == len(completions)}
        environments = kwargs.get("environments")
        if not isinstance(environments, Sequence) or len(environments) != len(completions):
            environments = [None] * len(completions)
        return [
            Sample(prompt=prompt, completion=_recorded(completion, environment),
                   fields=map_fields(self._row(columns, i), self.columns))
            for i, (prompt, completion, environment) in enumerate(zip(prompts, completions, environments, strict=True))
        ]

    def _row(self, columns: Mapping[str, Sequence[Any]], i: int) -> dict[str, Any]:
        """Row ``i``'s columns; the label column, if any, spread into fields over them (as verl's
        ground truth and OpenRLHF's label are: :func:`~rewardsmith.adapters.fields.label_fields`)."""
        row = {k: v[i] for k, v in columns.items()}
        if self.label_column is not None:
            row.update(label_fields(row.pop(self.label_column, None)))
        return row

    def score(self, prompts: Sequence[Any], completions: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Verdict]:
        with self._lock:
            cached = self._cached
            if cached is not None and cached[0] is prompts and cached[1] is completions:
                return cached[2]
            verdicts = self.verifier.verify_batch(self.samples(prompts, completions, kwargs))
            self.health.check(verdicts)
            self.batches += 1
            self._cached = (prompts, completions, verdicts)
            return verdicts

    async def ascore(self, prompts: Sequence[Any], completions: Sequence[Any],
                     kwargs: Mapping[str, Any]) -> list[Verdict]:
        # TRL gathers the async reward functions of a step on one loop: the first one starts
        # the verification, the others await the same future.
        pending = self._pending
        if pending is not None and pending[0] is prompts and pending[1] is completions:
            return await asyncio.shield(pending[2])
        future: asyncio.Future[list[Verdict]] = asyncio.get_running_loop().create_future()
        self._pending = (prompts, completions, future)
        try:
            verdicts = await self.verifier.averify_batch(self.samples(prompts, completions, kwargs))
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: the other awaiters re-raise it themselves
            raise
        self.health.check(verdicts)
        self.batches += 1
        future.set_result(verdicts)
        return verdicts


# --------------------------------------------------------------------------- the reward functions


class RewardFunc:
    """One component's TRL reward function (a picklable callable with its own ``__name__``)."""

    def __init__(self, scorer: _Scorer, part: str | None, name: str, on_error: OnError = "none",
                 log: bool = True) -> None:
        self.on_error = check_on_error(on_error, ON_ERROR, "TRL")
        self.scorer = scorer
        self.part = part  # None: the whole spec's score
        self.__name__ = name
        self.log = log

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.__name__}>"

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
        return self._finish(self.scorer.score(prompts, completions, kwargs), kwargs)

    def _finish(self, verdicts: Sequence[Verdict], kwargs: Mapping[str, Any]) -> list[float | None]:
        parts = [self._part(v) for v in verdicts]
        if self.log:
            _log(self.__name__, parts, kwargs)
            if self.part is None:
                _log_components(self.__name__, verdicts, kwargs)
        return [None if part is None else apply_on_error(part, self.on_error, self.__name__) for part in parts]

    def _part(self, verdict: Verdict) -> Verdict | None:
        """The verdict this callable reports: its part's, or the whole spec's (always, on an error row:
        an error is an error in every part); None where the part does not apply."""
        if self.part is None or verdict.status == "error":
            return verdict
        return verdict.parts.get(self.part)


class AsyncRewardFunc(RewardFunc):
    """The async form: TRL ≥ 1.0 detects ``async def __call__`` and gathers these on its event loop."""

    async def __call__(  # type: ignore[override]
        self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any
    ) -> list[float | None]:
        return self._finish(await self.scorer.ascore(prompts, completions, kwargs), kwargs)


def _log(name: str, parts: Sequence[Verdict | None], kwargs: Mapping[str, Any]) -> None:
    """Status per completion and extracted answers to TRL's completions table; status fractions as metrics."""
    log_extra: Callable[[str, list[Any]], None] | None = kwargs.get("log_extra")
    log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
    statuses = [None if part is None else part.status for part in parts]
    if callable(log_extra):
        log_extra(f"{name}/status", [s or "n/a" for s in statuses])
        extracted = [None if part is None else part.detail("extracted") for part in parts]
        if any(e is not None for e in extracted):
            log_extra(f"{name}/extracted", ["" if e is None else str(e) for e in extracted])
    if callable(log_metric):
        applicable = [s for s in statuses if s is not None]
        for status in sorted(set(applicable)):
            log_metric(f"{name}/status/{status}", applicable.count(status) / len(applicable))


def _log_components(name: str, verdicts: Sequence[Verdict], kwargs: Mapping[str, Any]) -> None:
    """Each component's mean score (over the rows it applies to) as a metric of the one callable."""
    log_metric: Callable[[str, float], None] | None = kwargs.get("log_metric")
    if not callable(log_metric):
        return
    scores: dict[str, list[float]] = {}
    for verdict in verdicts:
        for part, score in verdict.components.items():
            if score is not None:
                scores.setdefault(part, []).append(float(score))
    for part, values in scores.items():
        log_metric(f"{name}/component/{part}", sum(values) / len(values))


def is_additive(verifier: Verifier) -> bool:
    """Whether TRL's weighted sum of the parts' scores is the spec's score: a ``weighted`` spec."""
    return verifier.name == "weighted" and len(verifier.components()) > 1


def _make(spec: Spec, columns: Mapping[str, str] | None, label_column: str | None, on_error: OnError, split: bool,
          log: bool, cls: type[RewardFunc]) -> list[RewardFunc]:
    verifier = build(spec)
    scorer = _Scorer(verifier, columns or {}, label_column)
    if not split or not is_additive(verifier):
        return [cls(scorer, None, PREFIX + _ident(verifier.name), on_error, log)]
    return [cls(scorer, part, PREFIX + _ident(part), on_error, log) for part in verifier.components()]


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in str(name))


def reward_funcs(spec: Spec = "math", *, columns: Mapping[str, str] | None = None, label_column: str | None = None,
                 on_error: OnError = "none", split: bool = True, log: bool = True,
                 asynchronous: bool = False) -> list[RewardFunc]:
    """TRL reward functions for ``spec``: one per component (``split=False``: one for the whole spec).

    ``columns`` maps the fields the verifiers read to dataset columns
    (``{"answer": "solution"}``: the ``answer`` field comes from the ``solution`` column; a dotted
    path such as ``reward_model.ground_truth`` reaches into a nested column).
    ``label_column`` names a column whose value is spread into fields (a dict, or JSON object
    text; anything else is the ``answer``), as verl's ground truth and OpenRLHF's label are: a
    ``datasets`` table gives every row of a struct column the keys of all rows (a key a row lacks
    comes back None) and cannot hold a column of mixed types, so nested fields (lists of dicts,
    dicts with None values, any-JSON references) travel unchanged only as JSON text in one column.
    ``asynchronous=True`` returns ``async`` callables (see :func:`async_reward_funcs`).
    """
    check_on_error(on_error, ON_ERROR, "TRL")
    return _make(spec, columns, label_column, on_error, split, log, AsyncRewardFunc if asynchronous else RewardFunc)


def async_reward_funcs(spec: Spec = "math", **options: Any) -> list[RewardFunc]:
    """Async reward functions: TRL ≥ 1.0 runs them concurrently with ``asyncio.gather`` on its own
    loop, so a judge behind HTTP overlaps with the other reward functions."""
    return reward_funcs(spec, **{**options, "asynchronous": True})


def reward_weights(spec: Spec, *, split: bool = True) -> list[float]:
    """``GRPOConfig.reward_weights`` matching :func:`reward_funcs` (same ``split``): a split
    ``weighted`` spec's weights (normalized as the spec normalizes), else ``[1.0]``."""
    verifier = build(spec)
    if not split or not is_additive(verifier):
        return [1.0]
    return [float(w) for w in verifier.weights]


# --------------------------------------------------------------------------- exporters


def _group(rows: Sequence[Mapping[str, Any]], prompt_key: str, reward_key: str) -> dict[str, list[Mapping[str, Any]]]:
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        if row.get(reward_key) is None:  # errors and unscored rows carry no preference
            continue
        groups.setdefault(json.dumps(row[prompt_key], sort_keys=True, default=str), []).append(row)
    return groups


def _best_worst(group: Sequence[Mapping[str, Any]], reward_key: str) -> tuple[Mapping[str, Any], ...] | None:
    # max/min keep the first of equal rewards: deterministic for a given row order.
    best = max(group, key=lambda r: float(r[reward_key]))
    worst = min(group, key=lambda r: float(r[reward_key]))
    if float(best[reward_key]) == float(worst[reward_key]):
        return None
    return best, worst


def _join(prompt: Any, completion: Any) -> Any:
    if isinstance(prompt, str) and isinstance(completion, str):
        return prompt + completion
    prompt_messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    completion_messages = (
        [{"role": "assistant", "content": completion}] if isinstance(completion, str) else list(completion)
    )
    return prompt_messages + completion_messages


def dpo_pairs(rows: Sequence[Mapping[str, Any]], *, prompt_key: str = "prompt", completion_key: str = "completion",
              reward_key: str = "reward") -> list[dict[str, Any]]:
    """Scored GRPO groups → DPO pairs ``{"prompt", "chosen", "rejected"}``: per prompt, the best
    completion against the worst; groups whose rewards all tie (no signal) and rows with a
    None reward are skipped. Chat prompts stay chat (TRL's conversational format)."""
    pairs = []
    for group in _group(rows, prompt_key, reward_key).values():
        picked = _best_worst(group, reward_key)
        if picked is not None:
            best, worst = picked
            pairs.append(
                {"prompt": best[prompt_key], "chosen": best[completion_key], "rejected": worst[completion_key]}
            )
    return pairs


def preference_pairs(rows: Sequence[Mapping[str, Any]], *, prompt_key: str = "prompt",
                     completion_key: str = "completion", reward_key: str = "reward") -> list[dict[str, Any]]:
    """Scored groups → ``RewardTrainer`` pairs ``{"chosen", "rejected"}`` (implicit prompt: both
    sides begin with the same prompt, as text or as chat messages), best vs worst per prompt."""
    return [
        {"chosen": _join(p["prompt"], p["chosen"]), "rejected": _join(p["prompt"], p["rejected"])}
        for p in dpo_pairs(rows, prompt_key=prompt_key, completion_key=completion_key, reward_key=reward_key)
    ]
