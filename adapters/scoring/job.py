"""The offline scoring job behind ``rewardsmith score``: rows in, rows plus verdicts out.

Output line k always belongs to input row k, and each batch is written with one
``write`` and an fsync. So a job killed at any moment leaves a prefix of whole lines
(plus at most one torn line, cut off on restart), and a rerun on the same OUTPUT
skips exactly the rows already written: no row is lost or scored twice.

A rerun resumes only the job that wrote OUTPUT: the input's identity, the spec's
fingerprint and the field mapping are recorded beside it before the first batch
(``adapters/scoring/provenance.py``) and a mismatch is refused. Formats other than JSONL are
scored into a JSONL part file and converted at the end (``adapters/scoring/outputs.py``), so
resume stays exact for them too; streams (``-``, pipes) are written once, never read.

The job is backend-neutral: :func:`run_job` reads, resumes, writes and reports; a
*scorer* turns batches of rows into verdicts (in this process, or on Ray actors in
``adapters/scoring/ray.py``), so both backends write the same file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import IO, Any

from rewardsmith.adapters.fields import row_sample
from rewardsmith.adapters.health import InputHealth, missing_fields
from rewardsmith.adapters.reports.table import number
from rewardsmith.adapters.scoring.outputs import (
    Target,
    WriteError,
    finalize,
    json_text,
    open_stream,
    read_output,
    remove_all,
    replacing,
    resolve_target,
    unpack,
)
from rewardsmith.adapters.scoring.provenance import (
    Provenance,
    ResumeError,
    check_resume,
    read_record,
    record_path,
    spec_fingerprint,
    write_record,
)
from rewardsmith.adapters.scoring.rows import Row, Source, open_source
from rewardsmith.verifiers import Verdict, Verifier, build
from rewardsmith.verifiers.judge.backends import BackendError
from rewardsmith.verifiers.judge.summary import KEYS as JUDGE_KEYS
from rewardsmith.verifiers.judge.summary import judge_counts, judge_lines
from rewardsmith.verifiers.registry import load_spec
from rewardsmith.verifiers.wording import plural

logger = logging.getLogger(__name__)

__all__ = ["Interrupted", "Job", "OutputClosed", "ResumeError", "Summary", "WriteError", "format_summary", "run_job",
           "score_file"]

Spec = str | Path | Mapping[str, Any] | Verifier
Batches = Iterator[list[Row]]
# A scorer gets the batches to score (and how many rows they hold, when known) and yields
# each batch with its verdicts, in order: the one thing a backend has to do.
Scorer = Callable[[Batches, int | None], Iterator[tuple[list[Row], list[Verdict | None]]]]


class Interrupted(Exception):
    """Ctrl-C: the rows written so far are whole and synced; the message says what a rerun does."""

    @classmethod
    def after(cls, rows: int, total: int | None, hint: str) -> Interrupted:
        counted = f"{rows} of {plural(total, 'row')}" if total is not None else plural(rows, "row")
        return cls(f"interrupted after {counted}; {hint}")


class OutputClosed(Exception):
    """The reader of a stream output went away (``rewardsmith score ... -o - | head``)."""


@dataclass(frozen=True)
class Job:
    """One scoring job: what it reads, how rows become samples, what scores them, where it writes."""

    input: str | Path  # "-": stdin
    output: str | Path  # "-": stdout
    spec: Any  # the spec's value (spec_value), fingerprinted for resume
    reward: str = "?"  # the spec as the user named it, for messages
    fields: Mapping[str, str] = field(default_factory=dict)
    split: str | None = None
    limit: int | None = None
    batch_size: int = 256
    overwrite: bool = False
    retry_errors: bool = False
    progress: bool = True
    added: tuple[str, ...] = ()  # columns the scorer adds to each row (``label steps``: steps, labels)
    desc: str = "scoring"  # the progress bar's label


@dataclass
class Summary:
    rows: int = 0
    resumed: int = 0
    scored_now: int = 0
    retried: int = 0
    malformed: int = 0
    reward_sum: float = 0.0
    rewarded: int = 0
    correct: int = 0
    judged: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    missing: Counter[str] = field(default_factory=Counter)  # invalid_input rows by the field they lack
    components: dict[str, list[float]] = field(default_factory=dict)
    judge: Counter[str] = field(default_factory=Counter)  # the judge's block (verifiers.judge.summary)
    seconds: float = 0.0

    @property
    def mean_reward(self) -> float | None:
        return self.reward_sum / self.rewarded if self.rewarded else None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.judged if self.judged else None

    @property
    def judge_calls(self) -> int:  # rows a judge scored, and how many of those came from its cache
        return self.judge["rows"]

    @property
    def judge_cached(self) -> int:
        return self.judge["cache_hits"]

    @property
    def cascade_to_judge(self) -> int:  # cascade rows the rule sent on to the judge, and its overturns
        return self.judge["cascade_to_judge"]

    @property
    def overturned(self) -> int:
        return self.judge["overturned"]

    @property
    def rows_per_s(self) -> float:
        return self.scored_now / self.seconds if self.seconds > 0 else 0.0

    @property
    def invalid(self) -> int:
        """Rows the reward could not judge: malformed lines and ``invalid_input`` verdicts."""
        return self.statuses["invalid_input"]

    @property
    def errors(self) -> int:
        return self.statuses["error"]

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
        parsed = Verdict.from_dict(verdict)
        self.missing.update(missing_fields(parsed))
        self.judge.update(judge_counts(parsed))

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "resumed": self.resumed,
            "scored_now": self.scored_now,
            "retried": self.retried,
            "malformed": self.malformed,
            "invalid": self.invalid,
            "errors": self.errors,
            "missing_fields": dict(self.missing),
            "mean_reward": self.mean_reward,
            "accuracy": self.accuracy,
            "statuses": dict(self.statuses),
            "components": {k: sum(v) / len(v) for k, v in self.components.items()},
            "rows_per_s": self.rows_per_s,
            "judge": {key: self.judge[key] for key in JUDGE_KEYS},
        }


def spec_value(reward: Spec) -> Any:
    """What a spec *is*, independent of where it came from: a spec file's content (not its path),
    a dict as a plain dict, a name as is; a Verifier object stays one (it has no value to record)."""
    value = load_spec(reward)  # a file or inline JSON read, so the fingerprint is of the spec, not its text
    return dict(value) if isinstance(value, Mapping) else value


def score_file(
    input_path: str | Path,
    output_path: str | Path,
    reward: Spec,
    batch_size: int = 256,
    progress: bool = True,
    overwrite: bool = False,
    *,
    verifier: Verifier | None = None,
    fields: Mapping[str, str] | None = None,
    split: str | None = None,
    limit: int | None = None,
    retry_errors: bool = False,
    reward_name: str | None = None,
) -> Summary:
    """Score every row of ``input_path`` into ``output_path`` in this process, resuming a partial output.

    ``reward``: a spec (name, dict, file) or a built Verifier; pass the spec (and ``verifier=``
    when already built) so the output records its fingerprint and can be resumed.
    ``reward_name``: how messages name the spec (default: ``reward`` itself).
    """
    value = spec_value(reward)
    job = Job(input_path, output_path, value, reward_name or describe_spec(reward), dict(fields or {}), split, limit,
              batch_size, overwrite, retry_errors, progress)
    return run_job(job, local_scorer(verifier or build(value), job.fields))


def local_scorer(verifier: Verifier, fields: Mapping[str, str] | None = None) -> Scorer:
    def score(batches: Batches, total: int | None) -> Iterator[tuple[list[Row], list[Verdict | None]]]:
        for batch in batches:
            yield batch, verify_rows(verifier, batch, fields)

    return score


def verify_rows(verifier: Verifier, batch: list[Row], fields: Mapping[str, str] | None = None) -> list[Verdict | None]:
    """One verdict per row of ``batch`` (None for a malformed row): the scoring work alone."""
    verdicts = iter(verifier.verify_batch([row_sample(row.data, fields) for row in batch if row.data is not None]))
    return [next(verdicts) if row.data is not None else None for row in batch]


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


# -- the job -------------------------------------------------------------------------------


def run_job(job: Job, scorer: Scorer) -> Summary:
    """Run ``job`` with ``scorer``: every check, the resume, the writing and the summary.

    Raises InputError, OutputError or ResumeError (before anything is written or deleted),
    :class:`Interrupted` on Ctrl-C and :class:`OutputClosed` when a stream's reader leaves.
    """
    if job.limit is not None and job.limit < 1:
        raise ValueError("limit must be at least 1")
    if job.batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    source = open_source(job.input, job.split)
    target = resolve_target(job.output)
    _refuse_same_file(source, target)
    if target.stream:
        if job.retry_errors:
            raise ResumeError(f"--retry-errors rewrites an output file in place; {target.name} is a stream")
        return _run_stream(job, source, target, scorer)
    return _run_file(job, source, target, scorer)


def _run_stream(job: Job, source: Source, target: Target, scorer: Scorer) -> Summary:
    summary = Summary()
    total = _total(source, job.limit)
    start = time.perf_counter()
    try:
        with open_stream(target) as out:
            _score_rows(job, _limited(source.rows(), job.limit), total, out, scorer, summary, sync=False,
                        on_interrupt=f"{target.name} is a stream, which cannot be resumed: a rerun starts over")
    except BrokenPipeError as exc:
        raise OutputClosed(f"the reader of {target.name} went away after {plural(summary.rows, 'row')}") from exc
    summary.seconds = time.perf_counter() - start
    return summary


def _run_file(job: Job, source: Source, target: Target, scorer: Scorer) -> Summary:
    assert target.path is not None
    record = record_path(target.path)
    current = Provenance(input=source.identity(), spec=spec_fingerprint(job.spec), reward=job.reward,
                         split=source.split, fields=dict(job.fields))
    if job.overwrite:
        remove_all(target, record)
    if _prepare(target, record, current, job.retry_errors):  # a finished converted output: nothing to do
        summary = Summary()
        for out_row in read_output(target):
            summary.add(out_row)
        summary.resumed = summary.rows
        return summary

    start = time.perf_counter()
    retried = _retry_errors(job, source, target, scorer) if job.retry_errors else 0
    summary = Summary()
    done, last = _recover(target.work, summary)
    summary.resumed, summary.retried, summary.scored_now = done - retried, retried, retried
    rows = source.rows()
    _skip(rows, done, last, source, target, job.added)
    total = _total(source, job.limit)
    left = None if job.limit is None else max(0, job.limit - done)
    with target.work.open("a", encoding="utf-8") as out:
        _score_rows(job, _limited(rows, left), total, out, scorer, summary, sync=True,
                    on_interrupt="rerun the same command to resume" if current.input is not None else
                    "the input is a stream, which cannot be checked for a resume: rerun with --overwrite to start "
                    "over")
    summary.seconds = time.perf_counter() - start
    complete = next(rows, None) is None  # every input row is in (not stopped by --limit)
    if target.converted:
        finalize(target)
        if complete:
            target.work.unlink()
    if complete:
        write_record(record, current, complete=True)
    return summary


def _prepare(target: Target, record: Path, current: Provenance, retry: bool) -> bool:
    """Check that OUTPUT may be resumed by this job and record the job; True when a converted
    OUTPUT is already complete (nothing to score)."""
    assert target.path is not None
    has_rows = target.work.exists() and target.work.stat().st_size > 0
    finished = target.converted and target.path.exists()
    if not has_rows and not finished:  # nothing to resume: a fresh job (a leftover record is replaced)
        if retry:
            raise ResumeError(f"--retry-errors: {target.name} has no rows yet, so there is nothing to retry; "
                              "score it first (without --retry-errors)")
        write_record(record, current)
        return False
    if not record.exists():
        raise ResumeError(
            f"{target.name} exists but has no job record ({record.name}), so it cannot be checked against this "
            "job (it was not written by this version of rewardsmith score); start over with --overwrite, or "
            "write to another -o"
        )
    saved = read_record(record)
    check_resume(saved, current, target.name)
    if finished and not has_rows:
        if not saved.get("complete"):
            raise ResumeError(f"{target.name} is incomplete and its part file {target.work.name} is gone; start "
                              "over with --overwrite")
        if not retry:
            return True
        unpack(target)  # rescore some rows of a finished parquet/gz/json output: back to its part file
    return False


def _skip(rows: Iterator[Row], done: int, last_written: dict[str, Any] | None, source: Source,
          target: Target, added: tuple[str, ...] = ()) -> None:
    """Advance ``rows`` past the ``done`` rows OUTPUT holds, checking that the last of them was
    written from the input row at that place (the fingerprint's blind spot: a same-size edit
    between its samples)."""
    last, seen = None, 0
    for last in islice(rows, done):  # noqa: B007 (only the last row is kept: bounded memory)
        seen += 1
    if done and (seen < done or last is None or last_written is None
                 or not _written_from(last_written, last, added)):
        raise ResumeError(
            f"refusing to resume {target.name}: its {plural(done, 'row does', 'rows do')} not match the start of "
            f"{source.name}; start over with --overwrite, or write to another -o"
        )


def _written_from(record: dict[str, Any], row: Row, added: tuple[str, ...] = ()) -> bool:
    """Whether ``record`` (an output line) is what this job writes for ``row``, verdict (and the
    columns the job adds) aside."""
    if (record.get("verdict") or {}).get("line") != row.line:
        return False
    if row.data is None:
        return record.get("_raw") == row.raw
    expected = json.loads(_line(row.data))  # through JSON, as it was written
    ours = {"reward", "verdict", *added}
    keep = set(expected) - ours
    return {k: record.get(k) for k in keep} == {k: expected[k] for k in keep} and set(record) - ours == keep


def _score_rows(job: Job, rows: Iterator[Row], total: int | None, out: IO[str], scorer: Scorer, summary: Summary,
                sync: bool, on_interrupt: str) -> None:
    """Score ``rows`` batch by batch into ``out``; Ctrl-C becomes :class:`Interrupted`."""
    bar = _progress(total, summary.rows, job.progress, job.desc)
    health = InputHealth("rewardsmith score", _field_advice,
                         emit=logger.warning)
    written = summary.rows
    left = None if total is None else max(0, total - summary.rows)
    try:
        try:
            for batch, verdicts in scorer(_batched(rows, job.batch_size), left):
                health.check([v for v in verdicts if v is not None])
                with _ctrl_c_held():  # a batch is written, synced and counted whole
                    write_batch(out, batch, verdicts, summary, bar, sync=sync)
                    written += len(batch)
        except BackendError as exc:
            raise BackendError(f"{exc}; stopped after {plural(written, 'row')}, which are kept: rerun the same "
                               "command to resume") from exc
        except KeyboardInterrupt as exc:
            raise Interrupted.after(written, total, on_interrupt) from exc
    finally:
        if bar is not None:
            bar.close()


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Hold a Ctrl-C that lands inside the block until it ends, so the rows the message counts are
    exactly the rows on disk (only the main thread can, and only with Python's own handler in place)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def write_batch(out: IO[str], batch: list[Row], verdicts: list[Verdict | None], summary: Summary,
                bar: Any, sync: bool = True) -> None:
    """Report malformed rows, count the batch, and append it with one write (and an fsync to a file)."""
    lines = []
    for row, verdict in zip(batch, verdicts, strict=True):
        if row.data is None:
            logger.warning("line %s: %s; written through with status=invalid_input", row.line, row.error)
        record = output_row(row, verdict)
        summary.add(record)
        lines.append(_line(record))
    try:
        out.write("".join(lines))
        out.flush()
        if sync:
            os.fsync(out.fileno())
    except BrokenPipeError:
        raise
    except (OSError, UnicodeError) as exc:  # a full disk, a quota; text json_text escapes never gets here
        raise WriteError(_write_failure(batch, lines, exc)) from exc
    summary.scored_now += len(batch)
    if bar is not None:
        bar.update(len(batch))


def _write_failure(batch: list[Row], lines: list[str], exc: Exception) -> str:
    """Which row could not be written, and why: the first that cannot be encoded, else the batch."""
    for row, line in zip(batch, lines, strict=True):
        try:
            line.encode("utf-8")
        except UnicodeError:
            return f"input line {row.line} was scored but cannot be written: {exc}"
    where = f"line {batch[0].line}" if len(batch) == 1 else f"lines {batch[0].line}-{batch[-1].line}"
    return (f"the rows of input {where} were scored but could not be written: {exc}; the rows before them are "
            "kept: fix the cause and rerun the same command to resume")


def _retry_errors(job: Job, source: Source, target: Target, scorer: Scorer) -> int:
    """Rescore the ``status=error`` rows of the work file and rewrite it atomically, every other
    line byte for byte as it was. Returns how many rows were rescored."""
    work = target.work
    positions = [k for k, (_, record) in enumerate(_whole_lines(work))
                 if (record.get("verdict") or {}).get("status") == "error"]
    if not positions:
        return 0
    wanted, last = set(positions), positions[-1]

    def rows_at() -> Iterator[Row]:
        for k, row in enumerate(source.rows()):
            if k in wanted:
                yield row
            if k >= last:
                return

    fresh = work.with_name(work.name + ".retry")
    summary = Summary()
    try:
        with fresh.open("w", encoding="utf-8") as out:
            bar = _progress(len(positions), 0, job.progress, "retrying errors")
            try:
                for batch, verdicts in scorer(_batched(rows_at(), job.batch_size), len(positions)):
                    write_batch(out, batch, verdicts, summary, bar, sync=False)
            except KeyboardInterrupt as exc:
                raise Interrupted(f"interrupted while rescoring {len(positions)} error rows; {target.name} is "
                                  "unchanged: rerun the same command to retry them") from exc
            finally:
                if bar is not None:
                    bar.close()
        with replacing(work) as merged, fresh.open("rb") as new, merged.open("wb") as out:
            replacements = iter(new)
            for k, (line, record) in enumerate(_whole_lines(work)):
                out.write(_checked_replacement(next(replacements, None), record, target) if k in wanted else line)
    finally:
        with contextlib.suppress(FileNotFoundError):
            fresh.unlink()
    return len(positions)


def _checked_replacement(new: bytes | None, old: dict[str, Any], target: Target) -> bytes:
    if new is None or json.loads(new)["verdict"].get("line") != old["verdict"].get("line"):
        raise ResumeError(f"--retry-errors: the input no longer has the rows {target.name} was scored from; "
                          "start over with --overwrite")
    return new


def _whole_lines(path: Path) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """The lines of a work file (raw, parsed) up to the first torn or unreadable one."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for line in handle:
            if not line.endswith(b"\n"):
                return
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                return
            yield line, record


