"""Issue 11 items 8 and 5 (CLI side): errors a person can act on, and rows that cannot be judged.

One line on stderr and no traceback for an unusable output path and for Ctrl-C; a pipe or a
terminal as OUTPUT is written, never read (it used to hang); a completion that is a number
or a list of numbers, or missing, is `invalid_input` for its row while the run goes on; and a
job whose batches are mostly invalid warns once, naming the missing field and `--field`.

Issue 27 item 12: the Ctrl-C tests start their child with SIGINT at its default (a suite run as a
background job inherits it ignored), and the CLI's choice under an inherited ignored SIGINT (it
stays ignored; SIGTERM stops the job, which a rerun resumes) is tested too.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO

from rewardsmith.adapters.cli import main

EXAMPLES = REPO / "data" / "math_examples.jsonl"
CLI = [sys.executable, "-m", "rewardsmith.adapters.cli", "score"]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def math_rows(n: int) -> list[dict]:
    return [{"id": k, "completion": f"so \\boxed{{{k}}}", "answer": str(k if k % 3 else k + 1)} for k in range(n)]


def one_clean_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- unusable output paths ------------------------------------------------------------------


def test_output_that_is_a_directory(tmp_path, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", math_rows(2))
    folder = tmp_path / "results"
    folder.mkdir()
    assert main(["score", str(src), "-o", str(folder), "--no-progress"]) == 2
    line = one_clean_line(capsys.readouterr().err)
    assert "is a directory" in line and str(folder / "scored.jsonl") in line
    assert list(folder.iterdir()) == []


def test_output_whose_folder_does_not_exist(tmp_path, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", math_rows(2))
    out = tmp_path / "no" / "such" / "out.jsonl"
    assert main(["score", str(src), "-o", str(out), "--no-progress"]) == 2
    line = one_clean_line(capsys.readouterr().err)
    assert "does not exist" in line and f"mkdir -p {out.parent}" in line
    assert not (tmp_path / "no").exists()


def test_output_that_is_the_input(tmp_path, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", math_rows(3))
    before = src.read_bytes()
    assert main(["score", str(src), "-o", str(src), "--no-progress"]) == 2
    assert "is the input file itself" in one_clean_line(capsys.readouterr().err)
    assert src.read_bytes() == before


# -- pipes and terminals are written, never read ---------------------------------------------


def test_dev_stdout_into_a_pipe_closed_early_neither_hangs_nor_tracebacks(tmp_path):
    """`rewardsmith score in.jsonl -o /dev/stdout | head -2`, with a real pipe: it used to hang
    reading /dev/stdout (the pipe) to resume it."""
    src = write_jsonl(tmp_path / "in.jsonl", math_rows(3000))  # ~0.5 MB: more than a pipe buffer
    proc = subprocess.Popen([*CLI, str(src), "-o", "/dev/stdout", "--no-progress", "--batch-size", "16"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        first = [proc.stdout.readline() for _ in range(2)]  # what `head -2` reads
        proc.stdout.close()  # and then it leaves
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert [json.loads(line)["id"] for line in first] == [0, 1]
    assert proc.returncode == 141 and b"Traceback" not in err, err
    assert not Path("/dev/stdout.rewardsmith.json").exists()


def test_dev_stdout_on_a_terminal_is_written_and_never_read(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", math_rows(3))
    leader, follower = pty.openpty()
    proc = subprocess.Popen([*CLI, str(src), "-o", "/dev/stdout", "--no-progress"], stdin=follower,
                            stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([leader], [], [], 0.2)[0]:
                try:
                    seen += os.read(leader, 65536)
                except OSError:  # EIO: the job closed the terminal, it is exiting
                    break
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pytest.fail("rewardsmith waited on the terminal (it read OUTPUT)")
    finally:
        proc.kill()
        proc.wait()
        os.close(leader)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert [json.loads(line)["id"] for line in seen.decode().splitlines() if line.startswith("{")] == [0, 1, 2]


# -- Ctrl-C ---------------------------------------------------------------------------------

SLOW_CLI = textwrap.dedent("""
    import sys, time
    from rewardsmith.verifiers import Verdict, Verifier, register
    from rewardsmith.adapters.cli import main

    @register("test_slow_echo")
    class SlowEcho(Verifier):
        '''Test-only: reward = the row's `s`, 20 ms per row, so a Ctrl-C lands mid-job.'''
        def _verify(self, sample):
            time.sleep(0.02)
            return Verdict(score=float(sample.get("s")), correct=None)

    sys.exit(main(sys.argv[1:]))
