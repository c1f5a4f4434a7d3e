"""The ``math`` verifier: is the completion's final answer equal to the gold answer?

Fields read: ``answer`` (configurable with ``answer_field``): the gold answer as a
bare string (``1/3``, ``\\frac13``, ``x=2``, ``$\\pi/2$``, ``#### 18``, ``(B)``), or in
several pieces (``$8$, $4$``), which are read as one multi-part answer.

Extraction (:mod:`~rewardsmith.verifiers.math.extract`) finds every statement of the final
answer outside reasoning blocks; parsing (:mod:`~rewardsmith.verifiers.math.parse`) turns
each into a structured answer; grading (:mod:`~rewardsmith.verifiers.math.grade`) reads
several different statements as one multi-valued answer (so a hedge earns nothing) and
compares under the leniency switches (:mod:`~rewardsmith.verifiers.math.leniency`).

A wrong answer's ``details["certain"]`` says the rule compared two machine-checkable values (or
read a hedge), so its "no" needs no judge; a cascade sends only the other negatives on.

Statuses: whatever the completion's content does to the parser or sympy (raise, recurse,
exhaust memory, kill a worker) is 0 (``no_answer``, ``timeout`` or a wrong answer), never
``error``, which trainers drop and a policy could learn to cause; a gold that does not
parse is ``invalid_input``; ``error`` is left for faults outside the sample.

The batch path runs on a pool of worker processes with a hard time limit per
sample (a pathological answer gets ``status=timeout`` and the pool keeps going),
groups samples by gold answer so each worker parses a gold once, and skips
duplicate (gold, completion) pairs, which GRPO groups are full of.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from rewardsmith.verifiers.core import Sample, Verdict, Verifier, error, invalid_input, read_completion
from rewardsmith.verifiers.math.extract import (
    DEFAULT_METHODS,
    MAX_STATEMENTS,
    METHODS,
    Extraction,
    extract_answer,
    extract_gold,
)
from rewardsmith.verifiers.math.leniency import Leniency
from rewardsmith.verifiers.math.prompt import NOTHING_ASKED, Asked, read_prompt
from rewardsmith.verifiers.options import Range, declare, option
from rewardsmith.verifiers.reading import PROMPT_OPENS_THINK_DOC, answer_region, hinted
from rewardsmith.verifiers.registry import register

if TYPE_CHECKING:
    from rewardsmith.verifiers.math.parse import Parsed

_SHOWN = 200  # characters of an answer kept in details


@dataclass(frozen=True)
class GradeTask:
    """Grade one (gold, completion) pair; picklable so it runs in pool workers.

    Whatever the completion's content makes the parser or sympy do (raise, recurse too
    deep, run out of memory) scores 0; only a fault in the gold or outside the sample is
    not the completion's to pay for.
    """

    leniency: Leniency
    methods: tuple[str, ...]
    prompt_opens_think: bool = False
    # What a pool worker imports as soon as it starts, before any batch arrives.
    preload: ClassVar[tuple[str, ...]] = (
        "math_verify", "rewardsmith.verifiers.math.parse", "rewardsmith.verifiers.math.grade",
    )

    def warm_up(self) -> None:
        """Grade one pair: the LaTeX parser's first call (~0.3 s) then is not charged to an item."""
        self(("x^2 + \\frac{1}{2}", "\\boxed{\\left(x^{2} + 0.5\\right)}"))

    def __call__(self, item: tuple[str, str] | tuple[str, str, Asked]) -> Verdict:
        from rewardsmith.verifiers.math.grade import combine_statements
        from rewardsmith.verifiers.math.parse import parse_answer

        _quiet_math_verify()
        start = time.perf_counter()
        gold_text, completion = item[0], item[1]
        asked = item[2] if len(item) > 2 else NOTHING_ASKED
        try:
            gold_span = extract_gold(gold_text)
            gold = parse_answer(gold_span, self.leniency)
        except Exception as exc:  # the gold's fault: the row, not the completion
            return invalid_input(f"could not read gold answer {gold_text[:80]!r}: {type(exc).__name__}")
        details: dict[str, Any] = {"gold": gold_span[:_SHOWN], "gold_parsed": gold.ok}
        region = answer_region(completion, self.prompt_opens_think)
        try:
            found = extract_answer(region, last_number="last_number" in self.methods, methods=self.methods,
                                   asked=asked)
            pred = None
            if found is not None and found.overflow:
                details.update(method=found.method, statements=[span[:_SHOWN] for span in found.spans[:8]])
                verdict = Verdict(score=0.0, correct=False, status="ok",
                                  feedback=f"more than {MAX_STATEMENTS} different final answers",
                                  details={**details, "certain": True})
                verdict.elapsed_s = time.perf_counter() - start
                return verdict
            if found is not None and found.unclosed:  # 0 whatever the statements say; several are a hedge
                details.update(method=found.method, extracted=found.text[:_SHOWN], unclosed=True)
                several = " | ".join(span[:40] for span in found.spans[:4])
                verdict = Verdict(score=0.0, correct=False, status="ok" if found.hedged else "no_answer",
                                  feedback=f"several final answers ({several}): a hedge; and {found.unclosed}"
                                  if found.hedged else found.unclosed, details=details)
                verdict = hinted(verdict, region)
                verdict.elapsed_s = time.perf_counter() - start
                return verdict
            if found is not None:
                pred = combine_statements([parse_answer(span, self.leniency) for span in found.spans], self.leniency)
                details.update(extracted=found.text[:_SHOWN], method=found.method, parsed=pred.ok)
                if found.hedged:
                    details["statements"] = [span[:_SHOWN] for span in found.spans[:8]]
        except (Exception, RecursionError, MemoryError) as exc:  # the completion's content did this: it earns 0
            verdict = Verdict(score=0.0, correct=False, status="no_answer",
                              feedback=f"the answer could not be read ({type(exc).__name__})",
                              details=details)
        else:
            verdict = self._judge(gold, gold_span, found, pred, details, asked)
        verdict = hinted(verdict, region)
        verdict.elapsed_s = time.perf_counter() - start
        return verdict

    def _judge(self, gold: Parsed, gold_span: str, found: Extraction | None, pred: Parsed | None,
               details: dict[str, Any], asked: Asked) -> Verdict:
        """Status precedence: a match is a match; then a bad gold (the row's fault, not the
        completion's) before a missing or unparseable answer."""
        from rewardsmith.verifiers.math.grade import compare

        if found is not None and pred is not None:
            try:
                same, problem = compare(gold, pred, self.leniency, asked)
            except (Exception, RecursionError, MemoryError) as exc:  # content-triggered: a wrong answer
                details["compare_error"] = type(exc).__name__
            else:
                if same and not problem:
                    return Verdict(score=1.0, correct=True, status="ok", feedback="", details=details)
                if same:  # the gold's value, but not an answer to the question: computed, or misnamed
                    return Verdict(score=0.0, correct=False, status="ok",
                                   feedback=f"answer {found.text[:80]!r} has the gold's value but is not a final "
                                            f"answer: {problem}",
                                   details={**details, "not_final": problem, "certain": True})
        if not gold.ok or gold.kind == "undefined" or _is_prose(gold):
            why = _first_reason(gold) or ("undefined" if gold.kind == "undefined" else "prose, not an answer")
            return invalid_input(f"could not parse gold answer {gold_span[:80]!r} ({why})", **details)
        if found is None or pred is None:
            return Verdict(score=0.0, correct=False, status="no_answer", feedback="no final answer found",
                           details=details)
        if pred.kind == "list" and found.hedged:
            shown = " | ".join(span[:40] for span in found.spans[:4])
            return Verdict(score=0.0, correct=False, status="ok",
                           feedback=f"several different final answers ({shown}): a hedge",
                           details={**details, "certain": True})
        if not pred.ok:
            why = f" ({_first_reason(pred)})" if _first_reason(pred) else ""
            return Verdict(score=0.0, correct=False, status="no_answer",
                           feedback=f"could not parse answer {found.text[:80]!r}{why}", details=details)
        return Verdict(score=0.0, correct=False, status="ok",
                       feedback=f"answer {found.text[:80]!r} != gold {gold_span[:80]!r}",
                       details={**details, "certain": _checkable(gold) and _checkable(pred)})


