"""Composition: weighted sums, gates, min/max, cascades, and routing by a dataset field.

Each composite runs its parts through their batch paths (so a math part still uses
its worker pool), keeps every part's verdict in ``Verdict.parts`` and its score in
``Verdict.components`` for logging. An ``error`` in any part that the result depends on
makes the result an ``error``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.verifiers.core import Sample, Verdict, Verifier, invalid_input
from rewardsmith.verifiers.registry import SpecError, build, register

_PRECEDENCE = ("error", "timeout", "invalid_input", "no_answer", "ok")


def _part_name(spec: Any, verifier: Verifier, taken: set[str]) -> str:
    base = spec.get("name") if isinstance(spec, Mapping) and "name" in spec else verifier.name
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _build_part(spec: Any) -> Verifier:
    if isinstance(spec, Mapping) and "name" in spec:
        spec = {k: v for k, v in spec.items() if k != "name"}
    return build(spec)


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


class _Composite(Verifier):
    """Parts scored side by side. ``correct`` is every part's ``correct`` combined with
    ``all``, or, with ``correct_from: NAME``, that one part's (a correctness part plus
    shaping parts such as format or length should report the correctness part's)."""

    def __init__(self, parts: Sequence[Any], correct_from: str | None = None) -> None:
        if not parts:
            raise SpecError(f"{self.name!r} needs at least one part in 'parts'")
        taken: set[str] = set()
        self.parts: dict[str, Verifier] = {}
        for spec in parts:
            verifier = _build_part(spec)
            self.parts[_part_name(spec, verifier, taken)] = verifier
        if correct_from is not None and correct_from not in self.parts:
            raise SpecError(f"correct_from {correct_from!r} names no part; parts: {', '.join(self.parts)}")
        self.correct_from = correct_from

    def components(self) -> dict[str, Verifier]:
        return dict(self.parts)

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        per_part = [part.verify_batch(samples) for part in self.parts.values()]
        names = list(self.parts)
        return [
            _merge(names, row, self._combine(names, row), self.correct_from)
            for row in zip(*per_part, strict=True)
        ]

    def _combine(self, names: Sequence[str], verdicts: Sequence[Verdict]) -> float:
        raise NotImplementedError


@register("weighted")
class Weighted(_Composite):
    """Σ weight·score over the parts (no normalisation: weights say what a part is worth)."""

    name = "weighted"

    def __init__(
        self, parts: Sequence[Any], weights: Sequence[float] | None = None, correct_from: str | None = None
    ) -> None:
        super().__init__(parts, correct_from)
        weights = [1.0] * len(self.parts) if weights is None else [float(w) for w in weights]
        if len(weights) != len(self.parts):
            raise SpecError(f"'weights' has {len(weights)} entries for {len(self.parts)} parts")
        self.weights = weights

    def _combine(self, names: Sequence[str], verdicts: Sequence[Verdict]) -> float:
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
class Gate(Verifier):
    """Score ``then`` only for samples that pass ``when``; the others get ``otherwise``.

    The typical use is format-then-correctness: a well-formatted wrong answer and a
    badly formatted right one both score ``otherwise``. ``then`` never runs on
    samples that fail the gate, which saves its cost.
    """

    name = "gate"

    def __init__(self, when: Any, then: Any, otherwise: float = 0.0, threshold: float | None = None) -> None:
        self.when = _build_part(when)
        self.then = _build_part(then)
        self.otherwise = float(otherwise)
        self.threshold = threshold
        self.when_name = _part_name(when, self.when, set())
        self.then_name = _part_name(then, self.then, {self.when_name})

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


@register("route")
class Route(Verifier):
    """Pick a reward per sample by a dataset field (``data_source`` or ``task``).

    One spec serves a mixed dataset: gsm8k rows go to ``math``, code rows to ``code``.
    A value with no route and no ``default`` is ``invalid_input``, naming the routes.
    """

    name = "route"

    def __init__(self, routes: Mapping[str, Any], field: str | None = None, default: Any = None) -> None:
        if not routes:
            raise SpecError("'route' needs a non-empty 'routes' mapping")
        self.field = field
        self.routes = {str(k): build(v) for k, v in routes.items()}
        self.default = build(default) if default is not None else None

    def components(self) -> dict[str, Verifier]:
        parts = dict(self.routes)
        if self.default is not None:
            parts["default"] = self.default
        return parts

    def _key(self, sample: Sample) -> str | None:
        names = [self.field] if self.field else ["data_source", "task"]
        for name in names:
            value = sample.get(name)
            if value is not None:
                return str(value)
        return None

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        groups: dict[str | None, list[int]] = {}  # None: the default route
        out: list[Verdict] = [Verdict()] * len(samples)
        for i, sample in enumerate(samples):
            key = self._key(sample)
            if key in self.routes:
                groups.setdefault(key, []).append(i)
            elif self.default is not None:
                groups.setdefault(None, []).append(i)
            else:
                field = self.field or "data_source/task"
                out[i] = invalid_input(
                    f"no route for {field}={key!r}; routes: {', '.join(self.routes)}", route=key
                )
        for key, indices in groups.items():
            verifier = self.routes[key] if key is not None else self.default
            label = key if key is not None else "default"
            assert verifier is not None
            for i, verdict in zip(indices, verifier.verify_batch([samples[i] for i in indices]), strict=True):
                nested = {f"{label}.{k}": s for k, s in verdict.components.items()}
                out[i] = Verdict(score=verdict.score, correct=verdict.correct, status=verdict.status,
                                 feedback=verdict.feedback, details={"route": label}, elapsed_s=verdict.elapsed_s,
                                 components={label: verdict.reward, **nested}, parts={label: verdict})
        return out


@register("cascade")
class Cascade(Verifier):
    """A rule verifier decides first; only its negatives (``correct`` False) go to the judge.

    Rules are cheap and exact when they say yes; a judge rescues answers a rule could not
    parse or match (``1/2`` written as "one half"). ``details["decided_by"]`` is ``rule`` or
    ``judge``; ``details["overturned"]`` says whether the judge turned a rule negative into a
    positive; ``parts`` holds the rule's verdict and, when asked, the judge's. A rule verdict
    with ``correct`` None (bad gold, timeout, error) is kept as is. ``on_judge_error``:
    ``error`` (the verdict is ``status=error``) or ``rule`` (fall back to the rule's negative).
    """

    name = "cascade"

    def __init__(self, rule: Any = "math", judge: Any = None, on_judge_error: str = "error") -> None:
        if on_judge_error not in ("error", "rule"):
            raise SpecError(f"on_judge_error must be 'error' or 'rule', got {on_judge_error!r}")
        self.rule = build(rule)
        if judge is None:
            judge = {"mode": "reference"}
        if isinstance(judge, Mapping) and "type" not in judge:
            judge = {"type": "judge", **judge}
        self.judge = build(judge)
        self.on_judge_error = on_judge_error

    def components(self) -> dict[str, Verifier]:
        return {"rule": self.rule, "judge": self.judge}

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        rule_verdicts = self.rule.verify_batch(samples)
        negatives = [i for i, v in enumerate(rule_verdicts) if v.correct is False]
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
