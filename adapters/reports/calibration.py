"""``rewardsmith calibrate``: how well do stated confidences match being right?

Reads a scored (or any) file in the formats ``rewardsmith score`` reads and writes (JSONL,
.gz, JSON, parquet, a datasets folder), takes a probability and a 0/1 label from each
row by field name (a dotted path reaches into nested objects: ``verdict.details.confidence``,
``verdict.correct``), and writes a report folder: ``metrics.json`` (Brier, ECE, MCE,
AUROC, per-bin table, skipped rows), ``reliability.csv`` (the per-bin table) and
``reliability.png`` (reliability diagram with a histogram of the predictions).

Rows where either value is missing or null are skipped and counted; so are rows whose
value is not usable (a probability outside [0, 1], a label other than true/false/0/1).
numpy and matplotlib (the ``plots`` extra) are imported only here, when the command runs.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.adapters.reports.table import grid, number
from rewardsmith.adapters.scoring.rows import read_rows
from rewardsmith.verifiers.core import MISSING, lookup
from rewardsmith.verifiers.wording import plural

BIN_COLUMNS = ("bin", "lower", "upper", "count", "mean_predicted", "observed_frequency", "gap")


def as_probability(value: Any) -> float | None:
    """A number in [0, 1] (bools are not probabilities); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None


def as_label(value: Any) -> int | None:
    """true/false or 0/1 (as numbers) → 1/0; anything else None."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float) and value in (0, 1):
        return int(value)
    return None


@dataclass
class Pairs:
    """The usable (probability, label) pairs of a file and what was skipped, by reason."""

    probs: list[float] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    rows: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def used(self) -> int:
        return len(self.probs)


def read_pairs(path: Path, prob_field: str, label_field: str) -> Pairs:
    """Every row's (probability, label); rows without both are counted, never guessed."""
    pairs = Pairs()
    for row in read_rows(path):
        pairs.rows += 1
        if row.data is None:
            pairs.skipped["malformed_line"] += 1
            continue
        raw_prob, raw_label = lookup(row.data, prob_field), lookup(row.data, label_field)
        reasons = []
        if raw_prob is MISSING or raw_prob is None:
            reasons.append("missing_prob")
        elif (prob := as_probability(raw_prob)) is None:
            reasons.append("invalid_prob")
        if raw_label is MISSING or raw_label is None:
            reasons.append("missing_label")
        elif (label := as_label(raw_label)) is None:
            reasons.append("invalid_label")
        if reasons:
            pairs.skipped[reasons[0]] += 1  # one reason per row, so the counts add up to the rows skipped
            continue
        pairs.probs.append(prob)
        pairs.labels.append(label)
    return pairs


def build_report(pairs: Pairs, n_bins: int = 10, strategy: str = "uniform", **source: Any) -> dict[str, Any]:
    """metrics.json's content: the metrics plus where they came from and what was skipped."""
    from rewardsmith.adapters.reports.calibration_metrics import calibration_summary

    return {
        **source,
        "rows": pairs.rows,
        "used": pairs.used,
        "skipped": sum(pairs.skipped.values()),
        "skipped_by_reason": dict(sorted(pairs.skipped.items())),
        **calibration_summary(pairs.probs, pairs.labels, n_bins, strategy),
    }


