"""Composition: weighted sums, gates, min/max, cascades, and routing by a dataset field.

Each composite runs its parts through their batch paths (so a math part still uses
its worker pool), keeps every part's verdict in ``Verdict.parts`` and its score in
``Verdict.components`` for logging. An ``error`` in any part that the result depends on
makes the result an ``error``. A part's label is its spec's ``name``, else its type.
"""

from __future__ import annotations

import fnmatch
import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from rewardsmith.verifiers.core import MISSING, Sample, Verdict, Verifier, invalid_input, lookup
from rewardsmith.verifiers.options import (
    IsSpec,
    NonEmpty,
    Spec,
    SpecError,
    declare,
    option,
    unknown_name,
)
from rewardsmith.verifiers.registry import register
from rewardsmith.verifiers.wording import plural

_PRECEDENCE = ("error", "timeout", "invalid_input", "no_answer", "ok")

JudgeSpec = Annotated[str | Mapping[str, Any] | Verifier, IsSpec(default_type="judge")]
"""A judge spec: ``type`` may be left out (``{"mode": "reference"}`` is a judge)."""

logger = logging.getLogger("rewardsmith")  # the name users and tests filter warnings by


def _label(verifier: Verifier) -> str:
    return str(verifier.label or verifier.name)


def _unique(label: str, taken: set[str]) -> str:
    name, n = label, 2
    while name in taken:
        name, n = f"{label}_{n}", n + 1
    taken.add(name)
    return name


def _named(verifiers: Sequence[Verifier]) -> dict[str, Verifier]:
    """Parts by label; a repeated label gets a suffix (``math``, ``math_2``)."""
    taken: set[str] = set()
    return {_unique(_label(v), taken): v for v in verifiers}


def _worst_status(verdicts: Sequence[Verdict]) -> str:
    return min((v.status for v in verdicts), key=_PRECEDENCE.index, default="ok")


def _all_correct(verdicts: Sequence[Verdict]) -> bool | None:
    known = [v.correct for v in verdicts if v.correct is not None]
    return all(known) if known else None


def _merge(names: Sequence[str], verdicts: Sequence[Verdict], score: float, correct_from: str | None = None) -> Verdict:
    failing = [f"{n}: {v.feedback}" for n, v in zip(names, verdicts, strict=True) if v.feedback]
    components: dict[str, float | None] = {}
    for name, verdict in zip(names, verdicts, strict=True):
        components[name] = verdict.reward
        for sub, sub_score in verdict.components.items():
            components.setdefault(f"{name}.{sub}", sub_score)
    return Verdict(
        score=score,
        correct=verdicts[list(names).index(correct_from)].correct if correct_from else _all_correct(verdicts),
        status=_worst_status(verdicts),  # type: ignore[arg-type]
        feedback="; ".join(failing),
        elapsed_s=sum(v.elapsed_s for v in verdicts),
        components=components,
        parts=dict(zip(names, verdicts, strict=True)),
    )


@declare
class _Composite(Verifier):
    """Parts scored side by side. ``correct`` is every part's ``correct`` combined with
    ``all``, or, with ``correct_from: NAME``, that one part's (a correctness part plus
    shaping parts such as format or length should report the correctness part's)."""

    parts: Annotated[list[Spec], NonEmpty()] = option(doc="the rewards to combine; a part's `name` labels it")
    correct_from: str | None = option(None, "the part whose `correct` the result reports (default: all parts')")

    def __post_init__(self) -> None:
        self.named = _named(self.parts)
        if self.correct_from is not None and self.correct_from not in self.named:
            raise SpecError(unknown_name("part", self.correct_from, list(self.named), "parts"), ("correct_from",))

    def components(self) -> dict[str, Verifier]:
        return dict(self.named)

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        per_part = [part.verify_batch(samples) for part in self.named.values()]
        names = list(self.named)
        return [
            _merge(names, row, self._combine(names, row), self.correct_from)
            for row in zip(*per_part, strict=True)
        ]

    def _combine(self, names: Sequence[str], verdicts: Sequence[Verdict]) -> float:
        raise NotImplementedError


