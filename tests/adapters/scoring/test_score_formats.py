"""Issue 11 item 7: `rewardsmith score` reads and writes the files the ecosystem has.

stdin/stdout (`-`), parquet output by extension (resumable), `.jsonl.gz` in and out, JSON
arrays, a `datasets` folder written by `save_to_disk` (with `--split`), `--field` column
mapping with dotted paths, and `--limit`. Every format must give the rows the plain JSONL
job gives, verdict for verdict.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from rewardsmith.adapters.cli import main

EXAMPLES = REPO / "data" / "math_examples.jsonl"


def example_rows() -> list[dict]:
    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()]
    return [row for row in rows if row["expect"] != "pathological"][:12]  # no 5 s timeout row


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def comparable(value):
    """Rows without timings, which differ between runs."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k != "elapsed_s"}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def score(*args: str) -> int:
    return main(["score", *args, "--no-progress"])


@pytest.fixture
def reference(tmp_path) -> tuple[Path, list[dict]]:
    """The example rows and what the plain JSONL job writes for them."""
    src = write_jsonl(tmp_path / "ref_in.jsonl", example_rows())
    out = tmp_path / "ref_out.jsonl"
    assert score(str(src), "-o", str(out)) == 0
    return src, comparable(read_jsonl(out))


def run_cli(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-m", "rewardsmith.adapters.cli", "score", *args, "--no-progress"]
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=120)


def test_stdin_to_stdout(reference):
    src, want = reference
    result = run_cli(["-", "-o", "-"], stdin=src.read_bytes())
    assert result.returncode == 0, result.stderr
    got = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert comparable(got) == want  # stdout is rows only: the summary went to stderr
    assert b"mean reward" in result.stderr


