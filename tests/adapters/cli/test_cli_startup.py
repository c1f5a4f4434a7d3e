"""`rewardsmith score` start-up: the math pool starts before the first batch, and nothing heavy is
imported in the parent for it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rewardsmith.verifiers import build
from rewardsmith.verifiers.math import GradeTask, MathVerifier


@pytest.mark.parametrize(
    ("spec", "sizes"),
    [
        ("math", {None}),
        ({"type": "math", "workers": 3}, {3}),
        ({"type": "math", "workers": 0}, set()),  # in-process: no pool
        ("format", set()),
        ({"type": "gate", "when": {"type": "format"}, "then": {"type": "math", "workers": 2}}, {2}),
        ({"type": "weighted", "parts": ["math", "format"], "weights": [1.0, 0.5]}, {None}),
        ({"type": "route", "field": "data_source", "routes": {"a": {"type": "math", "workers": 1}, "b": "math"},
          "default": "format"}, {1, None}),
        ({"type": "brier", "correctness": {"type": "math", "workers": 2}}, {2}),
    ],
)
def test_the_cli_finds_every_math_pool_in_a_reward(spec, sizes):
    pooled = {part.workers for _, part in build(spec).walk() if isinstance(part, MathVerifier) and part.workers != 0}
    assert pooled == sizes


@pytest.mark.parametrize(
    ("spec", "started"),
    [
        ({"type": "math", "workers": 3}, [3]),
        ({"type": "math", "workers": 0}, []),  # grades in-process: nothing to start
        ("format", []),
        ({"type": "gate", "when": {"type": "format"}, "then": {"type": "math", "workers": 2}}, [2]),
        ({"type": "route", "field": "data_source", "routes": {"a": {"type": "math", "workers": 1},
                                                               "b": {"type": "math", "workers": 2}}}, [1, 2]),
        ({"type": "brier", "correctness": {"type": "math", "workers": 2}}, [2]),
        ({"type": "cosine", "max_length": 100, "correctness": {"type": "math", "workers": 3}}, [3]),
    ],
)
def test_start_reaches_every_math_pool_through_the_composites(monkeypatch, spec, started):
    """Verifier.start is forwarded by every composite and nested spec to the math parts, which
    start their pool; with wait, each worker grades one pair before start returns."""
    from rewardsmith.verifiers import pool

    seen, warmed = [], []
    monkeypatch.setattr(pool.WorkerPool, "start", lambda self: seen.append(self.size) or self)
    monkeypatch.setattr(pool.WorkerPool, "map", lambda self, task, items, timeout: warmed.append(len(items)) or [])
    build(spec).start()
    assert sorted(seen) == started and warmed == []
    seen.clear()
    build(spec).start(wait=True)
    assert sorted(seen) == started and sorted(warmed) == started


HEAVY = ("sympy", "math_verify", "latex2sympy2_extended", "antlr4", "torch", "transformers", "fastapi", "docker")


def _score_in_a_fresh_process(tmp_path, reward: str) -> dict:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"prompt": "1+1?", "completion": r"<answer>2</answer> \boxed{2}", "answer": "2"}) + "\n")
    code = f"""
import json, sys
from rewardsmith.adapters import cli
from rewardsmith.verifiers import pool
seen = []
start = pool.WorkerPool.start
def spy(self):
    seen.append(list(self.preload))
    return start(self)
pool.WorkerPool.start = spy
out = {str(tmp_path / "out.jsonl")!r}
code = cli.main(["score", {str(rows)!r}, "-o", out, "--reward", {reward!r}, "--no-progress"])
heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)
print(json.dumps({{"code": code, "started": seen, "heavy_in_parent": heavy}}))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_score_starts_the_math_pool_up_front_and_imports_nothing_heavy_itself(tmp_path):
    report = _score_in_a_fresh_process(tmp_path, "math")
    assert report["code"] == 0
    assert report["started"] == [list(GradeTask.preload)]  # once, with the preload, before any batch
    assert report["heavy_in_parent"] == []  # sympy & co. load in the workers only


@pytest.mark.slow
def test_score_without_a_math_reward_starts_no_pool(tmp_path):
    report = _score_in_a_fresh_process(tmp_path, "format")
    assert report == {"code": 0, "started": [], "heavy_in_parent": []}
