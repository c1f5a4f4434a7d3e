"""Verifier options, declared once: a verifier is a dataclass whose fields are its options.

Each field carries its type, its default and one line of documentation (:func:`option`). From
that one declaration come the coercion and checks every build runs (:func:`coerce_options`),
the listing ``rewardsmith verifiers NAME`` prints (:func:`describe`, :func:`format_options`) and
a JSON Schema (:func:`json_schema`). A spec error names the option, where it sits in the spec
(``routes.gsm8k.then.answer_feild``) and the closest valid name.

The checker is the standard library on purpose: pydantic would do the same but costs about
80 ms on a reward's first build (measured here: ~63 ms to import ``BaseModel``, ~16 ms to
compile the first model), more than ``build("math")`` costs in all (~7 ms), and trainer
workers build their reward on every start. It knows the annotations
verifiers use: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Literal``, unions,
``list``/``tuple``/``Sequence``, ``dict``/``Mapping``, ``Callable``, nested option dataclasses
(``leniency``), plain classes (``isinstance``), :data:`Spec` (a nested reward spec, built
where it stands so its errors carry their path) and the constraints :class:`Range`,
:class:`Pattern`, :class:`NonEmpty`, :class:`Unique` inside ``Annotated``. Any other
annotation is accepted as is.

A factory without a declaration (a plugin's plain class or function) still works: its options
are read from its signature, and only their names are checked.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, ClassVar, Literal, NamedTuple, Self, Union, get_args, get_origin

from rewardsmith.sandbox.errors import RewardsmithError
from rewardsmith.verifiers.core import Verifier

Where = tuple[str | int, ...]

_PLAIN_KEY = re.compile(r"[A-Za-z_][\w-]*")
_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def format_path(path: Iterable[str | int]) -> str:
    """``("routes", "gsm8k", "parts", 0)`` → ``routes.gsm8k.parts[0]``; odd keys are quoted
    (``routes["openai/gsm8k"]``) so the path reads back unambiguously."""
    out = ""
    for segment in path:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif _PLAIN_KEY.fullmatch(segment):
            out += f".{segment}" if out else segment
        else:
            out += f"[{json.dumps(segment)}]"
    return out


class SpecError(RewardsmithError, ValueError):
    """A reward spec that cannot be built.

    ``problem`` says what is wrong and what would work; ``path`` is where in the spec
    (``("parts", 0, "leniency")``); ``kind`` the verifier whose option it is. Raised inside a
    nested spec, each enclosing level prepends its own place (:meth:`within`), so the message
    reads from the root of the spec: ``routes.gsm8k.then.answer_feild: unknown option ...``.
    """

    def __init__(self, problem: str, path: Iterable[str | int] = (), kind: str | None = None,
                 nested: bool = False, source: str | None = None) -> None:
        self.problem = problem
        self.path: Where = tuple(path)
        self.kind = kind
        self.nested = nested
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        where = format_path(self.path)
        if where and self.kind and not self.nested:
            where = f"{self.kind}.{where}"  # a top-level option: name its verifier (math.timeout_s)
        text = f"{where}: {self.problem}" if where else self.problem
        return f"{self.source}: {text}" if self.source else text

    def __str__(self) -> str:
        return self.render()

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.problem, self.path, self.kind, self.nested, self.source)

    def _with(self, **changes: Any) -> SpecError:
        fields = {"problem": self.problem, "path": self.path, "kind": self.kind, "nested": self.nested,
                  "source": self.source, **changes}
        return SpecError(**fields)

    def at(self, *segments: str | int) -> SpecError:
        """The same error one level up inside the same verifier's options (``backend`` of a judge)."""
        return self._with(path=(*segments, *self.path))

    def within(self, *segments: str | int) -> SpecError:
        """The same error seen from the spec that holds this one, nested, at ``segments``."""
        return self._with(path=(*segments, *self.path), nested=True)

    def of_kind(self, kind: str) -> SpecError:
        """Name the verifier the path starts in, unless a deeper level already did."""
        return self if self.kind is not None or self.nested else self._with(kind=kind)

    def in_source(self, source: str) -> SpecError:
        """Name the file (or inline text) the spec came from."""
        return self if self.source is not None else self._with(source=source)


