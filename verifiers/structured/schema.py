"""JSON Schemas: read one from a spec or a row, check it, validate answers against it.

``jsonschema`` is imported only here, and only when a schema is used (it costs ~120 ms to import,
measured here; ``import rewardsmith.verifiers`` stays light). The dialect is the schema's own
``$schema`` when it names one jsonschema knows, else draft 2020-12. ``format`` is asserted (a schema
that says ``"format": "date"`` means a date) for the formats jsonschema can check here; a format it
has no checker for (``uri`` without ``rfc3987``) is not checked, and the verdict lists it.

Validation time can depend on the answer: a schema's ``pattern`` runs Python's backtracking regex on a
string the completion chose, ``uniqueItems`` compares items pairwise, and a recursive ``$ref`` under
``anyOf`` can branch at every level of the answer. :func:`needs_isolation` says when a schema uses
any of these (references that cannot recurse do not count), so the verifier validates in a
killable worker with a hard time limit.

Numbers: answers arrive as exact decimals (:mod:`.parse`), so the schema's numbers are read the same
way (its floats as the shortest decimals that print them: ``"multipleOf": 0.1`` is one tenth, not
the double nearest it), the ``integer`` type accepts a decimal with an integral value wherever the
dialect accepts ``1.0`` (draft 6 on), and arithmetic (``multipleOf``) runs with enough digits for
any answer within the digit limit.
"""

from __future__ import annotations

import contextlib
import decimal
import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from itertools import islice
from typing import Any

from rewardsmith.verifiers.core import short

