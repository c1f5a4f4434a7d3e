"""JSON Schemas: read one from a spec or a row, check it, validate answers against it.

``jsonschema`` is imported only here, and only when a schema is used (it costs ~120 ms to import,
measured here; ``import rewardsmith.verifiers`` stays light). The dialect is the schema's own
``$schema`` when it names one jsonschema knows, else draft 2020-12. ``format`` is asserted (a schema
that says ``"format": "date"`` means a date) for the formats jsonschema can check here; a format it
has no checker for (``uri`` without ``rfc3987``) is not checked, and the verdict lists it.

Validation time can depend on the answer: a schema's ``pattern`` runs Python's backtracking regex on a
string the completion chose, ``uniqueItems`` compares items pairwise, and a recursive ``$ref`` under
``anyOf`` can branch at every level of the answer. :func:`needs_isolation` says when a schema uses
any of these, so the verifier validates in a killable worker with a hard time limit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import islice
from typing import Any

from rewardsmith.verifiers.core import short

# Keywords whose cost the answer can make super-linear (see the module docstring).
_COSTLY = frozenset({"pattern", "patternProperties", "uniqueItems", "$ref", "$dynamicRef", "$recursiveRef", "format"})
_CHEAP_WHEN = {"uniqueItems": lambda v: v is not True, "format": lambda v: v != "regex"}
_ERRORS_KEPT = 5
_CACHE_SIZE = 256


class SchemaProblem(ValueError):
    """The schema itself is unusable (malformed, or a ``$ref`` that leads nowhere): the row's or the
    spec's fault, never the completion's."""


def read_schema(value: Any) -> Any:
    """A schema from a spec or row value: an object or a boolean, or JSON text holding one (datasets
    often store schemas as strings). :class:`SchemaProblem` otherwise."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as exc:
            raise SchemaProblem(f"the schema is a string but not JSON: {short(str(exc), 120)}") from None
    if not isinstance(value, Mapping | bool):
        raise SchemaProblem(f"a JSON Schema is an object or a boolean, got {short(value, 80)}")
    return value


def schema_key(schema: Any) -> str:
    """The schema's canonical JSON text: the key of the validator cache, small to send to a worker."""
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise SchemaProblem(f"the schema is not a JSON value: {short(str(exc), 120)}") from None


def needs_isolation(schema: Any) -> bool:
    """Whether validating against ``schema`` can take time the answer controls (a costly keyword anywhere)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            if _COSTLY.intersection(node) and _costly_here(node):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _costly_here(node: Mapping[str, Any]) -> bool:
    # "uniqueItems": false costs nothing, and the format checkers are linear but for "regex" (it compiles
    # the answer's string); a "$ref" is costly only when it can recurse, but telling that takes
    # resolving it: every reference counts.
    return any(not _CHEAP_WHEN.get(key, lambda v: False)(node[key]) for key in _COSTLY.intersection(node))


_validators: dict[tuple[str, bool], Any] = {}


def validator(key: str, check_formats: bool) -> Any:
    """A checked validator for the schema whose canonical text is ``key`` (cached per process).
    :class:`SchemaProblem` when the schema is malformed."""
    cached = _validators.get((key, check_formats))
    if cached is not None:
        return cached
    from jsonschema import Draft202012Validator, SchemaError, validators

    schema = json.loads(key)
    try:
        cls = validators.validator_for(schema, default=Draft202012Validator)
        cls.check_schema(schema)
        made = cls(schema, format_checker=cls.FORMAT_CHECKER if check_formats else None)
    except (Exception, RecursionError) as exc:  # whatever a schema makes jsonschema raise is the schema's fault
        if not isinstance(exc, SchemaError):
            raise SchemaProblem(f"unusable JSON Schema: {type(exc).__name__}: {short(str(exc), 160)}") from None
        where = "/".join(str(p) for p in exc.path)
        raise SchemaProblem(
            f"malformed JSON Schema{f' at {where}' if where else ''}: {short(exc.message, 160)}"
        ) from None
    if len(_validators) >= _CACHE_SIZE:
        _validators.pop(next(iter(_validators)))
    _validators[(key, check_formats)] = made
    return made


def check(key: str, check_formats: bool) -> None:
    """Raise :class:`SchemaProblem` when the schema is malformed (what a spec's build and a row's read check)."""
    validator(key, check_formats)


def errors(key: str, value: Any, check_formats: bool) -> list[str]:
    """Up to five reasons ``value`` breaks the schema (empty: valid). A ``$ref`` that cannot be resolved
    is the schema's fault (:class:`SchemaProblem`); whatever else the value makes the validator raise
    (a ``RecursionError`` on deep nesting) propagates for the caller to score 0."""
    from referencing.exceptions import Unresolvable

    found = validator(key, check_formats)
    try:
        return [_describe(error) for error in islice(found.iter_errors(value), _ERRORS_KEPT)]
    except Unresolvable as exc:
        raise SchemaProblem(f"the schema has a $ref that cannot be resolved: {short(str(exc), 160)}") from None


def _describe(error: Any) -> str:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{'$' + where}: {short(error.message, 160)}"


def unchecked_formats(schema: Any, check_formats: bool) -> list[str]:
    """The ``format`` values in ``schema`` that jsonschema has no checker for here (not asserted)."""
    from jsonschema import Draft202012Validator

    known = set(Draft202012Validator.FORMAT_CHECKER.checkers) if check_formats else set()
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            fmt = node.get("format")
            if isinstance(fmt, str) and fmt not in known:
                found.add(fmt)
            stack.extend(v for k, v in node.items() if k not in ("enum", "const", "default", "examples"))
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(found)
