"""JSON read strictly, within limits a completion cannot break: one reader for every family whose
answer is JSON (``json`` reads whole answers, ``tool_call`` the arguments of a call).

Strict: a key given twice is two answers for one field (Python's ``json`` keeps the last one
silently), so it is refused; so are ``NaN``/``Infinity`` (not JSON, though Python's ``json`` accepts
them). Exact (``exact=True``, what ``json`` reads answers with): a number is the decimal it is
written as (:class:`~decimal.Decimal`), never the nearest double, so ``2.0000000000000004`` is not
``2``, ``1e-500`` is not ``0`` and ``1e400`` is not infinity; :func:`exact_number` puts a reference's
number on the same footing. Bounded: the digits of a number, and how far its exponent moves the point
(Python refuses integers past 4,300 digits, and a long one costs quadratic time), and the nesting
depth (deep trees make whatever walks them recurse). Whatever the text does to the reader ends as
:class:`Unreadable` with a reason.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from rewardsmith.verifiers.core import short


class Unreadable(ValueError):
    """The text is not a value the reader accepts (or breaks a limit); the message says why."""


class DuplicateKey(Unreadable):
    """A JSON object gives one key two values: two answers for one field."""


def loads_strict(text: str, max_digits: int, *, exact: bool = False) -> Any:
    """``json.loads`` that refuses duplicate keys, non-finite numbers and over-long numbers.

    ``exact``: a number with a fraction or an exponent is read as the :class:`~decimal.Decimal` it
    is written as (integers are ``int`` either way); otherwise as a float, refused when it overflows.
    Raises :class:`Unreadable` for those, and ``json.JSONDecodeError`` for text that is not JSON at
    all (the caller words that: its position is useful there). Depth is not checked here: see
    :func:`check_tree`.
    """
    read_float = exact_decimal(max_digits) if exact else _float(max_digits)
    return json.loads(text, object_pairs_hook=_unique_keys, parse_int=_integer(max_digits),
                      parse_float=read_float, parse_constant=_constant)


def exact_number(value: int | float | Decimal) -> Decimal:
    """A number as one canonical decimal: equal numbers give equal (and equally printed) decimals,
    whatever their notation (``2``, ``2.0``, ``2e0`` are all ``Decimal(2)``; ``-0`` is ``0``).

    A float (a reference the dataset loader read as a double) stands for the shortest decimal that
    reads back as it, which is what the row's text said (``0.1``, not the double's exact
    ``0.1000000000000000055…``): the expected value decides equality, as written."""
    if isinstance(value, float):
        value = Decimal(repr(value))
    elif not isinstance(value, Decimal):
        value = Decimal(value)
    if not value.is_finite():
        return value
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    if not any(digits):
        return Decimal(0)
    end = len(digits)
    while digits[end - 1] == 0:
        end -= 1
    return Decimal((sign, digits[:end], exponent + len(digits) - end))  # exact: no context rounding


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
    if isinstance(value, Decimal):
        return _within(value, str(value), max_digits)
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


def exact_decimal(max_digits: int) -> Callable[[str], Decimal]:
    """A reader of one number literal as the exact :class:`~decimal.Decimal` it writes (JSON's
    ``parse_float``, TOML's): refused when it is not finite or its decimal expansion runs past
    ``max_digits`` (``1e999999`` would be a million digits to whatever computes with it)."""

    def read(literal: str) -> Decimal:
        if len(literal) > max_digits:
            raise Unreadable(f"a number with more than {max_digits} digits")
        try:
            value = Decimal(literal)
        except InvalidOperation:
            raise Unreadable(f"{short(literal, 40)} is not a number") from None
        return _within(value, literal, max_digits)

    return read


def _within(value: Decimal, literal: str, max_digits: int) -> Decimal:
    if not value.is_finite():
        raise Unreadable(f"{short(literal, 40)} is not a finite number")
    if len(value.as_tuple().digits) > max_digits or abs(value.adjusted()) > max_digits:
        raise Unreadable(f"{short(literal, 40)}: a number with more than {max_digits} digits")
    return value


def _constant(name: str) -> Any:
    raise Unreadable(f"{name} is not JSON")
