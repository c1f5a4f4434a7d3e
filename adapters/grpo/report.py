"""What a GRPO run leaves to look at: the reward curve and its companions, from log.jsonl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardsmith.reward_models.curves import Series, draw, read_log, series

PANELS: dict[str, list[str]] = {
    "reward": ["reward_mean", "pass_rate", "eval_pass_at_1", "eval_answered"],
    "completion length (tokens)": ["length_mean", "length_passing", "length_failing"],
    "signal": ["zero_variance_share", "clipped_share", "clip_ratio", "informative_share"],
    "policy drift": ["kl", "entropy", "sampler_logp_gap_mean"],
}


def run_panels(records: list[dict[str, Any]]) -> dict[str, list[Series]]:
    """What :func:`plot_run` draws (:data:`PANELS`), the mean reward with a ± one std band."""
    panels = {title: [s for s in (series(records, key) for key in keys) if s.xs] for title, keys in PANELS.items()}
    mean, std = series(records, "reward_mean"), series(records, "reward_std")
    if mean.xs and mean.xs == std.xs:
        mean.band = ([m - s for m, s in zip(mean.ys, std.ys, strict=True)],
                     [m + s for m, s in zip(mean.ys, std.ys, strict=True)])
        panels["reward"] = [mean if s.key == "reward_mean" else s for s in panels["reward"]]
    return panels


def plot_run(log_path: Path, target: Path) -> Path | None:
    """Four panels (matplotlib, no display): reward, pass rate and held-out pass@1; completion
    lengths; the share of groups with no signal and of clipped tokens; KL, entropy and the
    sampler/trainer log-probability gap. None when matplotlib is missing or nothing was logged."""
    records = read_log(log_path)
    if not any("reward_mean" in r for r in records):
        return None
    return draw(run_panels(records), target)
