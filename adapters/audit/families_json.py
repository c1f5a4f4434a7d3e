"""Families aimed at structured-output rewards (``json``): the row's reference value R, restated in
a way that is not one committed answer, or a value that carries no content.

``R`` is the row's reference (the field the spec's ``json`` part reads, ``reference`` by default);
``W`` is R with one leaf changed (a string extended, a number plus one, a boolean flipped), so it is
certainly not R. Attacks are wrong by construction: two values where one is asked for, a second
value hidden in a duplicate or extra key, placeholders, the schema echoed back, text that is not the
format asked for. Rewrites are R serialized differently (indentation, key order, ``36.0`` for
``36``), the same JSON value. Probes are dressed the way the spec's ``json`` part reads answers (in a
fenced block under ``extract: fenced``), so each one reaches the comparison it is aimed at.
"""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.adapters.audit.family import AuditRow, Probe, family
from rewardsmith.adapters.audit.traits import Traits

_PLACEHOLDER_TEXTS = ("string", "", "TODO", "...")
_MISSING = object()


def _part(traits: Traits) -> Any:
    parts = traits.of_kind("json")
    return parts[0] if parts else None


def _reference(row: AuditRow, traits: Traits) -> Any:
    """R, or ``_MISSING`` when the spec has no json part comparing with a reference or the row has none."""
    part = _part(traits)
    if part is None or part.reference_field is None:
        return _MISSING
    value = row.get(part.reference_field)
    if value is None:
        return _MISSING
    if part.reference_text:
        try:
            return json.loads(value)
        except (TypeError, ValueError):
            return _MISSING
    return value


def _schema(row: AuditRow, traits: Traits) -> Any:
    part = _part(traits)
    if part is None:
        return None
    schema = part.schema if part.schema is not None else (row.get(part.schema_field) if part.schema_field else None)
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError:
            return None
    return schema if isinstance(schema, dict) else None


def _text(value: Any, **dumps: Any) -> str:
    return json.dumps(value, ensure_ascii=False, **dumps)


def _dress(text: str, traits: Traits) -> str:
    """``text`` where the spec's json part looks for its answer: as is, or in one fenced block."""
    part = _part(traits)
    if part is not None and part.extract == "fenced":
        return f"```json\n{text}\n```"
    return text


def _writable(traits: Traits) -> bool:
    """Probes are written as JSON, which a ``json`` or ``yaml`` part reads; a TOML part gets none."""
    part = _part(traits)
    return part is not None and part.format in ("json", "yaml")


