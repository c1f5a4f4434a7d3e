"""No answer text runs on the scoring host, and no answer reaches another's verdict (issue 35, section 1).

reasoning-gym's scorers hand some answers to ``eval`` or sympy's ``parse_expr``. Each test first shows
the attack is live where the scorer runs on this host (a subprocess calling reasoning-gym's scorer as a
host pool would), then that through the ``reasoning_gym`` verifier, on Docker and on the local sandbox
with bubblewrap, it writes nothing on the host and changes no later verdict."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import require_docker, require_gym

from rewardsmith.verifiers import Sample, build

# Answers a scorer that evaluates text would run: each creates the file MARKER.
PAYLOADS = [
    "__import__('os').makedirs('MARKER')",
    "[__import__('os').makedirs('MARKER')]",
    "exec(\"open('MARKER', 'w').write('x')\")",
    "1 + 0*len(__import__('os').makedirs('MARKER') or '')",
]
# Datasets whose scorer the survey found evaluating text, one per way (sympy's parser, plain eval).
EVALUATING = ("puzzle24", "spiral_matrix", "polynomial_multiplication", "n_queens")


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def backend_name(request):
    require_gym()
    if request.param == "docker":
        require_docker()
    return request.param


@pytest.fixture(scope="module")
def rows():
    require_gym()
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    return {name: make_rows(name, size=3, seed=0) for name in EVALUATING}


def on_the_host(script: str, cwd) -> subprocess.CompletedProcess:
    """Run reasoning-gym's scorers in a plain host process, as a host pool does (the control)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=True)


def completion(answer: str) -> str:
    return f"<think>working</think><answer>{answer}</answer>"


def test_the_survey_found_the_datasets_that_evaluate_text():
    from rewardsmith.verifiers.reasoning_gym.survey import evaluates_text, load

    found = {name for name, row in load().items() if evaluates_text(row)}
    assert set(EVALUATING) <= found


def test_a_payload_runs_on_the_host_when_the_scorer_does(rows, tmp_path):
    """The control: these answers are live. reasoning-gym's own scorer, called on this host, runs them."""
    for name in EVALUATING:
        row = rows[name][0]
        for k, payload in enumerate(PAYLOADS):
            marker = tmp_path / f"{name}-{k}"
            entry = {"question": row["prompt"], "answer": row["answer"], "metadata": row["metadata"]}
            on_the_host(f"""
                import json, reasoning_gym
                entry = json.loads({json.dumps(json.dumps(entry))})
                try:
                    reasoning_gym.get_score_answer_fn({name!r})({payload.replace("MARKER", str(marker))!r}, entry)
                except Exception:
                    pass
                """, tmp_path)
        made = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(name))
        assert made, f"no payload ran in {name}'s own scorer on the host: the test proves nothing there"


def test_through_the_verifier_no_payload_writes_on_the_host(rows, tmp_path, backend_name):
    verifier = build({"type": "reasoning_gym", "backend": backend_name})
    samples, expected = [], []
    for name in EVALUATING:
        row = rows[name][0]
        for k, payload in enumerate(PAYLOADS):
            samples.append(Sample(prompt=row["prompt"], fields=row,
                                  completion=completion(payload.replace("MARKER", str(tmp_path / f"{name}-{k}")))))
            expected.append(0.0)
        samples.append(Sample(prompt=row["prompt"], fields=row, completion=completion(row["answer"])))
        expected.append(1.0)
    verdicts = verifier.verify_batch(samples)
    assert [v.score for v in verdicts] == expected, [(v.score, v.status, v.feedback) for v in verdicts]
    assert all(v.status != "error" for v in verdicts)
    assert list(tmp_path.iterdir()) == []


POISON = ("exec(\"import reasoning_gym.games.puzzle24 as m; "
          "m.parse_expr = lambda *a, **k: 24\")")


def _wrong_with_the_puzzles_numbers(row) -> str:
    """The puzzle's own four numbers, added: wrong (a sum of 24 would be right; such rows are skipped)."""
    return " + ".join(str(n) for n in row["metadata"]["numbers"])