def write_csv(path: Path, bins: list[dict[str, Any]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=BIN_COLUMNS)
        writer.writeheader()
        for record in bins:
            writer.writerow({k: ("" if record[k] is None else record[k]) for k in BIN_COLUMNS})


def plot_reliability(path: Path, report: dict[str, Any]) -> None:
    """Reliability diagram over a histogram of the predictions; headline metrics in the title."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    bins = report["bins"]
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(6.4, 7.2), sharex=True, gridspec_kw={"height_ratios": [3, 1], "hspace": 0.08}
    )
    try:
        top.plot([0, 1], [0, 1], linestyle="--", color="0.5", linewidth=1, label="perfect calibration")
        full = [b for b in bins if b["count"] and b["upper"] > b["lower"]]
        top.bar(
            [b["lower"] for b in full], [b["observed_frequency"] for b in full],
            width=[b["upper"] - b["lower"] for b in full], align="edge",
            color="tab:blue", alpha=0.25, edgecolor="tab:blue", label="observed frequency per bin",
        )
        points = [b for b in bins if b["count"]]
        top.plot(
            [b["mean_predicted"] for b in points], [b["observed_frequency"] for b in points],
            marker="o", color="tab:blue", label="(mean confidence, observed frequency)",
        )
        top.set_xlim(0, 1)
        top.set_ylim(0, 1.02)
        top.set_ylabel("observed frequency (fraction correct)")
        top.legend(loc="upper left", fontsize=8, frameon=False)
        top.set_title(
            f"Reliability ({plural(report['n_bins'], report['strategy'] + ' bin')}, n={report['used']})\n"
            f"ECE {report['ece']:.3f} · MCE {report['mce']:.3f} · Brier {report['brier']:.3f} · "
            f"AUROC {number(report['auroc'])}",
            fontsize=10,
        )
        top.grid(alpha=0.3)
        # The bins' own counts (not plt.hist, whose bins are left-closed): the same rows as the table.
        bottom.bar([b["lower"] for b in full], [b["count"] for b in full],
                   width=[b["upper"] - b["lower"] for b in full], align="edge", color="0.45", edgecolor="white")
        bottom.set_xlabel("predicted probability (stated confidence)")
        bottom.set_ylabel("rows per bin")
        bottom.grid(alpha=0.3)
        fig.savefig(path, dpi=110, bbox_inches="tight")
    finally:
        plt.close(fig)


def format_report(report: dict[str, Any], title: str) -> str:
    """The table the command prints."""
    skipped = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in report["skipped_by_reason"].items())
    lines = [
        title,
        f"  rows             {report['rows']}  ({report['used']} used, {report['skipped']} skipped"
        + (f": {skipped}" if skipped else "") + ")",
        f"  accuracy         {number(report['accuracy'])}   mean confidence {number(report['mean_confidence'])}",
        f"  Brier            {number(report['brier'])}",
        f"  ECE              {number(report['ece'])}  ({plural(report['n_bins'], report['strategy'] + ' bin')};"
        f" uniform {number(report['ece_uniform'])}, quantile {number(report['ece_quantile'])})",
        f"  MCE              {number(report['mce'])}",
        f"  AUROC            {number(report['auroc'])}",
        "",
    ]
    bins = [[f"[{b['lower']:.3f}, {b['upper']:.3f}]", str(b["count"]), number(b["mean_predicted"]),
             number(b["observed_frequency"]), number(b["gap"])] for b in report["bins"]]
    lines += grid(["bin", "count", "mean conf", "observed", "gap"], bins, ">>>>>")
    return "\n".join(lines)


def calibrate(
    input_path: Path, output_dir: Path, prob_field: str, label_field: str,
    n_bins: int = 10, strategy: str = "uniform", plot: bool = True,
) -> dict[str, Any]:
    """Write metrics.json, reliability.csv and reliability.png to ``output_dir``; return the report."""
    pairs = read_pairs(input_path, prob_field, label_field)
    if not pairs.used:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(pairs.skipped.items())) or "the file has no rows"
        raise ValueError(
            f"no row of {input_path} has both {prob_field!r} (a probability) and {label_field!r} (a 0/1 label); "
            f"skipped: {reasons}"
        )
    report = build_report(
        pairs, n_bins, strategy, input=str(input_path), prob_field=prob_field, label_field=label_field
    )
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "metrics.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    write_csv(output_dir / "reliability.csv", report["bins"])
    if plot:
        plot_reliability(output_dir / "reliability.png", report)
    return report