def _checkable(parsed: Parsed) -> bool:
    """A value a machine compares for certain (numbers, expressions, sets, tuples, choice letters), not
    words only a reader can judge: where both sides are, the rule's "no" needs no judge (``certain``)."""
    if parsed.kind == "list":
        return bool(parsed.items) and all(_checkable(item) for item in parsed.items)
    return parsed.ok and parsed.kind not in ("text", "undefined")


def _is_prose(parsed: Parsed) -> bool:
    """A gold of more than five plain words is a sentence, not an answer (``east``, ``no solution``
    and ``\\text{Alice and Bob}`` are answers)."""
    return parsed.kind == "text" and len(parsed.text.split()) > 5


def _first_reason(parsed: Parsed) -> str:
    if parsed.reason:
        return parsed.reason
    return next((reason for item in parsed.items if (reason := _first_reason(item))), "")


def _quiet_math_verify() -> None:
    # We call math-verify without its signal.alarm timeouts on purpose (the worker pool
    # enforces a hard limit instead); its warning about that would repeat per worker.
    import math_verify.grader
    import math_verify.parser

    math_verify.grader.TIMEOUT_WARNING_SHOWN = True
    math_verify.parser.TIMEOUT_WARNING_SHOWN = True


Method = Literal[METHODS]  # type: ignore[valid-type]  # the forms of extract.METHODS


