"""Reward-model data: the three row formats, checked row by row, and the converters into them.

* **pairwise** (ORM): ``prompt``, ``chosen``, ``rejected`` — TRL's preference format; each may
  be text or chat messages; an optional ``margin`` per pair.
* **pointwise** (ORM): ``prompt``, ``completion``, ``label`` (0/1, a bool or a float in [0, 1])
  — what ``rewardsmith label outcome`` makes of a scored file.
* **stepwise** (PRM): ``prompt``, ``steps`` (non-empty strings), ``labels`` (one bool or float
  in [0, 1] per step) — TRL's stepwise-supervision shape. :func:`from_processbench` converts
  ProcessBench's form (``problem``, ``steps``, ``label`` = first wrong step or -1).

A malformed row is not an exception: it becomes a :class:`Problem` with its line number and
is left out, so one bad line never costs a training run; the caller reports the count. Torch
is not imported here: the CLI checks a file before any model loads.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.verifiers import RewardsmithError
from rewardsmith.verifiers.wording import plural

Kind = Literal["pairwise", "pointwise", "stepwise"]
KINDS: tuple[Kind, ...] = ("pairwise", "pointwise", "stepwise")
REQUIRED: dict[Kind, tuple[str, ...]] = {
    "pairwise": ("prompt", "chosen", "rejected"),
    "pointwise": ("prompt", "completion", "label"),
    "stepwise": ("prompt", "steps", "labels"),
}
Text = str | list[dict[str, Any]]


@dataclass(frozen=True)
class Pair:
    prompt: Text
    chosen: Text
    rejected: Text
    margin: float = 0.0
    line: int = 0


@dataclass(frozen=True)
class Point:
    prompt: Text
    completion: Text
    label: float
    line: int = 0


@dataclass(frozen=True)
class Stepwise:
    prompt: Text
    steps: tuple[str, ...]
    labels: tuple[float, ...]
    line: int = 0
    first_error: int | None = None  # ProcessBench's label, when the row carries one
    subset: str | None = None


Example = Pair | Point | Stepwise


@dataclass(frozen=True)
class Problem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class Loaded:
    """Examples that passed the checks, and a problem per row that did not."""

    kind: Kind
    examples: list[Any] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def describe(self, shown: int = 5) -> str:
        """``1,200 pairwise rows; 3 skipped (line 4: ...; ...)`` — the line the CLI prints."""
        text = plural(len(self.examples), f"{self.kind} row", thousands=True)
        if self.problems:
            listed = "; ".join(str(p) for p in self.problems[:shown])
            more = f"; and {len(self.problems) - shown} more" if len(self.problems) > shown else ""
            text += f"; {len(self.problems)} skipped ({listed}{more})"
        return text


class DataError(RewardsmithError, ValueError):
    """A data file with no usable row, or of no known format: the message says what to do."""


def load_examples(rows: Iterable[tuple[int, Any]], kind: Kind | Sequence[Kind] | None = None) -> Loaded:
    """Check ``(line, row)`` pairs; ``kind`` fixes the format (or the formats allowed, the first
    row that fits one deciding), else it is detected from the first usable row. A row that is not
    an object (``row`` is an exception or a string: a line that did not parse) is a problem too."""
    allowed = (kind,) if isinstance(kind, str) else tuple(kind or KINDS)
    chosen: Kind | None = None
    loaded: Loaded | None = None
    pending: list[Problem] = []
    for line, row in rows:
        if not isinstance(row, Mapping):
            problem = Problem(line, str(row) if isinstance(row, (str, Exception)) else "not a JSON object")
            (loaded.problems if loaded else pending).append(problem)
            continue
        if chosen is None:
            found = next((k for k in allowed if all(n in row for n in REQUIRED[k])), None)
            if found is None:
                pending.append(Problem(line, _missing(row, allowed)))
                continue
            chosen = found
            loaded = Loaded(chosen, problems=pending)
        assert loaded is not None
        try:
            loaded.examples.append(parse_row(chosen, row, line))
        except ValueError as exc:
            loaded.problems.append(Problem(line, str(exc)))
    if loaded is None:
        return Loaded(allowed[0], problems=pending)
    return loaded


def require_examples(loaded: Loaded, source: str) -> Loaded:
    """``loaded``, or a :class:`DataError` saying why nothing in ``source`` can be used."""
    if loaded.examples:
        return loaded
    first = f" (first: {loaded.problems[0]})" if loaded.problems else ""
    columns = " | ".join(", ".join(REQUIRED[k]) for k in KINDS)
    raise DataError(f"{source}: no usable row in {plural(len(loaded.problems), 'row')}{first}; "
                    f"reward-model rows need the columns {columns}")


def parse_row(kind: Kind, row: Mapping[str, Any], line: int = 0) -> Example:
    """One row as an example; ``ValueError`` saying what is wrong with it."""
    missing = [name for name in REQUIRED[kind] if row.get(name) is None]
    if missing:
        raise ValueError(f"missing {', '.join(missing)} (a {kind} row needs {', '.join(REQUIRED[kind])})")
    prompt = _text(row["prompt"], "prompt", allow_empty=True)
    if kind == "pairwise":
        return Pair(prompt, _text(row["chosen"], "chosen"), _text(row["rejected"], "rejected"),
                    margin=_number(row.get("margin", 0.0), "margin", bounded=False), line=line)
    if kind == "pointwise":
        return Point(prompt, _text(row["completion"], "completion"), _label(row["label"], "label"), line=line)
    steps, labels = row["steps"], row["labels"]
    if not isinstance(steps, list) or not steps:
        raise ValueError("steps must be a non-empty list of strings")
    if not all(isinstance(s, str) and s.strip() for s in steps):
        raise ValueError("every step must be a non-empty string")
    if not isinstance(labels, list):
        raise ValueError(f"labels must be a list (one per step), got {type(labels).__name__}")
    if len(labels) != len(steps):
        raise ValueError(f"{len(labels)} labels for {len(steps)} steps: give one label per step")
    first = row.get("first_error", row.get("label") if isinstance(row.get("label"), int) else None)
    return Stepwise(prompt, tuple(s.strip() for s in steps),
                    tuple(_label(v, f"labels[{i}]") for i, v in enumerate(labels)), line=line,
                    first_error=first if isinstance(first, int) and not isinstance(first, bool) else None,
                    subset=row.get("subset") if isinstance(row.get("subset"), str) else None)


def _missing(row: Mapping[str, Any], allowed: Sequence[Kind]) -> str:
    wants = " or ".join(f"{k} ({', '.join(REQUIRED[k])})" for k in allowed)
    return f"no known format: columns {', '.join(sorted(map(str, row))) or 'none'}; expected {wants}"


def _text(value: Any, name: str, allow_empty: bool = False) -> Text:
    if isinstance(value, str):
        if not allow_empty and not value.strip():
            raise ValueError(f"{name} is empty")
        return value
    if isinstance(value, list) and value and all(isinstance(m, Mapping) and "content" in m for m in value):
        return [dict(m) for m in value]
    raise ValueError(f"{name} must be text or a list of chat messages, got {type(value).__name__}")


def _number(value: Any, name: str, bounded: bool = True) -> float:
    if isinstance(value, bool):
        return float(value)
    if not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {type(value).__name__} {str(value)[:20]!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if bounded and not 0.0 <= number <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return number


def _label(value: Any, name: str) -> float:
    return _number(value, name)


# --------------------------------------------------------------------------- converters


def from_processbench(row: Mapping[str, Any], keep_after_error: bool = False) -> dict[str, Any]:
    """A ProcessBench row (``problem``, ``steps``, ``label`` = index of the first wrong step or -1)
    as a stepwise row. Steps after the first wrong one carry no label in ProcessBench; they are
    dropped (PRM800K's convention) unless ``keep_after_error``, which labels them wrong."""
    steps, first = row.get("steps"), row.get("label")
    if not isinstance(steps, list) or not isinstance(first, int) or isinstance(first, bool):
        raise ValueError("a ProcessBench row needs steps (a list) and label (an int)")
    if not -1 <= first < len(steps):
        raise ValueError(f"label {first} is outside -1..{len(steps) - 1}")
    kept = steps if first < 0 or keep_after_error else steps[: first + 1]
    out = {"prompt": row.get("problem", row.get("prompt", "")), "steps": kept,
           "labels": [first < 0 or i < first for i in range(len(kept))], "first_error": first}
    for extra in ("id", "generator", "final_answer_correct"):
        if extra in row:
            out[extra] = row[extra]
    return out


OutcomeForm = Literal["pointwise", "pairwise"]


@dataclass
class OutcomeLabels:
    rows: list[dict[str, Any]]
    skipped: Counter[str]
    labels: Counter[str]

    def describe(self) -> str:
        skipped = ", ".join(f"{why} ({n})" for why, n in sorted(self.skipped.items())) or "none"
        dist = ", ".join(f"{k}: {n}" for k, n in sorted(self.labels.items()))
        return f"{plural(len(self.rows), 'row', thousands=True)} ({dist}); skipped: {skipped}"


def outcome_rows(scored: Iterable[tuple[int, Any]], form: OutcomeForm = "pointwise",
                 label_from: Literal["correct", "score"] = "correct") -> OutcomeLabels:
    """Rows of a ``rewardsmith score`` output as ORM training rows.

    ``pointwise``: one row per scored completion, ``label`` its ``correct`` (or its score, clipped
    to [0, 1], with ``label_from="score"``). ``pairwise``: per prompt, the best-scored completion
    as ``chosen`` and the worst as ``rejected``; prompts whose best and worst tie are skipped.
    Rows whose status is ``error`` (an outage: no judgement) or ``invalid_input`` (nothing to judge)
    are skipped and counted; ``no_answer`` is a judgement (wrong) and kept.
    """
    skipped: Counter[str] = Counter()
    kept: list[tuple[int, dict[str, Any], float]] = []
    for line, row in scored:
        if not isinstance(row, Mapping):
            skipped["malformed"] += 1
            continue
        verdict = row.get("verdict")
        if not isinstance(verdict, Mapping) or "completion" not in row:
            skipped["not scored (no verdict or completion)"] += 1
            continue
        status = verdict.get("status")
        if status in ("error", "invalid_input"):
            skipped[f"status {status}"] += 1
            continue
        value = _outcome(verdict, label_from)
        if value is None:
            skipped["no correct (use label_from=score)"] += 1
            continue
        kept.append((line, dict(row), value))
    if form == "pointwise":
        rows = [{"prompt": r.get("prompt", ""), "completion": r["completion"], "label": v,
                 "source_line": line} for line, r, v in kept]
        labels = Counter(str(r["label"]) for r in rows)
        return OutcomeLabels(rows, skipped, labels)
    groups: dict[str, list[tuple[int, dict[str, Any], float]]] = {}
    for item in kept:
        groups.setdefault(json.dumps(item[1].get("prompt", ""), sort_keys=True), []).append(item)
    rows = []
    for members in groups.values():
        best = max(members, key=lambda m: m[2])
        worst = min(members, key=lambda m: m[2])
        if best[2] == worst[2]:
            skipped["tied prompts" if len(members) > 1 else "prompts with one completion"] += 1
            continue
        rows.append({"prompt": best[1].get("prompt", ""), "chosen": best[1]["completion"],
                     "rejected": worst[1]["completion"], "chosen_score": best[2], "rejected_score": worst[2]})
    return OutcomeLabels(rows, skipped, Counter({"pairs": len(rows)}))


def _outcome(verdict: Mapping[str, Any], label_from: str) -> float | None:
    if label_from == "correct":
        correct = verdict.get("correct")
        return None if correct is None else float(bool(correct))
    score = verdict.get("score")
    if not isinstance(score, (int, float)) or not math.isfinite(score):
        return None
    return min(1.0, max(0.0, float(score)))


def label_counts(examples: Sequence[Example]) -> dict[str, Any]:
    """The label distribution of a set of examples, for summaries and logs."""
    if not examples:
        return {}
    first = examples[0]
    if isinstance(first, Pair):
        return {"pairs": len(examples)}
    if isinstance(first, Point):
        values = [e.label for e in examples]  # type: ignore[union-attr]
        return {"rows": len(values), "positive": sum(v >= 0.5 for v in values), "mean": sum(values) / len(values)}
    steps = [v for e in examples for v in e.labels]  # type: ignore[union-attr]
    return {"rows": len(examples), "steps": len(steps), "positive_steps": sum(v >= 0.5 for v in steps),
            "soft_steps": sum(0.0 < v < 1.0 for v in steps),
            "all_correct_rows": sum(all(v >= 0.5 for v in e.labels) for e in examples)}  # type: ignore[union-attr]