def test_a_poisoning_answer_pays_later_wrong_answers_where_the_scorer_shares_a_process(rows, tmp_path):
    """The control: in one host process, after the poison every later wrong answer is paid in full."""
    targets = [r for r in rows["puzzle24"] if sum(r["metadata"]["numbers"]) != 24]
    entries = [{"question": r["prompt"], "answer": r["answer"], "metadata": r["metadata"]} for r in targets]
    wrong = [_wrong_with_the_puzzles_numbers(r) for r in targets]
    out = on_the_host(f"""
        import json, reasoning_gym
        score = reasoning_gym.get_score_answer_fn("puzzle24")
        entries = json.loads({json.dumps(json.dumps(entries))})
        wrong = {wrong!r}
        before = [score(a, e) for a, e in zip(wrong, entries)]
        score({POISON!r}, entries[0])
        print(json.dumps([before, [score(a, e) for a, e in zip(wrong, entries)]]))
        """, tmp_path)
    before, after = json.loads(out.stdout)
    assert max(before) < 1.0 and min(after) == 1.0


def test_a_poisoning_answer_changes_no_later_verdict(rows, backend_name):
    """In one process, like a real run: the poison, then wrong answers in the same batch and the next."""
    verifier = build({"type": "reasoning_gym", "backend": backend_name})
    targets = [r for r in rows["puzzle24"] if sum(r["metadata"]["numbers"]) != 24]

    def batch(with_poison: bool) -> list[Sample]:
        made = [Sample(prompt=targets[0]["prompt"], fields=targets[0], completion=completion(POISON))] * with_poison
        for row in targets:
            wrong = _wrong_with_the_puzzles_numbers(row)
            made.append(Sample(prompt=row["prompt"], fields=row, completion=completion(wrong)))
            made.append(Sample(prompt=row["prompt"], fields=row, completion=completion(row["answer"])))
        return made

    first = verifier.verify_batch(batch(True))
    second = verifier.verify_batch(batch(False))
    assert [v.score for v in first] == [0.0] + [0.0, 1.0] * len(targets)
    assert [v.score for v in second] == [0.0, 1.0] * len(targets)


def test_an_answer_cannot_read_the_gold_out_of_the_scorer(rows, backend_name):
    """n_queens' scorer evaluates the answer where its own ``entry`` (holding every valid board) is a
    local: an answer naming it would be reading the verdict's source."""
    verifier = build({"type": "reasoning_gym", "backend": backend_name, "partial": True})
    row = rows["n_queens"][0]
    reads = ["entry", "valid_solutions", "answer", "oracle_answer", "self"]
    verdicts = verifier.verify_batch([Sample(prompt=row["prompt"], fields=row, completion=completion(text))
                                      for text in reads])
    assert [v.score for v in verdicts] == [0.0] * len(reads)


def test_a_job_whose_scoring_parent_dies_charges_only_the_answer_it_was_scoring(backend_name):
    """The protocol beneath: with the boundary off (as the survey runs), an answer that kills the job's
    parent ends the job; that answer is charged (crash), every other answer is scored in a new job."""
    require_gym()
    import reasoning_gym

    from rewardsmith.sandbox import get_backend
    from rewardsmith.verifiers.isolated import ScoreItem, score_isolated

    data = reasoning_gym.create_dataset("puzzle24", size=1, seed=0)
    entry = json.loads(json.dumps(data[0]))
    kill = "__import__('os').kill(__import__('os').getppid(), 9)"
    answers = [entry["answer"], "1+2", kill, entry["answer"], "3*3"]
    items = [ScoreItem("puzzle24", a, entry) for a in answers]
    results = score_isolated(items, "reasoning_gym", get_backend(backend_name), guard=False, jobs=1)
    assert [r.kind for r in results] == ["score", "score", "crash", "score", "score"]
    assert [r.value for i, r in enumerate(results) if i != 2] == [1.0, 0.01, 1.0, 0.01]


