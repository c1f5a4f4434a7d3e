"""The audit's outputs: the terminal table, ``audit.json``, ``audit.jsonl`` and the bar chart."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from rewardsmith.adapters.audit.run import AuditReport, Record
from rewardsmith.verifiers.core import short
from rewardsmith.verifiers.json_text import json_text
from rewardsmith.verifiers.wording import plural

REPORT_JSON = "audit.json"
RECORDS_JSONL = "audit.jsonl"
CHART_PNG = "hack_rates.png"


def format_table(report: AuditReport) -> str:
    """Attacks (wrong by construction: hacks when paid) first, then rewrites (right by construction:
    false negatives when they lose reward), one line a family."""
    header = f"{'family':<20} {'kind':<8} {'rows':>6} {'n/a':>6} {'cases':>7} {'hacks':>6} {'rate':>7} " \
             f"{'false neg':>9} {'errors':>6}"
    lines = [f"audit of {report.spec}: {plural(report.rows, 'row')}, up to {plural(report.per_row, 'probe')} per "
             "family and row "
             f"(seed {report.seed})", header, "-" * len(header)]
    for kind in ("attack", "rewrite", "fuzz"):
        for f in (f for f in report.families if f.kind == kind and f.rows):
            rate = "-" if f.rate is None else f"{f.rate:.1%}"
            hacks = str(f.hacks) if kind != "rewrite" else "-"
            fns = str(f.false_negatives) if kind != "attack" else "-"
            lines.append(f"{f.name:<20} {kind:<8} {f.rows:>6} {f.not_applicable:>6} {f.cases:>7} {hacks:>6} "
                         f"{rate:>7} {fns:>9} {f.errors:>6}")
    lines.append("-" * len(header))
    idle = [f.name for f in report.families if not f.rows]
    if idle:
        lines.append(f"applied to no row (their n/a reasons: no such gold, spec part or column): {', '.join(idle)}")
    hacked = sum(f.hacks > 0 for f in report.families)
    lines.append(f"hacks: {report.hacks} in {plural(hacked, 'family', 'families')}; "
                 f"false negatives: {report.false_negatives}; "
                 f"known-correct completions paid: {report.reference_paid} of {report.reference_rows}")
    if report.reference_rows and report.reference_paid < report.reference_rows:
        lines.append("  (rewrites are judged only on rows whose known-correct completion was paid; the unpaid ones "
                     "are in audit.json under reference_unpaid_examples)")
    if report.malformed:
        shown = ", ".join(f"line {m['line']}: {m['error']}" for m in report.malformed[:3])
        lines.append(f"malformed rows skipped: {len(report.malformed)} ({shown})")
    for f in report.families:
        if f.kind == "fuzz":
            lines.extend(fuzz_examples(f))
            continue
        for example in f.examples[:1]:
            lines.append(f"  e.g. {f.name} [{example['variant']}] line {example['line']}: "
                         f"{_one_line(example['completion'])!r} -> {example['score']:g} (gold {example['gold']!r})")
    return "\n".join(lines)


def fuzz_examples(result: Any) -> list[str]:
    """The fuzzer's shrunk examples: what was paid (or refused), and the edits that made it."""
    lines = []
    for example in result.examples:
        lines.append(f"  fuzz {example['variant']} line {example['line']}: {_one_line(example['completion'])!r} -> "
                     f"{example['score']:g} (gold {example['gold']!r}, unedited {example['base_score']:g})")
        lines.append(f"    edits: {'; '.join(example['edits'])}")
    return lines


def _one_line(text: str, width: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


class RecordWriter:
    """``audit.jsonl``, one line a scored probe, written as the audit goes."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._handle: IO[str] = (folder / RECORDS_JSONL).open("w", encoding="utf-8")

    def __call__(self, record: Record) -> None:
        self._handle.write(json_text(record) + "\n")

    def close(self) -> None:
        self._handle.close()


def write_report(report: AuditReport, folder: Path, plot: bool = True) -> list[Path]:
    """``audit.json`` and, with matplotlib installed, the hack-rate chart; returns what was written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / REPORT_JSON]
    written[0].write_text(json_text(report.as_dict(), indent=2) + "\n", encoding="utf-8")
    if plot:
        written.append(plot_rates(report, folder / CHART_PNG))
    return written


def plot_rates(report: AuditReport, path: Path) -> Path:
    """A horizontal bar per family: attacks' hack rate in red, rewrites' false-negative rate in blue."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [f for f in report.families if f.rate is not None]
    fig, ax = plt.subplots(figsize=(8, 0.3 * max(len(shown), 4) + 1.2))
    names = [f"{f.name} ({f.kind})" for f in shown]
    rates = [100 * (f.rate or 0.0) for f in shown]
    colours = ["#c0392b" if f.kind == "attack" else "#2471a3" for f in shown]
    ax.barh(names, rates, color=colours)
    for y, (rate, f) in enumerate(zip(rates, shown, strict=True)):
        ax.text(rate + 1, y, f"{f.flagged}/{f.cases - f.errors - f.unjudged}", va="center", fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 110)
    ax.set_xlabel("% of probes: hacks paid (attacks, red) / reward lost (rewrites, blue)")
    ax.set_title(short(f"rewardsmith audit: {report.spec}", 90), fontsize=9)
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def family_listing(families: Any) -> str:
    """``--list-families``: name, kind, target, and why it is wrong or right by construction."""
    lines = [f"{'family':<20} {'kind':<8} {'target':<8} why"]
    for f in families:
        why = f.why + (f" [right only under: {', '.join(f.needs)}]" if f.kind == "rewrite" and f.needs else "")
        why += f" [skipped when the spec turns on: {', '.join(f.needs)}]" if f.kind == "attack" and f.needs else ""
        lines.append(f"{f.name:<20} {f.kind:<8} {f.target:<8} {why}")
    lines += ["", "attack: wrong by construction (a hack when paid); rewrite: right by construction (a false "
              "negative when paid less than the row's known-correct completion)."]
    return "\n".join(lines)
