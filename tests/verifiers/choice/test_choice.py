"""The ``choice`` verifier: right answers pay in every dress and row shape; every way of naming more
than one option, a letter outside the options, a denial or no commitment scores 0."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith.verifiers import Sample, build

OPTIONS = ["Paris", "London", "Berlin", "Madrid"]  # gold B (index 1) below
CHOICE = build("choice")


def judge(completion, choices=OPTIONS, answer=1, spec=None, **fields):
    verifier = CHOICE if spec is None else build(spec)
    return verifier.verify(
        Sample(
            prompt="Which city is the capital of England?",
            completion=completion,
            fields={"choices": choices, "answer": answer, **fields},
        )
    )


@pytest.mark.parametrize(
    "completion",
    [
        "B",
        "(B)",
        "B)",
        "B.",
        "**B**",
        "[B]",
        "option B",
        "Option (B)",
        "b",
        "(b)",
        "The answer is B.",
        "The answer is (B).",
        "The correct answer is B) London.",
        "Answer: B",
        "Final answer: **B**",
        "\\boxed{B}",
        "\\boxed{\\text{(B)}}",
        "$\\boxed{B}$",
        "<answer>B</answer>",
        "<answer>(B) London</answer>",
        "<think>A seems close, but C? No. B.</think><answer>B</answer>",
        "London",
        "The answer is London.",
        "<answer>B: London</answer>",
        "B is correct.",
        "Paris is in France, Berlin in Germany.\n\nThe answer is B.",  # option texts in the working
    ],
)
def test_one_committed_option_pays(completion):
    verdict = judge(completion)
    assert (verdict.score, verdict.correct, verdict.status) == (1.0, True, "ok"), verdict.feedback


@pytest.mark.parametrize("completion", ["The answer is A.", "\\boxed{C}", "Madrid", "<answer>D</answer>"])
def test_another_option_is_wrong(completion):
    verdict = judge(completion)
    assert (verdict.score, verdict.correct, verdict.status) == (0.0, False, "ok")


@pytest.mark.parametrize(
    "completion",
    [
        "A or B",
        "B or C",
        "The answer is A or B.",
        "The answer is B (or maybe C).",
        "A, B, C, D",
        "(A), (B), (C), (D)",
        "The answer is A, B, C or D.",
        "\\boxed{A, B, C, D}",
        "\\boxed{B} or \\boxed{C}",
        "\\boxed{C} \\boxed{B}",
        "\\boxed{B}, or maybe C",
        "\\boxed{B} (or C)",
        "<answer>B</answer><answer>C</answer>",
        "<answer>B</answer>\nTo be safe: \\boxed{C}",
        "<answer>(B) London or C</answer>",
        "The answer is B/C.",
        "The answer is B and C.",
        "\\boxed{\\text{(B) or C}}",
        "<answer>B</answer> Actually, C.",
        "The answer is London or Berlin.",
        "(B) Paris",
        "The answer is B: Berlin.",
        "A maybe B",
        "The answer is A perhaps B.",
        "B, though A could be too",
    ],
)
def test_several_options_are_a_hedge(completion):
    verdict = judge(completion)
    assert (verdict.score, verdict.correct) == (0.0, False), completion
    assert "hedge" in verdict.feedback or verdict.status == "no_answer", verdict.feedback


@pytest.mark.parametrize(
    "completion",
    ["The answer is B, not C.", "I think B", "The answer is B according to the key", "\\boxed{B \\text{ for now}}",
     "Answer: B (my gut says so)", "<answer>B unless I misread</answer>"],
)
def test_a_statement_in_no_shape_of_one_option_names_none(completion):
    """The value grammar (choice.reading.in_shape) is closed: words around the label make no shape, whatever
    they say, so no verdict depends on reading a denial or a doubt."""
    verdict = judge(completion)
    assert (verdict.score, verdict.status) == (0.0, "no_answer") and "documented shape" in verdict.feedback, verdict


def test_a_sentence_after_the_final_answer_makes_it_no_commitment_and_an_offer_in_it_a_hedge():
    for completion in (
        "The answer is B. A is wrong because Paris is in France.",
        "Answer: B. C and D are cities elsewhere.",
        "The correct answer is Option B. A is in France.",
        "The answer is B, because London is the capital.",
    ):
        verdict = judge(completion)
        assert (verdict.score, verdict.status) == (0.0, "no_answer") and "follows it" in verdict.feedback, completion
    assert judge("A is wrong because Paris is in France. The answer is B.").score == 1.0  # working goes first
    verdict = judge("The answer is B. A or C might work too.")
    assert verdict.score == 0.0 and "hedge" in verdict.feedback


@pytest.mark.parametrize(
    "completion",
    ["the answer is b or c", "The answer is (b), maybe (c).", "\\boxed{B}, or maybe c", "answer: (a) or (b)"],
)
def test_lowercase_letters_hedge_too(completion):
    verdict = judge(completion)
    assert verdict.score == 0.0 and "hedge" in verdict.feedback, verdict.feedback


def test_every_option_says_so():
    verdict = judge("The answer is A, B, C, D.")
    assert verdict.score == 0.0 and "every option" in verdict.feedback


@pytest.mark.parametrize("completion", ["E", "The answer is E.", "\\boxed{F}", "<answer>(Z)</answer>"])
def test_a_letter_outside_the_options_is_wrong(completion):
    verdict = judge(completion)
    assert (verdict.score, verdict.status) == (0.0, "ok") and "not one of the options" in verdict.feedback


@pytest.mark.parametrize(
    "completion",
    [
        "The answer is not B.",
        "It is not \\boxed{B}.",
        "The answer is neither B nor C.",
        "Not B",
        "not (B)",
        "The answer is definitely not B.",
        "<answer>not B</answer>",
        "Anything except B.",
        "The answer is B? No.",
        "\\boxed{B}, but that is wrong.",
        "I first thought \\boxed{B}, but that is incorrect.",
    ],
)
def test_a_denied_option_does_not_pay(completion):
    verdict = judge(completion)
    assert verdict.score == 0.0 and verdict.correct is not True, (completion, verdict.feedback)


@pytest.mark.parametrize(
    "completion",
    [
        "",
        "I am not sure.",
        "Let me think about the options one by one.\nFirst, Paris is in France.",
        "<think>The answer is B.</think>",
        "<think>\\boxed{B}",
        "<!-- The answer is B -->",
        "\\boxed{}",
        "<answer></answer>",
        "The answer is the city on the Thames.",
        "Which city is the capital of England?\n(A) Paris (B) London (C) Berlin (D) Madrid",  # the prompt echoed
    ],
)
def test_no_committed_option_is_no_answer(completion):
    verdict = judge(completion)
    assert verdict.score == 0.0 and verdict.correct is not True
    assert verdict.status in ("no_answer", "ok")


def test_an_echo_of_the_options_in_a_phrase_is_a_hedge():
    verdict = judge("The answer is: (A) Paris (B) London (C) Berlin (D) Madrid")
    assert verdict.score == 0.0 and "hedge" in verdict.feedback


def test_reasoning_only_letters_are_not_the_answer():
    verdict = judge("<think>B is right.</think>\nThe answer is C.")
    assert verdict.score == 0.0 and verdict.details["named"] == ["C"]


# ------------------------------------------------------------------ row shapes


@pytest.mark.parametrize("answer", [1, "B", "(B)", "b", "London", " london ", "1"])
def test_gold_shapes(answer):
    assert judge("The answer is B.", answer=answer).score == 1.0
    assert judge("The answer is C.", answer=answer).score == 0.0


def test_arc_shape_with_letter_and_digit_labels():
    arc = {"text": ["Paris", "London", "Berlin"], "label": ["A", "B", "C"]}
    assert judge("The answer is B.", choices=arc, answer="B").score == 1.0
    digits = {"text": ["Paris", "London", "Berlin"], "label": ["1", "2", "3"]}
    assert judge("The answer is 2.", choices=digits, answer="2").score == 1.0
    assert judge("The answer is 3.", choices=digits, answer="2").score == 0.0
    assert judge("The answer is 2 or 3.", choices=digits, answer="2").score == 0.0
    out = judge("The answer is B.", choices=digits, answer="2")
    assert out.score == 0.0 and "not one of the options" in out.feedback


def test_mapping_shape_and_configurable_fields():
    spec = {"type": "choice", "choices_field": "doc.options", "answer_field": "doc.answerKey"}
    row = {"doc": {"options": {"A": "Paris", "B": "London"}, "answerKey": "B"}}
    verifier = build(spec)
    assert verifier.verify(Sample(completion="\\boxed{B}", fields=row)).score == 1.0
    assert verifier.verify(Sample(completion="\\boxed{A}", fields=row)).score == 0.0


def test_text_answers_can_be_turned_off():
    assert judge("London", spec={"type": "choice", "accept_text": False}).status == "no_answer"


def test_answer_from_limits_the_forms():
    spec = {"type": "choice", "answer_from": ["answer_tag"]}
    assert judge("The answer is B.", spec=spec).status == "no_answer"
    assert judge("<answer>B</answer>", spec=spec).score == 1.0


@pytest.mark.parametrize(
    ("choices", "answer", "missing"),
    [
        (None, 1, "choices"),
        ([], 1, None),
        ("Paris London", 1, None),
        (OPTIONS, None, "answer"),
        (OPTIONS, 7, None),
        (OPTIONS, "E", None),
        (OPTIONS, "Rome", None),
        (OPTIONS, True, None),
        ({"text": ["a", "b"], "label": ["A"]}, 0, None),
        (["x", "x"], "x", None),
    ],
)
def test_a_row_without_readable_options_or_gold_is_invalid_input(choices, answer, missing):
    fields = {} if choices is None else {"choices": choices}
    if answer is not None:
        fields["answer"] = answer
    verdict = CHOICE.verify(Sample(completion="B", fields=fields))
    assert verdict.status == "invalid_input"
    assert verdict.details.get("missing_field") == missing


def test_no_completion_is_invalid_input_and_chat_completions_read_the_last_turn():
    assert CHOICE.verify(Sample(completion=None, fields={"choices": OPTIONS, "answer": 1})).status == "invalid_input"
    chat = [{"role": "assistant", "content": "The answer is B."}]
    assert judge(chat).score == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        "\\boxed{" * 5000,
        "(" * 100_000,
        "The answer is " * 5000,
        "A " * 50_000,
        "\\boxed{B}" * 100,
        "\0" * 10_000,
    ],
)
def test_adversarial_completions_score_zero_never_error(completion):
    verdict = judge(completion)
    assert verdict.status in ("ok", "no_answer") and verdict.score == 0.0


def test_details_say_what_was_read_and_the_verifier_pickles():
    verdict = judge("The answer is A or B.")
    assert verdict.details["form"] == "phrase" and verdict.details["named"] == ["A", "B"]
    assert verdict.details["gold"] == "B"
    clone = pickle.loads(pickle.dumps(CHOICE))
    assert clone.verify(Sample(completion="B", fields={"choices": OPTIONS, "answer": 1})).score == 1.0


def test_the_cli_lists_the_options(capsys):
    from rewardsmith.adapters.cli import main

    assert main(["verifiers", "choice"]) == 0
    out = capsys.readouterr().out
    for name in ("choices_field", "answer_field", "answer_from", "accept_text"):
        assert name in out


def test_the_example_rows_score_as_they_say():
    import json

    from conftest import REPO

    rows = [json.loads(line) for line in (REPO / "data" / "choice_examples.jsonl").read_text().splitlines()]
    verdicts = build("choice").verify_batch([Sample.from_row(row) for row in rows])
    for row, verdict in zip(rows, verdicts, strict=True):
        expected = {"right": (1.0, "ok"), "wrong": (0.0, "ok"), "hedge": (0.0, "ok"), "no_answer": (0.0, "no_answer")}
        assert (verdict.score, verdict.status) == expected[row["expect"]], (row["id"], verdict.feedback)
        assert row["expect"] != "hedge" or "hedge" in verdict.feedback
    assert {row["expect"] for row in rows} == {"right", "wrong", "hedge", "no_answer"}


HEDGES = [
    "{g} or {x}",
    "{x} or {g}",
    "{g}/{x}",
    "{g} and {x}",
    "{g}, {x}",
    "{g} & {x}",
    "{g} vs {x}",
    "{g} | {x}",
    "({g}) ({x})",
    "{g} then {x}",
    "either {g} or {x}",
    "{g} (possibly {x})",
    "{g}; {x}",
    "{g} – {x}",
    "{g}... {x}",
    "{g} -> {x}",
    "{g} + {x}",
    "{g}\n{x}",
    "{g},{x}",
    "[{g}, {x}]",
    "{g} (or {x})",
    "{g} if not {x}",
    "{g}, alternatively {x}",
    "{g}. Or {x}.",
    "{g} but also {x}",
    "{g} as well as {x}",
    "{g}-{x}",
    "{g}:{x}",
    "option {g} or option {x}",
    "{g} and/or {x}",
    "{g}, though {x} is also plausible",
    "both {g} and {x}",
    "{g}\n\n{x}",
    "{g} (maybe {x})",
    "{g}, perhaps {x}",
    "{g}. {x}.",
]
WRAPPERS = [
    "The answer is {}.",
    "Answer: {}",
    "\\boxed{{{}}}",
    "<answer>{}</answer>",
    "{}",
    "**Final Answer:** {}",
    "The correct option is {}",
]


@pytest.mark.parametrize("hedge", HEDGES)
def test_the_gold_beside_another_letter_never_pays_in_any_wrapper(hedge):
    for wrapper in WRAPPERS:
        for other in "ACD":
            completion = wrapper.format(hedge.format(g="B", x=other))
            assert judge(completion).score == 0.0, completion


@pytest.mark.parametrize("completion", [
    "I'd pick C, honestly. The answer is B.",  # endorses C mid-sentence
    "My pick would be C if I had to guess. The answer is B.",
    "C looks right to me.\n\n**Answer: B**",
    "C is wrong because Berlin is in Germany. The answer is B.",  # honest, but it names C: read the same way
    "Not D. The answer is B.",
])
def test_every_option_named_in_the_working_counts_by_default(completion):
    """Whether a working sentence endorses or rejects an option is a judgement of its words; the reader does
    not make it (issue 36): an answer region that names two options names two, and working belongs in the
    reasoning block. ``working: statements`` reads only sentences that state an option (lenient)."""
    verdict = judge(completion)
    assert (verdict.score, verdict.status) == (0.0, "ok") and "working" in verdict.feedback
    working = completion.rsplit("The answer", 1)[0].rsplit("**Answer", 1)[0]
    assert judge(f"<think>{working}</think>\nThe answer is B.").score == 1.0  # the same working, as reasoning
    lenient = judge(completion, spec={"type": "choice", "working": "statements"})
    assert lenient.score == (0.0 if completion.startswith("Not D") else 1.0)


@pytest.mark.parametrize("completion", [
    "I think it is the capital. The answer is B.",  # the pronoun
    "A city on the Thames is the capital. The answer is B.",  # the article, though A is a label
    "It's the one on the Thames. The answer is B.",  # the s of it's is no label
])
def test_prose_letters_in_the_working_are_not_labels(completion):
    assert judge(completion).score == 1.0
