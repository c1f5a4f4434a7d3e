"""Compare an answer with the row's reference value, the JSON way.

Equality follows JSON's data model, not Python's: ``true`` is not ``1`` (in Python ``True == 1``),
numbers compare as the exact decimals they are written as (:func:`~rewardsmith.verifiers.json_value.exact_number`):
``1`` and ``1.0`` are the same number (JSON has one number type; JSON Schema calls ``1.0`` an
integer), ``2.0000000000000004`` is not ``2``; strings compare exactly, code point by code point (a
look-alike letter is another key or value), objects by their keys, arrays in order
(``list_order: any`` compares them as multisets, at every level).

``compare: fields`` gives partial credit: the score is the fraction of the reference's leaves
(scalars, and empty objects or arrays) that the answer matches at the same place; a missing key or
a value of another type is wrong. Extra keys (and array items past the reference's length) follow
``extra_keys``: ``reject`` (default) scores the answer 0, ``penalize`` counts each as one more wrong
leaf, ``ignore`` does not count them (a hedge can hide in an ignored key: opt in knowingly). Under
``list_order: any`` an array's items match as whole values, each reference item to one answer item.
Only a full match scores 1.0, in either mode.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rewardsmith.verifiers.json_value import exact_number

COMPARES = ("exact", "fields")
EXTRA_KEYS = ("reject", "penalize", "ignore")
LIST_ORDERS = ("strict", "any")
_SHOWN = 10  # differences kept in details


def canon(value: Any, unordered: bool = False) -> Any:
    """A hashable form of a JSON value that is equal exactly when the values are JSON-equal."""
    if value is None:
        return ("z",)
    if isinstance(value, bool):
        return ("b", value)
    if type(value) is int:
        return ("n", value)
    if isinstance(value, float | Decimal):  # an integral one as its int, so that every number prints one way
        number = exact_number(value)
        return ("n", int(number) if number.is_finite() and number.as_tuple().exponent >= 0 else number)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, dict):
        return ("o", tuple(sorted((k, canon(v, unordered)) for k, v in value.items())))
    if isinstance(value, list):
        items = [canon(v, unordered) for v in value]
        return ("a", tuple(sorted(items, key=repr) if unordered else items))
    return ("?", repr(value))


def leaves(value: Any) -> int:
    """How many leaves ``value`` has: a scalar or an empty container is one."""
    if isinstance(value, dict) and value:
        return sum(leaves(v) for v in value.values())
    if isinstance(value, list) and value:
        return sum(leaves(v) for v in value)
    return 1


@dataclass
class Tally:
    matched: int = 0
    total: int = 0
    extras: int = 0
    differences: list[str] = field(default_factory=list)

    def wrong(self, path: str, count: int, why: str) -> None:
        self.total += count
        if len(self.differences) < _SHOWN:
            self.differences.append(f"{path or '$'}: {why}")

    def extra(self, path: str) -> None:
        self.extras += 1
        if len(self.differences) < _SHOWN:
            self.differences.append(f"{path}: not in the reference")


def tally(reference: Any, answer: Any, unordered: bool, path: str = "", out: Tally | None = None) -> Tally:
    """Match ``answer`` against ``reference`` leaf by leaf (see the module docstring)."""
    out = out if out is not None else Tally()
    if isinstance(reference, dict):
        if not isinstance(answer, dict):
            out.wrong(path, leaves(reference), f"expected an object, got {_kind(answer)}")
            return out
        if not reference:
            out.matched += 1
            out.total += 1
        for key, value in reference.items():
            where = f"{path}.{key}" if path else key
            if key in answer:
                tally(value, answer[key], unordered, where, out)
            else:
                out.wrong(where, leaves(value), "missing")
        for key in answer:
            if key not in reference:
                out.extra(f"{path}.{key}" if path else key)
        return out
    if isinstance(reference, list):
        if not isinstance(answer, list):
            out.wrong(path, leaves(reference), f"expected an array, got {_kind(answer)}")
            return out
        if not reference:
            out.matched += 1
            out.total += 1
        if unordered:
            return _multiset(reference, answer, path, out)
        for i, value in enumerate(reference):
            if i < len(answer):
                tally(value, answer[i], unordered, f"{path}[{i}]", out)
            else:
                out.wrong(f"{path}[{i}]", leaves(value), "missing")
        for i in range(len(reference), len(answer)):
            out.extra(f"{path}[{i}]")
        return out
    out.total += 1
    if canon(reference) == canon(answer):
        out.matched += 1
    elif len(out.differences) < _SHOWN:
        out.differences.append(f"{path or '$'}: expected {_shown(reference)}, got {_shown(answer)}")
    return out


def _multiset(reference: list[Any], answer: list[Any], path: str, out: Tally) -> Tally:
    available = Counter(canon(v, True) for v in answer)
    for value in reference:
        key = canon(value, True)
        if available[key] > 0:
            available[key] -= 1
            out.matched += leaves(value)
            out.total += leaves(value)
        else:
            out.wrong(f"{path}[*]", leaves(value), f"no item equal to {_shown(value)}")
    for _ in range(sum(available.values())):
        out.extra(f"{path}[*]")
    return out


def score(result: Tally, compare: str, extra_keys: str) -> float:
    """The reward for a tally: exact is 1 or 0; fields the matched fraction (extras per ``extra_keys``)."""
    if result.extras and extra_keys == "reject":
        return 0.0
    full = result.matched == result.total and (not result.extras or extra_keys == "ignore")
    if compare == "exact":
        return 1.0 if full else 0.0
    if full:
        return 1.0
    denominator = result.total + (result.extras if extra_keys == "penalize" else 0)
    return min(result.matched / denominator, 1.0) if denominator else 0.0


def exact_tree(value: Any) -> Any:
    """``value`` with every float as the exact decimal it stands for (:func:`exact_number`): a
    reference the dataset loader read with floats, compared and validated on the answer's footing."""
    if isinstance(value, float):
        return exact_number(value)
    if isinstance(value, dict):
        return {k: exact_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [exact_tree(v) for v in value]
    return value


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _shown(value: Any) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, default=_number)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    text = re.sub(r'"\\u0000([^"]*)\\u0000"', r"\1", text)  # a decimal, printed as written
    return text if len(text) <= 60 else text[:59] + "…"


def _number(value: Any) -> str:
    """A decimal in a difference: its text between NUL marks, unquoted by :func:`_shown`."""
    if isinstance(value, Decimal):
        return f"\0{value}\0"
    raise TypeError(type(value).__name__)