# Keywords whose cost the answer can make super-linear (see the module docstring).
_COSTLY = frozenset({"pattern", "patternProperties", "uniqueItems", "format"})
_CHEAP_WHEN = {"uniqueItems": lambda v: v is not True, "format": lambda v: v != "regex"}
_ERRORS_KEPT = 5
_DECIMAL = re.compile(r"Decimal\('([^']*)'\)")
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
    """The schema's compact JSON text: the key of the validator cache, small to send to a worker (keys
    in the order the row gives them: rows of one dataset write a schema alike)."""
    try:
        return json.dumps(schema, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise SchemaProblem(f"the schema is not a JSON value: {short(str(exc), 120)}") from None


def needs_isolation(schema: Any) -> bool:
    """Whether validating against ``schema`` can take time the answer controls: a costly keyword
    anywhere, or references that may recurse (see :func:`_refs_may_recurse`)."""
    for node in _mappings(schema):
        if _COSTLY.intersection(node) and _costly_here(node):
            return True
    return _refs_may_recurse(schema)


def _mappings(schema: Any) -> Iterator[Mapping[str, Any]]:
    """Every mapping of a schema, but the values of ``enum``, ``const``, ``default`` and ``examples``
    (data, not schemas). Under ``properties`` and the like, keys are names: a property named ``enum``
    holds a schema and is walked."""
    stack: list[tuple[Any, bool]] = [(schema, False)]
    while stack:
        node, names = stack.pop()
        if isinstance(node, Mapping):
            yield node
            for key, value in node.items():
                if names or key not in _DATA:
                    stack.append((value, not names and key in _NAMED))
        elif isinstance(node, list):
            stack.extend((item, False) for item in node)


@lru_cache(maxsize=_CACHE_SIZE)
def key_needs_isolation(key: str) -> bool:
    """:func:`needs_isolation` of the schema whose canonical text is ``key`` (cached)."""
    return needs_isolation(json.loads(key))


def _costly_here(node: Mapping[str, Any]) -> bool:
    # "uniqueItems": false costs nothing, and the format checkers are linear but for "regex" (it compiles
    # the answer's string). References are judged apart, on the whole schema.
    return any(not _CHEAP_WHEN.get(key, lambda v: False)(node[key]) for key in _COSTLY.intersection(node))


def _refs_may_recurse(schema: Any) -> bool:
    """Whether the schema's ``$ref`` graph may recurse: a reference that is not a plain local pointer
    (``#/$defs/Item``), one that leads nowhere, or a cycle among them (``Node`` holding a list of
    ``Node``). Without a cycle, references only expand the schema, a size fixed before any answer
    (pydantic and OpenAI structured-output schemas are full of such ``$defs``); with one, a
    combinator can branch at every level of the answer."""
    found = _refs_under(schema)
    if found is None:
        return True
    edges: dict[str, list[str]] = {}
    pending = list(found)
    while pending:
        pointer = pending.pop()
        if pointer in edges:
            continue
        if len(edges) >= _MAX_REFS:
            return True
        target = _resolve(schema, pointer)
        inner = None if target is _NOWHERE else _refs_under(target)
        if inner is None:
            return True
        edges[pointer] = inner
        pending.extend(inner)
    return _has_cycle(edges)


_NOWHERE = object()
_MAX_REFS = 200  # distinct references followed; a schema with more is validated in the pool
_DATA = frozenset({"enum", "const", "default", "examples"})  # values, not schemas: never read as keywords
# Keywords whose value maps names to schemas (a key there is a name, not a keyword).
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"})


def _refs_under(node: Any) -> list[str] | None:
    """The local ``$ref`` pointers anywhere in ``node``; None when one is not a plain local pointer (or
    the schema uses ``$dynamicRef``/``$recursiveRef``, which the walk cannot follow)."""
    found: list[str] = []
    for item in _mappings(node):
        if "$dynamicRef" in item or "$recursiveRef" in item:
            return None
        ref = item.get("$ref")
        if ref is not None:
            if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
                return None
            found.append(ref)
    return found


def _resolve(schema: Any, pointer: str) -> Any:
    """The node a local JSON pointer (``#/$defs/A~1B``) names in ``schema``, or ``_NOWHERE``."""
    from urllib.parse import unquote

    node = schema
    for raw in pointer[2:].split("/") if pointer != "#" else []:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return _NOWHERE
    return node


def _has_cycle(edges: dict[str, list[str]]) -> bool:
    """Whether the graph (each pointer to the pointers found under its target) has a cycle (iterative DFS)."""
    colour: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in edges:
        if colour.get(start):
            continue
        stack = [(start, iter(edges[start]))]
        colour[start] = 1
        while stack:
            pointer, successors = stack[-1]
            nxt = next(successors, None)
            if nxt is None:
                colour[pointer] = 2
                stack.pop()
            elif colour.get(nxt) == 1:
                return True
            elif not colour.get(nxt):
                colour[nxt] = 1
                stack.append((nxt, iter(edges.get(nxt, ()))))
    return False


_validators: dict[tuple[str, bool], Any] = {}


def validator(key: str, check_formats: bool) -> Any:
    """A checked validator for the schema whose canonical text is ``key`` (cached per process).
    :class:`SchemaProblem` when the schema is malformed."""
    cached = _validators.get((key, check_formats))
    if cached is not None:
        return cached
    from jsonschema import Draft202012Validator, SchemaError, validators

    schema = json.loads(key, parse_float=decimal.Decimal)
    try:
        cls = _exact(validators.validator_for(schema, default=Draft202012Validator))
        cls.check_schema(schema)
        made = cls(schema, format_checker=cls.FORMAT_CHECKER if check_formats else None)
    except (Exception, RecursionError) as exc:  # whatever a schema makes jsonschema raise is the schema's fault
        if not isinstance(exc, SchemaError):
            raise SchemaProblem(f"unusable JSON Schema: {type(exc).__name__}: {short(str(exc), 160)}") from None
        where = "/".join(str(p) for p in exc.path)
        raise SchemaProblem(
            f"malformed JSON Schema{f' at {where}' if where else ''}: {short(exc.message, 160)}"
        ) from None
    if len(_validators) >= _CACHE_SIZE:  # the oldest goes; another thread may have taken it already
        with contextlib.suppress(StopIteration, KeyError, RuntimeError):
            _validators.pop(next(iter(_validators)))
    _validators[(key, check_formats)] = made
    return made


_exact_classes: dict[Any, Any] = {}


def _exact(cls: Any) -> Any:
    """``cls`` whose ``integer`` type also holds a decimal with an integral value, where the dialect
    holds ``1.0`` to be one (draft 6 on; draft 4 says no to both). ``number`` already holds decimals."""
    made = _exact_classes.get(cls)
    if made is not None:
        return made
    from jsonschema import validators

    made = cls
    if cls.TYPE_CHECKER.is_type(1.0, "integer"):
        base = cls.TYPE_CHECKER

        def is_integer(checker: Any, instance: Any) -> bool:
            if isinstance(instance, decimal.Decimal):
                return instance.is_finite() and instance == instance.to_integral_value()
            return base.is_type(instance, "integer")

        made = validators.extend(cls, type_checker=base.redefine("integer", is_integer))
        made.FORMAT_CHECKER = cls.FORMAT_CHECKER
    _exact_classes[cls] = made
    return made


# Enough digits for ``multipleOf`` (the one keyword that divides) on any number the reader lets through
# (1,000 digits, exponent ±1,000).
_CONTEXT = decimal.Context(prec=4_100, Emax=10**6, Emin=-(10**6))


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
        with decimal.localcontext(_CONTEXT) if '"multipleOf"' in key else contextlib.nullcontext():
            return [_describe(error) for error in islice(found.iter_errors(value), _ERRORS_KEPT)]
    except Unresolvable as exc:
        raise SchemaProblem(f"the schema has a $ref that cannot be resolved: {short(str(exc), 160)}") from None


def _describe(error: Any) -> str:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    message = _DECIMAL.sub(r"\1", error.message)  # jsonschema prints repr(): show the number as written
    return f"{'$' + where}: {short(message, 160)}"


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
