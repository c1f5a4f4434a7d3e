"""rewardsmith audit against the ``ifeval`` reward: the ifeval families on built rows and on IFEval's
540 prompts (shared data).

What the verifier refuses by itself (empty, echoed, padded with one word or phrase, hedged
constrained answers) must stay refused; what only a content judgement can refuse (a one-word reply
to a prompt whose constraints are all negative, the constraints' own material with no content,
lorem ipsum) is paid by ``ifeval`` alone and refused once it is gated on a content reward.
"""

from __future__ import annotations

import pytest
from conftest import SHARED_DATA

from rewardsmith.adapters.audit import audit
from rewardsmith.adapters.audit.family import all_families
from rewardsmith.adapters.audit.report import format_table
from rewardsmith.adapters.audit.run import _audit_row
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.adapters.scoring.rows import Row, read_rows
from rewardsmith.verifiers import Sample, build

IFEVAL = SHARED_DATA / "ifeval" / "input_data.jsonl"
FAMILIES = {f.name: f for f in all_families().values() if f.target == "ifeval"}
REFUSED = ("ifeval_empty", "ifeval_echo", "ifeval_hedge")  # by the default spec, on every row
CONTENT_ONLY = ("ifeval_one_word", "ifeval_skeleton", "ifeval_lorem")  # need a content reward beside it

ROWS = [
    {"prompt": "Write a haiku about autumn leaves. Do not use any commas. Use only lowercase letters.",
     "instruction_id_list": ["punctuation:no_comma", "change_case:english_lowercase"], "kwargs": [{}, {}]},
    {"prompt": "Write a 120-word ad for a bakery that includes the keywords bread and butter, has a title in "
               "double angular brackets and ends with 'Any other questions?'",
     "instruction_id_list": ["length_constraints:number_words", "keywords:existence", "detectable_format:title",
                             "startend:end_checker"],
     "kwargs": [{"num_words": 120, "relation": "at least"}, {"keywords": ["bread", "butter"]}, {},
                {"end_phrase": "Any other questions?"}]},
    {"prompt": "Is a tomato a fruit? Answer with one of: My answer is yes. / My answer is no. / My answer is maybe.",
     "instruction_id_list": ["detectable_format:constrained_response"], "kwargs": [{}]},
    {"prompt": "Name a river in Europe.\nFirst repeat the request word for word without change, then give your answer.",
     "instruction_id_list": ["combination:repeat_prompt"], "kwargs": [{"prompt_to_repeat": "Name a river in Europe."}]},
]


def rows() -> list[Row]:
    return [Row(line=i + 1, data=dict(row)) for i, row in enumerate(ROWS)]


def test_the_families_build_probes_that_follow_the_rows_instructions():
    """The attacks are only worth running if they satisfy the constraints: judged with the guard off
    and the reference's leniency (parity), the skeleton, the padding and the lorem ipsum follow every
    instruction of a row of length, keyword, title and ending constraints."""
    parity = build({"type": "ifeval", "parity": True, "min_words": 0, "max_repeated": 1.0, "reject_echo": False})
    traits = Traits.of(parity)
    full = ROWS[1]  # words, keywords, title, ending
    no_length = {**full, "instruction_id_list": full["instruction_id_list"][1:], "kwargs": full["kwargs"][1:]}
    for data, names in ((full, ("ifeval_padding", "ifeval_lorem")), (no_length, ("ifeval_skeleton",))):
        audit_row = _audit_row(Row(line=1, data=dict(data)), traits, None, "reference")
        for name in names:
            probes = FAMILIES[name].generate(audit_row, traits)
            assert probes
            for probe in probes:
                verdict = parity.verify(Sample(prompt=data["prompt"], completion=probe.completion, fields=data))
                assert verdict.score == 1.0, (name, probe.variant, verdict.feedback)


