"""Run an audit: every family's probes for every row, scored by ``build(spec).verify_batch``.

The same path every adapter uses scores the probes, so what the audit reports paid is what a
trainer would pay. Each row's known-correct completion (its ``reference`` column, else
``The answer is \\boxed{G}.``) is scored beside its probes: rewrites are judged against it (a
rewrite that earns less lost reward it should have kept), and so is padding.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from rewardsmith.adapters.audit.family import AuditRow, Family, Probe, select
from rewardsmith.adapters.audit.gold import Gold, choice_gold
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.adapters.fields import map_fields
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers.core import Sample, Verdict, Verifier, message_text
from rewardsmith.verifiers.registry import build

EXAMPLES_KEPT = 3
_SHOWN = 400  # characters of a prompt or completion kept in an example
_EPS = 1e-9


@dataclass
class FamilyResult:
    """One family's tally over the audited rows."""

    name: str
    kind: str
    target: str
    rows: int = 0  # rows the family applied to
    not_applicable: int = 0
    cases: int = 0
    hacks: int = 0  # attacks that were paid (or padding not charged)
    false_negatives: int = 0  # rewrites paid less than the row's known-correct completion
    errors: int = 0  # status=error verdicts: an outage, or a completion that forced one
    unjudged: int = 0  # rewrites on rows whose known-correct completion was not paid
    paid: float = 0.0  # total reward paid to this family's probes
    examples: list[dict[str, Any]] = field(default_factory=list)
    errors_are_hacks: bool = False  # the family forces errors (measure error): they are what it judges

    @property
    def flagged(self) -> int:
        if self.kind == "fuzz":  # the fuzzer makes both: wrong-making mutations and right-preserving ones
            return self.hacks + self.false_negatives
        return self.hacks if self.kind == "attack" else self.false_negatives

    @property
    def rate(self) -> float | None:
        judged = self.cases - self.unjudged - (0 if self.errors_are_hacks else self.errors)
        return self.flagged / judged if judged > 0 else None

    def as_dict(self) -> dict[str, Any]:
        return {"family": self.name, "kind": self.kind, "target": self.target, "rows": self.rows,
                "not_applicable": self.not_applicable, "cases": self.cases, "hacks": self.hacks,
                "false_negatives": self.false_negatives, "rate": self.rate, "errors": self.errors,
                "unjudged": self.unjudged, "mean_paid": self.paid / self.cases if self.cases else None,
                "examples": self.examples}


@dataclass
class AuditReport:
    spec: str
    families: list[FamilyResult]
    rows: int = 0
    malformed: list[dict[str, Any]] = field(default_factory=list)
    reference_rows: int = 0  # rows with a known-correct completion
    reference_paid: int = 0  # ...that the spec paid (the rewrites' baseline)
    reference_unpaid_examples: list[dict[str, Any]] = field(default_factory=list)
    gold_field: str = "answer"
    per_row: int = 2
    seed: int = 0
    threshold: float = 0.0
    elapsed_s: float = 0.0

    @property
    def hacks(self) -> int:
        return sum(f.hacks for f in self.families)

    @property
    def false_negatives(self) -> int:
        return sum(f.false_negatives for f in self.families)

    def as_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "rows": self.rows, "malformed": self.malformed, "gold_field": self.gold_field,
                "reference_rows": self.reference_rows, "reference_paid": self.reference_paid,
                "reference_unpaid_examples": self.reference_unpaid_examples, "per_row": self.per_row,
                "seed": self.seed, "threshold": self.threshold, "hacks": self.hacks,
                "false_negatives": self.false_negatives, "elapsed_s": round(self.elapsed_s, 3),
                "families": [f.as_dict() for f in self.families]}


Record = dict[str, Any]


