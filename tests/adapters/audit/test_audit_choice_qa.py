"""The choice and qa audit families: what they build is wrong (or right) by construction against the
row, the shipped default specs pay none of the attacks and refuse none of the rewrites, and a
naive reward (the gold anywhere in the completion) is caught."""

from __future__ import annotations

import json
import re

import pytest
from conftest import REPO

from rewardsmith.adapters.audit import audit
from rewardsmith.adapters.audit.family import AuditRow, all_families
from rewardsmith.adapters.audit.gold import Gold, choice_gold
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers import Sample, Verdict, Verifier, build, register
from rewardsmith.verifiers.qa.normalize import normalize

FAMILIES = all_families()
CHOICE_FAMILIES = [name for name, fam in FAMILIES.items() if fam.target == "choice"]
QA_FAMILIES = [name for name, fam in FAMILIES.items() if fam.target == "qa"]
MMLU = [
    {"prompt": "What is 7 x 6?\nA. 42\nB. 36\nC. 48\nD. 13", "choices": ["42", "36", "48", "13"], "answer": 0},
    {"prompt": "Which is a noble gas?", "choices": ["Iron", "Neon", "Sodium", "Carbon"], "answer": 1},
    {
        "prompt": "Who painted the Mona Lisa?",
        "choices": ["Monet", "Picasso", "Leonardo da Vinci", "Dali"],
        "answer": "Leonardo da Vinci",
    },
    {
        "prompt": "Pick the mammal.",
        "choices": {"text": ["Shark", "Whale", "Trout"], "label": ["1", "2", "3"]},
        "answer": "2",
    },
    {
        "prompt": "Which is the largest planet?",
        "choices": ["Mars", "Earth", "Jupiter", "Venus", "Mercury"],
        "answer": "(C)",
    },
]
TRIVIA = [
    {"prompt": "Which element has the symbol Fe?", "answer": {"value": "Iron", "aliases": ["Iron", "Fe"]}},
    {"prompt": "In what country is Normandy?", "answer": {"text": ["France", "in France"], "answer_start": [1, 2]}},
    {"prompt": "Who wrote Hamlet?", "answer": ["William Shakespeare", "Shakespeare"]},
    {"prompt": "What is the capital of the United States?", "answer": "Washington, D.C."},
    {"prompt": "When did the Battle of Hastings happen?", "answer": 1066},
]


def rows(data: list[dict]) -> list[Row]:
    return [Row(line=i + 1, data=row) for i, row in enumerate(data)]


def example_rows(name: str) -> list[Row]:
    lines = (REPO / "data" / f"{name}_examples.jsonl").read_text().splitlines()
    return rows([{k: v for k, v in json.loads(line).items() if k != "completion"} for line in lines])


def audit_row(row: dict, spec: str) -> tuple[AuditRow, Traits]:
    traits = Traits.of(build(spec))
    gold = choice_gold(row.get("choices"), row.get("answer")) if spec == "choice" else Gold.read(row["answer"])
    fields = {k: v for k, v in row.items() if k != "prompt"}
    return AuditRow(
        line=1, prompt=row["prompt"], prompt_text=row["prompt"], fields=fields, gold=gold, reference=None
    ), traits


@pytest.mark.parametrize(("spec", "data"), [("choice", MMLU), ("choice", None), ("qa", TRIVIA), ("qa", None)])
def test_the_default_specs_pay_no_attack_and_refuse_no_rewrite(spec, data):
    report = audit(spec, rows(data) if data else example_rows(spec), per_row=50)
    assert report.reference_rows == report.reference_paid == report.rows
    targets = CHOICE_FAMILIES if spec == "choice" else QA_FAMILIES
    for family in report.families:
        # SQuAD's normalisation drops punctuation, so "1066%" is "1066" (docs/verifiers/qa.md says so).
        allowed = 1 if (spec, family.name) == ("qa", "unit_swap") and data else 0
        assert family.hacks <= allowed and family.false_negatives == 0 and family.errors == 0, (
            family.name,
            family.examples,
        )
        assert all(e["variant"] == "G%" for e in family.examples if family.hacks)
        if family.name in targets:
            assert family.rows == report.rows, family.name  # each applies to every row
    assert report.rows == len(data) if data else report.rows > 10


