"""The ``brier`` verifier: reward being right *and* saying how sure you are (RLCR).

Reward r = c − (q − c)², with c ∈ {0, 1} the correctness verdict of a nested verifier and
q ∈ [0, 1] the confidence the completion states. The Brier term is a proper scoring rule:
for an answer that is right with probability p, the expected reward is maximised by
stating q = p, so the policy is paid to be calibrated without being paid less for being
right (a right answer at q = 1 still earns 1, a wrong one at q = 0 earns 0).

Fields read: whatever the ``correctness`` verifier reads (``answer`` for ``math``), and
``confidence_field`` when given.

Options:

``correctness`` (default ``"math"``): any reward spec giving ``correct``; it runs through
    its own ``verify_batch`` on the whole batch (so ``math`` keeps its worker pool).
``confidence_field`` (default none): read q from this dataset field (a number in [0, 1]
    or a string such as ``"80%"``) instead of from the completion.
``patterns`` (default: :data:`~rewardsmith.verifiers.calibration.confidence.DEFAULT_PATTERNS`):
    regular expressions for the confidence in the completion; see
    :mod:`rewardsmith.verifiers.calibration.confidence` for the rules (``<confidence>0.8</confidence>``,
    "Confidence: 80%", "confidence: 0.8", "I am 80% confident"; percentages divided by 100;
    a value outside [0, 1] counts as no confidence).
``strip_confidence`` (default ``true``): the correctness verifier sees the completion with
    every confidence statement cut out, so "… is 18. Confidence: 90%" is graded on 18, not
    on a last-number fallback reading 90%. Off when ``confidence_field`` is set.

Statuses:

* the correctness verdict is ``error``, ``timeout`` or ``invalid_input``: that status,
  score 0 (``error`` has no reward at all): no number is made up;
* no usable confidence: ``no_answer``, score 0, and ``correct`` still carries the
  correctness verdict (so accuracy stays measurable). A reward of 0 is what a wrong answer
  stated at q = 0 earns, so leaving the confidence out never beats stating it honestly;
* otherwise ``ok`` with r. A correctness ``no_answer`` (no final answer) counts as wrong,
  c = 0, r = −q²: otherwise dropping the answer would dodge the calibration penalty.

``details``: ``confidence`` (q or None), ``confidence_text`` (what was read),
``correctness`` (c as 0/1, or None); the nested verdict is ``parts["correctness"]``.
``components``: ``correctness`` (c) and ``calibration`` (−(q − c)²),
which sum to the score, plus the nested verifier's components as ``correctness.NAME``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from rewardsmith.verifiers.calibration.confidence import (
    ConfidenceMatch,
    coerce_confidence,
    compile_patterns,
    find_confidence,
    strip_confidence,
)
from rewardsmith.verifiers.core import Sample, Verdict, Verifier
from rewardsmith.verifiers.options import NonEmpty, Spec, SpecError, declare, option
from rewardsmith.verifiers.registry import register

PROPAGATED = ("error", "timeout", "invalid_input")


def brier_reward(correct: bool, confidence: float) -> tuple[float, float]:
    """(reward, calibration term) for one answer: c − (q − c)² and −(q − c)²."""
    c = 1.0 if correct else 0.0
    penalty = -((confidence - c) ** 2)
    return c + penalty, penalty


@register("brier")
@declare
class BrierVerifier(Verifier):
    """Correctness plus a Brier calibration term on the stated confidence (RLCR)."""

    name = "brier"

    correctness: Spec = option("math", "the reward spec that decides right or wrong (c)")
    confidence_field: str | None = option(None, "read the confidence q from this field instead of the completion")
    patterns: Annotated[tuple[str, ...], NonEmpty()] | None = option(
        None, "regular expressions finding q in the completion, strongest first (default: the built-in ones)")
    strip_confidence: bool = option(True, "grade correctness on the completion without its confidence statements")

    def __post_init__(self) -> None:
        try:
            self.regexes = compile_patterns(self.patterns)
        except ValueError as exc:
            raise SpecError(str(exc), ("patterns",)) from None
        self.strip_confidence = self.strip_confidence and self.confidence_field is None

    def components(self) -> dict[str, Verifier]:
        return {"correctness": self.correctness}

    def confidence(self, sample: Sample) -> ConfidenceMatch | None:
        """The stated confidence: the dataset field when configured, else the completion's."""
        if self.confidence_field is not None:
            return coerce_confidence(sample.get(self.confidence_field))
        return find_confidence(sample.completion_text, self.regexes)

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        graded = [self._for_correctness(s) for s in samples] if self.strip_confidence else samples
        inner = self.correctness.verify_batch(graded)
        return [self._combine(sample, verdict) for sample, verdict in zip(samples, inner, strict=True)]

    def _for_correctness(self, sample: Sample) -> Sample:
        """The sample with its confidence statements cut out of the (last assistant) text."""
        completion = sample.completion
        if isinstance(completion, str):
            return replace(sample, completion=strip_confidence(completion, self.regexes))
        if isinstance(completion, list) and completion and all(isinstance(m, dict) for m in completion):
            messages = [dict(m) for m in completion]
            for message in reversed(messages):
                if message.get("role", "assistant") == "assistant":
                    if isinstance(message.get("content"), str):
                        message["content"] = strip_confidence(message["content"], self.regexes)
                    break
            return replace(sample, completion=messages)
        return sample

    def _combine(self, sample: Sample, inner: Verdict) -> Verdict:
        failure = ""
        try:
            found = self.confidence(sample)
        except Exception as exc:  # a bug here must not take down a training run
            found, failure = None, f"confidence extraction failed: {type(exc).__name__}: {exc}"
        q = found.value if found is not None else None
        c = None if inner.correct is None else int(bool(inner.correct))
        details: dict[str, Any] = {
            "confidence": q,
            "confidence_text": found.text if found is not None else None,
            "correctness": c,
        }
        components: dict[str, float | None] = {"correctness": None, "calibration": None}
        for name, score in inner.components.items():
            components[f"correctness.{name}"] = score
        verdict = Verdict(correct=inner.correct, details=details, elapsed_s=inner.elapsed_s, components=components,
                          parts={"correctness": inner})

        if inner.status in PROPAGATED:
            verdict.status = inner.status
            verdict.feedback = f"correctness {inner.status}" + (f": {inner.feedback}" if inner.feedback else "")
            return verdict
        if failure:
            verdict.status, verdict.feedback = "error", failure
            return verdict
        if c is None:
            verdict.status = "error"
            verdict.feedback = (
                f"correctness verifier {self.correctness.name!r} gave no correct/incorrect verdict "
                f"(status {inner.status}); brier needs one"
            )
            return verdict
        components["correctness"] = float(c)
        if q is None:
            verdict.status = "no_answer"
            reason = found.reason if found is not None else "no confidence stated"
            verdict.feedback = f"{reason}; " + ("correct" if c else "incorrect") + " answer scored 0"
            return verdict
        score, penalty = brier_reward(bool(c), q)
        components["calibration"] = penalty
        verdict.score = score
        verdict.status = "ok"
        what = "correct" if c else "incorrect"
        if inner.status == "no_answer":
            what = "no final answer, counted as incorrect"
        verdict.feedback = f"{what} at confidence {q:g}" + (f" ({inner.feedback})" if inner.feedback else "")
        return verdict
