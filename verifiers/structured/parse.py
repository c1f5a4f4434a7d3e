"""Read an answer's text as JSON, YAML or TOML, strictly, within limits a completion cannot break.

Strict: a duplicate key is two answers for one field (``{"a": 1, "a": 2}``; Python's ``json`` keeps
the last one silently), so it is refused; so are ``NaN``/``Infinity`` (not JSON, accepted by Python's
``json`` by default), trailing commas (JSON5 is not JSON), a byte-order mark, and YAML aliases
(anchors let a few lines expand into gigabytes: "billion laughs"). YAML timestamps stay strings and
TOML dates become their ISO text, so every answer is a JSON value.

Exact: every number with a fraction or an exponent, in each format, is the :class:`~decimal.Decimal`
it is written as (integers are ``int``), never the nearest double: ``2.0000000000000004`` is not ``2``
and ``1e-500`` is not ``0``.

No comments, in any format: a comment is not part of an answer document's grammar. It holds nothing
the value holds, and it is where a second value hides (``x: 5  # or 7``); telling a comment that
offers a value from one that does not would mean recognising its words, so none is accepted.

Bounded: the text's length, the nesting depth (deep nesting makes the parsers and the validator
recurse: a ``RecursionError`` here is the completion's doing) and the digits of a number (Python
refuses to convert integers past 4,300 digits and a long one costs quadratic time). Whatever the
text does to a parser ends as :class:`Unreadable` with a reason, never as an exception that escapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, Context, Decimal, localcontext
from typing import Any

from rewardsmith.verifiers.core import short
from rewardsmith.verifiers.json_value import Unreadable, exact_decimal, loads_strict
from rewardsmith.verifiers.json_value import check_tree as check_json_tree

FORMATS = ("json", "yaml", "toml")


@dataclass(frozen=True)
class Limits:
    max_chars: int = 100_000
    max_depth: int = 64
    max_digits: int = 1000


def parse(text: str, fmt: str, limits: Limits) -> Any:
    """The value ``text`` holds in ``fmt`` (json, yaml, toml); :class:`Unreadable` when there is none."""
    if len(text) > limits.max_chars:
        raise Unreadable(f"the answer has {len(text):,} characters, over the limit of {limits.max_chars:,}")
    try:
        value = _READERS[fmt](text, limits)
    except Unreadable:
        raise
    except RecursionError:
        raise Unreadable(f"nested too deep to read (over {limits.max_depth} levels)") from None
    except MemoryError:
        raise Unreadable("the answer is too large to read") from None
    except Exception as exc:  # every parser's own errors, and whatever else the text makes them raise
        raise Unreadable(f"not valid {fmt.upper()}: {_reason(exc)}") from None
    if fmt == "json" and text.count("[") + text.count("{") <= limits.max_depth:
        return value  # the hooks checked every number and constant; this few brackets cannot nest too deep
    return check_tree(value, limits)


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        if exc.msg == "Extra data":
            return f"more than one value (text after the first one ends, at line {exc.lineno} column {exc.colno})"
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return short(" ".join(str(exc).split()), 200)


# ------------------------------------------------------------------ JSON


def _read_json(text: str, limits: Limits) -> Any:
    return loads_strict(text, limits.max_digits, exact=True)


# ------------------------------------------------------------------ YAML


def _read_yaml(text: str, limits: Limits) -> Any:
    import yaml

    return yaml.load(text, Loader=_yaml_loader())  # a SafeLoader subclass


_NO_COMMENT = "a comment is not part of an answer document (a second value hides there)"


_LOADER: Any = None


def _yaml_loader() -> Any:
    """A ``yaml.SafeLoader`` that refuses aliases, duplicate keys and comments, reads floats as exact
    decimals and leaves timestamps as text."""
    global _LOADER
    if _LOADER is not None:
        return _LOADER
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                raise Unreadable("YAML aliases (*name) are not allowed")
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                self.flatten_mapping(node)
                seen = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=True)
                    if not isinstance(key, str):
                        raise Unreadable(f"a YAML key that is not a string: {short(key, 40)}")
                    if key in seen:
                        raise Unreadable(f"duplicate key {short(key, 60)!r}: one value per key")
                    seen.add(key)
            return super().construct_mapping(node, deep=deep)

        # PyYAML skips comments in these three scanner steps, and only there: what they skip holds one
        # exactly when the document has a comment.
        def scan_to_next_token(self) -> None:
            start = self.pointer
            super().scan_to_next_token()
            _no_comment(self.buffer[start : self.pointer])

        def scan_block_scalar_ignored_line(self, start_mark: Any) -> None:
            start = self.pointer
            super().scan_block_scalar_ignored_line(start_mark)
            _no_comment(self.buffer[start : self.pointer])

        def scan_directive_ignored_line(self, start_mark: Any) -> None:
            start = self.pointer
            super().scan_directive_ignored_line(start_mark)
            _no_comment(self.buffer[start : self.pointer])

        def construct_yaml_float(self, node: Any) -> Decimal:
            return _yaml_decimal(self.construct_scalar(node))

    StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_yaml_float)
    StrictLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    _LOADER = StrictLoader
    return StrictLoader


def _no_comment(skipped: str) -> None:
    if "#" in skipped:
        raise Unreadable(_NO_COMMENT)


_EXACT = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)  # sums and products of decimals, never rounded


def _yaml_decimal(literal: str) -> Decimal:
    """A YAML 1.1 float as the exact decimal it writes: underscores dropped, ``.inf``/``.nan``
    refused, sexagesimal ``1:30.5`` (base 60) computed in decimals."""
    text = literal.replace("_", "").lower()
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-")
    if text in (".inf", ".nan"):
        raise Unreadable(f"{literal} is not a finite number")
    value = Decimal(0)
    with localcontext(_EXACT):  # the process's context may be narrowed (reasoning-gym sets its precision)
        for part in text.split(":"):
            value = value * 60 + Decimal(part)
    return value.copy_negate() if sign < 0 else value


# ------------------------------------------------------------------ TOML


def _read_toml(text: str, limits: Limits) -> Any:
    import tomllib

    value = tomllib.loads(text, parse_float=exact_decimal(limits.max_digits))
    if _toml_comment(text):
        raise Unreadable(_NO_COMMENT)
    return value


def _toml_comment(text: str) -> bool:
    """Whether TOML text that ``tomllib`` read holds a comment: a ``#`` outside every string (in a
    valid document nothing else can hold one). Strings are basic (double quotes, backslash escapes)
    or literal (single quotes, none), each on one line or multi-line (three quotes)."""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "#":
            return True
        if char not in "\"'":
            i += 1
            continue
        quote = char * 3 if text.startswith(char * 3, i) else char
        i += len(quote)
        while i < n and not text.startswith(quote, i):
            i += 2 if char == '"' and text[i] == "\\" else 1
        i += len(quote)
        while len(quote) == 3 and i < n and text[i] == char:  # """a""""  ends with a quote in the string
            i += 1
    return False


_READERS: dict[str, Callable[[str, Limits], Any]] = {"json": _read_json, "yaml": _read_yaml, "toml": _read_toml}


# ------------------------------------------------------------------ the tree


def check_tree(value: Any, limits: Limits) -> Any:
    """``value`` as a JSON value within the limits (:func:`~rewardsmith.verifiers.json_value.check_tree`)."""
    return check_json_tree(value, limits.max_depth, limits.max_digits)
