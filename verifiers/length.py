"""Length-shaped rewards: ``overlong`` (DAPO), ``cosine`` and ``repetition`` (Yeo et al. 2025).

Fields read: none by default (only the completion; chat completions use the last
assistant turn). ``cosine`` passes each sample on to its ``correctness`` verifier, which
reads its own fields (``answer`` for ``math``).

What counts as length, shared by all three:

``tokenizer`` (default none): a callable ``str -> list of ids``, or the name of a
    Hugging Face tokenizer, loaded with ``transformers.AutoTokenizer.from_pretrained`` on
    first use and encoded without special tokens. A loaded tokenizer is not pickled; a
    copy shipped to a worker reloads it there.
``ids_field`` (default none): a sample field that already holds the completion's token
    ids (TRL passes ``completion_ids``); when set, it is used instead of tokenizing.
    A sample without it is tokenized when a ``tokenizer`` is set, else ``invalid_input``,
    so one spec never mixes units.

Without either, length is counted in characters and n-grams in whitespace-separated
words. ``details["length_unit"]`` says which (``tokens``, ``chars`` or ``words``) and
``details["length"]`` holds the measured length.
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from rewardsmith.verifiers.core import Sample, Verdict, Verifier, error, invalid_input, read_completion
from rewardsmith.verifiers.json_text import without_surrogates
from rewardsmith.verifiers.options import Pattern, Range, Spec, SpecError, declare, option
from rewardsmith.verifiers.registry import register

TokenizerName = Annotated[str, Pattern(r"\S(?:.*\S)?", "a tokenizer name")]
TOKENIZER_LOADER = "rewardsmith.reward_models.loading"  # transformers stays out of rewardsmith.verifiers
_PROPAGATED = ("error", "timeout", "invalid_input")  # correctness statuses cosine passes on


# --- the formulas --------------------------------------------------------------------------


def overlong_penalty(length: float, max_length: float, cache_length: float) -> float:
    """DAPO soft overlong punishment: 0, then a linear ramp to −1 over the last ``cache_length``."""
    soft_start = max_length - cache_length
    if length <= soft_start:
        return 0.0
    if length <= max_length:
        return (soft_start - length) / cache_length
    return -1.0


def cosine_interpolate(length: float, max_length: float, start: float, end: float) -> float:
    """``start`` at length 0, ``end`` at ``max_length``, along half a cosine period."""
    return end + 0.5 * (start - end) * (1.0 + math.cos(math.pi * length / max_length))


def cosine_reward(
    length: float,
    correct: bool,
    max_length: float,
    correct_short: float = 2.0,
    correct_long: float = 1.0,
    wrong_short: float = -10.0,
    wrong_long: float = 0.0,
    exceed: float = -10.0,
) -> float:
    """Yeo et al.'s cosine length scaling: short right answers earn most, short wrong ones least."""
    if length > max_length:
        return exceed
    if correct:
        return cosine_interpolate(length, max_length, correct_short, correct_long)
    return cosine_interpolate(length, max_length, wrong_short, wrong_long)


def ngram_counts(units: Sequence[Any], ngram_size: int) -> tuple[int, int]:
    """(unique, total) n-grams of ``units``; (0, 0) when there are fewer units than ``n``."""
    total = len(units) - ngram_size + 1
    if total <= 0:
        return 0, 0
    unique = len({tuple(units[i : i + ngram_size]) for i in range(total)})
    return unique, total


def repetition_penalty(unique: int, total: int, max_penalty: float) -> float:
    """``max_penalty · (1 − unique/total)``: 0 for no repeats, towards ``max_penalty`` for loops."""
    if total == 0:
        return 0.0
    return max_penalty * (1.0 - unique / total)


# --- measuring -----------------------------------------------------------------------------


@dataclass
class Measure:
    """A completion measured in one unit; ``units`` holds the ids or words when they matter."""

    length: int
    unit: str
    units: Sequence[Any] = ()


def _encode_with(tokenizer: Any, text: str) -> list[Any]:
    text = without_surrogates(text)  # a completion may hold one (JSON's "\ud800"); no tokenizer encodes it
    # Hugging Face tokenizers add BOS/EOS when called; a completion's length excludes them.
    if hasattr(tokenizer, "encode") and hasattr(tokenizer, "convert_ids_to_tokens"):
        return list(tokenizer.encode(text, add_special_tokens=False))
    ids = tokenizer(text)
    if isinstance(ids, Mapping):
        ids = ids["input_ids"]
    return list(ids)


