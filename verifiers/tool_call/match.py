"""Does a call match an expected one, and which calls pair with which.

A value matches an acceptable value of the same kind: a string a string (see :func:`same_string`),
a boolean a boolean (never 1 for true), an integer an integer; an integer also matches a float
(Python's int → float), and a float matches an integer only where the docs declare a number.
Lists match element by element, in order (a tuple only where the docs declare a tuple); a dict
matches when each of its keys is expected and matches one of that key's acceptable values, and
every key it leaves out is optional. The declared type is thus checked through the acceptable
values: ``"5"`` never matches ``5``, and an argument whose acceptable value has another type than
the docs declare (BFCL's "variable" answers) is held to that value.

Calls pair by a maximum bipartite matching, so parallel calls count in any order and one call
never answers two expected ones.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.verifiers.tool_call.expected import OPTIONAL, ExpectedCall, Param, kind
from rewardsmith.verifiers.tool_call.parse import Call, shown

# BFCL ignores the marks , . / - _ * ^; of those only white space, commas, hyphens and underscores leave a
# string's meaning as it was ("New York, NY", "release_2" for "Release-2"). A dot, a slash, a star or a caret
# is part of the value: "/etc/hosts" is not "etc/hosts", "1.5" is not "1/5", "order.id" is not "order_id".
_SQUASH = re.compile(r"[\s,\-_]")
_NUMBERS = re.compile(r"(?:(?<![0-9A-Za-z])-)?\d+")  # a minus after a letter or digit is a hyphen
_WORDS = re.compile(r"[^\W_]+")  # runs of letters and digits


def _squashed(text: str) -> str:
    return _SQUASH.sub("", text.casefold()).replace("'", '"')


def _words(text: str) -> list[str]:
    return _WORDS.findall(text.casefold())


def same_string(value: str, acceptable: str, strings: str) -> bool:
    """``exact``: character for character. ``normalized``: equal with case, white space, commas, hyphens and
    underscores ignored and ``'`` read as ``"`` (BFCL's rule also ignores ``. / * ^``, which carry meaning), *and*
    made of the same words and the same signed numbers, in order. BFCL's rule reads ``"1.5"`` as ``"15"``,
    ``"-5"`` as ``"5"``, ``"1/2"`` as ``"12"``, ``"john.doe"`` as ``"johndoe"`` and ``"/etc/hosts"`` as
    ``"etchosts"``; here each is another value."""
    if strings == "exact":
        return value == acceptable
    return (
        _squashed(value) == _squashed(acceptable)
        and _words(value) == _words(acceptable)
        and _NUMBERS.findall(value) == _NUMBERS.findall(acceptable)
    )


def _alternatives(values: Any) -> list[Any]:
    items = values if isinstance(values, list) else [values]
    return [v for v in items if not (isinstance(v, str) and v == OPTIONAL)]


def _optional(values: Any) -> bool:
    return isinstance(values, list) and OPTIONAL in [v for v in values if isinstance(v, str)]


def _items(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    items = schema.get("items") if isinstance(schema, Mapping) else None
    return items if isinstance(items, Mapping) else None


def _property(schema: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    found = properties.get(key) if isinstance(properties, Mapping) else None
    return found if isinstance(found, Mapping) else None


def value_matches(value: Any, acceptable: Any, schema: Mapping[str, Any] | None, strings: str) -> bool:
    """Whether ``value`` (from the completion) is ``acceptable`` (from the row), per the module's rules."""
    declared = kind(schema)
    if isinstance(acceptable, dict):
        if not isinstance(value, dict) or any(key not in acceptable for key in value):
            return False
        for key, alternatives in acceptable.items():
            if key not in value:
                if not _optional(alternatives):
                    return False
            elif not any(
                value_matches(value[key], alt, _property(schema, key), strings) for alt in _alternatives(alternatives)
            ):
                return False
        return True
    if isinstance(acceptable, list):
        if isinstance(value, tuple) and declared == "tuple":
            value = list(value)
        if not isinstance(value, list) or len(value) != len(acceptable):
            return False
        item_schema = _items(schema)
        return all(value_matches(v, a, item_schema, strings) for v, a in zip(value, acceptable, strict=True))
    if acceptable is None:
        return value is None
    if isinstance(acceptable, bool):
        return isinstance(value, bool) and value == acceptable
    if isinstance(acceptable, int):
        return (type(value) is int or (type(value) is float and declared == "number")) and value == acceptable
    if isinstance(acceptable, float):
        return type(value) in (int, float) and value == acceptable
    if isinstance(acceptable, str):
        return isinstance(value, str) and same_string(value, acceptable, strings)
    return False


_JSON_KIND = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    tuple: "tuple",
    dict: "object",
    type(None): "null",
}


def _kind_of(value: Any) -> str:
    return _JSON_KIND.get(type(value), type(value).__name__)


def _fits(value: Any, declared: str | None) -> bool:
    got = _kind_of(value)
    return (
        declared is None
        or got == declared
        or (declared == "number" and got == "integer")
        or (declared == "tuple" and got == "array")
    )


def call_problem(call: Call, expected: ExpectedCall, strings: str, explain: bool = True) -> str | None:
    """None when ``call`` is ``expected``; else the first thing wrong with it, in words (``explain``
    off: a bare ``"mismatch"``, for the matching, which only needs to know)."""
    if call.problem is not None:
        return call.problem
    if call.name != expected.name:
        return f"calls {call.name}, not {expected.name}" if explain else MISMATCH
    for arg in call.arguments:
        if arg not in expected.params:
            return f"{expected.name}: unexpected argument {arg!r}" if explain else MISMATCH
    for arg in expected.required:
        if arg not in call.arguments:
            return f"{expected.name}: missing required argument {arg!r}" if explain else MISMATCH
    for param in expected.params.values():
        if param.name not in call.arguments:
            if not param.optional:
                return f"{expected.name}: missing argument {param.name!r}" if explain else MISMATCH
            continue
        value = call.arguments[param.name]
        if any(value_matches(value, a, param.schema, strings) for a in param.acceptable):
            continue
        return _value_problem(expected, param, value) if explain else MISMATCH
    return None


MISMATCH = "mismatch"


def _value_problem(expected: ExpectedCall, param: Param, value: Any) -> str:
    if not param.acceptable:
        return f"{expected.name}: argument {param.name!r} should be left out, got {shown(value)}"
    declared = kind(param.schema)
    if not _fits(value, declared):
        return f"{expected.name}: argument {param.name!r} must be {declared}, got {_kind_of(value)} {shown(value)}"
    accepted = ", ".join(shown(a, 30) for a in param.acceptable[:3]) + (", ..." if len(param.acceptable) > 3 else "")
    return f"{expected.name}: argument {param.name!r} = {shown(value)} is not an acceptable value ({accepted})"


def pair(ok: Sequence[Sequence[bool]], n_calls: int) -> dict[int, int]:
    """A maximum matching of expected calls (rows of ``ok``) to calls: expected index → call index
    (Kuhn's augmenting paths; sizes are bounded by the call limit)."""
    owner: dict[int, int] = {}  # call index → expected index

    def augment(e: int, seen: set[int]) -> bool:
        for c in range(n_calls):
            if ok[e][c] and c not in seen:
                seen.add(c)
                if c not in owner or augment(owner[c], seen):
                    owner[c] = e
                    return True
        return False

    for e in range(len(ok)):
        augment(e, set())
    return {e: c for c, e in owner.items()}
