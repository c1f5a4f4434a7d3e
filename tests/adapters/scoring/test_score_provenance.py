"""Issue 11 item 6: a resume continues only the job that wrote OUTPUT (same input, spec, mapping).

Before, a rerun on the same OUTPUT with another input of the same shape, another spec or
another mapping appended its rows to the first job's: one file, two jobs, no word.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from rewardsmith.adapters.cli import main
from rewardsmith.adapters.scoring import rows as reader
from rewardsmith.adapters.scoring.job import Job, local_scorer, run_job
from rewardsmith.adapters.scoring.provenance import record_path, spec_fingerprint
from rewardsmith.adapters.scoring.rows import fingerprint, fingerprint_spans
from rewardsmith.verifiers import build


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def math_rows(n: int, offset: int = 0) -> list[dict]:
    return [{"id": k, "completion": f"#### {k + offset}", "answer": str(k)} for k in range(n)]


def score(*args: str) -> int:
    return main(["score", *args, "--no-progress"])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def keep_first(path: Path, n: int) -> None:
    """What a job killed after n rows leaves behind."""
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines()[:n]))


def test_another_input_of_the_same_shape_is_refused_and_says_what_differs(tmp_path, capsys):
    a = write_rows(tmp_path / "a.jsonl", math_rows(10))
    b = write_rows(tmp_path / "b.jsonl", math_rows(10, offset=1))  # same lines, other completions
    out = tmp_path / "out.jsonl"
    assert score(str(a), "-o", str(out)) == 0
    keep_first(out, 4)
    capsys.readouterr()
    assert score(str(b), "-o", str(out)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "the input differs" in err and str(a.resolve()) in err and str(b.resolve()) in err
    assert "--overwrite" in err and "another -o" in err
    assert len(lines(out)) == 4  # nothing appended, nothing cut
    assert score(str(b), "-o", str(out), "--overwrite") == 0
    assert [r["reward"] for r in lines(out)] == [0.0] * 10


def test_an_input_edited_in_place_is_refused(tmp_path, capsys):
    src = write_rows(tmp_path / "in.jsonl", math_rows(10))
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out)) == 0
    keep_first(out, 4)
    text = src.read_text()
    src.write_text(text.replace('"#### 7"', '"#### 8"'))  # same size, same path
    assert score(str(src), "-o", str(out)) == 2
    assert f"the input {src.resolve()} has changed since" in capsys.readouterr().err


def test_another_spec_is_refused_and_the_same_spec_from_another_file_is_not(tmp_path, capsys):
    src = write_rows(tmp_path / "in.jsonl", math_rows(10))
    out = tmp_path / "out.jsonl"
    spec = tmp_path / "reward.yaml"
    spec.write_text("type: math\nleniency: {rel_tol: 0.0}\n")
    assert score(str(src), "-o", str(out), "--reward", str(spec)) == 0
    keep_first(out, 4)
    capsys.readouterr()
    assert score(str(src), "-o", str(out), "--reward", "format") == 2
    err = capsys.readouterr().err
    assert "the reward spec differs" in err and "format" in err and "input" not in err.split("job:")[1]
    spec.write_text("type: math\nleniency: {rel_tol: 0.5}\n")  # same path, another spec
    assert score(str(src), "-o", str(out), "--reward", str(spec)) == 2
    assert "the reward spec differs" in capsys.readouterr().err
    same = tmp_path / "elsewhere.json"  # the same value, another path and format: the same job
    same.write_text(json.dumps({"leniency": {"rel_tol": 0.0}, "type": "math"}))
    assert score(str(src), "-o", str(out), "--reward", str(same)) == 0
    assert len(lines(out)) == 10 and "4 resumed" in capsys.readouterr().out


def test_a_registry_name_and_its_dict_are_the_same_spec():
    assert spec_fingerprint("math") == spec_fingerprint({"type": "math"})
    assert spec_fingerprint({"type": "math", "a": 1, "b": 2}) == spec_fingerprint({"b": 2, "a": 1, "type": "math"})
    assert spec_fingerprint("math") != spec_fingerprint("format")
    assert spec_fingerprint(build("math")) is None  # a Verifier object has no value to fingerprint


def test_another_field_mapping_is_refused(tmp_path, capsys):
    rows = [{"completion": f"#### {k}", "solution": str(k), "answer": "0"} for k in range(6)]
    src = write_rows(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out), "--field", "answer=solution") == 0
    keep_first(out, 3)
    assert score(str(src), "-o", str(out)) == 2
    err = capsys.readouterr().err
    assert "the field mapping differs (was --field answer=solution, now no --field)" in err
    assert score(str(src), "-o", str(out), "--field", "answer=solution") == 0
    assert [r["reward"] for r in lines(out)] == [1.0] * 6


def test_an_output_without_a_record_is_not_resumed(tmp_path, capsys):
    """An output from an older rewardsmith (or anything else) cannot be checked: refused, not guessed."""
    src = write_rows(tmp_path / "in.jsonl", math_rows(6))
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out)) == 0
    keep_first(out, 3)
    record_path(out).unlink()
    assert score(str(src), "-o", str(out)) == 2
    err = capsys.readouterr().err
    assert "no job record" in err and "--overwrite" in err
    assert len(lines(out)) == 3


def test_the_record_is_written_before_the_first_batch_and_keeps_the_output_clean(tmp_path):
    src = write_rows(tmp_path / "in.jsonl", math_rows(5))
    out = tmp_path / "out.jsonl"
    seen = []
    verifier = build({"type": "math", "workers": 0})

    def scorer(batches, total):
        for batch, verdicts in local_scorer(verifier)(batches, total):
            seen.append(record_path(out).exists())
            yield batch, verdicts

    run_job(Job(src, out, "math", batch_size=2, progress=False), scorer)
    assert seen == [True, True, True]
    record = json.loads(record_path(out).read_text())
    assert record["input"]["path"] == str(src.resolve()) and record["input"]["size"] == src.stat().st_size
    assert record["input"]["fingerprint"] == fingerprint(src)
    assert record["spec"]["fingerprint"] == spec_fingerprint("math")
    assert all(set(row) == {"id", "completion", "answer", "reward", "verdict"} for row in lines(out))


def test_a_moved_input_with_the_same_content_resumes(tmp_path, capsys):
    src = write_rows(tmp_path / "in.jsonl", math_rows(8))
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out)) == 0
    keep_first(out, 5)
    moved = tmp_path / "moved.jsonl"
    shutil.move(src, moved)
    assert score(str(moved), "-o", str(out)) == 0
    assert "5 resumed" in capsys.readouterr().out and len(lines(out)) == 8


def test_the_last_written_row_must_be_the_inputs_row_at_that_place(tmp_path, capsys):
    """The fingerprint samples big files; the row check covers what it cannot see."""
    src = write_rows(tmp_path / "in.jsonl", math_rows(8))
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out)) == 0
    keep_first(out, 5)
    rows = lines(out)
    rows[-1]["completion"] = "#### 99"  # as if the input's row 5 had been another
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert score(str(src), "-o", str(out)) == 2
    assert "do not match the start of" in capsys.readouterr().err


def test_the_fingerprint_of_a_big_file_reads_little_and_sees_head_tail_and_middle_edits(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "FULL_HASH_MAX", 4 << 20)  # "big" from 4 MiB on, so the test writes 12 MiB
    big = tmp_path / "big.bin"
    size = 3 * reader.FULL_HASH_MAX
    big.write_bytes(os.urandom(size))
    spans = fingerprint_spans(size)
    assert sum(length for _, length in spans) <= 3 << 20  # 3 MiB read, whatever the size
    assert fingerprint_spans(100 * size)[-1] == (100 * size - (1 << 20), 1 << 20)
    original = fingerprint(big)
    assert fingerprint(big) == original
    copy = tmp_path / "copy.bin"
    shutil.copy(big, copy)
    assert fingerprint(copy) == original  # content, not path or mtime
    for offset in (10, size - 10, spans[len(spans) // 2][0] + 5):  # first MiB, last MiB, a block between
        data = bytearray(big.read_bytes())
        data[offset] ^= 0xFF
        copy.write_bytes(bytes(data))
        assert fingerprint(copy) != original, offset
    with copy.open("ab") as handle:
        handle.write(b"\n")
    assert fingerprint(copy) != original


def test_retry_errors_checks_provenance_too(tmp_path, capsys):
    a = write_rows(tmp_path / "a.jsonl", math_rows(4))
    b = write_rows(tmp_path / "b.jsonl", math_rows(4, offset=3))
    out = tmp_path / "out.jsonl"
    assert score(str(a), "-o", str(out)) == 0
    before = out.read_bytes()
    assert score(str(b), "-o", str(out), "--retry-errors") == 2
    assert "the input differs" in capsys.readouterr().err
    assert out.read_bytes() == before


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl.gz", ".json"])
def test_converted_outputs_are_checked_the_same_way(tmp_path, capsys, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    src = write_rows(tmp_path / "in.jsonl", math_rows(6))
    out = tmp_path / f"out{suffix}"
    assert score(str(src), "-o", str(out), "--limit", "3") == 0
    assert score(str(src), "-o", str(out), "--reward", "format") == 2
    assert "the reward spec differs" in capsys.readouterr().err
    assert score(str(src), "-o", str(out)) == 0  # the finished one
    assert score(str(src), "-o", str(out), "--reward", "format") == 2
    assert "the reward spec differs" in capsys.readouterr().err