def test_stdout_cannot_be_resumed_or_retried_and_says_so(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", example_rows()[:2])
    result = run_cli([str(src), "-o", "-", "--retry-errors"])
    assert result.returncode == 2 and b"is a stream" in result.stderr
    help_text = subprocess.run([sys.executable, "-m", "rewardsmith.adapters.cli", "score", "--help"],
                               capture_output=True, text=True, timeout=60).stdout
    assert "stdin, stdout and pipes cannot be resumed" in " ".join(help_text.split())


def test_parquet_output_by_extension_matches_jsonl(reference, tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from rewardsmith.adapters.scoring.rows import read_rows

    src, want = reference
    out = tmp_path / "scored.parquet"
    assert score(str(src), "-o", str(out)) == 0
    table = pq.read_table(out)  # a real parquet file, typed where types are stable
    assert table.num_rows == len(want) and str(table.schema.field("reward").type) == "double"
    statuses = table.column("verdict").combine_chunks().field("status").to_pylist()
    assert statuses == [r["verdict"]["status"] for r in want]
    assert comparable([row.data for row in read_rows(out)]) == want  # and reads back as the JSONL rows
    assert not (tmp_path / "scored.parquet.part.jsonl").exists()


def test_parquet_output_resumes_exactly(reference, tmp_path, capsys):
    """--limit stops early; the part file keeps the rows; a torn line is cut; the rest is scored once."""
    pytest.importorskip("pyarrow")
    from rewardsmith.adapters.scoring.rows import read_rows

    src, want = reference
    out = tmp_path / "scored.parquet"
    assert score(str(src), "-o", str(out), "--limit", "5", "--batch-size", "2") == 0
    part = tmp_path / "scored.parquet.part.jsonl"
    assert len([row.data for row in read_rows(out)]) == 5 and len(read_jsonl(part)) == 5
    with part.open("a") as handle:
        handle.write('{"id": "torn", "comp')  # a kill mid-write
    capsys.readouterr()
    assert score(str(src), "-o", str(out), "--batch-size", "2") == 0
    assert "5 resumed" in capsys.readouterr().out
    assert comparable([row.data for row in read_rows(out)]) == want
    assert not part.exists()


def test_parquet_output_keeps_a_column_of_mixed_types(tmp_path):
    pytest.importorskip("pyarrow")
    from rewardsmith.adapters.scoring.rows import read_rows

    rows = [{"id": 1, "completion": "#### 1", "answer": "1", "meta": {}},
            {"id": "two", "completion": "#### 2", "answer": "2", "meta": {"k": [1, 2]}}]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.parquet"
    assert score(str(src), "-o", str(out)) == 0
    back = [row.data for row in read_rows(out)]
    # id: a number here, text there; meta: a struct would take the union of the rows' keys (row 1
    # would read back with k = null): both stored as JSON text and read back as they were.
    assert [(r["id"], r["meta"], r["reward"]) for r in back] == [(1, {}, 1.0), ("two", {"k": [1, 2]}, 1.0)]


def test_parquet_output_gives_back_nested_fields_exactly_and_types_what_arrow_keeps(tmp_path):
    """The fields a reward reads are read again from a parquet output (to rescore it, to train on it):
    None stays None, a missing key stays missing, 1 stays 1; columns Arrow holds as they are stay typed."""
    pq = pytest.importorskip("pyarrow.parquet")
    from rewardsmith.adapters.scoring.rows import read_rows

    rows = [{"completion": "#### 1", "answer": "1", "kwargs": [{"n": 3, "rel": None}, {}], "ref": [1, 2.5],
             "only_here": None, "shape": {"a": [1], "b": "x"}, "msgs": [{"role": "user", "content": "q"}]},
            {"completion": "#### 2", "answer": "2", "kwargs": [{"keyword": "k"}], "ref": [2, 3],
             "shape": {"a": [], "b": None}, "msgs": [{"role": "user", "content": "r"}]}]
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.parquet"
    assert score(str(src), "-o", str(out)) == 0
    back = [{k: v for k, v in row.data.items() if k not in ("reward", "verdict")} for row in read_rows(out)]
    assert back == rows
    assert [type(x) for x in back[0]["ref"]] == [int, float]
    assert "only_here" in back[0] and "only_here" not in back[1]
    schema = pq.read_schema(out)
    # kept as Arrow types: the same keys in every row
    assert str(schema.field("shape").type).startswith("struct") and str(schema.field("msgs").type).startswith("list")
    for reshaped in ("kwargs", "ref", "only_here"):  # JSON text: Arrow would have given back other values
        assert str(schema.field(reshaped).type) == "string", reshaped


def test_gzip_in_and_out(reference, tmp_path):
    src, want = reference
    gz_in = tmp_path / "rows.jsonl.gz"
    gz_in.write_bytes(gzip.compress(src.read_bytes()))
    out = tmp_path / "scored.jsonl.gz"
    assert score(str(gz_in), "-o", str(out)) == 0
    assert comparable([json.loads(line) for line in gzip.decompress(out.read_bytes()).decode().splitlines()]) == want


def test_json_array_in_and_out(reference, tmp_path):
    src, want = reference
    array = tmp_path / "rows.json"
    array.write_text(json.dumps(read_jsonl(src), indent=2))
    out = tmp_path / "scored.json"
    assert score(str(array), "-o", str(out)) == 0
    assert comparable(json.loads(out.read_text())) == want


def test_json_lines_under_a_json_name(reference, tmp_path):
    src, want = reference
    named = tmp_path / "rows.json"
    named.write_bytes(src.read_bytes())
    out = tmp_path / "scored.jsonl"
    assert score(str(named), "-o", str(out)) == 0
    assert comparable(read_jsonl(out)) == want


def test_a_json_array_element_that_is_not_an_object_is_a_malformed_row(tmp_path, capsys):
    array = tmp_path / "rows.json"
    array.write_text(json.dumps([{"completion": "#### 1", "answer": "1"}, [1, 2],
                                 {"completion": "#### 3", "answer": "3"}]))
    out = tmp_path / "out.jsonl"
    assert score(str(array), "-o", str(out)) == 0
    rows = read_jsonl(out)
    assert [r["verdict"]["status"] for r in rows] == ["ok", "invalid_input", "ok"] and rows[1]["_raw"] == "[1, 2]"
    assert "line 2: expected a JSON object" in capsys.readouterr().err


def test_a_broken_json_array_is_one_clear_error(tmp_path, capsys):
    array = tmp_path / "rows.json"
    array.write_text('[{"completion": "#### 1", "answer": "1"},\n {"completion": ')
    assert score(str(array), "-o", str(tmp_path / "out.jsonl")) == 2
    err = capsys.readouterr().err
    assert "is not valid JSON" in err and "line 2" in err and "Traceback" not in err


def verl_rows() -> list[dict]:
    """Rows as verl's preprocessing writes them: chat prompt, nested ground truth, another completion column."""
    return [{"prompt": [{"role": "user", "content": r["prompt"]}], "response": r["completion"],
             "reward_model": {"ground_truth": r["answer"], "style": "rule"}, "data_source": r["data_source"]}
            for r in example_rows()]


def test_field_mapping_with_dotted_paths(reference, tmp_path):
    _, want = reference
    src = write_jsonl(tmp_path / "verl.jsonl", verl_rows())
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out), "--field", "answer=reward_model.ground_truth",
                 "--field", "completion=response") == 0
    rows = read_jsonl(out)
    assert [r["verdict"]["correct"] for r in rows] == [r["verdict"]["correct"] for r in want]
    assert [r["reward"] for r in rows] == [r["reward"] for r in want]
    assert "answer" not in rows[0] and rows[0]["reward_model"]["ground_truth"]  # input columns kept as they were