def _recover(output_path: Path, summary: Summary) -> tuple[int, dict[str, Any] | None]:
    """Whole rows already in OUTPUT (added to the summary) and the last of them; a torn last
    line is cut off."""
    if not output_path.exists():
        return 0, None
    done, good_bytes, last = 0, 0, None
    for line, last in _whole_lines(output_path):
        summary.add(last)
        done += 1
        good_bytes += len(line)
    if good_bytes != output_path.stat().st_size:
        with output_path.open("r+b") as handle:
            handle.truncate(good_bytes)
    return done, last


def _refuse_same_file(source: Source, target: Target) -> None:
    if source.path is None or target.path is None or not target.path.exists():
        return
    paths = [target.path, target.work] if target.converted else [target.path]
    if any(p.exists() and source.path.exists() and os.path.samefile(source.path, p) for p in paths):
        raise ResumeError(f"the output {target.name} is the input file itself; write to another -o")


def _total(source: Source, limit: int | None) -> int | None:
    count = source.count()
    if limit is None:
        return count
    return limit if count is None else min(count, limit)


def _limited(rows: Iterator[Row], limit: int | None) -> Iterator[Row]:
    return rows if limit is None else islice(rows, limit)


def _field_advice(missing: str | None) -> str:
    if missing is None:
        return ("check that the input has the fields the reward reads (`rewardsmith verifiers`), or map them with "
                "--field NAME=COLUMN")
    return (f"if your data holds it under another name, map it with --field {missing}=<your column> "
            "(a dotted path such as reward_model.ground_truth reaches into nested columns)")