def unknown_name(what: str, name: Any, known: Sequence[str], listed: str = "known") -> str:
    """``unknown option 'answer_feild'; did you mean 'answer_field'? (options of 'math': ...)``."""
    close = _closest(str(name), known)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown {what} {name!r}{hint} ({listed}: {', '.join(known) or 'none'})"


def _closest(word: str, candidates: Iterable[str]) -> list[str]:
    import difflib  # only when a spec is wrong

    return difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)


# --------------------------------------------------------------------------- declaring


REQUIRED: Any = type("Required", (), {"__repr__": lambda self: "required", "__bool__": lambda self: False})()


def option(default: Any = REQUIRED, doc: str = "", *, factory: Callable[[], Any] | None = None) -> Any:
    """One declared option: its default (none: required) and the line the listing prints for it."""
    metadata = {"doc": doc}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    if default is REQUIRED:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def declare(cls: type) -> type:
    """Make ``cls`` (a Verifier subclass) a dataclass whose fields are its options: keyword-only,
    compared and printed as the Verifier it is. Its options are coerced and checked
    (:func:`coerce_options`) before its own ``__post_init__`` runs, so ``build`` and Python
    construction check the same things and no verifier can forget to. A class without a
    ``__post_init__`` of its own runs the one it inherits (a base's checks are never skipped)."""
    own = cls.__dict__.get("__post_init__")

    def __post_init__(self: Any) -> None:
        if not self.__dict__.get("_options_checked"):  # once, by the first (most derived) wrapper to run
            coerce_options(self)
            self.__dict__["_options_checked"] = True
        if own is not None:
            own(self)
            return
        inherited = getattr(super(cls, self), "__post_init__", None)
        if inherited is not None:
            inherited()

    cls.__post_init__ = __post_init__  # type: ignore[attr-defined]
    return dataclass(kw_only=True, eq=False, repr=False)(cls)


class _Mark:
    """A constraint inside ``Annotated``: ``check`` (a problem or None), ``text``, ``schema``.
    Plain classes, not dataclasses: this module is imported by every trainer worker."""

    __slots__ = ()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, k) for k in self.__slots__)))


class Range(_Mark):
    """Numeric bounds: ``Annotated[float, Range(gt=0)]``."""

    __slots__ = ("ge", "gt", "le")

    def __init__(self, gt: float | None = None, ge: float | None = None, le: float | None = None) -> None:
        self.gt, self.ge, self.le = gt, ge, le

    def check(self, value: Any) -> str | None:
        for bound, ok in ((self.gt, lambda b: value > b), (self.ge, lambda b: value >= b),
                          (self.le, lambda b: value <= b)):
            if bound is not None and not ok(bound):
                return f"must be {self.text()}, got {value!r}"
        return None

    def text(self) -> str:
        parts = [f"{op} {_num(b)}" for op, b in ((">", self.gt), (">=", self.ge), ("<=", self.le)) if b is not None]
        return " and ".join(parts)

    def schema(self) -> dict[str, Any]:
        keys = (("exclusiveMinimum", self.gt), ("minimum", self.ge), ("maximum", self.le))
        return {key: bound for key, bound in keys if bound is not None}


class Pattern(_Mark):
    """A string matching ``regex`` in full; ``what`` names what it must be."""

    __slots__ = ("regex", "what")

    def __init__(self, regex: str, what: str) -> None:
        self.regex, self.what = regex, what

    def check(self, value: Any) -> str | None:
        return None if re.fullmatch(self.regex, value) else f"{value!r} is not {self.what}"

    def text(self) -> str:
        return f"that is {self.what}"

    def schema(self) -> dict[str, Any]:
        return {"pattern": f"^(?:{self.regex})$"}


class NonEmpty(_Mark):
    """A string, list or map with at least one character or entry."""

    __slots__ = ()

    def check(self, value: Any) -> str | None:
        return None if len(value) else "must not be empty"

    def text(self) -> str:
        return "(not empty)"

    def schema(self) -> dict[str, Any]:
        return {"minLength": 1, "minItems": 1, "minProperties": 1}