def test_a_mapped_field_never_falls_back_to_the_rows_own_column(tmp_path):
    """With --field answer=solution, a row that lacks `solution` is invalid_input: its own `answer`
    column (in rollout files often the model's extracted answer) must not become the gold."""
    rows = [{"completion": "#### 7", "answer": "7", "solution": "3"},  # wrong: 7 is not the gold 3
            {"completion": "#### 7", "answer": "7"},  # no gold at all: not judged against its own answer
            {"answer": "7", "solution": "7", "completion_text": "#### 7"}]  # completion mapped, column missing
    src = write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out), "--field", "answer=solution") == 0
    got = read_jsonl(out)
    assert [r["reward"] for r in got] == [0.0, 0.0, 0.0]
    assert [r["verdict"]["status"] for r in got] == ["ok", "invalid_input", "invalid_input"]
    out2 = tmp_path / "out2.jsonl"
    assert score(str(src), "-o", str(out2), "--field", "completion=response") == 3
    assert {r["verdict"]["details"].get("missing_field") for r in read_jsonl(out2)} == {"completion"}


def test_a_bad_field_option_is_a_clear_error(tmp_path, capsys):
    src = write_jsonl(tmp_path / "in.jsonl", example_rows()[:1])
    assert score(str(src), "-o", str(tmp_path / "o.jsonl"), "--field", "answer") == 2
    assert "FIELD=COLUMN" in capsys.readouterr().err


def test_datasets_folder_with_split(reference, tmp_path, capsys):
    datasets = pytest.importorskip("datasets")
    _, want = reference
    train = datasets.Dataset.from_list(verl_rows())
    folder = tmp_path / "verl_data"
    datasets.DatasetDict({"train": train, "test": train.select(range(3))}).save_to_disk(str(folder))
    out = tmp_path / "out.jsonl"
    mapping = ["--field", "answer=reward_model.ground_truth", "--field", "completion=response"]
    assert score(str(folder), "-o", str(out), *mapping) == 2
    assert "holds the splits train, test: choose one with --split" in capsys.readouterr().err
    assert score(str(folder), "-o", str(out), "--split", "validation", *mapping) == 2
    assert "no split 'validation'" in capsys.readouterr().err
    assert score(str(folder), "-o", str(out), "--split", "train", *mapping) == 0
    assert [r["reward"] for r in read_jsonl(out)] == [r["reward"] for r in want]
    out_test = tmp_path / "test.jsonl"
    assert score(str(folder), "-o", str(out_test), "--split", "test", *mapping) == 0
    assert len(read_jsonl(out_test)) == 3
    single = tmp_path / "single"
    train.save_to_disk(str(single))
    assert score(str(single), "-o", str(tmp_path / "single.jsonl"), *mapping) == 0


def test_a_folder_that_is_not_a_dataset_is_a_clear_error(tmp_path, capsys):
    folder = tmp_path / "stuff"
    folder.mkdir()
    assert score(str(folder), "-o", str(tmp_path / "o.jsonl")) == 2
    assert "not a Hugging Face datasets folder" in capsys.readouterr().err


def test_limit_scores_the_first_rows_and_a_later_run_resumes(reference, tmp_path, capsys):
    src, want = reference
    out = tmp_path / "out.jsonl"
    assert score(str(src), "-o", str(out), "--limit", "4") == 0
    assert comparable(read_jsonl(out)) == want[:4]
    capsys.readouterr()
    assert score(str(src), "-o", str(out)) == 0
    assert comparable(read_jsonl(out)) == want and "4 resumed" in capsys.readouterr().out
    assert score(str(src), "-o", str(out), "--limit", "0") == 2


def test_calibrate_reads_a_parquet_output(tmp_path):
    """The other consumer of rows.py: a parquet output's JSON verdict details read back as objects."""
    pytest.importorskip("pyarrow")
    from rewardsmith.adapters.reports.calibration import read_pairs

    src = REPO / "data" / "calibration_examples.jsonl"
    out = tmp_path / "scored.parquet"
    assert score(str(src), "-o", str(out), "--reward", str(REPO / "data" / "brier.yaml")) == 0
    pairs = read_pairs(out, "verdict.details.confidence", "verdict.correct")
    assert pairs.used > 0 and all(0 <= p <= 1 for p in pairs.probs)