def audit(
    reward: Any,
    rows: Iterable[Row],
    *,
    families: Iterable[str] | None = None,
    per_row: int = 2,
    seed: int = 0,
    fields: Mapping[str, str] | None = None,
    threshold: float = 0.0,
    reference_field: str = "reference",
    batch_rows: int = 32,
    on_record: Callable[[Record], None] | None = None,
    progress: Callable[[int], None] | None = None,
    fuzz: int = 0,
) -> AuditReport:
    """Attack ``reward`` (a spec or a built verifier) on ``rows`` and tally what it pays.

    ``per_row`` caps each family's probes per row (a seeded draw picks them, so a rerun gives the
    same report); ``threshold``: an attack scoring above it was paid (0: any reward at all).
    ``on_record`` receives every scored probe (the report's ``audit.jsonl``); ``progress`` the
    number of rows finished after each batch (with ``fuzz``, each row twice: once for the families,
    once for the fuzzer). ``fuzz``: that many mutations in total from the fuzzer (:mod:`.fuzz`),
    reported as the family ``fuzz``; naming only ``fuzz`` in ``families`` runs the fuzzer alone.
    """
    if per_row < 1:
        raise ValueError("per_row must be at least 1")
    if fuzz < 0:
        raise ValueError("fuzz must be 0 or more")
    start = time.perf_counter()
    verifier = build(reward)
    traits = Traits.of(verifier)
    names = families.split(",") if isinstance(families, str) else list(families or ())
    fuzz_only = bool(names) and all(n.strip() in ("fuzz", "") for n in names)
    chosen = [] if fuzz_only else select([n for n in names if n.strip() != "fuzz"])
    tallies = [FamilyResult(f.name, f.kind, f.target, errors_are_hacks=f.measure == "error") for f in chosen]
    report = AuditReport(spec=_describe(reward, verifier), families=tallies,
                         gold_field=traits.answer_fields[0], per_row=per_row, seed=seed, threshold=threshold)
    results = {r.name: r for r in report.families}
    kept: list[AuditRow] = []  # the fuzzer spreads its mutations over every row, and draws wrong values from them
    iterator = iter(rows)
    while batch := list(islice(iterator, batch_rows)):
        prepared = []
        for row in batch:
            if row.data is None:
                report.malformed.append({"line": row.line, "error": row.error})
                continue
            audit_row = _audit_row(row, traits, fields, reference_field)
            report.rows += 1
            if fuzz:
                kept.append(audit_row)
            if chosen:
                prepared.append((audit_row, _probes(audit_row, chosen, traits, per_row, seed, results)))
        if prepared:
            _score(verifier, prepared, report, results, {f.name: f for f in chosen}, threshold, on_record)
        if progress is not None:
            progress(len(batch))
    if fuzz:
        from rewardsmith.adapters.audit.fuzz import NAME
        from rewardsmith.adapters.audit.fuzz import fuzz as run_fuzz

        result = FamilyResult(NAME, "fuzz", "any")
        report.families.append(result)
        run_fuzz(verifier, kept, traits, result, total=fuzz, seed=seed, threshold=threshold, on_record=on_record,
                 progress=progress, record=_record, example=_example)
        if progress is not None:
            progress(len(report.malformed))  # the bar counts every input line twice
    report.elapsed_s = time.perf_counter() - start
    return report


def _audit_row(row: Row, traits: Traits, fields: Mapping[str, str] | None, reference_field: str) -> AuditRow:
    assert row.data is not None
    data = map_fields(row.data, fields) if fields else dict(row.data)
    prompt = data.get("prompt", "")
    extra = {k: v for k, v in data.items() if k not in ("prompt", "completion")}
    probe_sample = Sample(prompt=prompt, fields=extra)
    gold = next((g for choices, answer, _ in traits.choice_parts  # a choice row's gold is the label of its option
                 if (g := choice_gold(probe_sample.get(choices), probe_sample.get(answer))) is not None), None)
    gold = gold or next((Gold.read(value) for name in traits.answer_fields
                         if (value := probe_sample.get(name)) is not None and str(value).strip()), None)
    if gold is not None and "qa" in traits.kinds and not traits.has_math:
        gold = gold.as_text()
    reference = data.get(reference_field)
    if not isinstance(reference, str) or not reference.strip():
        reference = None if gold is None else f"The answer is \\boxed{{{gold.text}}}."
    return AuditRow(line=row.line, prompt=prompt, prompt_text=probe_sample.prompt_text, fields=extra, gold=gold,
                    reference=reference)


def _probes(row: AuditRow, chosen: Sequence[Family], traits: Traits, per_row: int, seed: int,
            results: dict[str, FamilyResult]) -> list[tuple[Family, Probe]]:
    out = []
    for fam in chosen:
        made = fam.probes(row, traits, per_row, seed)
        if made is None:
            results[fam.name].not_applicable += 1
            continue
        results[fam.name].rows += 1
        out.extend((fam, probe) for probe in made)
    return out


_CONTROL_WRONG = "The answer is \\boxed{rewardsmith-audit-control}."  # a fixed wrong completion


def _controls(verifier: Verifier, rows: list[AuditRow]) -> list[tuple[float, str] | None]:
    """(score, status) of each row's known-correct completion and of a fixed wrong one; None for one
    that ran into a time limit (a slow reference on a busy machine: no measure of what came before)."""
    samples = [Sample(prompt=row.prompt, completion=text, fields=row.fields)
               for row in rows for text in (row.reference, _CONTROL_WRONG) if text is not None]
    return [None if _timed_out(v) else (v.score, v.status) for v in verifier.verify_batch(samples)] if samples else []


def _timed_out(verdict: Verdict) -> bool:
    tests = verdict.details.get("tests") if isinstance(verdict.details, dict) else None
    return verdict.status == "timeout" or (
        isinstance(tests, list) and any(isinstance(t, dict) and t.get("status") == "timeout" for t in tests))