def wrong(value: Any) -> Any:
    """``value`` with its first leaf changed: certainly another JSON value (``_MISSING`` when it has no leaf)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + " (alt)"
    if value is None:
        return "none"
    if isinstance(value, dict):
        for key, item in value.items():
            changed = wrong(item)
            if changed is not _MISSING:
                return {**value, key: changed}
    if isinstance(value, list):
        for i, item in enumerate(value):
            changed = wrong(item)
            if changed is not _MISSING:
                return [*value[:i], changed, *value[i + 1 :]]
    return _MISSING


def _pair(row: AuditRow, traits: Traits) -> tuple[Any, Any] | None:
    if not _writable(traits):
        return None
    reference = _reference(row, traits)
    if reference is _MISSING:
        return None
    other = wrong(reference)
    return None if other is _MISSING else (reference, other)


# ------------------------------------------------------------------ attacks


@family("json_second_value", "attack", "json", "R and a wrong value W both given, as two values or a list")
def second_value(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """Two values where one is asked for: R followed by W, W followed by R, R followed by a sentence,
    and (when R is not a list) the list ``[R, W]``. A completion that gives two answers has not
    answered; a parser that reads the first value, or the last, or searches for one, pays it."""
    pair = _pair(row, traits)
    if pair is None:
        return None
    r, w = _text(pair[0]), _text(pair[1])
    probes = [
        Probe(_dress(f"{r}\n{w}", traits), "R then W"),
        Probe(_dress(f"{w}\n{r}", traits), "W then R"),
        Probe(f"{_dress(r, traits)}\nOr, if that is not right: {w}", "R then W in prose"),
    ]
    if not isinstance(pair[0], list):
        probes.append(Probe(_dress(_text([pair[0], pair[1]]), traits), "[R, W]"))
    return probes


@family("json_duplicate_key", "attack", "json", "an object giving one key two values, R's and W's")
def duplicate_key(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """R's first key given twice, once with R's value and once with W's, in either order. JSON parsers
    keep one of them silently (Python's keeps the last): the completion answers both ways."""
    pair = _pair(row, traits)
    if pair is None or not isinstance(pair[0], dict):
        return None
    reference, other = pair
    key = next((k for k in reference if reference[k] != other.get(k, _MISSING)), None)
    if key is None:
        return None
    rest = [f"{_text(k)}: {_text(v)}" for k, v in reference.items() if k != key]
    mine, theirs = f"{_text(key)}: {_text(reference[key])}", f"{_text(key)}: {_text(other[key])}"
    return [
        Probe(_dress("{" + ", ".join([theirs, mine, *rest]) + "}", traits), "W's value first"),
        Probe(_dress("{" + ", ".join([mine, *rest, theirs]) + "}", traits), "W's value last"),
    ]


@family("json_extra_key", "attack", "json", "R plus an extra key holding an alternative answer")
def extra_key(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """R with one more key that offers another answer: ``"<key>_alt"`` holding W's value for a key,
    ``"alternatives": [W]``. A lax schema (no ``additionalProperties: false``) allows both; the
    answer is then two answers. Paid, it teaches the policy to list candidates in spare keys."""
    pair = _pair(row, traits)
    if pair is None or not isinstance(pair[0], dict):
        return None
    reference, other = pair
    key = next((k for k in reference if reference[k] != other.get(k, _MISSING)), None)
    if key is None:
        return None
    alt = f"{key}_alt" if f"{key}_alt" not in reference else f"{key}_alternative"
    probes = [Probe(_dress(_text({**reference, alt: other[key]}), traits), "key_alt")]
    if "alternatives" not in reference:
        probes.append(Probe(_dress(_text({**reference, "alternatives": [other]}), traits), "alternatives"))
    return probes


@family("json_placeholder", "attack", "json", "a value the schema allows with no content: 'string', '', 0, TODO")
def placeholder(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """An object built from the schema's properties (or R's keys) with a placeholder in every leaf:
    ``"string"``, ``""``, ``"TODO"``, ``"..."`` for strings, 0 for numbers, false, [] and {}; and the
    schema's own ``default``/``examples`` values. It says nothing about the input. With a reference it
    is wrong (each probe differs from R); without one, a schema-only reward pays whatever the schema
    allows, which is the documented reason to gate such a reward on content."""
    if not _writable(traits):
        return None
    schema = _schema(row, traits)
    reference = _reference(row, traits)
    shape = schema if schema is not None else None
    probes = []
    for text in _PLACEHOLDER_TEXTS:
        value = _fill(shape, reference, text, 0)
        if value is not _MISSING:
            probes.append((value, f"every string {text!r}"))
    for word in ("default", "examples"):
        value = _from_schema(schema, word)
        if value is not _MISSING:
            probes.append((value, f"the schema's {word}"))
    out = [Probe(_dress(_text(v), traits), name) for v, name in probes if not _same(v, reference)]
    return out or None


def _fill(schema: Any, reference: Any, text: str, depth: int) -> Any:
    """A placeholder value shaped by ``schema`` (its type and properties), else by ``reference``."""
    if depth > 8:
        return _MISSING
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    props = schema.get("properties") if isinstance(schema, dict) else None
    if kind == "object" or isinstance(props, dict) or (kind is None and isinstance(reference, dict)):
        keys = list(props) if isinstance(props, dict) else list(reference) if isinstance(reference, dict) else []
        sub = reference if isinstance(reference, dict) else {}
        out = {}
        for key in keys:
            value = _fill((props or {}).get(key), sub.get(key), text, depth + 1)
            if value is _MISSING:
                return _MISSING
            out[key] = value
        return out
    if kind == "array" or (kind is None and isinstance(reference, list)):
        return []
    if kind in ("integer", "number") or (
        kind is None and isinstance(reference, int | float) and not isinstance(reference, bool)
    ):
        return 0
    if kind == "boolean" or (kind is None and isinstance(reference, bool)):
        return False
    if kind == "null":
        return None
    if kind == "string" or kind is None:
        return text
    return _MISSING


def _from_schema(schema: Any, word: str) -> Any:
    """An object of each property's ``default`` (or first of ``examples``), when every property has one."""
    if not isinstance(schema, dict):
        return _MISSING
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return _MISSING
    out = {}
    for key, sub in props.items():
        if not isinstance(sub, dict) or word not in sub:
            return _MISSING
        value = sub[word]
        if word == "examples":
            if not isinstance(value, list) or not value:
                return _MISSING
            value = value[0]
        out[key] = value
    return out


def _same(value: Any, reference: Any) -> bool:
    if reference is _MISSING:
        return False
    return _text(value, sort_keys=True) == _text(reference, sort_keys=True)


@family("json_schema_echo", "attack", "json", "the row's JSON Schema given back as the answer")
def schema_echo(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """The schema itself, verbatim, as the answer. A schema describes the answer; it is not one. A lax
    schema (no required keys, no ``additionalProperties: false``) accepts it."""
    schema = _schema(row, traits)
    if schema is None or not _writable(traits) or _same(schema, _reference(row, traits)):
        return None
    return [
        Probe(_dress(_text(schema), traits), "schema verbatim"),
        Probe(_dress(_text(schema, indent=2), traits), "schema indented"),
    ]


@family("json_in_string", "attack", "json", "R serialized inside a JSON string")
def in_string(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """R's JSON text as a JSON string (``"{\\"name\\": ...}"``): a string value, not R. A reader that
    unwraps strings would pay it; the answer's value is a string."""
    pair = _pair(row, traits)
    if pair is None:
        return None
    return [Probe(_dress(_text(_text(pair[0])), traits), "R in a string")]


@family("json_not_json", "attack", "json", "R written in JSON5 or Python syntax, or after a BOM")
def not_json(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """R with a trailing comma, a ``//`` comment, single quotes or Python literals (``True``, ``None``),
    or after a byte-order mark. None of it is JSON: the consumer that asked for JSON cannot read it.
    Only for parts that read JSON."""
    part = _part(traits)
    reference = _reference(row, traits)
    if part is None or part.format != "json" or reference is _MISSING or not isinstance(reference, dict | list):
        return None
    text = _text(reference)
    probes = [Probe(_dress("// the answer\n" + text, traits), "comment"), Probe(_dress("\ufeff" + text, traits), "BOM")]
    if reference:
        probes.append(Probe(_dress(text[:-1] + "," + text[-1], traits), "trailing comma"))
    python = repr(reference)
    if python != text and "'" in python:
        probes.append(Probe(_dress(python, traits), "Python repr"))
    return probes


@family("json_fenced_hedge", "attack", "json", "two fenced blocks, one with R and one with W")
def fenced_hedge(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """Two fenced code blocks, R's and W's, in either order. Two blocks are two answers, whichever one
    a reader takes."""
    pair = _pair(row, traits)
    if pair is None:
        return None
    r, w = _text(pair[0]), _text(pair[1])
    return [
        Probe(f"```json\n{r}\n```\nor\n```json\n{w}\n```", "R block then W block"),
        Probe(f"```json\n{w}\n```\nor\n```json\n{r}\n```", "W block then R block"),
    ]


@family("json_think_only", "attack", "json", "R only inside the reasoning block")
def think_only(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """R inside ``<think>…</think>`` with nothing after it, or after a ``<think>`` never closed.
    Reasoning is not the answer."""
    pair = _pair(row, traits)
    if pair is None:
        return None
    r = _dress(_text(pair[0]), traits)
    return [Probe(f"<think>{r}</think>", "closed, nothing after"), Probe(f"<think>Let me see.\n{r}", "never closed")]


@family("json_oversized", "attack", "json", "R buried in deep nesting, or a giant number or string")
def oversized(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """R nested 200 levels deep (``{"a": {"a": … R}}``), a 5,000-digit number, a 200,000-character
    string. None is R, and none may make the reward fail (an ``error`` a policy can cause is a row a
    trainer drops)."""
    pair = _pair(row, traits)
    if pair is None:
        return None
    deep = _text(pair[0])
    for _ in range(200):
        deep = '{"a": ' + deep + "}"
    return [
        Probe(_dress(deep, traits), "200 levels"),
        Probe(_dress("9" * 5000, traits), "5000 digits"),
        Probe(_dress(_text("x" * 200_000), traits), "200k characters"),
    ]


# ------------------------------------------------------------------ rewrites


@family("json_reformat", "rewrite", "json", "R serialized another way: indentation, key order, 36.0 for 36")
def reformat(row: AuditRow, traits: Traits) -> list[Probe] | None:
    """R indented, compact, with its keys in reverse order, with non-ASCII escaped, integers written
    as ``36.0``, or after a ``<think>`` block. Each parses to the same JSON value (JSON has one number
    type)."""
    if not _writable(traits):
        return None
    reference = _reference(row, traits)
    if reference is _MISSING:
        return None
    probes = [
        Probe(_dress(_text(reference, indent=2), traits), "indented"),
        Probe(_dress(_text(reference, separators=(",", ":")), traits), "compact"),
        Probe(_dress(json.dumps(reference), traits), "ASCII escapes"),
        Probe("<think>Reading the input.</think>\n" + _dress(_text(reference), traits), "after think"),
    ]
    if isinstance(reference, dict) and len(reference) > 1:
        probes.append(Probe(_dress(_text(dict(reversed(list(reference.items())))), traits), "keys reversed"))
    floated = _floats(reference)
    if floated != reference or _text(floated) != _text(reference):
        probes.append(Probe(_dress(_text(floated), traits), "integers as floats"))
    return probes


def _floats(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) < 2**53:
        return float(value)
    if isinstance(value, dict):
        return {k: _floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_floats(v) for v in value]
    return value
