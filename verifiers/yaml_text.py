"""YAML as people write it in config files: ``5e-6`` is a number.

PyYAML implements YAML 1.1, whose float pattern wants a dot, so ``learning_rate: 5e-6`` or
``weights: [1, 5e-1]`` arrive as the strings "5e-6" and "5e-1" and a typed option refuses them.
YAML 1.2 (and JSON, and every other config reader) reads them as numbers. Every YAML file the
toolkit reads (reward specs, training configs) goes through :func:`load_yaml`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_EXPONENT_WITHOUT_DOT = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$")
_loader: Any = None


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` with YAML 1.2's floats."""
    global _loader
    import yaml

    if _loader is None:
        class Loader(yaml.SafeLoader):
            pass

        Loader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_WITHOUT_DOT, list("-+0123456789."))
        _loader = Loader
    return yaml.load(text, Loader=_loader)


def read_mapping(path: Path, flag: str = "--config") -> dict[str, Any]:
    """A YAML file that must hold a mapping (a config); a ValueError names the flag and the file."""
    if not path.is_file():
        raise ValueError(f"{flag} {str(path)!r} does not exist")
    values = load_yaml(path.read_text()) or {}
    if not isinstance(values, dict):
        raise ValueError(f"{flag} {str(path)!r} must hold a mapping of config keys")
    return values