@declare
class _Measured(Verifier):
    """Shared length measurement: tokenizer (callable or lazily loaded by name), ids field or text."""

    tokenizer: Callable[[str], Sequence[int]] | TokenizerName | None = option(
        None, "count tokens: a Hugging Face tokenizer name (loaded on first use) or a callable str -> ids")
    ids_field: str | None = option(None, "a field holding the completion's token ids (TRL: completion_ids), "
                                         "used instead of tokenizing")

    def __post_init__(self) -> None:
        self._loaded: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # A loaded tokenizer is large and not always picklable; workers reload it by name.
        state = self.__dict__.copy()
        state["_loaded"] = None
        return state

    def _encoder(self) -> Any:
        if self.tokenizer is None or callable(self.tokenizer):
            return self.tokenizer
        if self._loaded is None:  # transformers lives with the models, found by name: only when one is configured
            self._loaded = importlib.import_module(TOKENIZER_LOADER).load_tokenizer(self.tokenizer)
        return self._loaded

    def _measure(self, sample: Sample, words: bool) -> Measure | Verdict:
        """Tokens when ids or a tokenizer are at hand; else characters, or words for n-grams."""
        text = read_completion(sample)
        if isinstance(text, Verdict):
            return text
        if self.ids_field is not None:
            ids = sample.get(self.ids_field)
            if ids is not None:
                if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
                    kind = type(ids).__name__
                    return invalid_input(f"field {self.ids_field!r} must be a list of token ids, got {kind}")
                return Measure(len(ids), "tokens", ids)
            if self.tokenizer is None:
                return invalid_input(f"sample has no {self.ids_field!r} field and no tokenizer is configured",
                                     missing_field=self.ids_field)
        if self.tokenizer is not None:
            ids = _encode_with(self._encoder(), text)
            return Measure(len(ids), "tokens", ids)
        if words:
            split = text.split()
            return Measure(len(split), "words", split)
        return Measure(len(text), "chars")

    def _load_error(self) -> Verdict | None:
        """Load a named tokenizer once per batch, so a failure costs one attempt, not one per sample."""
        try:
            self._encoder()
        except Exception as exc:
            return error(f"cannot load tokenizer {self.tokenizer!r}: {type(exc).__name__}: {exc}")
        return None

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        failed = self._load_error() if samples else None
        if failed is not None:
            return [Verdict(**{**failed.__dict__, "details": dict(failed.details)}) for _ in samples]
        return [self._timed(sample) for sample in samples]


def _length_details(measure: Measure, **extra: Any) -> dict[str, Any]:
    return {"length": measure.length, "length_unit": measure.unit, **extra}


# --- the verifiers -------------------------------------------------------------------------


