"""Name → verifier factory, and ``build`` from a name, a dict, inline JSON or a YAML/JSON file.

One reward definition serves the CLI, the server and every trainer adapter, so all spec
errors surface here, at build time, saying where in the spec they are and what would work
(the closest name, the options there are). Options are declared once per verifier
(:mod:`~rewardsmith.verifiers.options`); this module checks their names, the verifier its values.

Built-ins are imported on demand, through the table :data:`BUILTINS`: ``build("math")``
imports the math verifier's module and nothing else, so a trainer worker scoring math never
imports the code sandbox or the judge. ``available()`` lists every name without importing;
plugins are found through the entry-point group ``rewardsmith.verifiers`` and loaded by name.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rewardsmith.verifiers.core import Verifier, short
from rewardsmith.verifiers.options import SpecError, check_keywords, unknown_name
from rewardsmith.verifiers.yaml_text import load_yaml

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "SpecError", "available", "build", "get_factory", "load_spec",
           "load_spec_file", "looks_like_file", "register"]

ENTRY_POINT_GROUP = "rewardsmith.verifiers"
Factory = Callable[..., Verifier]

# Each built-in name and the module (under rewardsmith.verifiers) that defines its factory: importing
# it registers the name, and register() checks the factory's __module__ is exactly this one, so a
# name leads to its code in one hop (a family package's __init__ holds its verifier: "math" is
# math/__init__.py; "brier" is calibration/brier.py). tests/verifiers/test_registry_layout.py holds the table.
BUILTINS: dict[str, str] = {
    "math": "math",
    "code": "code",
    "judge": "judge",
    "choice": "choice",
    "qa": "qa",
    "brier": "calibration.brier",
    "tool_call": "tool_call",
    "format": "format",
    "json": "structured",
    "ifeval": "ifeval",
    "reasoning_gym": "reasoning_gym",
    "overlong": "length",
    "cosine": "length",
    "repetition": "length",
    "weighted": "compose",
    "min": "compose",
    "max": "compose",
    "gate": "compose",
    "route": "compose",
    "cascade": "compose",
    "agent": "agent",
    "orm": "reward_model",
    "prm": "reward_model",
}

_REGISTRY: dict[str, Factory] = {}


def register(name: str) -> Callable[[Factory], Factory]:
    """Register a verifier class or factory under ``name`` (``@register("math")``)."""

    def decorator(factory: Factory) -> Factory:
        existing = _REGISTRY.get(name)
        if existing is not None and existing is not factory:
            raise SpecError(f"verifier name {name!r} is already registered by {existing!r}")
        home = BUILTINS.get(name)
        if home is not None and getattr(factory, "__module__", None) != f"rewardsmith.verifiers.{home}":
            raise SpecError(f"verifier name {name!r} is already registered by the built-in "
                            f"rewardsmith.verifiers.{home}; register yours under another name")
        _REGISTRY[name] = factory
        return factory

    return decorator


def available() -> list[str]:
    """Every name a spec can use: built-ins, registered verifiers and installed plugins (none imported)."""
    return sorted({*BUILTINS, *_REGISTRY, *_plugins()})


def get_factory(name: str) -> Factory:
    """The factory registered as ``name``, importing its module or loading its plugin on first use."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name in BUILTINS:
        importlib.import_module(f"rewardsmith.verifiers.{BUILTINS[name]}")
        return _REGISTRY[name]
    plugin = _plugins().get(name)
    if plugin is None:
        raise SpecError(unknown_name("verifier", name, available(), "available"))
    try:
        loaded = plugin.load()
    except Exception as exc:
        raise SpecError(f"plugin {name!r} ({plugin.value}) failed to load: {type(exc).__name__}: {exc}") from exc
    return _REGISTRY.setdefault(name, loaded)  # the module may have registered itself on import


@cache
def _plugins() -> dict[str, EntryPoint]:
    from importlib.metadata import entry_points

    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in BUILTINS:  # a plugin cannot shadow a built-in
            found.setdefault(ep.name, ep)
    return found


