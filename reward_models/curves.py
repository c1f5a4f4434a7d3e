"""Drawing a run's ``log.jsonl`` as panels of curves, the same way for both trainers.

Readable from two records on: every training series of fewer than 30 points has markers (one
point is a visible dot); evaluation series are dashed with hollow markers of their own shapes, so
they never pass for training ones (nor hide each other); legends use the names TensorBoard and
W&B show (``train/loss``, ``eval/auroc``; see :func:`~rewardsmith.reward_models.tracking.metric_name`);
the step axis has whole-number ticks, with room around a lone point.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.reward_models.tracking import metric_name

MARKERS_BELOW = 30  # training series shorter than this get a marker on every point
EVAL_MARKERS = ("s", "D", "^", "v", "P")


@dataclass
class Series:
    """One curve: its legend label, its points, and an optional band (low, high) around it."""

    key: str
    xs: list[int]
    ys: list[float]
    band: tuple[list[float], list[float]] | None = field(default=None)

    @property
    def label(self) -> str:
        return metric_name(self.key)

    def style(self, index: int = 0) -> dict[str, Any]:
        """matplotlib keyword arguments: evaluation series dashed with hollow markers, a different
        shape for each (``index``: its place among the panel's evaluation series), so two equal
        values at one step both show; training series solid, with dots while they are short."""
        if self.key.startswith("eval_"):
            return {"label": self.label, "linestyle": "--", "marker": EVAL_MARKERS[index % len(EVAL_MARKERS)],
                    "markersize": 6, "markerfacecolor": "none"}
        short = len(self.xs) < MARKERS_BELOW
        return {"label": self.label, "linestyle": "-", "marker": "o" if short else None, "markersize": 4}


def read_log(path: Path) -> list[dict[str, Any]]:
    """The records of a ``log.jsonl`` (none when it does not exist)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def series(records: Iterable[Mapping[str, Any]], key: str) -> Series:
    """The (step, value) points of ``key``, skipping records without a number for it."""
    xs, ys = [], []
    for record in records:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
            xs.append(int(record["step"]))
            ys.append(float(value))
    return Series(key, xs, ys)


def draw(panels: Mapping[str, list[Series]], target: Path, xlabel: str = "step") -> Path | None:
    """One row of panels (title -> its series) saved as a PNG; None when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        return None
    steps = [x for curves in panels.values() for s in curves for x in s.xs]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (title, curves) in zip(axes[0], panels.items(), strict=True):
        evaluations = 0
        for curve in curves:
            if not curve.xs:
                continue
            ax.plot(curve.xs, curve.ys, **curve.style(evaluations))
            evaluations += curve.key.startswith("eval_")
            if curve.band is not None:
                ax.fill_between(curve.xs, *curve.band, alpha=0.15)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel, fontsize=8)
        if steps:  # whole steps only, with room around the first and last point (a lone one too)
            low, high = min(steps), max(steps)
            if high - low <= 10:
                ax.set_xticks(range(low, high + 1))
            else:
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            pad = max(0.5, 0.03 * (high - low))
            ax.set_xlim(low - pad, high + pad)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target


__all__ = ["Series", "draw", "read_log", "series"]