""")


def with_sigint(disposition: signal.Handlers) -> Callable[[], None]:
    """A ``preexec_fn`` that starts the child with SIGINT at ``disposition``, whatever this process
    inherited: pytest run as a background job of a script ignores SIGINT, and a child inherits that."""
    return lambda: signal.signal(signal.SIGINT, disposition)


def interrupt_after(cmd: list[str], out: Path, rows: int, timeout: float = 120,
                    sigint: signal.Handlers = signal.SIG_DFL,
                    sig: signal.Signals = signal.SIGINT) -> subprocess.CompletedProcess:
    """Run ``cmd`` with SIGINT at ``sigint`` (default: as a terminal's foreground job has it), send it
    ``sig`` (SIGINT: as Ctrl-C does) once ``out`` holds ``rows`` lines; its result."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=with_sigint(sigint))
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if out.exists() and out.read_bytes().count(b"\n") >= rows:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the job ended before it could be interrupted"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


@pytest.mark.slow
def test_ctrl_c_is_one_line_exit_130_and_the_rerun_finishes_the_job_exactly(tmp_path):
    script = tmp_path / "slow_cli.py"
    script.write_text(SLOW_CLI)
    src = write_jsonl(tmp_path / "in.jsonl", [{"completion": "c", "s": k / 200} for k in range(200)])
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, str(script), "score", str(src), "-o", str(out), "--reward", "test_slow_echo",
           "--batch-size", "10", "--no-progress"]
    result = interrupt_after(cmd, out, rows=20)
    assert result.returncode == 130
    written = len(read_jsonl(out))
    assert one_clean_line(result.stderr) == (f"rewardsmith: interrupted after {written} of 200 rows; "
                                             "rerun the same command to resume")
    assert 20 <= written < 200 and written % 10 == 0  # whole batches only
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"{written} resumed" in again.stdout
    assert [row["reward"] for row in read_jsonl(out)] == [k / 200 for k in range(200)]


