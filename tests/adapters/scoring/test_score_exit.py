"""Issue 11 item 9: exit codes a pipeline can act on, and `--retry-errors`.

Before, `rewardsmith score` exited 0 when no row could be judged and when every verdict was
an infrastructure error, and the only way past an outage was rescoring everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith.adapters.cli import main
from rewardsmith.verifiers import Verdict, Verifier, error, register

FAILING: set[int] = set()  # ids whose verdict is an outage (status=error)
CALLS: list[int] = []  # ids scored, in order
INTERRUPT_AT: set[int] = set()  # ids whose scoring is cut by a Ctrl-C


@register("test_flaky")
class Flaky(Verifier):
    """Test-only: an outage (status=error) for rows whose ``id`` is in FAILING, else score = ``s``."""

    name = "flaky"

    def _verify(self, sample):
        key = sample.get("id")
        CALLS.append(key)
        if key in INTERRUPT_AT:
            raise KeyboardInterrupt
        if key in FAILING:
            return error("judge backend unreachable")
        return Verdict(score=float(sample.get("s")), correct=sample.get("s") > 0.5)


@pytest.fixture(autouse=True)
def fresh_state():
    FAILING.clear()
    CALLS.clear()
    INTERRUPT_AT.clear()
    yield


def write_rows(path: Path, n: int = 10) -> Path:
    path.write_text("".join(json.dumps({"id": k, "completion": "c", "s": k / 10}) + "\n" for k in range(n)))
    return path


def score(*args: str) -> int:
    return main(["score", *args, "--reward", "test_flaky", "--no-progress"])


def test_every_row_malformed_or_invalid_exits_3(tmp_path, capsys):
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"completion": \n[1, 2]\n"text"\n')
    assert main(["score", str(broken), "-o", str(tmp_path / "a.jsonl"), "--no-progress"]) == 3
    assert "all 3 rows are malformed or invalid_input" in capsys.readouterr().err
    no_answers = tmp_path / "no_answers.jsonl"
    no_answers.write_text('{"completion": "#### 4"}\n{"completion": "#### 5"}\n')
    assert main(["score", str(no_answers), "-o", str(tmp_path / "b.jsonl"), "--no-progress"]) == 3
    err = capsys.readouterr().err
    assert "all 2 rows are malformed or invalid_input" in err and "--field answer=<your column>" in err
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"completion": "#### 4"}\n{"completion": "#### 5", "answer": "5"}\n')
    assert main(["score", str(mixed), "-o", str(tmp_path / "c.jsonl"), "--no-progress"]) == 0


def test_an_empty_input_exits_3(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["score", str(empty), "-o", str(tmp_path / "o.jsonl"), "--no-progress"]) == 3
    assert "the input has no rows" in capsys.readouterr().err


def test_errors_exit_0_with_a_hint_unless_fail_on_or_max_error_rate(tmp_path, capsys):
    src = write_rows(tmp_path / "in.jsonl")
    FAILING.update({2, 5, 7})
    assert score(str(src), "-o", str(tmp_path / "a.jsonl")) == 0
    assert "3 rows have status=error (reward null) (rerun with --retry-errors" in capsys.readouterr().err
    assert score(str(src), "-o", str(tmp_path / "b.jsonl"), "--fail-on", "error") == 4
    assert "--fail-on error: 3 of 10 rows have status=error" in capsys.readouterr().err
    assert score(str(src), "-o", str(tmp_path / "c.jsonl"), "--max-error-rate", "0.5") == 0
    assert score(str(src), "-o", str(tmp_path / "d.jsonl"), "--max-error-rate", "0.25") == 4
    assert "more than --max-error-rate 0.25" in capsys.readouterr().err
    FAILING.clear()
    assert score(str(src), "-o", str(tmp_path / "e.jsonl"), "--fail-on", "error", "--max-error-rate", "0") == 0


def test_fail_on_other_statuses(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('{"completion": "#### 4", "answer": "4"}\n{"completion": "no idea", "answer": "4"}\n')
    assert main(["score", str(src), "-o", str(tmp_path / "a.jsonl"), "--no-progress", "--fail-on", "no_answer"]) == 4
    assert main(["score", str(src), "-o", str(tmp_path / "b.jsonl"), "--no-progress", "--fail-on", "timeout"]) == 0


def test_retry_errors_rescores_only_the_error_rows_and_keeps_every_other_byte(tmp_path, capsys):
    src = write_rows(tmp_path / "in.jsonl")
    out = tmp_path / "out.jsonl"
    FAILING.update({2, 5, 7})
    assert score(str(src), "-o", str(out)) == 0
    before = out.read_bytes().splitlines(keepends=True)
    assert [json.loads(line)["reward"] for line in before].count(None) == 3
    FAILING.clear()  # the outage is over
    CALLS.clear()
    capsys.readouterr()
    assert score(str(src), "-o", str(out), "--retry-errors") == 0
    assert CALLS == [2, 5, 7]  # nothing else was scored again
    after = out.read_bytes().splitlines(keepends=True)
    assert len(after) == 10
    for k, (old, new) in enumerate(zip(before, after, strict=True)):
        if k in (2, 5, 7):
            row = json.loads(new)
            assert row["verdict"]["status"] == "ok" and row["reward"] == k / 10 and row["verdict"]["line"] == k + 1
        else:
            assert new == old  # byte for byte
    assert "3 retried" in capsys.readouterr().out
    assert not list(tmp_path.glob("out.jsonl.*tmp")) and not list(tmp_path.glob("out.jsonl.retry"))


def test_retry_errors_interrupted_leaves_the_output_as_it_was(tmp_path, capsys):
    src = write_rows(tmp_path / "in.jsonl")
    out = tmp_path / "out.jsonl"
    FAILING.update({1, 8})
    assert score(str(src), "-o", str(out), "--batch-size", "1") == 0
    before = out.read_bytes()
    INTERRUPT_AT.add(8)
    capsys.readouterr()
    assert score(str(src), "-o", str(out), "--retry-errors", "--batch-size", "1") == 130
    err = capsys.readouterr().err.strip()
    assert err == ("rewardsmith: interrupted while rescoring 2 error rows; "
                   f"{out} is unchanged: rerun the same command to retry them")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl", "out.jsonl.rewardsmith.json"]


def test_retry_errors_on_a_partial_output_then_finishes_it(tmp_path, capsys):
    src = write_rows(tmp_path / "in.jsonl")
    out = tmp_path / "out.jsonl"
    FAILING.add(1)
    assert score(str(src), "-o", str(out), "--limit", "4") == 0
    FAILING.clear()
    CALLS.clear()
    assert score(str(src), "-o", str(out), "--retry-errors") == 0
    assert CALLS == [1, 4, 5, 6, 7, 8, 9]
    assert [json.loads(line)["reward"] for line in out.read_text().splitlines()] == [k / 10 for k in range(10)]


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl.gz", ".json"])
def test_retry_errors_on_a_finished_converted_output(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    from rewardsmith.adapters.scoring.rows import read_rows

    src = write_rows(tmp_path / "in.jsonl")
    out = tmp_path / f"out{suffix}"
    FAILING.update({0, 9})
    assert score(str(src), "-o", str(out)) == 0
    assert [row.data["reward"] for row in read_rows(out)].count(None) == 2
    FAILING.clear()
    CALLS.clear()
    assert score(str(src), "-o", str(out), "--retry-errors") == 0
    assert CALLS == [0, 9]
    assert [row.data["reward"] for row in read_rows(out)] == [k / 10 for k in range(10)]
    assert not (tmp_path / f"out{suffix}.part.jsonl").exists()


def test_retry_errors_needs_an_output_and_contradicts_overwrite(tmp_path, capsys):
    src = write_rows(tmp_path / "in.jsonl")
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out), "--retry-errors") == 2
    assert "nothing to retry" in capsys.readouterr().err and not out.exists()
    assert score(str(src), "-o", str(out), "--retry-errors", "--overwrite") == 2
    assert "choose one" in capsys.readouterr().err


def test_help_names_every_exit_status_and_new_option():
    text = subprocess.run([sys.executable, "-m", "rewardsmith.adapters.cli", "score", "--help"],
                          capture_output=True, text=True, timeout=60).stdout
    for needle in ("exit status", "  0 ", "  2 ", "  3 ", "  4 ", "  5 ", "  130 ", "  141 ", "--fail-on",
                   "--max-error-rate", "--retry-errors", "--field", "--split", "--limit", "OUTPUT.rewardsmith.json",
                   ".parquet", ".jsonl.gz", "save_to_disk"):
        assert needle in text, needle
