"""What a sandboxed job may use: the limits every backend enforces."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    """Per-job limits. ``cpu_s`` defaults to ``wall_s``; ``output_bytes`` caps each stream."""

    wall_s: float = 10.0
    cpu_s: float | None = None
    memory_mb: int = 512
    processes: int = 64
    output_bytes: int = 1 << 20
    file_size_mb: int = 16

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["cpu_s"] = self.cpu_s if self.cpu_s is not None else self.wall_s
        return data
