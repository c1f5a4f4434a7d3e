"""The ``json`` verifier: is the completion one well-formed structured value, valid under the row's
JSON Schema and (when the row has one) equal to its reference?

Fields read: ``schema`` (``schema_field``; an object, a boolean, or JSON text holding one) unless the
spec gives ``schema`` inline, and ``reference`` (``reference_field``): the expected value. Both are
required by default: a row without them is ``invalid_input``. Set ``reference_field: null`` for a
schema-only reward, and know that it pays any value the schema allows, placeholders included
(``{"name": "string"}``): gate it on a content check (see docs/verifiers/json.md).

Reading (:mod:`.extract`, :mod:`.parse`): the whole completion after a leading ``<think>`` block
(``extract: whole``) or its fenced code block as the CommonMark parser sees it (``extract: fenced``;
another block or a JSON value in the prose with a different value is a hedge, the same one repeated
is not), parsed strictly as ``format`` (json, yaml, toml): duplicate keys, NaN, comments, trailing
commas, YAML aliases and a second value after the first are refused; numbers are exact decimals;
size, depth and digits are bounded. Validation (:mod:`.schema`): jsonschema, draft 2020-12 unless
the schema's ``$schema`` says otherwise, ``format`` asserted, numbers as decimals. Comparison
(:mod:`.compare`): JSON equality (``true`` is not ``1``; ``2`` is ``2.0``, ``2.0000000000000004`` is
not), exact or by fields with partial credit.

Time: a schema whose validation time the answer can blow up (``pattern``, ``patternProperties``,
``uniqueItems``, ``$ref``, ``format: regex``) is validated in a pool of killable workers with a hard
``timeout_s`` per answer; the completion chose the string the pattern backtracks on, so a timeout
scores 0 with ``status=timeout``. YAML answers go to the pool too (PyYAML is pure Python: about 2 s
for 100,000 characters, measured here). Other rows are graded in the calling process (linear in the
answer's bounded size, milliseconds). ``workers: 0`` grades everything in-process, without a time limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any, Literal

from rewardsmith.verifiers.core import MISSING, Sample, Verdict, Verifier, error, invalid_input, lookup, read_completion
from rewardsmith.verifiers.options import Range, SpecError, declare, option
from rewardsmith.verifiers.reading import PROMPT_OPENS_THINK_DOC
from rewardsmith.verifiers.registry import register
from rewardsmith.verifiers.structured import schema as schemas
from rewardsmith.verifiers.structured.grade import GradeTask, Item
from rewardsmith.verifiers.structured.parse import Limits, Unreadable, parse

Positive = Annotated[int, Range(ge=1)]


@register("json")
@declare
class JsonVerifier(Verifier):
    """Structured output: one JSON (or YAML, TOML) value, valid under a JSON Schema, equal to a reference.

    1.0 when the completion is exactly one strictly parsed value that the schema accepts and that
    equals the row's reference (``compare: fields`` pays the fraction of reference fields matched);
    0 for anything else: a second value, a hedge in two fenced blocks, a duplicate key, a schema
    violation, extra keys (``extra_keys``). ``details`` says what was read and why the score.
    """

    name = "json"

    format: Literal["json", "yaml", "toml"] = option("json", "how the answer is written")
    extract: Literal["whole", "fenced"] = option(
        "whole", "whole: the completion without its reasoning is the answer; fenced: its one fenced block"
    )
    prompt_opens_think: bool = option(False, PROMPT_OPENS_THINK_DOC)
    schema: Mapping[str, Any] | bool | str | None = option(
        None, "an inline JSON Schema for every row, or its JSON text (otherwise the row's schema_field is read)"
    )
    schema_field: str | None = option("schema", "the field holding the row's JSON Schema (null: no schema check)")
    reference_field: str | None = option(
        "reference", "the field holding the expected value (null: schema only, which pays placeholders)"
    )
    reference_text: bool = option(False, "the reference field holds JSON text to parse, not the value itself")
    compare: Literal["exact", "fields"] = option("exact", "exact: 1 or 0; fields: fraction of reference leaves matched")
    extra_keys: Literal["reject", "penalize", "ignore"] = option(
        "reject", "keys (and array items) the reference lacks: score 0, count as wrong, or not count"
    )
    list_order: Literal["strict", "any"] = option("strict", "whether arrays compare in order or as multisets")
    check_formats: bool = option(True, "assert the schema's 'format' keywords jsonschema can check")
    max_chars: Positive = option(100_000, "longest answer read, in characters")
    max_depth: Positive = option(64, "deepest nesting read")
    max_digits: Positive = option(1000, "longest number literal read, in digits")
    timeout_s: Annotated[float, Range(gt=0)] = option(5.0, "wall-clock limit per answer validated in the pool")
    workers: Annotated[int, Range(ge=0)] | None = option(
        None, "pool processes for costly schemas (default: the CPUs); 0 validates in-process, without a time limit"
    )

    def __post_init__(self) -> None:
        self.task = GradeTask(
            self.format,
            self.extract,
            Limits(self.max_chars, self.max_depth, self.max_digits),
            self.compare,
            self.extra_keys,
            self.list_order,
            self.check_formats,
            self.prompt_opens_think,
        )
        self._inline: str | None = None
        if self.schema is not None:
            try:
                self._inline = schemas.schema_key(schemas.read_schema(self.schema))
                schemas.check(self._inline, self.check_formats)
            except schemas.SchemaProblem as exc:
                raise SpecError(str(exc), ("schema",)) from None

    def start(self, wait: bool = False) -> None:
        """Start the worker pool now when an inline schema will need it (see :meth:`Verifier.start`)."""
        costly = self._inline is not None and schemas.key_needs_isolation(self._inline)
        if self.workers == 0 or not (costly or self.format == "yaml"):
            return
        from rewardsmith.verifiers.pool import shared_pool

        pool = shared_pool(self.workers, preload=GradeTask.preload).start()
        if wait:
            pool.map(self.task, [Item("{}", None)] * pool.size, self.timeout_s)

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict | None]:
        """Each distinct (answer, schema, reference) once (GRPO groups repeat completions); costly ones
        in the pool, the rest here."""
        out: list[Verdict | None] = [None] * len(samples)
        isolated: list[tuple[int, Item]] = []
        first: dict[tuple[str, str | None, str], int] = {}
        copies: list[tuple[int, int]] = []
        for i, sample in enumerate(samples):
            item = self._item(sample)
            if isinstance(item, Verdict):
                out[i] = item
                continue
            seen = _identity(item)
            if seen is not None and seen in first:
                copies.append((i, first[seen]))
                continue
            if seen is not None:
                first[seen] = i
            key = item.schema_key
            if self.workers != 0 and (self.format == "yaml" or (key is not None and schemas.key_needs_isolation(key))):
                isolated.append((i, item))
            else:
                out[i] = self._here(item)
        for (i, _), verdict in zip(isolated, self._in_pool([item for _, item in isolated]), strict=True):
            out[i] = verdict
        for i, original in copies:
            verdict = out[original]
            out[i] = None if verdict is None else replace(verdict, details=dict(verdict.details))
        return out

    def _item(self, sample: Sample) -> Item | Verdict:
        """The grading item of a sample, or the ``invalid_input`` verdict saying what the row lacks."""
        text = read_completion(sample)
        if isinstance(text, Verdict):
            return text
        key = self._inline
        if key is None and self.schema_field is not None:
            raw = lookup(sample.fields, self.schema_field)
            if raw is MISSING or raw is None:
                return invalid_input(
                    f"sample has no {self.schema_field!r} field holding a JSON Schema "
                    "(set schema_field: null for no schema check)",
                    missing_field=self.schema_field,
                )
            try:
                key = schemas.schema_key(schemas.read_schema(raw))
                schemas.check(key, self.check_formats)
            except schemas.SchemaProblem as exc:
                return invalid_input(f"{self.schema_field!r}: {exc}")
        if self.reference_field is None:
            return Item(text, key)
        reference = lookup(sample.fields, self.reference_field)
        if reference is MISSING or reference is None:
            return invalid_input(
                f"sample has no {self.reference_field!r} field holding the expected value "
                "(set reference_field: null for a schema-only reward)",
                missing_field=self.reference_field,
            )
        if self.reference_text:
            if not isinstance(reference, str):
                return invalid_input(
                    f"{self.reference_field!r} should hold JSON text (reference_text: true), "
                    f"got {type(reference).__name__}"
                )
            try:
                reference = parse(reference, "json", Limits(max_chars=10**9, max_depth=10**4, max_digits=10**4))
            except Unreadable as exc:
                return invalid_input(f"{self.reference_field!r} is not JSON text: {exc}")
        return Item(text, key, reference, has_reference=True)

    def _here(self, item: Item) -> Verdict:
        try:
            return self.task(item)
        except Exception as exc:  # a bug in our code, not the completion's doing
            return error(f"json grading failed: {type(exc).__name__}: {exc}")

    def _in_pool(self, items: list[Item]) -> list[Verdict]:
        if not items:
            return []
        from rewardsmith.verifiers.pool import shared_pool

        outcomes = shared_pool(self.workers, preload=GradeTask.preload).map(self.task, items, self.timeout_s)
        verdicts = []
        for outcome in outcomes:
            if outcome.kind == "ok":
                verdicts.append(outcome.value)
            elif outcome.kind == "timeout":  # the answer chose what the schema's patterns ran on
                verdicts.append(
                    Verdict(
                        score=0.0,
                        correct=None,
                        status="timeout",
                        elapsed_s=self.timeout_s,
                        feedback=f"validation took longer than {self.timeout_s:g}s",
                    )
                )
            elif outcome.kind == "crash":
                verdicts.append(
                    Verdict(
                        score=0.0,
                        correct=False,
                        status="no_answer",
                        feedback=f"the answer crashed the validator ({outcome.value})",
                    )
                )
            else:
                verdicts.append(error(f"json grading failed: {outcome.value}"))
        return verdicts


def _identity(item: Item) -> tuple[str, str | None, str] | None:
    """What makes two items the same grading (None when the reference cannot be written as JSON)."""
    if not item.has_reference:
        return item.text, item.schema_key, ""
    try:
        import json

        return item.text, item.schema_key, json.dumps(item.reference, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return None


def _loads(key: str) -> Any:
    import json

    return json.loads(key)
