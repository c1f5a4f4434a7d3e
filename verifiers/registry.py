"""Name → verifier factory, and ``build`` from a name, a dict or a YAML/JSON file.

One reward definition serves the CLI, the server and every trainer adapter, so all
spec errors surface here, at build time, with the list of what exists.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.core import Verifier

ENTRY_POINT_GROUP = "rewardsmith.verifiers"
Factory = Callable[..., Verifier]

_REGISTRY: dict[str, Factory] = {}
_entry_points_loaded = False


class SpecError(ValueError):
    """A reward spec that cannot be built; the message says what would work."""


def register(name: str) -> Callable[[Factory], Factory]:
    """Register a verifier class or factory under ``name`` (``@register("math")``)."""

    def decorator(factory: Factory) -> Factory:
        existing = _REGISTRY.get(name)
        if existing is not None and existing is not factory:
            raise SpecError(f"verifier name {name!r} is already registered by {existing!r}")
        _REGISTRY[name] = factory
        return factory

    return decorator


def available() -> list[str]:
    """Every registered name, built-ins and plugins."""
    _load_builtins()
    _load_entry_points()
    return sorted(_REGISTRY)


def get_factory(name: str) -> Factory:
    _load_builtins()
    if name not in _REGISTRY:
        _load_entry_points()
    if name not in _REGISTRY:
        raise SpecError(f"unknown verifier {name!r}; available: {', '.join(available())}")
    return _REGISTRY[name]


def build(spec: str | Path | Mapping[str, Any] | Verifier) -> Verifier:
    """Build a verifier from a registry name, a ``{"type": ..., **options}`` dict, or a file.

    ``build("math")``, ``build({"type": "math", "answer_field": "solution"})`` and
    ``build("reward.yaml")`` all return a ready verifier. Composition specs nest.
    """
    if isinstance(spec, Verifier):
        return spec
    if isinstance(spec, Path) or (isinstance(spec, str) and looks_like_file(spec)):
        return build(load_spec_file(Path(spec)))
    if isinstance(spec, str):
        return _construct(spec, {})
    if isinstance(spec, Mapping):
        options = dict(spec)
        kind = options.pop("type", None)
        if not isinstance(kind, str):
            raise SpecError(
                f"a spec dict needs a 'type' naming a verifier, got {dict(spec)!r}; "
                f"available: {', '.join(available())}"
            )
        return _construct(kind, options)
    raise SpecError(f"cannot build a verifier from {type(spec).__name__}: {spec!r}")


def load_spec_file(path: Path) -> Any:
    if not path.exists():
        raise SpecError(f"reward spec file {str(path)!r} does not exist")
    text = path.read_text()
    try:
        if path.suffix == ".json":
            return json.loads(text)
        import yaml

        return yaml.safe_load(text)
    except Exception as exc:  # yaml and json raise different types; both mean a bad file
        raise SpecError(f"cannot read reward spec {str(path)!r}: {exc}") from exc


def looks_like_file(spec: str) -> bool:
    """Whether a string spec names a file (YAML/JSON) rather than a registry name."""
    return spec.endswith((".yaml", ".yml", ".json")) or "/" in spec or Path(spec).is_file()


def _construct(kind: str, options: dict[str, Any]) -> Verifier:
    factory = get_factory(kind)
    _check_options(kind, factory, options)
    try:
        verifier = factory(**options)
    except SpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise SpecError(f"bad options for verifier {kind!r}: {exc}") from exc
    if not isinstance(verifier, Verifier):
        raise SpecError(f"factory for {kind!r} returned {type(verifier).__name__}, not a Verifier")
    return verifier


def _check_options(kind: str, factory: Factory, options: Mapping[str, Any]) -> None:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    accepted = [n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise SpecError(
            f"verifier {kind!r} has no option {', '.join(map(repr, unknown))}; "
            f"it accepts: {', '.join(accepted) or '(no options)'}"
        )


def _load_builtins() -> None:
    # Importing the modules runs their @register decorators.
    from rewardsmith.verifiers import calibration, code, compose, format, judge, length, math  # noqa: F401


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _REGISTRY:
            continue
        try:
            loaded = ep.load()
        except Exception as exc:
            raise SpecError(f"plugin {ep.name!r} ({ep.value}) failed to load: {exc}") from exc
        if ep.name not in _REGISTRY:  # the module may have registered itself on import
            _REGISTRY[ep.name] = loaded