class Unique(_Mark):
    """A list without repeated entries."""

    __slots__ = ()

    def check(self, value: Any) -> str | None:
        seen: list[Any] = []
        for item in value:
            if item in seen:
                return f"has duplicates: {item!r} appears more than once"
            seen.append(item)
        return None

    def text(self) -> str:
        return "(no repeats)"

    def schema(self) -> dict[str, Any]:
        return {"uniqueItems": True}


class IsSpec(_Mark):
    """Marks a nested reward spec; a mapping without ``type`` gets ``default_type``."""

    __slots__ = ("default_type",)

    def __init__(self, default_type: str | None = None) -> None:
        self.default_type = default_type


Spec = Annotated[str | Mapping[str, Any] | Verifier, IsSpec()]
"""A nested reward spec (a name, a ``{"type": ...}`` mapping, inline JSON, a file or a Verifier),
built where it stands: the option then holds the Verifier."""


# --------------------------------------------------------------------------- coercing


def coerce_options(obj: Any) -> None:
    """Coerce and check every declared option of ``obj`` in place (run by :func:`declare` before a
    verifier's own ``__post_init__``), so Python construction and ``build`` check the same things."""
    hints = type_hints(type(obj))
    kind = str(getattr(obj, "name", type(obj).__name__))
    for f in dataclasses.fields(obj):
        if not f.init:
            continue
        try:
            setattr(obj, f.name, coerce(getattr(obj, f.name), hints.get(f.name, Any), (f.name,)))
        except SpecError as exc:
            raise exc.of_kind(kind) from None


class CheckedOptions:
    """Base of a settings dataclass outside the registry (a trainer's config): checked when it is
    made, from Python as from YAML, the way a verifier's options are (a bad value is a SpecError
    naming the key and what would work), and built from a YAML mapping plus overrides."""

    config_name: ClassVar[str] = "config"  # what a SpecError calls it ("grpo config: ...")
    OPTION_NOUN: ClassVar[str] = "config key"  # what its options are called in messages

    def __post_init__(self) -> None:
        coerce_options(self)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], **overrides: Any) -> Self:
        """A config from a YAML mapping plus command-line overrides (``None`` keeps the mapping's
        value); an unknown key names the closest one."""
        merged = {**values, **{k: v for k, v in overrides.items() if v is not None}}
        try:
            return coerce(merged, cls)
        except SpecError as exc:
            raise SpecError(f"{cls.config_name}: {exc}") from None


