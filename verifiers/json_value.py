"""JSON read strictly, within limits a completion cannot break: one reader for every family whose
answer is JSON (``json`` reads whole answers, ``tool_call`` the arguments of a call).

Strict: a key given twice is two answers for one field (Python's ``json`` keeps the last one
silently), so it is refused; so are ``NaN``/``Infinity`` (not JSON, though Python's ``json`` accepts
them) and numbers that overflow to infinity (``1e400``). Bounded: the digits of a number (Python
refuses integers past 4,300 digits, and a long one costs quadratic time) and the nesting depth (deep
trees make whatever walks them recurse). Whatever the text does to the reader ends as
:class:`Unreadable` with a reason.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable
from typing import Any

from rewardsmith.verifiers.core import short


class Unreadable(ValueError):
    """The text is not a value the reader accepts (or breaks a limit); the message says why."""


class DuplicateKey(Unreadable):
    """A JSON object gives one key two values: two answers for one field."""


def loads_strict(text: str, max_digits: int) -> Any:
    """``json.loads`` that refuses duplicate keys, non-finite numbers and over-long numbers.

    Raises :class:`Unreadable` for those, and ``json.JSONDecodeError`` for text that is not JSON at
    all (the caller words that: its position is useful there). Depth is not checked here: see
    :func:`check_tree`.
    """
    return json.loads(text, object_pairs_hook=_unique_keys, parse_int=_integer(max_digits),
                      parse_float=_float(max_digits), parse_constant=_constant)


def check_tree(value: Any, max_depth: int, max_digits: int) -> Any:
    """``value`` as a JSON value within the limits: depth, digits, finite numbers, string keys.

    Dates and times (TOML's, YAML's) become their ISO text; anything else that is not JSON (bytes,
    sets, objects) is refused. Iterative, so a deep tree cannot overflow the stack here. Containers
    are checked in place (a scalar is only ever replaced by its JSON form).
    """
    root = [value]
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        container, depth = stack.pop()
        if depth > max_depth:
            raise Unreadable(f"nested deeper than {max_depth} levels")
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in list(items):
            if isinstance(container, dict) and not isinstance(key, str):
                raise Unreadable(f"an object key that is not a string: {short(key, 40)}")
            if isinstance(item, dict | list):
                stack.append((item, depth + 1))
            else:
                scalar = _scalar(item, max_digits)
                if scalar is not item:
                    container[key] = scalar
    return root[0]


def _scalar(value: Any, max_digits: int) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if value.bit_length() > 3.32 * max_digits and abs(value) >= 10**max_digits:
            raise Unreadable(f"a number with more than {max_digits} digits")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unreadable(f"{value} is not a finite number")
        return value
    if isinstance(value, datetime.date | datetime.time):  # TOML dates and times (datetime is a date)
        return value.isoformat()
    raise Unreadable(f"a {type(value).__name__} is not a JSON value")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(f"duplicate key {short(key, 60)!r}: one value per key")
        out[key] = value
    return out


def duplicate_key(text: str) -> str | None:
    """Why ``text``, read as JSON, gives some key two values (None when it does not, or is not JSON).

    Python's ``json`` keeps the last value silently, so a scorer that reads an answer with it sees one
    value where a reader sees two: an answer of either family is read through this first."""
    try:
        json.loads(text, object_pairs_hook=_unique_keys)
    except DuplicateKey as exc:
        return str(exc)
    except (ValueError, RecursionError):  # not JSON (or beyond what json reads): nothing to say
        return None
    return None


def _integer(max_digits: int) -> Callable[[str], int]:
    def read(literal: str) -> int:
        if len(literal.lstrip("-")) > max_digits:
            raise Unreadable(f"a number with more than {max_digits} digits")
        return int(literal)

    return read


def _float(max_digits: int) -> Callable[[str], float]:
    def read(literal: str) -> float:
        if len(literal) > max_digits:
            raise Unreadable(f"a number with more than {max_digits} digits")
        value = float(literal)
        if not math.isfinite(value):
            raise Unreadable(f"{short(literal, 40)} is beyond a finite number")
        return value

    return read


def _constant(name: str) -> Any:
    raise Unreadable(f"{name} is not JSON")
