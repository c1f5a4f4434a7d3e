"""Rows for the ``reasoning_gym`` verifier, made by reasoning-gym's generators: endless graded data.

Each row is ``{"prompt": question, "answer": gold, "metadata": {...}}`` (plus ``config`` when the
generator was given options), JSON-serialisable (tuples in
the metadata become lists; :func:`.policy.restore` turns back those a scorer compares as tuples).
"""

from __future__ import annotations

import json
from typing import Any


def make_rows(name: str, size: int = 10, seed: int = 0, **config: Any) -> list[dict[str, Any]]:
    """``size`` rows of the reasoning-gym dataset ``name`` (``config``: its generator's options)."""
    import reasoning_gym

    data = reasoning_gym.create_dataset(name, size=size, seed=seed, **config)
    return [to_row(data[i], config) for i in range(size)]


def to_row(entry: dict[str, Any], config: dict[str, Any] | None = None) -> dict[str, Any]:
    """One generated entry as a JSON-ready row (values JSON cannot hold are written as their text); a
    generator ``config`` goes with it (field ``config``): some scorers judge by their config."""
    row = {"prompt": entry["question"], "answer": entry["answer"], "metadata": entry["metadata"]}
    if config:
        row["config"] = config
    return json.loads(json.dumps(row, default=str))