def coerce(value: Any, tp: Any, path: Where = ()) -> Any:
    """``value`` checked against the annotation ``tp`` and converted where that is lossless
    (an int for a float, a list for a tuple, a mapping for an option dataclass); a
    :class:`SpecError` at ``path`` otherwise. Strings are never read as numbers or booleans:
    ``timeout_s: "5"`` in a spec is a mistake worth reporting."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _coerce_annotated(value, tp, path)
    if tp is Any or tp is object:
        return value
    if tp is None or tp is type(None):
        if value is None:
            return None
        raise _mismatch(value, tp, path)
    if origin is Union or origin is types.UnionType:
        return _coerce_union(value, tp, path)
    if origin is Literal:
        return _coerce_literal(value, tp, path)
    if tp in _SCALARS:
        return _SCALARS[tp](value, tp, path)
    if origin in (list, tuple, Sequence):
        return _coerce_sequence(value, tp, path)
    if origin in (dict, Mapping):
        return _coerce_mapping(value, tp, path)
    if origin is Callable or tp is Callable:
        if callable(value):
            return value
        raise _mismatch(value, tp, path)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and not issubclass(tp, Verifier):
        return _coerce_dataclass(value, tp, path)
    if isinstance(tp, type):
        if isinstance(value, tp):
            return value
        raise _mismatch(value, tp, path)
    return value  # an annotation this checker does not know: accepted as is


def _coerce_annotated(value: Any, tp: Any, path: Where) -> Any:
    base, *marks = get_args(tp)
    spec = next((m for m in marks if isinstance(m, IsSpec)), None)
    if spec is not None:
        return _build_spec(value, spec, path)
    value = coerce(value, base, path)
    for mark in marks:
        problem = mark.check(value) if hasattr(mark, "check") else None
        if problem:
            raise _OutOfRange(problem, path)
    return value


class _OutOfRange(SpecError):
    """The value has the right type but breaks a constraint: inside a union, the error to report."""


def _build_spec(value: Any, mark: IsSpec, path: Where) -> Verifier:
    from rewardsmith.verifiers.registry import build  # the registry imports this module

    if mark.default_type and isinstance(value, Mapping) and "type" not in value:
        value = {"type": mark.default_type, **value}
    try:
        return build(value)
    except SpecError as exc:
        raise exc.within(*path) from None


def _coerce_union(value: Any, tp: Any, path: Where) -> Any:
    members = get_args(tp)
    if value is None and type(None) in members:
        return None
    errors: list[SpecError] = []
    for member in members:
        if member is type(None):
            continue
        try:
            return coerce(value, member, path)
        except SpecError as exc:
            errors.append(exc)
    closer = [e for e in errors if len(e.path) > len(path) or isinstance(e, _OutOfRange)]
    if closer:  # the value had the right type for one member and failed inside it: say how
        raise closer[0]
    raise _mismatch(value, tp, path)


def _coerce_literal(value: Any, tp: Any, path: Where) -> Any:
    choices = get_args(tp)
    for choice in choices:
        if type(value) is type(choice) and value == choice:  # True is not 1
            return choice
    words = [c for c in choices if isinstance(c, str)]
    close = _closest(value, words) if isinstance(value, str) else []
    if close:  # the right type, a near miss: inside a union, this is the error to report
        raise _OutOfRange(f"expected {expected(tp)}, got {_shown(value)}; did you mean {close[0]!r}?", path)
    raise _mismatch(value, tp, path)


def _coerce_bool(value: Any, tp: Any, path: Where) -> bool:
    if isinstance(value, bool):
        return value
    raise _mismatch(value, tp, path)


def _coerce_int(value: Any, tp: Any, path: Where) -> int:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _mismatch(value, tp, path)


def _coerce_float(value: Any, tp: Any, path: Where) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _mismatch(value, tp, path)
    try:
        number = float(value)
    except OverflowError:  # an int beyond any float
        number = math.inf
    if not math.isfinite(number):
        raise _OutOfRange(f"expected a finite number, got {_shown(value)}", path)
    return number


def _coerce_str(value: Any, tp: Any, path: Where) -> str:
    if isinstance(value, str):
        return value
    raise _mismatch(value, tp, path)


_SCALARS: dict[Any, Callable[[Any, Any, Where], Any]] = {
    bool: _coerce_bool, int: _coerce_int, float: _coerce_float, str: _coerce_str,
}


def _coerce_sequence(value: Any, tp: Any, path: Where) -> Any:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise _mismatch(value, tp, path)
    item = _item_type(tp)
    items = [coerce(v, item, (*path, i)) for i, v in enumerate(value)]
    return items if get_origin(tp) is list else tuple(items)


def _coerce_mapping(value: Any, tp: Any, path: Where) -> dict[Any, Any]:
    if not isinstance(value, Mapping):
        raise _mismatch(value, tp, path)
    key_tp, value_tp = get_args(tp) or (Any, Any)
    return {_coerce_key(k, key_tp, (*path, str(k))): coerce(v, value_tp, (*path, str(k))) for k, v in value.items()}


def _coerce_key(key: Any, tp: Any, path: Where) -> Any:
    # JSON object keys are always strings: "3" is the integer key 3 where the declaration says int.
    if tp is int and isinstance(key, str) and re.fullmatch(r"[-+]?\d+", key):
        return int(key)
    return coerce(key, tp, path)


def _coerce_dataclass(value: Any, tp: type, path: Where) -> Any:
    if isinstance(value, tp):
        return value
    if not isinstance(value, Mapping):
        raise _mismatch(value, tp, path)
    fields = {f.name: f for f in dataclasses.fields(tp) if f.init}
    hints = type_hints(tp)
    noun = getattr(tp, "OPTION_NOUN", "option")
    for key in value:
        if key not in fields:
            raise SpecError(unknown_name(noun, key, list(fields), f"{noun}s" if noun == "option" else "known"),
                            (*path, str(key)))
    missing = [name for name, f in fields.items() if _default_of(f) is REQUIRED and name not in value]
    if missing:
        raise SpecError(f"missing {noun} {missing[0]!r}", path)
    return tp(**{key: coerce(v, hints.get(key, Any), (*path, key)) for key, v in value.items()})


def _mismatch(value: Any, tp: Any, path: Where) -> SpecError:
    return SpecError(f"expected {expected(tp)}, got {_shown(value)}", path)


def _shown(value: Any) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int past Python's digit limit for str()
        text = f"<{type(value).__name__} too large to show>"
    return text if len(text) <= 60 else text[:57] + "..."


def _item_type(tp: Any) -> Any:
    args = get_args(tp)
    return args[0] if args else Any


@cache
def type_hints(cls: Any) -> dict[str, Any]:
    """The resolved annotations of a dataclass (``from __future__ import annotations`` leaves strings)."""
    return typing.get_type_hints(cls, include_extras=True)


# --------------------------------------------------------------------------- describing


def expected(tp: Any) -> str:
    """What a value of ``tp`` is, in words, for error messages (``a number > 0``)."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *marks = get_args(tp)
        if any(isinstance(m, IsSpec) for m in marks):
            return "a reward spec (a verifier name or an object with a 'type')"
        texts = [m.text() for m in marks if hasattr(m, "text")]
        return " ".join([expected(base), *texts])
    if tp is Any or tp is object:
        return "anything"
    if tp is None or tp is type(None):
        return "null"
    if origin is Union or origin is types.UnionType:
        members = [m for m in get_args(tp) if m is not type(None)]
        words = [expected(m) for m in members]
        if type(None) in get_args(tp):
            words.append("null")
        return " or ".join(words)
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(c) if not isinstance(c, str) else repr(c) for c in get_args(tp))
    if tp in _WORDS:
        return _WORDS[tp]
    if origin in (list, tuple, Sequence):
        item = _item_type(tp)
        plural = _PLURALS.get(type_text(item))
        return f"a list of {plural}" if plural else f"a list, each {expected(item)}"
    if origin in (dict, Mapping):
        key_tp, value_tp = get_args(tp) or (Any, Any)
        return f"a map of {type_text(key_tp)} to {type_text(value_tp)}"
    if origin is Callable or tp is Callable:
        return "a callable"
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return f"an object of {getattr(tp, 'OPTION_NOUN', 'option')}s"
    return f"a {getattr(tp, '__name__', str(tp))}"