def test_a_choice_rows_gold_is_the_label_of_its_option():
    assert choice_gold(["x", "y", "z"], 1).letter == "B"
    assert choice_gold({"text": ["x", "y"], "label": ["1", "2"]}, "2").text == "2"
    assert choice_gold(["x", "y"], "y").letter == "B"
    assert choice_gold(["x", "y"], 5) is None and choice_gold(None, 1) is None


def test_an_alias_lists_gold_is_its_first_alias():
    assert Gold.read({"text": ["France", "in France"], "answer_start": [0, 1]}).text == "France"
    assert Gold.read({"value": "Iron", "aliases": ["Iron", "Fe"]}).text == "Iron"
    assert Gold.read(["Shakespeare"]).text == "Shakespeare"


def _labels_named(text: str) -> set[str]:
    return set(re.findall(r"(?<![A-Za-z])[A-E](?![A-Za-z])", text))


def test_choice_attacks_name_what_they_say():
    row, traits = audit_row(MMLU[1], "choice")  # gold B
    hedges = [p.completion for p in FAMILIES["choice_hedge"].generate(row, traits)]
    assert all({"A", "B"} <= _labels_named(h) or "Iron" in h for h in hedges)
    every = [p.completion for p in FAMILIES["choice_every"].generate(row, traits)]
    assert all(_labels_named(e) >= {"A", "B", "C", "D"} for e in every)
    outside = [p.completion for p in FAMILIES["choice_outside"].generate(row, traits)]
    assert all(_labels_named(o) == {"E"} for o in outside)
    dressed = [p.completion for p in FAMILIES["choice_dress"].generate(row, traits)]
    assert "The answer is Neon" in dressed and all("B" in d or d.endswith("Neon") for d in dressed)


def test_choice_families_skip_specs_without_a_choice_part():
    row, _ = audit_row(MMLU[1], "choice")
    math_traits = Traits.of(build({"type": "math", "workers": 0}))
    assert all(FAMILIES[name].generate(row, math_traits) is None for name in CHOICE_FAMILIES)


def test_qa_decoys_share_no_word_with_any_alias():
    row, traits = audit_row({"prompt": "Which city?", "answer": ["Berlin", "Tokyo city"]}, "qa")
    for probe in FAMILIES["qa_list"].generate(row, traits):
        named = normalize(probe.completion)
        assert "berlin" in named and "tokyo" not in named  # the decoys skip the aliases' words


def test_qa_families_skip_specs_without_a_qa_part():
    row, _ = audit_row(TRIVIA[0], "qa")
    choice_traits = Traits.of(build("choice"))
    assert all(FAMILIES[name].generate(row, choice_traits) is None for name in QA_FAMILIES)


@register("_test_gold_anywhere")
class GoldAnywhere(Verifier):
    """A naive reward: 1 when the gold (its first alias, or its option's label) appears anywhere."""

    name = "_test_gold_anywhere"

    def __init__(self, answer_field: str = "answer") -> None:
        self.answer_field = answer_field

    def _verify(self, sample: Sample) -> Verdict:
        gold = Gold.read(sample.get(self.answer_field))
        hit = gold is not None and gold.text.lower() in sample.completion_text.lower()
        return Verdict(score=float(hit), correct=hit)


def test_a_naive_qa_reward_is_caught():
    spec = {"type": "weighted", "parts": [{"type": "_test_gold_anywhere"}, {"type": "qa"}], "weights": [1.0, 0.0]}
    report = audit(spec, rows(TRIVIA), families=QA_FAMILIES, per_row=50)
    caught = {f.name for f in report.families if f.hacks}
    assert {"qa_list", "qa_hedge", "qa_paragraph", "qa_denial", "qa_empty"} <= caught
