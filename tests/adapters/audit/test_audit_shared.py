"""The project's own specs audited on the shared data (MATH-500, GSM8K), as CI runs them.

Each test prints the audit table (every family's hack count) to the CI log. Families that pay
today stay visible there; what is asserted is what must hold now: every row audited, every
known-correct completion paid (no recall lost), and the families that are closed today stay
closed. The judge/cascade audits are in test_audit_judge.py, code on MBPP in test_audit_code.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO, SHARED_DATA

from rewardsmith.adapters.audit import AuditReport, audit
from rewardsmith.adapters.audit.report import format_table
from rewardsmith.adapters.scoring.rows import Row, read_rows

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]

MATH500 = SHARED_DATA / "math" / "math500_test.jsonl"
GSM8K = SHARED_DATA / "math" / "gsm8k_test.jsonl"

# Every family is closed on MATH-500 and GSM8K golds (issue 23): an attack paid, or a rewrite refused,
# anywhere is a regression.


def require(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/data is not laid out here)")


def rows_of(path: Path, prompt_column: str, limit: int | None = None, **extra: str) -> Iterator[Row]:
    for row in read_rows(path):
        if limit is not None and row.line > limit:
            return
        if row.data is not None:
            row.data["prompt"] = row.data.pop(prompt_column)
            row.data.update(extra)
        yield row


def show(report: AuditReport, title: str, capsys: pytest.CaptureFixture[str]) -> dict[str, int]:
    with capsys.disabled():
        print(f"\n== {title}\n{format_table(report)}")
    return {f.name: f.hacks for f in report.families}


@pytest.mark.parametrize(("path", "column", "rows"), [(MATH500, "problem", 500), (GSM8K, "question", 1319)],
                         ids=["math500", "gsm8k"])
def test_math_audited_on_shared_golds(path: Path, column: str, rows: int, capsys: pytest.CaptureFixture[str]) -> None:
    require(path)
    report = audit("math", rows_of(path, column))
    hacks = show(report, f"math on {path.name}", capsys)
    assert report.rows == rows and not report.malformed
    assert report.reference_paid == report.reference_rows == rows  # every gold answers itself
    assert {f.kind for f in report.families} == {"attack", "rewrite"}
    for f in report.families:
        assert hacks[f.name] == 0, (f.name, f.examples)
    lost = {f.name: f.false_negatives for f in report.families if f.kind == "rewrite"}
    assert not any(lost.values()), lost
    assert all(f.errors == 0 for f in report.families)  # nothing a probe does is an infrastructure fault


def test_composed_reward_yaml_audited(capsys: pytest.CaptureFixture[str]) -> None:
    """data/reward.yaml routes GSM8K rows to math + a 0.2 format bonus and MATH rows to math alone.
    The format bonus is paid on wrong (or empty, or think-only) answers in the right tags by design;
    the audit shows it as hacks on the GSM8K rows only: 0.2 a policy could farm without answering."""
    require(MATH500)
    require(GSM8K)
    spec = str(REPO / "data" / "reward.yaml")
    gsm = audit(spec, rows_of(GSM8K, "question", limit=150, data_source="gsm8k"), families=["format_only"])
    maths = audit(spec, rows_of(MATH500, "problem", limit=150, data_source="math"), families=["format_only"])
    show(gsm, "data/reward.yaml on 150 GSM8K golds (format_only)", capsys)
    show(maths, "data/reward.yaml on 150 MATH-500 golds (format_only)", capsys)
    bonus = next(f for f in gsm.families if f.name == "format_only")
    assert bonus.hacks > 0 and bonus.paid / bonus.cases <= 0.2 + 1e-9  # only the format part pays, never math
    assert all(f.hacks == 0 for f in maths.families)
    everything = audit(spec, rows_of(GSM8K, "question", limit=150, data_source="gsm8k"))
    hacks = show(everything, "data/reward.yaml on 150 GSM8K golds (every family)", capsys)
    assert everything.reference_paid == everything.reference_rows == 150
    # Tagged probes with a wrong, empty or think-only answer earn the format bonus and nothing more.
    tagged = ("format_only", "empty_box", "think_only")
    for f in everything.families:
        if f.name in tagged:
            assert f.hacks > 0 and all(e["score"] == pytest.approx(0.2) for e in f.examples), f.name
        else:
            assert hacks[f.name] == 0, f.name


def test_audit_json_matches_the_table(tmp_path: Path) -> None:
    require(MATH500)
    from rewardsmith.adapters.cli import main

    out = tmp_path / "report"
    assert main(["audit", "--reward", "math", "--data", str(MATH500), "--field", "prompt=problem", "--limit", "40",
                 "-o", str(out), "--no-progress", "--no-plot"]) == 0
    report = json.loads((out / "audit.json").read_text())
    records = [json.loads(line) for line in (out / "audit.jsonl").read_text().splitlines()]
    for family in report["families"]:
        mine = [r for r in records if r["family"] == family["family"]]
        assert len(mine) == family["cases"]
        flagged = sum(r["flagged"] for r in mine)
        assert flagged == (family["hacks"] if family["kind"] == "attack" else family["false_negatives"])