_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
_TEXT = {bool: "bool", int: "integer", float: "number", str: "string"}


_PLURALS = {"string": "strings", "integer": "integers", "number": "numbers", "bool": "booleans", "any": "values",
            "spec": "reward specs"}


def type_text(tp: Any) -> str:
    """A compact type for the listing: ``number > 0``, ``'strict' | 'soft'``, ``list[string]``."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *marks = get_args(tp)
        if any(isinstance(m, IsSpec) for m in marks):
            return "spec"
        return " ".join([type_text(base), *(m.text() for m in marks if hasattr(m, "text"))])
    if tp is Any or tp is object:
        return "any"
    if tp is None or tp is type(None):
        return "null"
    if origin is Union or origin is types.UnionType:
        return " | ".join(type_text(m) for m in get_args(tp))
    if origin is Literal:
        return " | ".join(json.dumps(c) for c in get_args(tp))
    if tp in _TEXT:
        return _TEXT[tp]
    if origin in (list, tuple, Sequence):
        return f"list[{type_text(_item_type(tp))}]"
    if origin in (dict, Mapping):
        key_tp, value_tp = get_args(tp) or (Any, Any)
        return f"map[{type_text(key_tp)}, {type_text(value_tp)}]"
    if origin is Callable or tp is Callable:
        return "callable"
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return "object"
    if isinstance(tp, str):
        return tp  # an unresolved annotation of a plugin's signature
    return getattr(tp, "__name__", str(tp))


def type_schema(tp: Any) -> dict[str, Any] | None:
    """The JSON Schema of ``tp``; None for what JSON cannot hold (a callable, a Python object)."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *marks = get_args(tp)
        spec = next((m for m in marks if isinstance(m, IsSpec)), None)
        if spec is not None:
            return _spec_schema(spec)
        schema = type_schema(base)
        if schema is None:
            return None
        for mark in marks:
            if hasattr(mark, "schema"):
                schema.update(_relevant(mark.schema(), schema))
        return schema
    if tp is Any or tp is object:
        return {}
    if tp is None or tp is type(None):
        return {"type": "null"}
    if origin is Union or origin is types.UnionType:
        members = [s for s in (type_schema(m) for m in get_args(tp)) if s is not None]
        if not members:
            return None
        if any(s == {} for s in members):
            return {}
        return members[0] if len(members) == 1 else {"anyOf": members}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if tp in _JSON_TYPES:
        return {"type": _JSON_TYPES[tp]}
    if origin in (list, tuple, Sequence):
        item = type_schema(_item_type(tp))
        return {"type": "array", "items": item if item is not None else {}}
    if origin in (dict, Mapping):
        value_tp = (get_args(tp) or (Any, Any))[1]
        inner = type_schema(value_tp)
        return {"type": "object", "additionalProperties": inner if inner is not None else {}}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) and not issubclass(tp, Verifier):
        infos = _dataclass_options(tp)
        return _object_schema(infos, required=[i.name for i in infos if i.required])
    return None


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string"}