@register("overlong")
@declare
class OverlongPenalty(_Measured):
    """DAPO soft overlong punishment (Yu et al. 2025), added to the task reward.

    ``max_length`` is L_max and ``cache_length`` L_cache, in the length unit (tokens with a
    tokenizer, else characters). Score: 0 up to L_max − L_cache, then
    ``((L_max − L_cache) − L) / L_cache`` down to −1 at L_max, and −1 beyond. ``correct`` is
    None: length says nothing about correctness. ``cache_length: 0`` is a hard cut-off.
    """

    name = "overlong"

    max_length: Annotated[float, Range(gt=0)] = option(doc="L_max, in the length unit")
    cache_length: Annotated[float, Range(ge=0)] = option(doc="L_cache: the ramp to -1 before max_length (0: a hard "
                                                             "cut-off)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.cache_length > self.max_length:
            raise SpecError(f"must not exceed max_length ({self.max_length:g}), got {self.cache_length:g}",
                            ("cache_length",))

    def _verify(self, sample: Sample) -> Verdict:
        measure = self._measure(sample, words=False)
        if isinstance(measure, Verdict):
            return measure
        length = measure.length
        score = overlong_penalty(length, self.max_length, self.cache_length)
        if length > self.max_length:
            feedback = f"length {length} {measure.unit} exceeds max_length {self.max_length:g}"
        elif score < 0:
            feedback = (
                f"length {length} {measure.unit} is within the last {self.cache_length:g} "
                f"before max_length {self.max_length:g}"
            )
        else:
            feedback = ""
        details = _length_details(measure, max_length=self.max_length, cache_length=self.cache_length)
        return Verdict(score=score, correct=None, status="ok", feedback=feedback, details=details)


@register("repetition")
@declare
class RepetitionPenalty(_Measured):
    """N-gram repetition penalty (Yeo et al. 2025): ``max_penalty · (1 − unique/total)``.

    N-grams are over tokens with a tokenizer, else over whitespace-separated words; a
    completion with fewer than ``ngram_size`` of them scores 0. ``correct`` is None.
    """

    name = "repetition"

    ngram_size: Annotated[int, Range(ge=1)] = option(3, "n of the n-grams (tokens with a tokenizer, else words)")
    max_penalty: Annotated[float, Range(le=0)] = option(-1.0, "the penalty when every n-gram is a repeat")

    def _verify(self, sample: Sample) -> Verdict:
        measure = self._measure(sample, words=True)
        if isinstance(measure, Verdict):
            return measure
        unique, total = ngram_counts(measure.units, self.ngram_size)
        score = repetition_penalty(unique, total, self.max_penalty)
        feedback = f"{total - unique} of {total} {self.ngram_size}-grams are repeats" if unique < total else ""
        details = _length_details(measure, ngram_size=self.ngram_size, unique_ngrams=unique, total_ngrams=total)
        return Verdict(score=score, correct=None, status="ok", feedback=feedback, details=details)


@register("cosine")
@declare
class CosineLength(_Measured):
    """Cosine length scaling (Yeo et al. 2025, "Demystifying Long Chain-of-Thought Reasoning").

    ``r = r_min + ½(r_max − r_min)(1 + cos(πL/L_max))``: a right answer earns from
    ``correct_short`` at L=0 down to ``correct_long`` at ``max_length``; a wrong one from
    ``wrong_short`` up to ``wrong_long``; longer than ``max_length`` earns ``exceed``.

    Correctness comes from the nested ``correctness`` spec (default ``"math"``), run once
    per batch on its batch path. Its ``error``, ``timeout`` and ``invalid_input`` statuses
    are passed on (score 0, ``correct`` None): there is no honest number without a
    correctness judgement. ``no_answer`` counts as wrong (scored on the wrong-answer
    curve, status kept as ``no_answer``). A verdict with ``correct`` None
    counts as right when its score is positive. Completions longer than ``max_length``
    are not sent to the correctness verifier at all: their reward is ``exceed`` whatever
    the answer, so their ``correct`` is None.
    """

    name = "cosine"

    max_length: Annotated[float, Range(gt=0)] = option(doc="L_max, in the length unit; longer earns `exceed`")
    correctness: Spec = option("math", "the reward spec that decides right or wrong")
    correct_short: float = option(2.0, "reward of a right answer of length 0")
    correct_long: float = option(1.0, "reward of a right answer at max_length")
    wrong_short: float = option(-10.0, "reward of a wrong answer of length 0")
    wrong_long: float = option(0.0, "reward of a wrong answer at max_length")
    exceed: float = option(-10.0, "reward of a completion longer than max_length")

    def __post_init__(self) -> None:
        super().__post_init__()
        self.rewards = {name: getattr(self, name)
                        for name in ("correct_short", "correct_long", "wrong_short", "wrong_long", "exceed")}

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        failed = self._load_error() if samples else None
        if failed is not None:
            return [Verdict(**{**failed.__dict__, "details": dict(failed.details)}) for _ in samples]
        out: list[Verdict | None] = [None] * len(samples)
        measures: dict[int, tuple[Measure, float]] = {}
        for i, sample in enumerate(samples):
            start = time.perf_counter()
            try:
                measure = self._measure(sample, words=False)
            except Exception as exc:  # a tokenizer bug is an infrastructure error, not a length
                measure = error(f"measuring length failed: {type(exc).__name__}: {exc}")
            if isinstance(measure, Verdict):
                measure.elapsed_s = time.perf_counter() - start
                out[i] = measure
            else:
                measures[i] = (measure, time.perf_counter() - start)
        judged = [i for i, (m, _) in measures.items() if m.length <= self.max_length]
        for i, inner in zip(judged, self._judge([samples[i] for i in judged]), strict=True):
            out[i] = self._score(*measures[i], inner)
        for i, (measure, elapsed) in measures.items():
            if out[i] is None:
                out[i] = self._exceeded(measure, elapsed)
        return out  # a gap left by a bug becomes an error verdict in Verifier.verify_batch

    def components(self) -> dict[str, Verifier]:
        return {"correctness": self.correctness}

    def _judge(self, samples: list[Sample]) -> list[Verdict]:
        # verify_batch never raises and always returns one verdict per sample (Verifier's template).
        return self.correctness.verify_batch(samples) if samples else []

    def _score(self, measure: Measure, elapsed: float, inner: Verdict) -> Verdict:
        details = _length_details(measure, max_length=self.max_length)
        parts = {"correctness": inner}
        components = {"correctness": inner.reward}
        components.update({f"correctness.{k}": v for k, v in inner.components.items()})
        elapsed += inner.elapsed_s
        if inner.status in _PROPAGATED:
            feedback = f"correctness {inner.status}" + (f": {inner.feedback}" if inner.feedback else "")
            return Verdict(score=0.0, correct=None, status=inner.status, feedback=feedback, details=details,
                           elapsed_s=elapsed, components=components, parts=parts)
        right = bool(inner.correct) if inner.correct is not None else inner.score > 0
        if inner.status == "no_answer":
            right = False
        score = cosine_reward(measure.length, right, self.max_length, **self.rewards)
        return Verdict(score=score, correct=right, status=inner.status, feedback=inner.feedback, details=details,
                       elapsed_s=elapsed, components=components, parts=parts)

    def _exceeded(self, measure: Measure, elapsed: float) -> Verdict:
        feedback = f"length {measure.length} {measure.unit} exceeds max_length {self.max_length:g}"
        details = _length_details(measure, max_length=self.max_length)
        return Verdict(score=self.rewards["exceed"], correct=None, status="ok", feedback=feedback, details=details,
                       elapsed_s=elapsed, components={"correctness": None})
