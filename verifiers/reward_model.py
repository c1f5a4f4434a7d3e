"""Trained reward models as verifiers: ``orm`` (one score per completion) and ``prm`` (per step).

Fields read: none (the prompt and the completion; chat completions use the last assistant turn).

A model directory is one saved by ``rewardsmith train orm|prm``; it records how it reads its
input (step separator, chat template, window), so a completion is scored exactly as the model was
trained. The model loads on first use, once per process, and runs batched under
``torch.inference_mode``; building the verifier imports no torch (trainer workers that never
score with it never pay for it).

``path`` may list several models: an ensemble, the defence against over-optimising one reward
model that the reward-model literature measured (Coste et al., 2023): ``mean``, ``min`` (worst
case) or ``uncertainty`` (mean − ``uncertainty_weight`` · std across the models).

The ``prm`` score comes from the step probabilities in one of three forms:

* ``raw``: the steps aggregated by ``aggregation`` (``min`` by default; ``product``, ``last``,
  ``mean``), in [0, 1]. ``min`` and ``product`` can only fall when steps are added; ``mean`` can
  be raised by appending easy steps and ``last`` ignores every step but one, so a policy trained
  against either learns to exploit it (the padding test shows ``min`` holding);
* ``clip``: Σ min(p_k − threshold, 0) over the steps, never above 0, so adding it to an outcome
  reward can only lower it, and no step a policy adds can raise it (Gao et al., 2024);
* ``delta``: the per-step changes p_k − p_{k+1} (the last step keeps p_K), in
  ``details["step_rewards"]`` for trainers that take dense rewards; the score is their sum, which
  telescopes to p_1, so padding a solution with steps cannot raise it either.

Compose it with the outcome verifier rather than alone, e.g. a gate that pays the clipped
process reward only on a correct answer::

    {type: gate, when: math, then: {type: weighted, parts: [math, {type: prm, path: rm/model, form: clip}]}}

A completion the model cannot read (longer than its window, or with no step) is scored as if
every step were certainly wrong (probability 0): a policy must gain nothing by being unreadable.
A model that cannot load is ``status=error``.
"""

from __future__ import annotations

import importlib
import json
import math
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from rewardsmith.verifiers.core import Sample, Verdict, Verifier, error, read_completion
from rewardsmith.verifiers.options import NonEmpty, Range, SpecError, declare, option
from rewardsmith.verifiers.registry import register

INFERENCE = "rewardsmith.reward_models.inference"  # torch lives with the models, found by name
META_FILE = "rewardsmith.json"
LOGIT_FLOOR = -20.0  # log-odds of a completion that cannot be read (P ≈ 2e-9)


def _paths(path: str | Sequence[str]) -> list[str]:
    return [path] if isinstance(path, str) else list(path)


def saved_model(path: str) -> str | None:
    """The folder of the model saved at ``path``: ``path`` itself, or the ``model/`` of a ``train
    orm|prm`` run folder (what ``-o`` named); None when neither holds ``rewardsmith.json``."""
    for folder in (Path(path), Path(path) / "model"):
        if (folder / META_FILE).is_file():
            return str(folder)
    return None


def ensemble(values: Sequence[float], how: str, weight: float) -> float:
    if len(values) == 1:
        return values[0]
    if how == "min":
        return min(values)
    mean = sum(values) / len(values)
    if how == "uncertainty":
        return mean - weight * statistics.pstdev(values)
    return mean


AGGREGATIONS = ("min", "product", "last", "mean")


def aggregate(steps: Sequence[float], how: str) -> float:
    """One solution score from its step scores (the ``prm`` verifier, PRM Best-of-N)."""
    if not steps:
        return 0.0
    if how == "min":
        return min(steps)
    if how == "product":
        return math.prod(steps)
    if how == "last":
        return steps[-1]
    if how == "mean":
        return sum(steps) / len(steps)
    raise ValueError(f"unknown aggregation {how!r}; choose one of {', '.join(AGGREGATIONS)}")