def describe_spec(reward: Spec) -> str:
    """A spec as messages name it."""
    if isinstance(reward, Verifier):
        return repr(reward)
    if isinstance(reward, Mapping):
        return json.dumps(dict(reward), sort_keys=True, default=str)
    return str(reward)


def _line(record: dict[str, Any]) -> str:
    return json_text(record) + "\n"


def _batched(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


def _progress(total: int | None, done: int, enabled: bool, desc: str = "scoring") -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, unit="row", desc=desc, file=sys.stderr, dynamic_ncols=True)


def format_summary(summary: Summary, title: str) -> str:
    """The table printed at the end of a job."""
    statuses = " · ".join(f"{name} {count}" for name, count in summary.statuses.most_common())
    done = f"{summary.resumed} resumed" + (f", {summary.retried} retried" if summary.retried else "")
    lines = [
        title,
        f"  rows          {summary.rows}  ({done}, {summary.malformed} malformed)",
        f"  mean reward   {number(summary.mean_reward)}  (over {plural(summary.rewarded, 'row')} with a reward)",
        f"  accuracy      {number(summary.accuracy)}  ({summary.correct}/{summary.judged})",
        f"  status        {statuses or '-'}",
    ]
    if summary.invalid:
        lacking = ", ".join(f"{n} lack {name!r}" for name, n in summary.missing.most_common())
        lines.append(f"  invalid       {plural(summary.invalid, 'row')} could not be judged (reward 0)"
                     + (f": {lacking}" if lacking else ""))
    lines.extend(judge_lines(summary.judge))
    if summary.components:
        parts = ", ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in sorted(summary.components.items()))
        lines.append(f"  components    {parts}")
    lines.append(
        f"  throughput    {summary.rows_per_s:.3g} rows/s  "
        f"({plural(summary.scored_now, 'row')} in {summary.seconds:.2f} s)"
    )
    return "\n".join(lines)
