"""What a GRPO run leaves to look at: the reward curve and its companions, from log.jsonl."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

PANELS: dict[str, list[str]] = {
    "reward": ["reward_mean", "pass_rate", "eval_pass_at_1", "eval_answered"],
    "completion length (tokens)": ["length_mean", "length_passing", "length_failing"],
    "signal": ["zero_variance_share", "clipped_share", "clip_ratio", "informative_share"],
    "policy drift": ["kl", "entropy", "sampler_logp_gap_mean"],
}


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def series(records: list[dict[str, Any]], key: str) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for record in records:
        value = record.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
            xs.append(int(record["step"]))
            ys.append(float(value))
    return xs, ys


def plot_run(log_path: Path, target: Path) -> Path | None:
    """Four panels (matplotlib, no display): reward, pass rate and held-out pass@1; completion
    lengths; the share of groups with no signal and of clipped tokens; KL, entropy and the
    sampler/trainer log-probability gap. None when matplotlib is missing or nothing was logged."""
    records = read_log(log_path)
    if not any("reward_mean" in r for r in records):
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, axes = plt.subplots(1, len(PANELS), figsize=(4.2 * len(PANELS), 3.6))
    for ax, (title, keys) in zip(axes, PANELS.items(), strict=True):
        for key in keys:
            xs, ys = series(records, key)
            if xs:
                ax.plot(xs, ys, marker="o" if key.startswith("eval_") or len(xs) < 30 else None, markersize=3,
                        label=key)
        if title == "reward":
            xs, means = series(records, "reward_mean")
            _, stds = series(records, "reward_std")
            if len(stds) == len(means):
                ax.fill_between(xs, [m - s for m, s in zip(means, stds, strict=True)],
                                [m + s for m, s in zip(means, stds, strict=True)], alpha=0.15)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("step", fontsize=8)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target