def test_the_sandbox_image_and_pyproject_pin_the_same_scorers():
    from conftest import REPO

    wanted = [line for line in (REPO / "sandbox" / "image" / "scorers.txt").read_text().splitlines()
              if line and not line.startswith("#")]
    assert wanted == ["reasoning-gym==0.1.25"]
    assert '"reasoning-gym==0.1.25"' in (REPO / "pyproject.toml").read_text()
    build_script = (REPO / "sandbox" / "image" / "build_offline.sh").read_text()
    from rewardsmith.sandbox.backend import IMAGE_VERSION

    assert f"image_version={IMAGE_VERSION}\n" in build_script
    dockerfile = (REPO / "sandbox" / "image" / "Dockerfile").read_text()
    assert f'LABEL rewardsmith.sandbox.version="{IMAGE_VERSION}"' in dockerfile


@pytest.mark.slow
@pytest.mark.docker
def test_the_survey_reruns_to_what_survey_json_and_the_docs_say():
    """The policy and the docs table come from survey.json: rerun the survey (the scorers as they are,
    in the sandbox) and require the same cheats paid, the same scorers evaluating text, the same golds."""
    require_gym()
    require_docker()
    from conftest import REPO
    from reasoning_gym.factory import DATASETS

    from rewardsmith.sandbox import get_backend
    from rewardsmith.verifiers.reasoning_gym import policy, survey

    names = [n for n in sorted(DATASETS) if n not in survey.SKIPPED]
    fresh = survey.run_survey(names, get_backend("docker"))
    stored = survey.load()
    assert set(stored) == set(names)

    def answers(row):
        return survey.pays_cheats(row), sorted(survey.evaluates_text(row)), (row.get("gold") or 0) >= survey.FULL

    assert {n: answers(fresh[n]) for n in names} == {n: answers(stored[n]) for n in names}
    assert set(policy.UNSAFE) == {n for n in names if survey.pays_cheats(stored[n])}
    docs = (REPO / "docs" / "verifiers" / "reasoning_gym.md").read_text()
    assert "\n".join(survey.table(stored)) in docs


def _probe_rows(rows, marker_dir) -> tuple[list[dict], list[float]]:
    """Rows for the consumers: every payload on an evaluating dataset, then the poison followed by wrong
    answers and right ones (in the order a run would see them); and the reward each must get."""
    made, expected = [], []
    for name in EVALUATING:
        row = rows[name][0]
        for k, payload in enumerate(PAYLOADS):
            made.append({**row, "completion": completion(payload.replace("MARKER", str(marker_dir / f"{name}-{k}")))})
            expected.append(0.0)
    targets = [r for r in rows["puzzle24"] if sum(r["metadata"]["numbers"]) != 24]
    made.append({**targets[0], "completion": completion(POISON)})
    expected.append(0.0)
    for row in targets:
        made.append({**row, "completion": completion(_wrong_with_the_puzzles_numbers(row))})
        made.append({**row, "completion": completion(row["answer"])})
        expected += [0.0, 1.0]
    return made, expected


@pytest.mark.docker
def test_rewardsmith_score_runs_no_answer_on_the_host(rows, tmp_path):
    require_docker()
    markers = tmp_path / "markers"
    markers.mkdir()
    made, expected = _probe_rows(rows, markers)
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in made))
    subprocess.run([sys.executable, "-m", "rewardsmith.adapters.cli", "score", str(source), "-o", str(out),
                    "--reward", '{"type": "reasoning_gym", "backend": "docker"}'], check=True, capture_output=True,
                   timeout=600)
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reward"] for r in scored] == expected
    assert list(markers.iterdir()) == []


@pytest.mark.docker
def test_the_reward_server_runs_no_answer_on_the_host(rows, tmp_path):
    import httpx
    from server_helpers import start_cli_server

    require_docker()
    made, expected = _probe_rows(rows, tmp_path)
    proc, url = start_cli_server("--reward", '{"type": "reasoning_gym", "backend": "docker"}')
    try:
        samples = [{"prompt": r["prompt"], "completion": r["completion"], "answer": r["answer"],
                    "metadata": r["metadata"]} for r in made]
        first = httpx.post(f"{url}/v1/score", json={"samples": samples[: len(PAYLOADS) * len(EVALUATING) + 1]},
                           timeout=600)
        second = httpx.post(f"{url}/v1/score", json={"samples": samples[len(PAYLOADS) * len(EVALUATING) + 1 :]},
                            timeout=600)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert first.status_code == second.status_code == 200
    assert first.json()["rewards"] + second.json()["rewards"] == expected
    assert list(tmp_path.iterdir()) == []