def build(spec: str | Path | Mapping[str, Any] | Verifier) -> Verifier:
    """Build a verifier from a registry name, a ``{"type": ..., **options}`` dict, a JSON object
    string (``'{"type": "math", "timeout_s": 2}'``) or a YAML/JSON file.

    ``build("math")``, ``build({"type": "math", "answer_field": "solution"})`` and
    ``build("reward.yaml")`` all return a ready verifier. Composition specs nest; any spec
    object may carry a ``name``, the label its score is logged under inside a composite.
    """
    if isinstance(spec, Verifier):
        return spec
    if isinstance(spec, str) and is_inline_json(spec):
        return build(parse_inline(spec))
    if isinstance(spec, Path) or (isinstance(spec, str) and looks_like_file(spec)):
        content = load_spec_file(Path(spec))
        try:
            return build(content)
        except SpecError as exc:
            raise exc.in_source(str(spec)) from None
    if isinstance(spec, str):
        return _construct(spec, {})
    if isinstance(spec, Mapping):
        options = dict(spec)
        kind = options.pop("type", None)
        label = options.pop("name", None)
        if not isinstance(kind, str):
            raise SpecError(f"a spec object needs a 'type' naming a verifier, got {short(dict(spec), 80)}; "
                            f"available: {', '.join(available())}")
        if label is not None and not isinstance(label, str):
            raise SpecError(f"expected a string, got {label!r}", ("name",), kind)
        verifier = _construct(kind, options)
        if label is not None:
            verifier.label = label  # read by composites (part names)
        return verifier
    raise SpecError(f"cannot build a verifier from {type(spec).__name__} {short(spec, 80)}: expected a verifier name, "
                    "an object with a 'type', a JSON object string or a YAML/JSON file")


def load_spec(spec: Any) -> Any:
    """The plain spec (a name or a dict) behind a file path or a JSON object string; anything else as is.

    What servers, exported files and Ray actors carry, so they need not see the caller's files.
    """
    if isinstance(spec, str) and is_inline_json(spec):
        return parse_inline(spec)
    if isinstance(spec, Path) or (isinstance(spec, str) and looks_like_file(spec)):
        return load_spec_file(Path(spec))
    return spec


def load_spec_file(path: Path) -> Any:
    if not path.exists():
        raise SpecError(f"reward spec file {str(path)!r} does not exist")
    text = path.read_text()
    try:
        if path.suffix == ".json":
            return json.loads(text)
        return load_yaml(text)
    except Exception as exc:  # yaml and json raise different types; both mean a bad file
        raise SpecError(f"cannot read reward spec {str(path)!r}: {exc}") from exc


def is_inline_json(spec: str) -> bool:
    """Whether a string spec is an inline JSON object (``--reward '{"type": "math"}'``)."""
    return spec.lstrip().startswith("{")


def parse_inline(spec: str) -> Any:
    """A JSON object string as a dict; a YAML flow mapping (``{type: math, timeout_s: 2}``) is read too."""
    try:
        return json.loads(spec)
    except json.JSONDecodeError as exc:
        problem = f"the spec starts with '{{' but is not a JSON object: {exc.msg} at column {exc.colno}"
    import yaml

    try:
        value = load_yaml(spec)
    except yaml.YAMLError:
        value = None
    if isinstance(value, Mapping):
        return value
    raise SpecError(problem)


def looks_like_file(spec: str) -> bool:
    """Whether a string spec names a file (YAML/JSON) rather than a registry name or inline JSON."""
    if is_inline_json(spec):
        return False
    return spec.endswith((".yaml", ".yml", ".json")) or "/" in spec or Path(spec).is_file()


def _construct(kind: str, options: dict[str, Any]) -> Verifier:
    factory = get_factory(kind)
    try:
        check_keywords(factory, options, repr(kind))
        verifier = factory(**options)
    except SpecError as exc:
        raise exc.of_kind(kind) from None
    except (TypeError, ValueError) as exc:
        raise SpecError(f"bad options for verifier {kind!r}: {exc}") from exc
    if not isinstance(verifier, Verifier):
        raise SpecError(f"factory for {kind!r} returned {type(verifier).__name__}, not a Verifier")
    return verifier
