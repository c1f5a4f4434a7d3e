"""Rows for the ``reasoning_gym`` verifier, made by reasoning-gym's generators: endless graded data.

Each row is ``{"prompt": question, "answer": gold, "metadata": {...}}`` (plus ``config`` when the
generator was given options), JSON-serialisable (tuples in the metadata become lists;
:func:`.policy.tuple_paths` names those a scorer compares as tuples, turned back in the sandbox).
"""

from __future__ import annotations

import json
from typing import Any


def make_rows(name: str, size: int = 10, seed: int = 0, **config: Any) -> list[dict[str, Any]]:
    """``size`` rows of the reasoning-gym dataset ``name`` (``config``: its generator's options; a
    ``composite``'s ``datasets`` as ``DatasetSpec`` objects or ``{"name", "weight", "config"}`` mappings)."""
    import reasoning_gym

    if name == "composite":  # its sub-datasets may be given as plain mappings (JSON, the CLI's --config)
        from reasoning_gym.composite import DatasetSpec

        specs = [DatasetSpec(**s) if isinstance(s, dict) else s for s in config.get("datasets", ())]
        config = {**config, "datasets": specs}
    data = reasoning_gym.create_dataset(name, size=size, seed=seed, **config)
    if name != "composite":
        return [to_row(data[i], config) for i in range(size)]
    # A composite's rows are its sub-datasets' (their scorer scores them): each keeps its own config.
    configs = {_get(spec, "name"): dict(_get(spec, "config") or {}) for spec in config.get("datasets", ())}
    return [
        to_row(entry, configs.get(entry["metadata"]["source_dataset"])) for entry in map(data.__getitem__, range(size))
    ]


def _get(spec: Any, key: str) -> Any:
    """A field of a composite's dataset spec, given as a ``DatasetSpec`` or a plain mapping."""
    return spec.get(key) if isinstance(spec, dict) else getattr(spec, key, None)


def to_row(entry: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, Any]:
    """One generated entry as a JSON-ready row (values JSON cannot hold are written as their text); a
    generator ``config`` goes with it (field ``config``): some scorers judge by their config."""
    row = {"prompt": entry["question"], "answer": entry["answer"], "metadata": entry["metadata"]}
    if config:
        row["config"] = config
    return json.loads(json.dumps(row, default=str))