def _spec_schema(mark: IsSpec) -> dict[str, Any]:
    """A nested spec: a name, or an object with a ``type`` (which may be left out when it has a default)."""
    spec_object: dict[str, Any] = {"type": "object", "properties": {"type": {"type": "string"}}}
    if mark.default_type is None:
        spec_object["required"] = ["type"]
    what = f"(default type {mark.default_type!r})" if mark.default_type else "with a 'type'"
    return {"description": f"a reward spec: a verifier name, or an object {what} and that verifier's options",
            "anyOf": [{"type": "string"}, spec_object]}


def _relevant(constraint: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    # NonEmpty applies to strings, arrays and objects alike; keep the key that fits the type.
    kind = schema.get("type")
    keep = {"string": "minLength", "array": "minItems", "object": "minProperties"}
    return {k: v for k, v in constraint.items() if k not in keep.values() or keep.get(kind) == k}


class OptionInfo(NamedTuple):
    """One option as listed: name, type text, default (REQUIRED if none), one line, JSON Schema."""

    name: str
    type: str
    default: Any
    doc: str
    schema: dict[str, Any] | None
    children: tuple[OptionInfo, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "required": self.required, "doc": self.doc}
        if not self.required:
            out["default"] = jsonable(self.default)
        if self.children:
            out["options"] = [child.to_dict() for child in self.children]
        return out


def declared_options(factory: Any) -> list[OptionInfo] | None:
    """The options a factory takes: its dataclass fields, else its signature's keyword parameters.
    None when it takes any keyword (``**kwargs``), so no name can be checked."""
    if isinstance(factory, type) and dataclasses.is_dataclass(factory):
        return _dataclass_options(factory)
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    try:
        hints = typing.get_type_hints(factory.__init__ if isinstance(factory, type) else factory, include_extras=True)
    except Exception:  # a plugin's annotation that does not resolve: show it as written
        hints = {}
    infos = []
    for name, param in params.items():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            continue
        tp = hints.get(name, param.annotation if param.annotation is not inspect.Parameter.empty else Any)
        default = REQUIRED if param.default is inspect.Parameter.empty else param.default
        infos.append(OptionInfo(name, type_text(tp), default, "", type_schema(tp) if not isinstance(tp, str) else {}))
    return infos


def check_keywords(factory: Any, options: Mapping[str, Any], owner: str) -> None:
    """Unknown and missing keywords of a call to ``factory``, with the closest name, each at its path
    (``owner`` names whose options they are: ``'math'``, ``the openai backend``). Values are the
    factory's to check."""
    infos = declared_options(factory)
    if infos is None:  # it takes **kwargs: it checks its own names
        return
    names = [info.name for info in infos]
    for key in options:
        if key not in names:
            raise SpecError(unknown_name("option", key, names, f"options of {owner}"), (str(key),))
    for info in infos:
        if info.required and info.name not in options:
            doc = f": {info.doc}" if info.doc else ""
            raise SpecError(f"missing: a required option ({info.type}{doc})", (info.name,))


@cache
def _dataclass_options_cached(cls: type) -> tuple[OptionInfo, ...]:
    hints = type_hints(cls)
    infos = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = hints.get(f.name, Any)
        children = tuple(_dataclass_options(tp)) if _is_option_dataclass(tp) else ()
        infos.append(OptionInfo(f.name, type_text(tp), _default_of(f), f.metadata.get("doc", ""),
                                type_schema(tp), children))
    return tuple(infos)


def _dataclass_options(cls: type) -> list[OptionInfo]:
    return list(_dataclass_options_cached(cls))


def _is_option_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp) and not issubclass(tp, Verifier)