@pytest.mark.docker
def test_the_trl_reward_function_runs_no_answer_on_the_host(rows, tmp_path):
    from rewardsmith.adapters.trainers.trl import reward_funcs

    require_docker()
    made, expected = _probe_rows(rows, tmp_path)
    (reward,) = reward_funcs({"type": "reasoning_gym", "backend": "docker"})
    got = []
    for part in (made[: len(made) // 2], made[len(made) // 2 :]):  # two steps of one run, in one process
        got += reward([r["prompt"] for r in part], [r["completion"] for r in part],
                      answer=[r["answer"] for r in part], metadata=[r["metadata"] for r in part])
    assert got == expected
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def math_rows():
    require_gym()
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    names = ("puzzle24", "countdown", "simple_integration", "intermediate_integration", "polynomial_multiplication")
    return {name: make_rows(name, size=3, seed=0) for name in names}


def _letting_the_scorer_do_the_task(name: str, row: dict) -> list[str]:
    """Answers that are not the task's answer but an expression a computer algebra system turns into it."""
    meta = row["metadata"]
    if name == "puzzle24":
        a, b, c, d = meta["numbers"]
        return [f"factorial(floor(pi) + sign({a}))*sign({b})*sign({c})*sign({d})",
                f"floor(E)**floor(pi)*floor(pi)*sign({a})*sign({b})*sign({c})*sign({d})",
                f"24e0 + 0e0*({a} + {b} + {c} + {d})"]
    if name == "countdown":
        numbers = json.loads(meta["numbers"]) if isinstance(meta["numbers"], str) else meta["numbers"]
        return [f"{meta['target']}e0 + 0e0*({' + '.join(map(str, numbers))})",
                f"{meta['target']}.0 + 0*({' + '.join(map(str, numbers))})"]
    if name in ("simple_integration", "intermediate_integration"):
        x = meta["variable"]
        return [f"Integral({meta['integrand']}, {x}) + C", f"integrate({meta['integrand']}, {x}) + C"]
    return [f"expand({meta['polynomial_expr']})"]


def _honest_spellings(name: str, row: dict) -> list[str]:
    gold = row["answer"]
    if name in ("puzzle24", "countdown"):
        return [f"({gold})", gold.replace(" ", "")]
    if name in ("simple_integration", "intermediate_integration"):
        return [gold.replace(" + C", ""), "C + " + gold.replace(" + C", "")]
    return [" + ".join(reversed(gold.replace(" - ", " + -").split(" + ")))]


def test_an_answer_cannot_make_the_scorer_do_the_task(math_rows, backend_name):
    """The evaluation boundary names no CAS operation (Integral, integrate, expand, factorial, floor, sign)
    and an arithmetic task's answer is whole numbers and + - * / only; the honest spellings still pay."""
    verifier = build({"type": "reasoning_gym", "backend": backend_name})
    samples, expected, labels = [], [], []
    for name, made in math_rows.items():
        for row in made:
            for text in _letting_the_scorer_do_the_task(name, row):
                samples.append(Sample(prompt=row["prompt"], fields=row, completion=completion(text)))
                expected.append(0.0)
                labels.append((name, text))
            for text in _honest_spellings(name, row):
                samples.append(Sample(prompt=row["prompt"], fields=row, completion=completion(text)))
                expected.append(1.0)
                labels.append((name, text))
    verdicts = verifier.verify_batch(samples)
    wrong = [(label, v.score, v.feedback) for label, v, e in zip(labels, verdicts, expected, strict=True)
             if v.score != e]
    assert wrong == []
    assert all(v.status != "error" for v in verdicts)
