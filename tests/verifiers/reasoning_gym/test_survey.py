"""The survey of reasoning-gym's scorers keeps the policy honest, and through the verifier (the scorers
in the sandbox, behind the evaluation boundary) every dataset's gold still pays and no cheat does.
(That the survey itself reruns to survey.json is in test_reasoning_gym_isolation.py.)"""

from __future__ import annotations

import json

import pytest
from conftest import require_gym

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.reasoning_gym.survey import CHEATS, SKIPPED, attack, load, solution


def test_attacks_are_built_from_the_gold():
    assert attack("list", "7", "3", "q") == "3, 7, 3"
    assert attack("gold+junk", "7", "3", "q").startswith("7 ")
    assert attack("echo", "7", "3", "What is 3+4?") == "What is 3+4?"
    assert attack("empty", "7", "3", "q") == ""


def test_the_duplicate_key_attack_gives_the_first_key_another_value_first():
    made = attack("dupkey", '{"0": 1, "1": 2}', "x", "q")
    assert made == '{"0": 2, "0": 1, "1": 2}'
    assert json.loads(made) == {"0": 1, "1": 2}  # what Python's json (and so the scorer) reads
    assert attack("dupkey", "42", "x", "q") is None  # not a JSON object: no such attack


def test_a_many_solution_puzzle_is_probed_with_its_known_solution():
    assert solution({"answer": None, "metadata": {"possible_answer": {"0": 1}}}) == '{"0": 1}'
    assert solution({"answer": "7", "metadata": {}}) == "7"


@pytest.fixture(scope="module")
def made_rows():
    require_gym()
    from reasoning_gym.factory import DATASETS

    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    return {name: [json.loads(json.dumps(r)) for r in make_rows(name, size=3, seed=0)]
            for name in sorted(DATASETS) if name not in SKIPPED}


@pytest.mark.slow
def test_every_dataset_round_trips_through_json_and_its_gold_pays_through_the_verifier(made_rows):
    surveyed = load()
    samples, names = [], []
    for name, rows in made_rows.items():
        if (surveyed[name].get("gold") or 0) < 1.0 or rows[0]["answer"] is None:
            continue  # many-solution puzzles: the generator's answer field is not a solution
        for row in rows:
            gold = row["answer"] if isinstance(row["answer"], str) else json.dumps(row["answer"])
            samples.append(Sample(prompt=row["prompt"], completion=f"<answer>{gold}</answer>", fields=row))
            names.append(name)
    verdicts = build("reasoning_gym").verify_batch(samples)
    refused = {name: v.feedback for name, v in zip(names, verdicts, strict=True) if v.score != 1.0}
    assert not refused
    assert len(set(names)) > 90


@pytest.mark.slow
def test_no_cheat_pays_through_the_verifier(made_rows):
    """The attacks the survey ran on the raw scorers, now through the verifier: none pays, for any dataset."""
    samples, labels = [], []
    for name, rows in made_rows.items():
        golds = [solution({"answer": r["answer"], "metadata": r["metadata"]}) for r in rows]
        for i, row in enumerate(rows):
            wrong = next((g for g in golds if g != golds[i]), "1" if golds[i] != "1" else "2")
            for kind in CHEATS:
                if kind == "wrong" and name != "puzzle24":
                    continue  # another entry's gold may be right here too (same count, another valid solution)
                answer = attack(kind, golds[i], wrong, row["prompt"])
                if answer is not None:
                    samples.append(Sample(prompt=row["prompt"], completion=f"<answer>{answer}</answer>", fields=row))
                    labels.append((name, kind))
    verdicts = build("reasoning_gym").verify_batch(samples)
    paid = sorted({label for label, v in zip(labels, verdicts, strict=True) if v.score > 0})
    errors = sorted({label for label, v in zip(labels, verdicts, strict=True) if v.status == "error"})
    assert not paid and not errors
