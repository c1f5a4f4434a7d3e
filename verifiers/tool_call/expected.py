"""The calls a row expects, read from BFCL's shape, and the function docs that type their arguments.

``ground_truth`` is a list of calls, each ``{function_name: {param: [acceptable values, ...]}}``;
an empty string among a parameter's acceptable values marks it optional (it may be left out).
Inside a dict value the same shape repeats: each key maps to its list of acceptable values. An
empty list means no call should be made. ``function`` holds the docs: a list of
``{"name", "parameters": {"properties": {param: {"type": ...}}, "required": [...]}}`` (BFCL's,
or OpenAI's ``{"type": "function", "function": {...}}``). Either field may be a JSON string, as
datasets often store them. Both come from the dataset, never from the completion.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OPTIONAL = ""  # BFCL's marker, among a parameter's acceptable values, for "may be left out"

# Declared types, BFCL's names and JSON Schema's, folded to one word each.
KINDS = {
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "string": "string",
    "str": "string",
    "char": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "tuple",
    "object": "object",
    "dict": "object",
}


class RowError(ValueError):
    """The row's expected calls or function docs cannot be read (an ``invalid_input``)."""


def kind(schema: Mapping[str, Any] | None) -> str | None:
    """The declared type of a schema as one word (``integer``, ``number``, ``tuple``...); None when
    it declares none, several, or one this reader does not know (``any``)."""
    if not isinstance(schema, Mapping):
        return None
    declared = schema.get("type")
    return KINDS.get(declared) if isinstance(declared, str) else None


@dataclass(frozen=True)
class Param:
    """One expected argument: its acceptable values (the optional marker left out) and its schema."""

    name: str
    acceptable: tuple[Any, ...]
    optional: bool
    schema: Mapping[str, Any] | None


@dataclass(frozen=True)
class ExpectedCall:
    name: str
    params: dict[str, Param]
    required: tuple[str, ...]  # what the docs require (a call without it is wrong whatever the ground truth says)


def _loaded(value: Any, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise RowError(f"{what} is a string that is not JSON ({exc})") from None
    return value


def read_docs(value: Any) -> dict[str, Mapping[str, Any]] | None:
    """Function name → its ``parameters`` schema; None when the row has no docs."""
    if value is None:
        return None
    value = _loaded(value, "the function docs")
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list):
        raise RowError("the function docs must be a list of function descriptions")
    docs: dict[str, Mapping[str, Any]] = {}
    for item in value:
        if isinstance(item, Mapping) and isinstance(item.get("function"), Mapping):
            item = item["function"]  # OpenAI's tool wrapper
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name:
            raise RowError("a function description without a name")
        parameters = item.get("parameters") or {}
        if not isinstance(parameters, Mapping) or not isinstance(parameters.get("properties", {}), Mapping):
            raise RowError(f"function {name!r}: 'parameters' must be an object with 'properties'")
        docs[name] = parameters
    return docs


def read_expected(ground_truth: Any, functions: Any) -> tuple[list[ExpectedCall], dict[str, Mapping[str, Any]] | None]:
    """The expected calls (empty: no call should be made) and the docs; raises :class:`RowError`."""
    docs = read_docs(functions)
    calls = _loaded(ground_truth, "the expected calls")
    if not isinstance(calls, list):
        raise RowError("the expected calls must be a list of {function: {param: [acceptable values]}}")
    expected = []
    for i, call in enumerate(calls):
        if not (isinstance(call, Mapping) and len(call) == 1):
            raise RowError(f"expected call {i} must be an object with exactly one function name")
        ((name, params),) = call.items()
        if not isinstance(params, Mapping):
            raise RowError(f"expected call {i} ({name}): the parameters must be an object")
        schema = None
        if docs is not None:
            if name not in docs:
                raise RowError(f"expected call {i} calls {name!r}, which the function docs do not describe")
            schema = docs[name]
        properties = (schema or {}).get("properties", {})
        required = (schema or {}).get("required") or []
        if not isinstance(required, list):
            raise RowError(f"function {name!r}: 'required' must be a list")
        out = {}
        for param, values in params.items():
            if not isinstance(values, list):
                raise RowError(f"expected call {i} ({name}): the acceptable values of {param!r} must be a list")
            out[param] = Param(
                param,
                tuple(v for v in values if not _is_marker(v)),
                any(_is_marker(v) for v in values),
                properties.get(param),
            )
        expected.append(ExpectedCall(name, out, tuple(str(r) for r in required)))
    return expected, docs


def _is_marker(value: Any) -> bool:
    return isinstance(value, str) and value == OPTIONAL


def concrete(value: Any) -> Any:
    """One value the acceptable ``value`` stands for: a dict of acceptable lists made a plain dict (each
    key's first acceptable value; keys that may be left out, left out), lists item by item."""
    if isinstance(value, Mapping):
        out = {}
        for key, values in value.items():
            alternatives = values if isinstance(values, list) else [values]
            real = [v for v in alternatives if not _is_marker(v)]
            if real:
                out[key] = concrete(real[0])
        return out
    if isinstance(value, list):
        return [concrete(v) for v in value]
    return value


def example_call(call: ExpectedCall, pick: int = 0, minimal: bool = False) -> tuple[str, dict[str, Any]]:
    """A right call for ``call``: each argument's acceptable value number ``pick`` (-1: the last; past
    the end: the first); with ``minimal``, every optional argument the docs do not require left out."""
    args = {}
    for param in call.params.values():
        if not param.acceptable or (minimal and param.optional and param.name not in call.required):
            continue
        index = pick if -len(param.acceptable) <= pick < len(param.acceptable) else 0
        args[param.name] = concrete(param.acceptable[index])
    return call.name, args
