"""``rewardsmith audit --against``: how noisy is one verifier, taking another as the reference?

Corrections for noisy rewards in RL (e.g. backward correction of a binary reward) need two numbers:
the verifier's false-positive rate (it pays a wrong completion) and false-negative rate (it refuses
a right one). Both specs score the rows' own completions; where the reference spec does not pay,
the share the audited spec pays is its false-positive rate, and where the reference pays, the
share it refuses is its false-negative rate. Each comes with a 95% Wilson interval and the line
numbers behind it, so the disagreements can be read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from rewardsmith.adapters.fields import row_sample
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers.registry import build
from rewardsmith.verifiers.wording import plural

LINES_KEPT = 50
COMPARISON_JSON = "against.json"


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float] | None:
    """The 95% Wilson score interval of a proportion (sound at 0 and n successes, unlike the normal one)."""
    if n == 0:
        return None
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class Comparison:
    spec: str = ""
    reference_spec: str = ""
    rows: int = 0  # rows both specs judged (neither verdict an error)
    both_paid: int = 0
    only_spec: int = 0  # the spec paid, the reference did not: the spec's false positives
    only_reference: int = 0  # the reference paid, the spec did not: the spec's false negatives
    neither: int = 0
    errors: int = 0  # rows left out: a status=error verdict on either side
    malformed: list[dict[str, Any]] = field(default_factory=list)
    false_positive_lines: list[int] = field(default_factory=list)
    false_negative_lines: list[int] = field(default_factory=list)

    @property
    def disagreement(self) -> float | None:
        return (self.only_spec + self.only_reference) / self.rows if self.rows else None

    @property
    def false_positive_rate(self) -> float | None:
        n = self.only_spec + self.neither
        return self.only_spec / n if n else None

    @property
    def false_negative_rate(self) -> float | None:
        n = self.only_reference + self.both_paid
        return self.only_reference / n if n else None

    def as_dict(self) -> dict[str, Any]:
        return {"spec": self.spec, "reference_spec": self.reference_spec, "rows": self.rows,
                "table": {"both_paid": self.both_paid, "only_spec": self.only_spec,
                          "only_reference": self.only_reference, "neither": self.neither},
                "disagreement": self.disagreement, "errors": self.errors, "malformed": self.malformed,
                "false_positive_rate": self.false_positive_rate,
                "false_positive_ci95": wilson(self.only_spec, self.only_spec + self.neither),
                "false_negative_rate": self.false_negative_rate,
                "false_negative_ci95": wilson(self.only_reference, self.only_reference + self.both_paid),
                "false_positive_lines": self.false_positive_lines,
                "false_negative_lines": self.false_negative_lines}


def compare(reward: Any, reference: Any, rows: Iterable[Row], *, fields: Mapping[str, str] | None = None,
            threshold: float = 0.0, batch_rows: int = 256,
            progress: Callable[[int], None] | None = None) -> Comparison:
    """Score every row's ``completion`` with ``reward`` and ``reference``; tally paid/unpaid pairs."""
    spec, other = build(reward), build(reference)
    result = Comparison()
    iterator = iter(rows)
    while batch := list(islice(iterator, batch_rows)):
        good = [row for row in batch if row.data is not None]
        result.malformed += [{"line": row.line, "error": row.error} for row in batch if row.data is None]
        samples = [row_sample(row.data, fields) for row in good if row.data is not None]
        for row, mine, theirs in zip(good, spec.verify_batch(samples), other.verify_batch(samples), strict=True):
            if mine.status == "error" or theirs.status == "error":
                result.errors += 1
                continue
            result.rows += 1
            paid, ref_paid = mine.score > threshold, theirs.score > threshold
            if paid and ref_paid:
                result.both_paid += 1
            elif paid:
                result.only_spec += 1
                if len(result.false_positive_lines) < LINES_KEPT:
                    result.false_positive_lines.append(row.line)
            elif ref_paid:
                result.only_reference += 1
                if len(result.false_negative_lines) < LINES_KEPT:
                    result.false_negative_lines.append(row.line)
            else:
                result.neither += 1
        if progress is not None:
            progress(len(batch))
    return result


def format_comparison(c: Comparison) -> str:
    def rate(value: float | None, interval: tuple[float, float] | None) -> str:
        if value is None or interval is None:
            return "n/a (no rows on that side)"
        return f"{value:.1%} (95% CI {interval[0]:.1%}-{interval[1]:.1%})"

    fp_n, fn_n = c.only_spec + c.neither, c.only_reference + c.both_paid
    lines = [f"{c.spec} against {c.reference_spec} (the reference) on {plural(c.rows, 'completion')}",
             f"{'':24}{'reference paid':>16}{'reference not':>16}",
             f"{'spec paid':<24}{c.both_paid:>16}{c.only_spec:>16}",
             f"{'spec not':<24}{c.only_reference:>16}{c.neither:>16}",
             f"disagreement: {'n/a' if c.disagreement is None else f'{c.disagreement:.1%}'}",
             f"false-positive rate: {rate(c.false_positive_rate, wilson(c.only_spec, fp_n))} "
             f"= {c.only_spec}/{fp_n}",
             f"false-negative rate: {rate(c.false_negative_rate, wilson(c.only_reference, fn_n))} "
             f"= {c.only_reference}/{fn_n}"]
    if c.false_positive_lines:
        lines.append(f"  lines paid by the spec only: {_lines(c.false_positive_lines, c.only_spec)}")
    if c.false_negative_lines:
        lines.append(f"  lines paid by the reference only: {_lines(c.false_negative_lines, c.only_reference)}")
    if c.errors:
        lines.append(f"rows left out for a status=error verdict: {c.errors}")
    if c.malformed:
        lines.append(f"malformed rows skipped: {len(c.malformed)} (first: line {c.malformed[0]['line']}: "
                     f"{c.malformed[0]['error']})")
    return "\n".join(lines)


def _lines(lines: list[int], total: int) -> str:
    shown = ", ".join(map(str, lines[:20]))
    return shown + (f", ... ({total} in all; audit.json/against.json keeps {LINES_KEPT})" if total > 20 else "")


def write_comparison(c: Comparison, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / COMPARISON_JSON
    path.write_text(json.dumps(c.as_dict(), indent=2) + "\n")
    return path