@declare
class _RewardModelVerifier(Verifier):
    path: Annotated[str | list[str], NonEmpty()] = option(
        doc="a model saved by `rewardsmith train orm|prm` (its -o run folder or the model/ in it), or a "
            "list of them (an ensemble)")
    device: str = option("auto", "where the model runs: auto (cuda when available), cpu, cuda, cuda:1")
    dtype: Literal["float32", "bfloat16", "float16"] | None = option(None, "weights dtype (default: as saved)")
    batch_size: Annotated[int, Range(gt=0)] = option(16, "completions per forward pass")
    ensemble: Literal["mean", "min", "uncertainty"] = option("mean", "how several models' scores combine")
    uncertainty_weight: Annotated[float, Range(ge=0)] = option(1.0, "λ in mean − λ·std (ensemble: uncertainty)")

    kind = ""

    def __post_init__(self) -> None:
        self._folders: list[str] = []
        for i, path in enumerate(_paths(self.path)):
            folder = saved_model(path)
            where = ("path",) if isinstance(self.path, str) else ("path", i)
            if folder is None:
                raise SpecError(f"{path!r} is not a reward model saved by rewardsmith (no {META_FILE} in it nor in "
                                "its model/); give the -o folder of `rewardsmith train orm|prm` or its model/",
                                where)
            self._folders.append(folder)
            saved = json.loads((Path(folder) / META_FILE).read_text()).get("kind")
            if saved != self.kind:
                raise SpecError(f"{path!r} is a saved {saved} model; use `type: {saved}` for it", where)

    def _models(self) -> list[Any]:
        module = importlib.import_module(INFERENCE)
        return [module.RewardModel.get(p, self.device, self.dtype) for p in self._folders]

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        start = time.perf_counter()
        try:
            models = self._models()
        except Exception as exc:  # a missing file, no torch, out of memory: not the completion's doing
            return [error(f"cannot load reward model: {type(exc).__name__}: {exc}") for _ in samples]
        out: list[Verdict | None] = [None] * len(samples)
        rows, where = [], []
        for i, sample in enumerate(samples):
            text = read_completion(sample)
            if isinstance(text, Verdict):
                out[i] = text
                continue
            rows.append((sample.prompt if sample.prompt is not None else "", sample.completion))
            where.append(i)
        if rows:
            try:
                per_model = [model.logits(rows, self.batch_size) for model in models]
            except Exception as exc:
                return [error(f"reward model failed: {type(exc).__name__}: {exc}") for _ in samples]
            for j, i in enumerate(where):
                out[i] = self._verdict([scores[j] for scores in per_model], models, samples[i])  # type: ignore[attr-defined]
        elapsed = (time.perf_counter() - start) / max(len(samples), 1)
        for verdict in out:
            if verdict is not None:
                verdict.elapsed_s = elapsed
        return out



@register("orm")
@declare
class OutcomeRewardModel(_RewardModelVerifier):
    """A trained outcome reward model: one score per completion (P(correct), or the raw logit)."""

    name = "orm"
    kind = "orm"

    output: Literal["probability", "logit"] = option(
        "probability", "probability: sigmoid of the model's log-odds, in [0, 1]; logit: the raw reward")
    threshold: Annotated[float, Range(ge=0, le=1)] = option(0.5, "P(correct) at which `correct` is true")

    def _verdict(self, per_model: list[Any], models: list[Any], sample: Sample) -> Verdict:
        unreadable = next((r for r in per_model if isinstance(r, Exception)), None)
        if unreadable is not None:
            score = 0.0 if self.output == "probability" else LOGIT_FLOOR
            return Verdict(score=score, correct=False, status="ok",
                           feedback=f"the reward model cannot read this completion: {unreadable}",
                           details={"unreadable": True})
        probs = [sigmoid(r[0]) for r in per_model]
        values = probs if self.output == "probability" else [max(LOGIT_FLOOR, r[0]) for r in per_model]
        score = ensemble(values, self.ensemble, self.uncertainty_weight)
        prob = ensemble(probs, self.ensemble, self.uncertainty_weight)
        details: dict[str, Any] = {"probability": prob}
        if len(per_model) > 1:
            details["models"] = values
        return Verdict(score=score, correct=prob >= self.threshold, status="ok", details=details)


@register("prm")
@declare
class ProcessRewardModel(_RewardModelVerifier):
    """A trained process reward model: step scores of the completion cut at the model's separator,
    combined into one reward (raw, clipped or as per-step changes)."""

    name = "prm"
    kind = "prm"

    aggregation: Literal["min", "product", "last", "mean"] = option(
        "min", "how step scores become one (form: raw); mean can be raised by appending easy steps, so a policy "
               "trained on it learns to pad")
    form: Literal["raw", "clip", "delta"] = option(
        "raw", "raw: aggregated P(correct); clip: Σ min(p − threshold, 0) ≤ 0; delta: per-step changes, summed")
    threshold: Annotated[float, Range(ge=0, le=1)] | None = option(
        None, "P(correct) below which a step is wrong (default: the one chosen on validation data at training)")

    def _verdict(self, per_model: list[Any], models: list[Any], sample: Sample) -> Verdict:
        threshold = self.threshold if self.threshold is not None else models[0].meta.threshold
        unreadable = next((r for r in per_model if isinstance(r, Exception)), None)
        if unreadable is not None:
            n_steps = max(1, len(models[0].encoder.splitter.split(sample.completion_text)))
            steps = [0.0] * n_steps
            feedback = f"the reward model cannot read this completion: {unreadable}"
        else:
            steps = [ensemble([sigmoid(r[k]) for r in per_model], self.ensemble, self.uncertainty_weight)
                     for k in range(len(per_model[0]))]
            feedback = ""
        first_wrong = next((k for k, p in enumerate(steps) if p < threshold), -1)
        details: dict[str, Any] = {"step_scores": steps, "first_wrong_step": first_wrong, "threshold": threshold}
        if unreadable is not None:
            details["unreadable"] = True
        if self.form == "raw":
            score = aggregate(steps, self.aggregation)
        elif self.form == "clip":
            score = sum(min(p - threshold, 0.0) for p in steps)
        else:
            rewards = [steps[k] - steps[k + 1] for k in range(len(steps) - 1)] + [steps[-1]]
            details["step_rewards"] = rewards
            score = sum(rewards)
        if not feedback and first_wrong >= 0:
            feedback = f"step {first_wrong + 1} of {len(steps)} looks wrong (P(correct) {steps[first_wrong]:.2f})"
        return Verdict(score=score, correct=first_wrong < 0, status="ok", feedback=feedback, details=details)


def sigmoid(x: float) -> float:
    """P(correct) from log-odds, without overflow at either end."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))
