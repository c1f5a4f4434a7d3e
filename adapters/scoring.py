"""The offline scoring job behind ``rewardsmith score``: rows in, rows plus verdicts out.

Output line k always belongs to input row k, and each batch is written with one
``write`` and an fsync. So a job killed at any moment leaves a prefix of whole lines
(plus at most one torn line, cut off on restart), and a rerun on the same OUTPUT
skips exactly the rows already written: no row is lost or scored twice.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import IO, Any

from rewardsmith.adapters.rows import Row, count_rows, read_rows
from rewardsmith.verifiers import Sample, Verdict, Verifier


class ResumeError(RuntimeError):
    """OUTPUT exists but is not a partial result of INPUT."""


@dataclass
class Summary:
    rows: int = 0
    resumed: int = 0
    scored_now: int = 0
    malformed: int = 0
    reward_sum: float = 0.0
    rewarded: int = 0
    correct: int = 0
    judged: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    components: dict[str, list[float]] = field(default_factory=dict)
    judge_calls: int = 0  # rows a judge scored, and how many of those came from its cache
    judge_cached: int = 0
    cascade_to_judge: int = 0  # cascade rows the rule sent on to the judge, and its overturns
    overturned: int = 0
    seconds: float = 0.0

    @property
    def mean_reward(self) -> float | None:
        return self.reward_sum / self.rewarded if self.rewarded else None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.judged if self.judged else None

    @property
    def rows_per_s(self) -> float:
        return self.scored_now / self.seconds if self.seconds > 0 else 0.0

    def add(self, out_row: dict[str, Any]) -> None:
        verdict = out_row.get("verdict") or {}
        self.rows += 1
        self.statuses[verdict.get("status", "error")] += 1
        if "_raw" in out_row:
            self.malformed += 1
        reward = out_row.get("reward")
        if reward is not None:
            self.reward_sum += reward
            self.rewarded += 1
        if verdict.get("correct") is not None:
            self.judged += 1
            self.correct += bool(verdict["correct"])
        for name, score in (verdict.get("components") or {}).items():
            if score is not None:
                self.components.setdefault(name, []).append(score)
        for _, part in Verdict.from_dict(verdict).walk():
            if "cached" in part.details:
                self.judge_calls += 1
                self.judge_cached += bool(part.details["cached"])
            if part.details.get("decided_by") == "judge":
                self.cascade_to_judge += 1
                self.overturned += bool(part.details.get("overturned"))

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "resumed": self.resumed,
            "scored_now": self.scored_now,
            "malformed": self.malformed,
            "mean_reward": self.mean_reward,
            "accuracy": self.accuracy,
            "statuses": dict(self.statuses),
            "components": {k: sum(v) / len(v) for k, v in self.components.items()},
            "rows_per_s": self.rows_per_s,
            "judge": {"rows": self.judge_calls, "cache_hits": self.judge_cached,
                      "cascade_to_judge": self.cascade_to_judge, "overturned": self.overturned},
        }


def output_row(row: Row, verdict: Verdict | None) -> dict[str, Any]:
    """Every input field kept, plus ``reward`` (null on error) and ``verdict``."""
    if row.data is None:
        feedback = f"line {row.line}: {row.error}"
        return {
            "_line": row.line,
            "_raw": row.raw,
            "reward": None,
            "verdict": {"status": "invalid_input", "correct": None, "score": None, "feedback": feedback,
                        "details": {}, "line": row.line},
        }
    assert verdict is not None
    return {**row.data, "reward": verdict.reward, "verdict": {**verdict.to_dict(), "line": row.line}}


def score_file(
    input_path: Path,
    output_path: Path,
    verifier: Verifier,
    batch_size: int = 256,
    progress: bool = True,
    overwrite: bool = False,
    log: IO[str] | None = None,
) -> Summary:
    """Score every row of ``input_path`` into ``output_path``, resuming a partial output."""
    log = log or sys.stderr
    summary = Summary()
    rows = resume_rows(input_path, output_path, summary, overwrite)
    bar = _progress(count_rows(input_path), summary.resumed, progress)
    start = time.perf_counter()
    with output_path.open("a", encoding="utf-8") as out:
        for batch in _batched(rows, batch_size):
            write_batch(out, batch, verify_rows(verifier, batch), summary, log, bar)
    summary.seconds = time.perf_counter() - start
    if bar is not None:
        bar.close()
    return summary


# The pieces below are shared with the Ray backend (adapters/ray_scoring.py), which runs
# verify_rows on actors and everything else on the driver, so both write identical files.


def resume_rows(input_path: Path, output_path: Path, summary: Summary, overwrite: bool = False) -> Iterator[Row]:
    """The input rows not yet in OUTPUT (those already there are counted in ``summary``)."""
    if overwrite and output_path.exists():
        output_path.unlink()
    done, last_line = _recover(output_path, summary)
    summary.resumed = done
    rows = read_rows(input_path)
    skipped = list(islice(rows, done))
    if done and (len(skipped) < done or skipped[-1].line != last_line):
        raise ResumeError(
            f"{output_path} has {done} rows that do not match the start of {input_path}; "
            "pass --overwrite to score from scratch or choose another output file"
        )
    return rows


def verify_rows(verifier: Verifier, batch: list[Row]) -> list[Verdict | None]:
    """One verdict per row of ``batch`` (None for a malformed row): the scoring work alone."""
    return [verdict for _, verdict in _score_batch(verifier, batch)]


def write_batch(out: IO[str], batch: list[Row], verdicts: list[Verdict | None], summary: Summary,
                log: IO[str], bar: Any) -> None:
    """Report malformed rows, count the batch, and append it with one write and an fsync."""
    lines = []
    for row, verdict in zip(batch, verdicts, strict=True):
        if row.data is None:
            _tell(log, bar, f"warning: line {row.line}: {row.error}; written through with status=invalid_input")
        record = output_row(row, verdict)
        summary.add(record)
        lines.append(json.dumps(record, ensure_ascii=False, default=str) + "\n")
    out.write("".join(lines))
    out.flush()
    os.fsync(out.fileno())
    summary.scored_now += len(batch)
    if bar is not None:
        bar.update(len(batch))


def _score_batch(verifier: Verifier, batch: list[Row]) -> Iterator[tuple[Row, Verdict | None]]:
    good = [row for row in batch if row.data is not None]
    verdicts = iter(verifier.verify_batch([Sample.from_row(row.data) for row in good if row.data is not None]))
    for row in batch:
        yield row, (next(verdicts) if row.data is not None else None)


def _recover(output_path: Path, summary: Summary) -> tuple[int, int | None]:
    """Whole rows already in OUTPUT (added to the summary) and the input line of the last;
    a torn last line is cut off."""
    if not output_path.exists():
        return 0, None
    done, good_bytes, last_line = 0, 0, None
    with output_path.open("rb") as handle:
        for line in handle:
            if not line.endswith(b"\n"):
                break
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break
            summary.add(record)
            done += 1
            good_bytes += len(line)
            last_line = (record.get("verdict") or {}).get("line")
    if good_bytes != output_path.stat().st_size:
        with output_path.open("r+b") as handle:
            handle.truncate(good_bytes)
    return done, last_line


def _batched(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def _progress(total: int, done: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="row", desc="scoring", file=sys.stderr, dynamic_ncols=True)


def _tell(log: IO[str], bar: Any, message: str) -> None:
    if bar is not None:
        bar.write(message, file=log)
    else:
        print(message, file=log)


def format_summary(summary: Summary, title: str) -> str:
    """The table printed at the end of a job."""

    def num(value: float | None, digits: int = 3) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    statuses = " · ".join(f"{name} {count}" for name, count in summary.statuses.most_common())
    lines = [
        title,
        f"  rows          {summary.rows}  ({summary.resumed} resumed, {summary.malformed} malformed)",
        f"  mean reward   {num(summary.mean_reward)}  (over {summary.rewarded} rows with a reward)",
        f"  accuracy      {num(summary.accuracy)}  ({summary.correct}/{summary.judged})",
        f"  status        {statuses or '-'}",
    ]
    if summary.judge_calls:
        lines.append(f"  judge         {summary.judge_calls} rows judged, {summary.judge_cached} from the cache")
    if summary.cascade_to_judge:
        lines.append(f"  cascade       {summary.cascade_to_judge} rule negatives sent to the judge, "
                     f"{summary.overturned} overturned")
    if summary.components:
        parts = ", ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in sorted(summary.components.items()))
        lines.append(f"  components    {parts}")
    lines.append(
        f"  throughput    {summary.rows_per_s:.1f} rows/s  ({summary.scored_now} rows in {summary.seconds:.2f} s)"
    )
    return "\n".join(lines)