@register("weighted")
@declare
class Weighted(_Composite):
    """Σ weight·score over the parts (no normalisation: weights say what a part is worth)."""

    name = "weighted"

    weights: list[float] | None = option(None, "one weight per part, in order (default: 1 each)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.weights is None:
            self.weights = [1.0] * len(self.named)
        if len(self.weights) != len(self.named):
            raise SpecError(f"{len(self.weights)} weights for {len(self.named)} parts: give one weight per part",
                            ("weights",))

    def _combine(self, names: Sequence[str], verdicts: Sequence[Verdict]) -> float:
        assert self.weights is not None
        return sum(w * v.score for w, v in zip(self.weights, verdicts, strict=True))


@register("min")
class Minimum(_Composite):
    """The lowest part score: every part must be satisfied."""

    name = "min"

    def _combine(self, names: Sequence[str], verdicts: Sequence[Verdict]) -> float:
        return min(v.score for v in verdicts)


@register("max")
class Maximum(_Composite):
    """The highest part score: any part may be satisfied."""

    name = "max"

    def _combine(self, names: Sequence[str], verdicts: Sequence[Verdict]) -> float:
        return max(v.score for v in verdicts)


@register("gate")
@declare
class Gate(Verifier):
    """Score ``then`` only for samples that pass ``when``; the others get ``otherwise``.

    The typical use is format-then-correctness: a well-formatted wrong answer and a
    badly formatted right one both score ``otherwise``. ``then`` never runs on
    samples that fail the gate, which saves its cost.
    """

    name = "gate"

    when: Spec = option(doc="the gate: passed by an ok verdict that is correct (or, without `correct`, scores > 0)")
    then: Spec = option(doc="the reward of the samples that pass the gate")
    otherwise: float = option(0.0, "the score of the samples that do not pass")
    threshold: float | None = option(None, "pass when the gate's score is at least this, instead of by `correct`")

    def __post_init__(self) -> None:
        taken: set[str] = set()
        self.when_name = _unique(_label(self.when), taken)
        self.then_name = _unique(_label(self.then), taken)

    def components(self) -> dict[str, Verifier]:
        return {self.when_name: self.when, self.then_name: self.then}

    def _passes(self, verdict: Verdict) -> bool:
        if verdict.status != "ok":
            return False
        if self.threshold is not None:
            return verdict.score >= self.threshold
        return bool(verdict.correct) if verdict.correct is not None else verdict.score > 0

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        gate_verdicts = self.when.verify_batch(samples)
        passed = [i for i, v in enumerate(gate_verdicts) if self._passes(v)]
        then_verdicts = dict(zip(passed, self.then.verify_batch([samples[i] for i in passed]), strict=True))
        names = [self.when_name, self.then_name]
        out = []
        for i, gate in enumerate(gate_verdicts):
            inner = then_verdicts.get(i)
            if inner is None:
                merged = _merge(names[:1], [gate], self.otherwise)
                merged.correct = False if gate.status == "ok" else None
                merged.components[self.then_name] = None
                merged.feedback = f"gate {self.when_name} not passed" + (f": {gate.feedback}" if gate.feedback else "")
            else:
                merged = _merge(names, [gate, inner], inner.score)
                merged.correct = inner.correct
            merged.details["gate_passed"] = inner is not None
            out.append(merged)
        return out


_GLOB = frozenset("*?[")
_DEFAULT_FIELDS = ("data_source", "task")
_NOT_ROUTABLE = ("completion", "prompt")
_warned_routes: set[tuple[Any, ...]] = set()  # route configurations that have warned in this process


@register("route")
@declare
class Route(Verifier):
    """Pick a reward per row by a dataset field (``data_source``, else ``task``).

    One spec serves a mixed dataset and every trainer's names for it. Keys match the row's
    value ignoring case: a key without ``*``, ``?`` or ``[`` is an exact name and wins; else
    the first glob key (fnmatch: ``*gsm8k*`` matches verl's ``openai/gsm8k``) in spec order
    that matches; else ``default``. A row without the field (OpenRLHF sends no
    ``data_source``) takes only ``default``. A row no route takes is ``invalid_input``
    (``details["missing_field"]`` names the field when it is absent), counted in ``unrouted``
    and logged once per process with the values seen; a row whose value names no route but
    that ``default`` takes is counted in ``defaulted`` and logged the same way, so a misspelt
    name does not pass unnoticed. Only dataset fields are read: a completion never picks its
    own reward.
    """

    name = "route"

    routes: Annotated[dict[str, Spec], NonEmpty()] = option(
        doc="value or glob (case-insensitive) -> reward spec; exact names win, then globs in spec order")
    field: str | None = option(None, "the dataset field routed on, dotted paths allowed (default: data_source, "
                                     "else task)")
    default: Spec | None = option(None, "the reward for rows no route takes, and for rows without the field")

    def __post_init__(self) -> None:
        if self.field is not None and self.field.split(".")[0] in _NOT_ROUTABLE:
            raise SpecError(f"cannot route on {self.field!r}: a route reads the row's dataset fields (the prompt "
                            "and the completion are not among them), so a completion never picks its own reward",
                            ("field",))
        self._exact: dict[str, str] = {}
        self._globs: list[tuple[str, str]] = []
        for key in self.routes:
            folded = key.casefold()
            if not _GLOB.isdisjoint(key):
                self._globs.append((folded, key))
            elif folded in self._exact:
                raise SpecError(f"same key as {self._exact[folded]!r} (keys match ignoring case)", ("routes", key))
            else:
                self._exact[folded] = key
        taken: set[str] = set()
        self.labels = {key: _unique(_label(v), taken) if getattr(v, "label", None) else _unique(key, taken)
                       for key, v in self.routes.items()}
        self.default_label = _unique(_label(self.default) if getattr(self.default, "label", None) else "default",
                                     taken)
        self.unrouted: Counter[str] = Counter()  # values (or "<no FIELD>") of rows no route took
        self.defaulted: Counter[str] = Counter()  # values of named rows that went to the default route

    def components(self) -> dict[str, Verifier]:
        parts = {self.labels[key]: verifier for key, verifier in self.routes.items()}
        if self.default is not None:
            parts[self.default_label] = self.default
        return parts

    def value(self, sample: Sample) -> Any:
        """The row's routing value, ``MISSING`` when it has none (absent or null)."""
        for name in [self.field] if self.field else _DEFAULT_FIELDS:
            value = lookup(sample.fields, name)
            if value is not MISSING and value is not None:
                return value
        return MISSING

    def match(self, value: Any) -> str | None:
        """The route key that takes ``value``: the exact key, else the first matching glob; None: no route."""
        if value is MISSING:
            return None
        text = str(value).casefold()
        if text in self._exact:
            return self._exact[text]
        return next((key for pattern, key in self._globs if fnmatch.fnmatchcase(text, pattern)), None)

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        groups: dict[str | None, list[int]] = {}  # route key -> rows; None: the default route
        out: list[Verdict | None] = [None] * len(samples)
        missed: Counter[str] = Counter()
        defaulted: Counter[str] = Counter()
        for i, sample in enumerate(samples):
            value = self.value(sample)
            key = self.match(value)
            if key is not None or self.default is not None:
                groups.setdefault(key, []).append(i)
                if key is None and value is not MISSING:
                    defaulted[str(value)] += 1
            else:
                out[i] = self._unrouted(value)
                missed[f"<no {self._field_name()}>" if value is MISSING else str(value)] += 1
        for key, indices in groups.items():
            verifier = self.routes[key] if key is not None else self.default
            label = self.labels[key] if key is not None else self.default_label
            assert verifier is not None
            for i, verdict in zip(indices, verifier.verify_batch([samples[i] for i in indices]), strict=True):
                nested = {f"{label}.{k}": s for k, s in verdict.components.items()}
                out[i] = Verdict(score=verdict.score, correct=verdict.correct, status=verdict.status,
                                 feedback=verdict.feedback, details={"route": label}, elapsed_s=verdict.elapsed_s,
                                 components={label: verdict.reward, **nested}, parts={label: verdict})
        if missed:
            self._count(self.unrouted, missed, "matched no route and there is no 'default'; they score 0 as "
                        "invalid_input")
        if defaulted:
            self._count(self.defaulted, defaulted, "named no route and went to the 'default' route")
        return out  # type: ignore[return-value]  # every row was filled above

    def _field_name(self) -> str:
        return self.field or _DEFAULT_FIELDS[0]

    def _unrouted(self, value: Any) -> Verdict:
        keys = ", ".join(self.routes)
        if value is MISSING:
            fields = self.field or "data_source or task"
            return invalid_input(f"the row has no {fields} field to route by and the route has no 'default' "
                                 f"(routes: {keys})", missing_field=self._field_name())
        return invalid_input(f"no route for {self._field_name()}={value!r} (routes: {keys}); add its name, a glob "
                             "such as '*name*', or a 'default'", route=str(value))

    def _count(self, counter: Counter[str], batch: Counter[str], what: str) -> None:
        """Count a batch's rows that no route named; the first time in this process, say which values."""
        counter.update(batch)
        config = (what, self.field, tuple(self.routes))
        if config in _warned_routes:
            return
        _warned_routes.add(config)
        seen = ", ".join(f"{name!r} ({n})" for name, n in counter.most_common(10))
        logger.warning("route: %s %s. Values seen (rows): %s. Routes: %s. Add those names or a glob such as "
                       "'*gsm8k*' to the routes%s (shown once per process; Route.unrouted and Route.defaulted keep "
                       "counting).", plural(sum(counter.values()), "row"), what, seen, ", ".join(self.routes),
                       "" if self.default is not None else ", or a 'default' route")


@register("cascade")
@declare
class Cascade(Verifier):
    """A rule verifier decides first; only its negatives (``correct`` False) that it is not certain of
    go to the judge.

    Rules are cheap and exact when they say yes; a judge rescues answers a rule could not
    parse or match (``1/2`` written as "one half"). A negative the rule marks ``details["certain"]``
    (``math``: two machine-checkable values compared, or a hedge) stands without a judge, so a
    judge never overturns "7" for gold 12; ``judge_certain: true`` sends those too.
    ``details["decided_by"]`` is ``rule`` or
    ``judge``; ``details["overturned"]`` says whether the judge turned a rule negative into a
    positive; ``parts`` holds the rule's verdict and, when asked, the judge's. A rule verdict
    with ``correct`` None (bad gold, timeout, error) is kept as is. ``on_judge_error``:
    ``error`` (the verdict is ``status=error``) or ``rule`` (fall back to the rule's negative).
    """

    name = "cascade"

    rule: Spec = option("math", "the rule verifier; its positives and its undecided verdicts stand")
    judge: JudgeSpec = option(factory=lambda: {"mode": "reference"},
                              doc="the judge asked about the rule's negatives (a judge spec; `type` may be left out)")
    on_judge_error: Literal["error", "rule"] = option("error", "a judge failure: an error verdict, or the rule's "
                                                               "negative")
    judge_certain: bool = option(False, "also ask the judge about negatives the rule is certain of "
                                        "(two machine-checkable values compared)")

    def components(self) -> dict[str, Verifier]:
        return {"rule": self.rule, "judge": self.judge}

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        rule_verdicts = self.rule.verify_batch(samples)
        negatives = [i for i, v in enumerate(rule_verdicts)
                     if v.correct is False and (self.judge_certain or not v.details.get("certain"))]
        judged = dict(zip(negatives, self.judge.verify_batch([samples[i] for i in negatives]), strict=True))
        return [self._decide(rule_v, judged.get(i)) for i, rule_v in enumerate(rule_verdicts)]

    def _decide(self, rule_v: Verdict, judge_v: Verdict | None) -> Verdict:
        by_judge = judge_v is not None and not (judge_v.status != "ok" and self.on_judge_error == "rule")
        decided = judge_v if by_judge and judge_v is not None else rule_v
        parts = {"rule": rule_v} if judge_v is None else {"rule": rule_v, "judge": judge_v}
        return Verdict(
            score=decided.score, correct=decided.correct, status=decided.status, feedback=decided.feedback,
            details={"decided_by": "judge" if by_judge else "rule",
                     "overturned": by_judge and decided.status == "ok" and bool(decided.correct)},
            elapsed_s=sum(v.elapsed_s for v in parts.values()),
            components={"rule": rule_v.reward, "judge": None if judge_v is None else judge_v.reward},
            parts=parts,
        )