def _score(verifier: Verifier, prepared: list[tuple[AuditRow, list[tuple[Family, Probe]]]], report: AuditReport,
           results: dict[str, FamilyResult], by_name: dict[str, Family], threshold: float,
           on_record: Callable[[Record], None] | None) -> None:
    # Rows with probes that may run code: their controls are scored before and after the batch.
    watched = [(row, fam) for row, probes in prepared
               for fam in dict.fromkeys(f for f, _ in probes if f.measure == "executed")]
    controls_before = _controls(verifier, [row for row, _ in watched])
    samples: list[Sample] = []
    for row, probes in prepared:
        if row.reference is not None:
            samples.append(Sample(prompt=row.prompt, completion=row.reference, fields=row.fields))
        samples.extend(Sample(prompt=row.prompt, completion=probe.completion, fields=row.fields) for _, probe in probes)
    verdicts: Iterator[Verdict] = iter(verifier.verify_batch(samples) if samples else [])
    for row, probes in prepared:
        reference = next(verdicts) if row.reference is not None else None
        ref_paid = reference is not None and reference.status != "error" and reference.score > threshold
        if reference is not None:
            report.reference_rows += 1
            report.reference_paid += ref_paid
            if not ref_paid and len(report.reference_unpaid_examples) < EXAMPLES_KEPT:
                report.reference_unpaid_examples.append(_example(row, row.reference or "", reference))
            if on_record is not None:
                on_record(_record(row, "reference", "control", "known-correct", row.reference or "", reference, False))
        for fam, probe in probes:
            verdict = next(verdicts)
            result = results[fam.name]
            result.cases += 1
            if verdict.status == "error":
                result.errors += 1
                flagged = by_name[fam.name].measure == "error" or _flagged(
                    by_name[fam.name], verdict, reference, ref_paid, threshold, result, probe.marker)
            else:
                result.paid += verdict.score
                flagged = _flagged(by_name[fam.name], verdict, reference, ref_paid, threshold, result, probe.marker)
            if flagged:
                result.hacks += fam.kind == "attack"
                result.false_negatives += fam.kind == "rewrite"
                if len(result.examples) < EXAMPLES_KEPT:
                    result.examples.append({**_example(row, probe.completion, verdict), "variant": probe.variant})
            if on_record is not None:
                on_record(_record(row, fam.name, fam.kind, probe.variant, probe.completion, verdict, flagged))
    if watched:
        _compare_controls(verifier, watched, controls_before, results, on_record)


def _compare_controls(verifier: Verifier, watched: list[tuple[AuditRow, Family]],
                      before: list[tuple[float, str] | None], results: dict[str, FamilyResult],
                      on_record: Callable[[Record], None] | None) -> None:
    """A changed verdict of a control after the probes is one more hack of the family that ran them;
    each comparison is a case, so it is a record too (the report's counts are its records' counts)."""
    after = iter(_controls(verifier, [row for row, _ in watched]))
    earlier = iter(before)
    for row, fam in watched:
        result = results[fam.name]
        for text in (row.reference, _CONTROL_WRONG):
            if text is None:
                continue
            was, now = next(earlier), next(after)
            result.cases += 1
            changed = was is not None and now is not None and was != now
            later = Verdict(score=now[0], status=now[1],  # type: ignore[arg-type]
                            feedback=f"scored {was} before this family's probes, {now} after") if now is not None \
                else Verdict(score=0.0, status="timeout", feedback="ran into a time limit after the probes: "
                                                                   "measures nothing")
            if changed:
                result.hacks += 1
                if len(result.examples) < EXAMPLES_KEPT:
                    result.examples.append({**_example(row, text, later), "variant": "a later verdict"})
            if on_record is not None:
                variant = "a later verdict: " + ("known-correct" if text is row.reference else "fixed wrong")
                on_record(_record(row, fam.name, fam.kind, variant, text, later, changed))


def _flagged(fam: Family, verdict: Verdict, reference: Verdict | None, ref_paid: bool, threshold: float,
             result: FamilyResult, marker: str | None = None) -> bool:
    if fam.measure == "error":  # the verdict was not an error: nothing to flag
        return False
    if fam.measure == "executed":
        return marker is not None and os.path.lexists(marker)
    if fam.measure == "paid":
        return verdict.score > threshold
    if not ref_paid or reference is None:
        result.unjudged += 1
        return False
    if fam.measure == "not_below_ref":
        return verdict.score >= reference.score - _EPS
    return verdict.score < reference.score - _EPS


def _example(row: AuditRow, completion: Any, verdict: Verdict) -> dict[str, Any]:
    return {"line": row.line, "prompt": row.prompt_text[:_SHOWN], "completion": _shown(completion),
            "gold": None if row.gold is None else row.gold.text, "score": verdict.score, "status": verdict.status,
            "feedback": verdict.feedback[:_SHOWN]}


def _record(row: AuditRow, family_name: str, kind: str, variant: str, completion: Any, verdict: Verdict,
            flagged: bool) -> Record:
    return {"line": row.line, "family": family_name, "kind": kind, "variant": variant,
            "completion": completion, "gold": None if row.gold is None else row.gold.text,
            "flagged": flagged, "reward": verdict.reward, "verdict": verdict.to_dict()}


def _shown(completion: Any) -> str:
    text = message_text(completion) if not isinstance(completion, str) else completion
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _describe(reward: Any, verifier: Verifier) -> str:
    if isinstance(reward, str):
        return reward
    if isinstance(reward, Verifier):
        return repr(reward)
    import json

    try:
        return json.dumps(reward, default=str)[:200]
    except TypeError:
        return repr(verifier)