def _default_of(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return REQUIRED


def jsonable(value: Any) -> Any:
    """A default as JSON shows it (tuples as lists, option dataclasses as objects, objects by repr)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return repr(value)


def _object_schema(infos: Sequence[OptionInfo], required: Sequence[str]) -> dict[str, Any]:
    properties = {}
    for info in infos:
        prop = dict(info.schema) if info.schema is not None else {}
        if info.doc:
            prop["description"] = info.doc
        if not info.required and info.schema is not None:
            prop["default"] = jsonable(info.default)
        properties[info.name] = prop
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


def summary(factory: Any) -> str:
    """The first paragraph of a factory's docstring, on one line."""
    doc = inspect.getdoc(factory) or ""
    return " ".join(doc.split("\n\n")[0].split())


def json_schema(kind: str, factory: Any) -> dict[str, Any]:
    """A JSON Schema for ``{"type": kind, ...options}``, derived from the declaration."""
    infos = declared_options(factory)
    if infos is None:
        schema: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
    else:
        schema = _object_schema(infos, [i.name for i in infos if i.required])
    schema["properties"] = {
        "type": {"const": kind},
        "name": {"type": "string", "description": "the label this reward's score is logged under in a composite"},
        **schema["properties"],
    }
    schema["required"] = ["type", *schema.get("required", [])]
    return {"$schema": _SCHEMA_DIALECT, "title": kind, "description": summary(factory), **schema}


def describe(kind: str, factory: Any) -> dict[str, Any]:
    """Everything the listing shows about one verifier, as JSON: name, doc, options, schema."""
    infos = declared_options(factory)
    return {
        "name": kind,
        "doc": inspect.getdoc(factory) or "",
        "options": None if infos is None else [info.to_dict() for info in infos],
        "schema": json_schema(kind, factory),
    }


def format_options(kind: str, factory: Any) -> str:
    """The text ``rewardsmith verifiers NAME`` prints: one line per option (type, default, what)."""
    doc = (inspect.getdoc(factory) or "").split("\n\n")
    lines = [f"{kind}: {' '.join(doc[0].split())}", ""]
    lines.extend(f"{paragraph}\n" for paragraph in doc[1:] if paragraph.strip())
    infos = declared_options(factory)
    if infos is None:
        lines.append("options: any keyword (this factory takes **kwargs; see its documentation)")
        return "\n".join(lines)
    if not infos:
        lines.append("options: none")
        return "\n".join(lines)
    lines.append("options:")
    lines.extend(_option_lines(sorted(infos, key=lambda info: not info.required), "  "))  # required first
    return "\n".join(lines)


def _option_lines(infos: Sequence[OptionInfo], indent: str) -> list[str]:
    width = max(len(i.name) for i in infos)
    lines = []
    for info in infos:
        default = "required" if info.required else f"default {json.dumps(jsonable(info.default))}"
        if info.children:
            default = "default: every switch at its default"
        doc = f" — {info.doc}" if info.doc else ""
        lines.append(f"{indent}{info.name:<{width}}  {info.type}, {default}{doc}")
        if info.children:
            lines.extend(_option_lines(info.children, indent + "    "))
    return lines


def _num(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
