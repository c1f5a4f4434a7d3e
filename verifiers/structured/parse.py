"""Read an answer's text as JSON, YAML or TOML, strictly, within limits a completion cannot break.

Strict: a duplicate key is two answers for one field (``{"a": 1, "a": 2}``; Python's ``json`` keeps
the last one silently), so it is refused; so are ``NaN``/``Infinity`` (not JSON, accepted by Python's
``json`` by default) and numbers that overflow to infinity (``1e400``), comments and trailing commas
(JSON5 is not JSON), a byte-order mark, and YAML aliases (anchors let a few lines expand into
gigabytes: "billion laughs"). YAML timestamps stay strings and TOML dates become their ISO text, so
every answer is a JSON value.

Bounded: the text's length, the nesting depth (deep nesting makes the parsers and the validator
recurse: a ``RecursionError`` here is the completion's doing) and the digits of a number (Python
refuses to convert integers past 4,300 digits and a long one costs quadratic time). Whatever the
text does to a parser ends as :class:`Unreadable` with a reason, never as an exception that escapes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.core import short
from rewardsmith.verifiers.json_value import Unreadable, loads_strict
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
    return loads_strict(text, limits.max_digits)


# ------------------------------------------------------------------ YAML


def _read_yaml(text: str, limits: Limits) -> Any:
    import yaml

    return yaml.load(text, Loader=_yaml_loader())  # a SafeLoader subclass


_LOADER: Any = None


def _yaml_loader() -> Any:
    """A ``yaml.SafeLoader`` that refuses aliases and duplicate keys and leaves timestamps as text."""
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

    StrictLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    _LOADER = StrictLoader
    return StrictLoader


# ------------------------------------------------------------------ TOML


def _read_toml(text: str, limits: Limits) -> Any:
    import tomllib

    return tomllib.loads(text)


_READERS: dict[str, Callable[[str, Limits], Any]] = {"json": _read_json, "yaml": _read_yaml, "toml": _read_toml}


# ------------------------------------------------------------------ the tree


def check_tree(value: Any, limits: Limits) -> Any:
    """``value`` as a JSON value within the limits (:func:`~rewardsmith.verifiers.json_value.check_tree`)."""
    return check_json_tree(value, limits.max_depth, limits.max_digits)
