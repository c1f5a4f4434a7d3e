"""The Ray backend writes the same file as the local scoring job, row for row."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from conftest import REPO

ray = pytest.importorskip("ray")

from rewardsmith.adapters.scoring.job import score_file  # noqa: E402
from rewardsmith.adapters.scoring.provenance import ResumeError, record_path  # noqa: E402
from rewardsmith.adapters.scoring.ray import score_file_ray  # noqa: E402
from rewardsmith.verifiers import build  # noqa: E402

pytestmark = pytest.mark.slow

EXAMPLES = REPO / "data" / "math_examples.jsonl"
ROUTED = REPO / "data" / "reward.yaml"


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One small local Ray instance for the whole module; score_file_ray joins it."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def base_rows() -> list[dict]:
    rows = [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()]
    return [row for row in rows if row["expect"] != "pathological"]  # a timeout: 5 s, timing-dependent


def make_jsonl(path: Path, n: int = 300) -> Path:
    """Math rows with chat completions, rows without ``answer``, malformed and blank lines."""
    rng = random.Random(7)
    rows = base_rows()
    lines = []
    for i in range(n):
        row = dict(rng.choice(rows), id=f"r{i}")
        if i % 7 == 3:
            row["completion"] = [{"role": "user", "content": row["prompt"]},
                                 {"role": "assistant", "content": row["completion"]}]
        if i % 11 == 5:
            row.pop("answer")
        lines.append(json.dumps(row))
        if i % 37 == 10:
            lines.append('{"prompt": "torn", "completion": ')
        if i % 53 == 20:
            lines.append("[1, 2, 3]")
        if i % 61 == 30:
            lines.append("")
    path.write_text("\n".join(lines) + "\n")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def comparable(value):
    """A row without timings (composed rewards nest their parts' verdicts, timings too)."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k != "elapsed_s"}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def assert_same_output(local: Path, remote: Path) -> list[dict]:
    a, b = read_jsonl(local), read_jsonl(remote)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert comparable(x) == comparable(y)
    return a


def test_math_rows_match_local_row_for_row(tmp_path, caplog):
    src = make_jsonl(tmp_path / "in.jsonl")
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    expect = score_file(src, local, build("math"), batch_size=32, progress=False)
    caplog.clear()
    got = score_file_ray(src, remote, "math", batch_size=32, progress=False)
    rows = assert_same_output(local, remote)
    statuses = {row["verdict"]["status"] for row in rows}
    assert {"ok", "no_answer", "invalid_input"} <= statuses
    assert sum("_raw" in row for row in rows) == got.malformed == expect.malformed > 0
    assert got.as_dict() | {"rows_per_s": 0} == expect.as_dict() | {"rows_per_s": 0}
    assert caplog.text.count("written through with status=invalid_input") == got.malformed


def test_routed_spec_file_matches_local(tmp_path):
    src = make_jsonl(tmp_path / "in.jsonl", n=200)
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    score_file(src, local, build(str(ROUTED)), batch_size=16, progress=False)
    score_file_ray(src, remote, str(ROUTED), batch_size=16, progress=False)
    rows = assert_same_output(local, remote)
    assert any("components" in row["verdict"] for row in rows)  # the weighted gsm8k route ran


def test_parquet_input_matches_local(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = [dict(row, id=f"p{i}") for i, row in enumerate(base_rows() * 4)]
    src = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    spec = {"type": "math", "leniency": {"rel_tol": 0.0}}
    score_file(src, local, build(spec), batch_size=8, progress=False)
    score_file_ray(src, remote, spec, batch_size=8, progress=False)
    assert len(assert_same_output(local, remote)) == len(rows)


def test_resume_skips_rows_already_written(tmp_path):
    src = make_jsonl(tmp_path / "in.jsonl", n=120)
    local, remote = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    score_file(src, local, "math", batch_size=16, progress=False)
    lines = local.read_text().splitlines(keepends=True)
    remote.write_text("".join(lines[:50]) + lines[50][:20])  # 50 whole rows and a torn one
    shutil.copy(record_path(local), record_path(remote))  # the local job's record: the same job
    summary = score_file_ray(src, remote, "math", batch_size=16, progress=False)
    assert (summary.resumed, summary.scored_now, summary.rows) == (50, len(lines) - 50, len(lines))
    assert_same_output(local, remote)
    again = score_file_ray(src, remote, "math", batch_size=16, progress=False)
    assert (again.resumed, again.scored_now) == (len(lines), 0)
    assert_same_output(local, remote)


def test_a_failing_actor_is_a_clear_error_and_the_job_resumes(tmp_path):
    """conftest registers test_field_score in this process only, so every actor fails to
    build it, as on a worker node that lacks a reward's package."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"prompt": "p", "completion": "c", "s": i / 10}) + "\n" for i in range(10)))
    out = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError, match="rerun the same command to resume"):
        score_file_ray(src, out, "test_field_score", batch_size=4, progress=False)
    assert out.read_text() == ""


def test_cli_backend_ray_matches_local(tmp_path):
    """`rewardsmith score --backend ray` (joining the running instance) writes what the local job writes."""
    from rewardsmith.adapters.cli import main

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"completion": f"#### {n % 7}", "answer": str(n % 5)}) + "\n" for n in range(60)))
    local, ray_out = tmp_path / "local.jsonl", tmp_path / "ray.jsonl"
    assert main(["score", str(src), "-o", str(local), "--no-progress"]) == 0
    assert main(["score", str(src), "-o", str(ray_out), "--no-progress", "--backend", "ray", "--batch-size", "16"]) == 0
    def strip(path: Path) -> list[dict]:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        return [{**r, "verdict": {k: v for k, v in r["verdict"].items() if k != "elapsed_s"}} for r in rows]

    assert strip(local) == strip(ray_out)


def test_ray_refuses_to_resume_another_job_and_resumes_its_own(tmp_path):
    """Issue 11 item 6 on the Ray backend: the same provenance record and checks as the local job."""
    src = make_jsonl(tmp_path / "in.jsonl", n=60)
    out = tmp_path / "ray.jsonl"
    score_file_ray(src, out, "math", batch_size=16, progress=False, limit=20)
    other = make_jsonl(tmp_path / "other.jsonl", n=61)
    with pytest.raises(ResumeError, match="the input differs"):
        score_file_ray(other, out, "math", batch_size=16, progress=False)
    with pytest.raises(ResumeError, match="the reward spec differs"):
        score_file_ray(src, out, "format", batch_size=16, progress=False)
    with pytest.raises(ResumeError, match="the field mapping differs"):
        score_file_ray(src, out, "math", batch_size=16, progress=False, fields={"answer": "id"})
    local = tmp_path / "local.jsonl"
    score_file(src, local, {"type": "math"}, batch_size=16, progress=False, limit=20)
    fingerprints = [json.loads(record_path(path).read_text())["spec"]["fingerprint"] for path in (local, out)]
    assert fingerprints[0] == fingerprints[1]  # {"type": "math"} here, "math" on Ray: the same spec
    summary = score_file(src, out, "math", batch_size=16, progress=False)  # local finishes it
    assert summary.resumed == 20
    score_file(src, local, "math", batch_size=16, progress=False)
    assert_same_output(local, out)


def test_ray_parquet_output_with_field_mapping_and_retry_matches_local(tmp_path):
    """Issue 11 items 7 and 9 on the Ray backend: formats, --field and --retry-errors run through the same job."""
    pytest.importorskip("pyarrow")
    from rewardsmith.adapters.scoring.rows import read_rows

    rows = [{"id": i, "response": f"#### {i % 4}", "meta": {"gold": str(i % 3)}} for i in range(40)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fields = {"answer": "meta.gold", "completion": "response"}
    local, remote = tmp_path / "local.parquet", tmp_path / "ray.parquet"
    score_file(src, local, "math", batch_size=8, progress=False, fields=fields)
    score_file_ray(src, remote, "math", batch_size=8, progress=False, fields=fields)
    a, b = ([row.data for row in read_rows(path)] for path in (local, remote))
    assert comparable(a) == comparable(b) and len(a) == 40
    assert [r["reward"] for r in a] == [float(i % 4 == i % 3) for i in range(40)]
    again = score_file_ray(src, remote, "math", batch_size=8, progress=False, fields=fields, retry_errors=True)
    assert (again.retried, again.resumed, again.rows) == (0, 40, 40)
