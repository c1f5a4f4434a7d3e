"""The survey of reasoning-gym's scorers keeps the policy honest: the datasets marked unsafe are exactly
those whose own scorer pays a cheat in full, and through the verifier every dataset's gold still pays
(the default stricter checks refuse no right answer the generators make)."""

from __future__ import annotations

import json

import pytest
from conftest import require_gym

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.reasoning_gym.policy import UNSAFE
from rewardsmith.verifiers.reasoning_gym.survey import CHEATS, SKIPPED, attack, pays_cheats, probe


@pytest.fixture(scope="module")
def survey():
    require_gym()
    from reasoning_gym.factory import DATASETS

    return {name: probe(name) for name in sorted(DATASETS) if name not in SKIPPED}


def test_attacks_are_built_from_the_gold():
    assert attack("list", "7", "3", "q") == "3, 7, 3"
    assert attack("gold+junk", "7", "3", "q").startswith("7 ")
    assert attack("echo", "7", "3", "What is 3+4?") == "What is 3+4?"
    assert attack("empty", "7", "3", "q") == ""


@pytest.mark.slow
def test_the_unsafe_list_is_the_survey(survey):
    paying = {name: pays_cheats(row) for name, row in survey.items() if pays_cheats(row)}
    assert set(paying) == set(UNSAFE), paying


@pytest.mark.slow
def test_every_dataset_round_trips_through_json_and_its_gold_pays_through_the_verifier(survey):
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    verifier = build({"type": "reasoning_gym", "workers": 0})
    refused = {}
    for name, row in survey.items():
        if row["gold"] < 1.0:  # many-solution puzzles: the generator's answer field is not a solution
            continue
        for made in make_rows(name, size=3, seed=0):
            made = json.loads(json.dumps(made))
            gold = made["answer"] if isinstance(made["answer"], str) else json.dumps(made["answer"])
            verdict = verifier.verify(Sample(prompt=made["prompt"], completion=f"<answer>{gold}</answer>", fields=made))
            if verdict.score != 1.0:
                refused[name] = verdict.feedback
    assert not refused


@pytest.mark.slow
def test_no_cheat_pays_through_the_verifier(survey):
    """The attacks the survey ran on the raw scorers, now through the verifier: none pays, for any dataset."""
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    verifier = build({"type": "reasoning_gym", "workers": 0})
    paid = {}
    for name in survey:
        made = make_rows(name, size=3, seed=0)
        golds = [m["answer"] if isinstance(m["answer"], str) else json.dumps(m["answer"]) for m in made]
        for i, row in enumerate(made):
            wrong = next((g for g in golds if g != golds[i]), "1" if golds[i] != "1" else "2")
            for kind in CHEATS:
                if kind == "wrong" and name != "puzzle24":
                    continue  # another entry's gold may be right here too (same count, another valid solution)
                answer = attack(kind, golds[i], wrong, row["prompt"])
                verdict = verifier.verify(
                    Sample(prompt=row["prompt"], completion=f"<answer>{answer}</answer>", fields=row)
                )
                if verdict.score > 0:
                    paid.setdefault(name, []).append(kind)
    assert not paid