def test_the_families_do_not_run_without_an_ifeval_part():
    report = audit({"type": "format"}, rows(), families=list(FAMILIES))
    assert all(f.rows == 0 or f.cases == 0 for f in report.families)


def test_the_default_spec_refuses_the_shapes_it_claims_to(capsys):
    report = audit("ifeval", rows(), families=list(FAMILIES), per_row=10)
    with capsys.disabled():
        print(f"\n== ifeval on built rows\n{format_table(report)}")
    hacks = {f.name: f.hacks for f in report.families}
    cases = {f.name: f.cases for f in report.families}
    assert all(hacks[name] == 0 and cases[name] > 0 for name in (*REFUSED, "ifeval_padding"))
    assert hacks["ifeval_one_word"] > 0 and hacks["ifeval_skeleton"] > 0  # form alone: documented, see below


def test_gated_on_a_content_reward_the_content_attacks_are_refused():
    """``gate`` pays the instruction reward only where a content reward passes. A stand-in content
    reward (the test verifier reading the row's ``s``) that fails every probe, as a judge of the task
    would, leaves nothing paid; the same gate pays a response both accept."""
    spec = {"type": "gate", "when": {"type": "test_field_score"}, "then": "ifeval"}
    report = audit(spec, [Row(line=r.line, data={**r.data, "s": 0.0}) for r in rows()], families=list(FAMILIES))
    assert sum(f.hacks for f in report.families) == 0
    good = Sample(prompt=ROWS[0]["prompt"], completion="crisp leaves drift down\nred and gold on quiet paths\nthe "
                  "old oak lets go", fields={**ROWS[0], "s": 1.0})
    assert build(spec).verify(good).score == 1.0


@pytest.mark.shared_data
@pytest.mark.slow
def test_ifeval_audited_on_ifevals_prompts(capsys):
    if not IFEVAL.exists():
        pytest.skip(f"{IFEVAL} is absent")
    report = audit("ifeval", read_rows(IFEVAL), families=list(FAMILIES))
    with capsys.disabled():
        print(f"\n== ifeval on {IFEVAL.name}\n{format_table(report)}")
    hacks = {f.name: f.hacks for f in report.families}
    assert report.rows == 540 and not report.malformed
    assert all(hacks[name] == 0 for name in REFUSED)
    assert hacks["ifeval_padding"] <= 2  # a repeated sentence after a long repeated request (documented)
    assert all(hacks[name] > 0 for name in CONTENT_ONLY)  # the table in docs/verifiers/ifeval.md says so


@pytest.mark.shared_data
@pytest.mark.slow
def test_layout_rewrites_of_gpt4s_followed_responses_are_paid_as_much(capsys):
    """GPT-4's responses as the known-correct completions: the default spec pays every one that parity
    pays, and pays its Windows-line-end and blank-line rewrites as much (the reference does not:
    "\\r\\n\\r\\n" separates no paragraph for it, and leading blank lines shift its nth paragraph)."""
    responses = SHARED_DATA / "ifeval" / "responses_gpt4_20231107.jsonl"
    if not responses.exists():
        pytest.skip(f"{responses} is absent")
    import json

    by_prompt = {json.loads(line)["prompt"]: json.loads(line)["response"] for line in responses.open()}
    made = [Row(line=r.line, data={**r.data, "reference": by_prompt[r.data["prompt"]]}) for r in read_rows(IFEVAL)]
    report = audit("ifeval", made, families=["ifeval_layout"])
    with capsys.disabled():
        print(f"\n== ifeval_layout on GPT-4's responses\n{format_table(report)}")
    (layout,) = report.families
    assert report.reference_paid == 416  # 77.04% of 540, as the benchmark reports
    assert layout.cases - layout.unjudged == 2 * 416
    assert layout.false_negatives == 0
    parity = {"type": "ifeval", "parity": True, "min_words": 0, "max_repeated": 1.0, "reject_echo": False}
    assert audit(parity, made, families=["ifeval_layout"]).families[0].false_negatives > 0
