"""Our verdicts against BFCL's AST checker on candidates built from BFCL's own rows
(``benchmarks/tool_call_parity.py``, run on the first rows of each category).

Skips when the reference (bfcl-eval 2026.3.23, installed with ``--no-deps --target`` at
``~/.cache/rewardsmith/bfcl-eval-2026.3.23``) is absent. The benchmark runs in its own process, so
the stand-in modules it puts into ``sys.modules`` for BFCL's imports never reach other tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from conftest import REPO

BENCHMARK = REPO / "benchmarks" / "tool_call_parity.py"
BFCL = os.path.expanduser("~/.cache/rewardsmith/bfcl-eval-2026.3.23")
ROWS = 30  # per category: a few hundred candidates, the rows where BFCL errs among them


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    if not os.path.isfile(os.path.join(BFCL, "bfcl_eval", "eval_checker", "ast_eval", "ast_checker.py")):
        pytest.skip(f"bfcl-eval is not installed at {BFCL}")
    out = tmp_path_factory.mktemp("parity") / "records.json"
    result = subprocess.run(
        [sys.executable, str(BENCHMARK), "--bfcl", BFCL, "--rows", str(ROWS), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_few_hundred_candidates_of_every_category_and_mutation(records):
    assert len(records) >= 300
    assert set(Counter(r["category"] for r in records)) == {
        "simple",
        "multiple",
        "parallel",
        "parallel_multiple",
        "irrelevance",
    }
    mutations = Counter(r["mutation"] for r in records)
    assert {
        "right_first",
        "wrong_value",
        "string_number",
        "wrong_type",
        "extra_call",
        "duplicated_call",
        "missing_call",
        "swapped_order",
        "extra_argument",
        "wrong_name",
        "missing_required",
    } <= set(mutations)
    assert Counter(r["truth"] for r in records)[True] >= 100


def test_ours_is_right_on_every_candidate_and_agrees_with_bfcl_wherever_bfcl_is_right(records):
    wrong = [r for r in records if r["ours"] != r["truth"]]
    assert not wrong, wrong[:3]
    disagreements = [r for r in records if r["ours"] != r["bfcl"]]
    assert all(r["bfcl"] != r["truth"] for r in disagreements)
    # BFCL's own errors in these rows (the benchmark's docs explain them): a parameter its answer lists
    # but its docs do not (parallel_multiple_12), and an empty list its dict checker cannot read (..._26)
    assert {r["id"] for r in disagreements} <= {"parallel_multiple_12", "parallel_multiple_26"}
    agreement = 1 - len(disagreements) / len(records)
    assert agreement >= 0.98


def test_the_benchmark_says_how_to_install_the_reference_when_it_is_absent(tmp_path):
    result = subprocess.run(
        [sys.executable, str(BENCHMARK), "--bfcl", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert "pip install --no-deps" in result.stderr and "bfcl-eval==2026.3.23" in result.stderr