@register("math")
@declare
class MathVerifier(Verifier):
    """Math answer equivalence built on math-verify and sympy.

    ``workers``: pool size (default: all cores); ``0`` grades in the calling process,
    which is cheaper for a handful of samples but has **no hard time limit**: an answer
    sympy cannot finish with can hang the caller (the size guard refuses the common
    shapes, such as power towers and huge factorials, but not every one).
    ``timeout_s``: wall-clock limit per sample (pool only).
    ``extract``: the answer forms looked for, strongest first (default
    ``answer_tag, boxed, phrase, gsm8k``). ``last_number: true`` adds the last-number fallback
    (off by default: a number a completion mentions, denies or copies from the prompt is not an
    answer it commits to; even on, it never takes a prompt's number or one in a question, a
    negation, a condition or an "a or b" choice).
    ``leniency``: see :class:`~rewardsmith.verifiers.math.leniency.Leniency`.
    """

    name = "math"

    answer_field: str = option("answer", "the field holding the gold answer (a dotted path reaches a nested one)")
    leniency: Leniency = option(Leniency(), "what counts as the same answer: the switches below")
    last_number: bool = option(False, "fall back to the completion's last standalone number (opt-in)")
    extract: tuple[Method, ...] = option(DEFAULT_METHODS, "the answer forms looked for, strongest first")
    prompt_opens_think: bool = option(False, PROMPT_OPENS_THINK_DOC)
    timeout_s: Annotated[float, Range(gt=0)] = option(5.0, "wall-clock limit per sample (pool only)")
    workers: Annotated[int, Range(ge=0)] | None = option(
        None, "grading processes (default: the CPUs this process may use); 0 grades in-process, without a time limit")

    def __post_init__(self) -> None:
        wanted = set(self.extract) | ({"last_number"} if self.last_number else set())
        self.methods = tuple(m for m in METHODS if m in wanted)
        self.last_number = "last_number" in self.methods
        self.task = GradeTask(self.leniency, self.methods, self.prompt_opens_think)

    def start(self, wait: bool = False) -> None:
        """Start the worker pool now (see :meth:`Verifier.start`); with ``wait`` each worker also
        loads the grading task and grades one pair before this returns."""
        if self.workers == 0:  # grades in the calling process: nothing to start
            return
        from rewardsmith.verifiers.pool import shared_pool

        pool = shared_pool(self.workers, preload=GradeTask.preload).start()
        if wait:  # one item per worker: the pool spreads a batch of `size` items one to each
            pool.map(self.task, [("1", "1")] * pool.size, self.timeout_s)

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        out: list[Verdict | None] = [None] * len(samples)
        unique: dict[tuple[str, str, Asked], list[int]] = {}
        for i, sample in enumerate(samples):
            gold = sample.get(self.answer_field)
            text = read_completion(sample)
            if gold is None or str(gold).strip() == "":
                out[i] = invalid_input(f"sample has no {self.answer_field!r} field to compare against",
                                       missing_field=self.answer_field)
            elif isinstance(text, Verdict):  # no completion at all is the row's fault, not an unanswered one
                out[i] = text
            else:
                unique.setdefault((str(gold), text, read_prompt(sample.prompt_text)), []).append(i)
        # Sorted by gold: pool chunks are contiguous, so a chunk shares its gold parses.
        items = sorted(unique, key=lambda item: item[0])
        for item, verdict in zip(items, self._grade(items), strict=True):
            for n, i in enumerate(unique[item]):
                out[i] = verdict if n == 0 else replace(verdict, details=dict(verdict.details))
        return out  # a gap left by a bug becomes an error verdict in Verifier.verify_batch

    def _grade(self, items: list[tuple[str, str, Asked]]) -> list[Verdict]:
        if not items:
            return []
        if self.workers == 0:
            return [self._grade_here(item) for item in items]
        from rewardsmith.verifiers.pool import shared_pool

        outcomes = shared_pool(self.workers).map(self.task, items, self.timeout_s)
        verdicts = []
        for item, outcome in zip(items, outcomes, strict=True):
            if outcome.kind == "ok":
                verdicts.append(outcome.value)
            elif outcome.kind == "timeout":
                verdicts.append(
                    Verdict(score=0.0, correct=None, status="timeout",
                            feedback=f"grading took longer than {self.timeout_s:g}s",
                            elapsed_s=self.timeout_s)
                )
            elif outcome.kind == "crash":
                verdicts.append(self._crashed(item, str(outcome.value)))
            else:
                verdicts.append(error(f"math grading failed: {outcome.value}"))
        return verdicts

    def _crashed(self, item: tuple[str, str, Asked], message: str) -> Verdict:
        """A worker died on this pair, twice. If the gold alone grades, the completion did it: 0."""
        from rewardsmith.verifiers.pool import shared_pool

        probe = shared_pool(self.workers).map(self.task, [(item[0], "")], self.timeout_s)[0]
        if probe.kind != "ok":
            return invalid_input(f"the gold answer crashes the grader ({message})")
        return Verdict(score=0.0, correct=False, status="no_answer",
                       feedback=f"the answer crashed the grader ({message})",
                       details={"gold": extract_gold(item[0])[:_SHOWN], "crashed": True})

    def _grade_here(self, item: tuple[str, str, Asked]) -> Verdict:
        try:
            return self.task(item)
        except Exception as exc:  # a bug in our code, not the completion's doing: an error verdict
            return error(f"math grading failed: {type(exc).__name__}: {exc}")