@pytest.mark.slow
def test_ctrl_c_with_the_math_worker_pool_leaves_no_traceback(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", math_rows(20000))
    out = tmp_path / "out.jsonl"
    result = interrupt_after([*CLI, str(src), "-o", str(out), "--batch-size", "64", "--no-progress",
                              "--workers", "2"], out, rows=128)
    assert result.returncode == 130
    line = one_clean_line(result.stderr)
    assert line.startswith("rewardsmith: interrupted after ") and line.endswith("rerun the same command to resume")
    assert f"after {len(read_jsonl(out))} of 20000 rows" in line


def slow_job(tmp_path: Path, n: int = 200) -> tuple[list[str], Path]:
    script = tmp_path / "slow_cli.py"
    script.write_text(SLOW_CLI)
    src = write_jsonl(tmp_path / "in.jsonl", [{"completion": "c", "s": k / n} for k in range(n)])
    out = tmp_path / "out.jsonl"
    return [sys.executable, str(script), "score", str(src), "-o", str(out), "--reward", "test_slow_echo",
            "--batch-size", "10", "--no-progress"], out


@pytest.mark.slow
def test_an_inherited_ignored_sigint_is_honoured_the_job_finishes(tmp_path):
    """The documented choice: a job started with SIGINT ignored (`cmd &` in a script, nohup) keeps it
    ignored, as the Unix convention for background jobs has it, and finishes."""
    cmd, out = slow_job(tmp_path, n=60)
    result = interrupt_after(cmd, out, rows=10, sigint=signal.SIG_IGN)
    assert result.returncode == 0, result.stderr
    assert "interrupted" not in result.stderr
    assert [row["reward"] for row in read_jsonl(out)] == [k / 60 for k in range(60)]


@pytest.mark.slow
def test_sigterm_stops_a_job_and_the_rerun_finishes_it_exactly(tmp_path):
    """How to stop a job that ignores SIGINT: SIGTERM; the rows written are kept and a rerun resumes."""
    cmd, out = slow_job(tmp_path)
    result = interrupt_after(cmd, out, rows=20, sigint=signal.SIG_IGN, sig=signal.SIGTERM)
    assert result.returncode == -signal.SIGTERM
    written = out.read_bytes().count(b"\n")  # whole lines: a torn last one is cut by the rerun
    assert 20 <= written < 200
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert f"{written} resumed" in again.stdout
    assert [row["reward"] for row in read_jsonl(out)] == [k / 200 for k in range(200)]


# -- rows that cannot be judged -------------------------------------------------------------

ODD_COMPLETIONS = [5, 5.5, [1, 2], [[1]], {"a": 1}, True, None]


@pytest.mark.parametrize("reward", ["math", "format", str(REPO / "data" / "reward.yaml"),
                                    '{"type": "code", "backend": "local"}'])
def test_a_completion_that_is_not_text_is_invalid_input_and_the_run_goes_on(tmp_path, reward):
    rows = [{"completion": c, "answer": "4", "data_source": "gsm8k", "tests": "assert True"} for c in ODD_COMPLETIONS]
    rows.append({"answer": "4", "data_source": "gsm8k", "tests": "assert True"})  # no completion at all
    rows.append({"completion": "<think>2+2</think><answer>4</answer> #### 4", "answer": "4", "data_source": "gsm8k",
                 "tests": "assert True"})
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    if reward.startswith("{"):
        spec = tmp_path / "reward.json"
        spec.write_text(reward)
        reward = str(spec)
    assert main(["score", str(src), "-o", str(out), "--reward", reward, "--no-progress"]) == 0
    got = read_jsonl(out)
    assert [r["verdict"]["status"] for r in got[:-1]] == ["invalid_input"] * (len(rows) - 1), got
    assert all(r["reward"] == 0.0 for r in got[:-1])
    assert got[-1]["verdict"]["status"] != "invalid_input"  # the good row was scored as usual


def test_a_missing_completion_is_invalid_input_naming_the_field_not_no_answer(tmp_path, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", [{"response": "#### 4", "answer": "4"}] * 3)
    out = tmp_path / "out.jsonl"
    assert main(["score", str(src), "-o", str(out), "--no-progress"]) == 3
    verdicts = [r["verdict"] for r in read_jsonl(out)]
    assert {v["status"] for v in verdicts} == {"invalid_input"}
    assert verdicts[0]["details"]["missing_field"] == "completion" and "--field completion=" in verdicts[0]["feedback"]
    err = capsys.readouterr().err
    assert "lack the field 'completion'" in err and "--field completion=<your column>" in err
    out2 = tmp_path / "out2.jsonl"
    assert main(["score", str(src), "-o", str(out2), "--no-progress", "--field", "completion=response"]) == 0
    assert [r["reward"] for r in read_jsonl(out2)] == [1.0] * 3


def test_mostly_invalid_batches_warn_once_per_job_through_the_progress_bar(tmp_path, capsys, monkeypatch):
    import tqdm

    written = []
    original = tqdm.tqdm.write

    def spy(cls, message, *args, **kwargs):
        written.append(message)
        return original(message, *args, **kwargs)

    monkeypatch.setattr(tqdm.tqdm, "write", classmethod(spy))
    rows = [{"completion": f"#### {k}", "solution": str(k)} for k in range(40)]  # the answer is in `solution`
    rows[7]["answer"] = "7"
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out, summary = tmp_path / "out.jsonl", tmp_path / "summary.json"
    assert main(["score", str(src), "-o", str(out), "--batch-size", "8", "--summary-json", str(summary)]) == 0
    warnings = [m for m in written if "invalid_input" in m]
    assert len(warnings) == 1  # five mostly-invalid batches, one warning
    assert "lack the field 'answer'" in warnings[0] and "--field answer=<your column>" in warnings[0]
    captured = capsys.readouterr()
    assert captured.err.count("lack the field 'answer'") == 1
    assert "invalid       39 rows could not be judged (reward 0): 39 lack 'answer'" in captured.out
    data = json.loads(summary.read_text())
    assert data["invalid"] == 39 and data["missing_fields"] == {"answer": 39}
