"""Grade one answer: read it, validate it, compare it. A pure, picklable task, so the same code runs
in the calling process and in the killable workers of :mod:`rewardsmith.verifiers.pool`.

Every problem the completion can cause ends in a verdict that scores 0 (``no_answer`` when nothing
could be read, ``ok`` when it was read and judged wrong), never ``error``; a schema that cannot be
used (malformed, an unresolvable ``$ref``) is the row's fault: ``invalid_input``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from rewardsmith.verifiers.core import Verdict, invalid_input, short
from rewardsmith.verifiers.reading import hinted, source_region
from rewardsmith.verifiers.structured import compare, schema
from rewardsmith.verifiers.structured.extract import Region, answer_text, values_outside
from rewardsmith.verifiers.structured.parse import Limits, Unreadable, parse

_SHOWN = 200  # characters of the answer kept in details


@dataclass(frozen=True)
class Item:
    """One answer to grade: the completion's text, the schema (its canonical text, or None for no
    schema) and the reference (``has_reference`` tells a null reference from none)."""

    text: str
    schema_key: str | None
    reference: Any = None
    has_reference: bool = False


@dataclass(frozen=True)
class GradeTask:
    fmt: str
    extract: str
    limits: Limits
    compare: str
    extra_keys: str
    list_order: str
    check_formats: bool
    prompt_opens_think: bool = False
    preload: ClassVar[tuple[str, ...]] = ("jsonschema", "yaml", "rewardsmith.verifiers.structured.grade")

    def warm_up(self) -> None:
        """Build one validator: jsonschema's first use (metaschemas, format checkers) is not charged to an item."""
        self(Item('{"a": "2024-01-01"}', schema.schema_key({"properties": {"a": {"format": "date", "pattern": "^2"}}})))

    def __call__(self, item: Item) -> Verdict:
        start = time.perf_counter()
        reading = source_region(item.text, self.prompt_opens_think)
        verdict = hinted(self._grade(item, reading.text), reading)
        verdict.elapsed_s = time.perf_counter() - start
        return verdict

    def _grade(self, item: Item, text: str) -> Verdict:
        details: dict[str, Any] = {"format": self.fmt, "extract": self.extract}
        region = answer_text(text, self.extract, self.fmt)
        if region.text is None:
            status = "ok" if region.hedge else "no_answer"
            return Verdict(score=0.0, correct=False, status=status, feedback=region.problem, details=details)
        details["answer"] = short(region.text, _SHOWN)
        try:
            value = parse(region.text, self.fmt, self.limits)
        except Unreadable as exc:
            return Verdict(score=0.0, correct=False, status="no_answer", feedback=str(exc), details=details)
        details["parsed"] = True
        second = _second_document(region, value, self.fmt, self.limits)
        if second:
            return Verdict(score=0.0, correct=False, status="ok", feedback=second, details=details)
        try:
            return self._judge(value, item, details)
        except schema.SchemaProblem as exc:
            return invalid_input(str(exc), **details)
        except (Exception, RecursionError, MemoryError) as exc:  # the answer made the validator or the comparison fail
            return Verdict(
                score=0.0,
                correct=False,
                status="ok",
                details=details,
                feedback=f"the answer could not be checked ({type(exc).__name__}: {short(str(exc), 120)})",
            )

    def _judge(self, value: Any, item: Item, details: dict[str, Any]) -> Verdict:
        if item.schema_key is not None:
            found = schema.errors(item.schema_key, value, self.check_formats)
            details["valid"] = not found
            if found:
                details["schema_errors"] = found
                return Verdict(
                    score=0.0,
                    correct=False,
                    status="ok",
                    details=details,
                    feedback=f"does not match the schema: {found[0]}",
                )
        if not item.has_reference:
            if item.schema_key is not None and _echoes(value, item.schema_key):
                return Verdict(
                    score=0.0,
                    correct=False,
                    status="ok",
                    details=details,
                    feedback="the answer is the schema itself, echoed back",
                )
            return Verdict(
                score=1.0,
                correct=True,
                status="ok",
                details=details,
                feedback="" if item.schema_key is not None else "read (no schema, no reference)",
            )
        reference = compare.exact_tree(item.reference)  # the row's floats, as the decimals they print
        result = compare.tally(reference, value, self.list_order == "any")
        score = compare.score(result, self.compare, self.extra_keys)
        if score < 1.0 and item.schema_key is not None:
            broken = _reference_breaks_schema(item.schema_key, reference, self.check_formats)
            if broken:
                return invalid_input(
                    f"the row's reference does not match its own schema ({broken}): no answer "
                    "could be right (reference_text: true reads a reference stored as JSON text)",
                    **details,
                )
        details.update(matched=result.matched, leaves=result.total, extra=result.extras)
        if result.differences:
            details["differences"] = result.differences
        feedback = "" if score == 1.0 else _why(result, self.extra_keys)
        return Verdict(score=score, correct=score == 1.0, status="ok", feedback=feedback, details=details)


def _second_document(region: Region, value: Any, fmt: str, limits: Limits) -> str:
    """Why the region holds a second document with another value (a hedge), or "": every other block
    of the format must read as the same value, and so must every JSON object or array outside them.
    The same document repeated is one answer."""
    if not region.others and not region.outside:
        return ""
    same = compare.canon(value)
    for other in region.others:
        try:
            if compare.canon(parse(other, fmt, limits)) == same:
                continue
        except Unreadable:
            pass
        return f"{len(region.others) + 1} fenced code blocks with different values: one answer, one value"
    found = values_outside(region.outside) if region.outside else []
    if isinstance(found, str):
        return f"another value outside the fenced block: {found}"
    for stray, shown in found:
        if compare.canon(stray) != same:
            return f"another value outside the fenced block: {shown}"
    return ""


def _reference_breaks_schema(key: str, reference: Any, check_formats: bool) -> str:
    """The first reason the row's reference is schema-invalid, or "" (checked only when an answer missed:
    an inconsistent row must not pass for a wrong answer, e.g. a reference stored as JSON text)."""
    try:
        found = schema.errors(key, reference, check_formats)
    except (Exception, RecursionError):  # the reference is the row's: whatever it does, the row is at fault
        return "it cannot be validated"
    return found[0] if found else ""


def _echoes(value: Any, key: str) -> bool:
    """Whether ``value`` is the schema itself (compared only when it is an object with the schema's keys)."""
    if not isinstance(value, dict):
        return False
    schema = _schema_value(key)
    return isinstance(schema, dict) and value.keys() == schema.keys() and compare.canon(value) == compare.canon(schema)


@lru_cache(maxsize=64)
def _schema_value(key: str) -> Any:
    return json.loads(key)


def _why(result: compare.Tally, extra_keys: str) -> str:
    said = f"{result.matched} of {result.total} reference fields match"
    if result.extras:
        said += f"; {result.extras} not in the reference" + (" (rejected)" if extra_keys == "reject" else "")
    return f"{said}: {'; '.join(result.differences[:3])}"
