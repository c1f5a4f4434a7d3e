"""``choice`` reads a statement as it looks and by the row's options (issue 36): a second label that only
looks different (another script, width, style, an entity, a combining mark) is a second label; another
option's text after the label or anywhere in the statement names that option too. Honest look-alikes
("B) <B's own text>", ``**B**``, ``(B)``, "Option B") keep paying."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.choice.reading import read_statement
from rewardsmith.verifiers.choice.row import looks, read_options

OPTIONS = ["The sun", "It orbits the Earth", "42", "The one about the moon landing"]  # gold B below
CHOICE = build("choice")
LABELS_ONLY = build({"type": "choice", "accept_text": False})


def paid(completion: str, choices=OPTIONS, answer=1, verifier=CHOICE) -> float:
    sample = Sample(prompt="Q?", completion=completion, fields={"choices": choices, "answer": answer})
    return verifier.verify(sample).score


# ------------------------------------------------------------------ labels that only look different

LOOKALIKE_C = ["\u0421", "\u03f9", "\uff23", "\U0001d402", "\u24b8", "&#67;", "&#x43;", "C\u0301", "C\u0327"]
LOOKALIKE_B = ["\u0412", "\u0392", "\uff22", "\U0001d401", "\u24b7", "&#66;", "&#x42;", "B\u0301", "\U0001d5d5"]


@pytest.mark.parametrize("other", LOOKALIKE_C)
@pytest.mark.parametrize(
    "form", ["Answer: B or {}", "Answer: B, {}", "\\boxed{{B}} \\boxed{{{}}}", "<answer>B</answer> \\boxed{{{}}}"]
)
def test_a_second_label_that_only_looks_different_is_a_hedge(form, other):
    assert paid(form.format(other)) == 0.0


@pytest.mark.parametrize("label", LOOKALIKE_B)
@pytest.mark.parametrize("form", ["Answer: {}", "\\boxed{{{}}}", "The answer is ({})."])
def test_a_lookalike_of_the_gold_label_is_that_label(form, label):
    assert paid(form.format(label)) == 1.0
    assert paid(form.format(label), answer=2) == 0.0  # and not any other option


@pytest.mark.parametrize("label", ["\u0421", "\uff23", "\U0001d402", "\u24b8"])
def test_a_lookalike_of_another_label_is_that_other_label(label):
    assert paid(f"Answer: {label}") == 0.0
    assert paid(f"Answer: {label}", answer=2) == 1.0


def test_looks_folds_labels_and_keeps_ascii():
    assert [looks(s) for s in ["\u0412", "\uff22", "\U0001d401", "\u24b7", "B\u0301"]] == ["B"] * 5
    assert looks("Caf\u00e9") == "Cafe" and looks("rn") == "rn" and looks("0") == "0"


def test_a_row_in_lookalike_labels_reads_the_same():
    options = read_options({"text": ["x", "y"], "label": ["\u0410", "\u0412"]})  # Cyrillic A, B
    assert read_statement("B", options).indices == {1}
    assert read_statement("\u0412", options).indices == {1}


# ------------------------------------------------------------------ another option's text in the statement


@pytest.mark.parametrize(
    "completion",
    [
        "Answer: B) 42",  # 42 is option C's text
        "Answer: B: 42",
        "Answer: B (42)",
        "Answer: B — the one about the moon landing",  # D's text, whole
        "Answer: B — the one about the moon",  # D's text, cut short
        "Answer: B - the moon landing",
        "Answer: B, but 42 is equally defensible",
        "Answer: B, I'd defer to the 42 option",
        "Answer: B (or 42)",
        "Answer: B, though the sun works too",  # A's text
        "\\boxed{B \\text{ or the sun}}",
        "<answer>B, unless it is 42</answer>",
        "Answer: It orbits the Earth, or 42",
    ],
)
def test_another_options_text_in_the_statement_names_it(completion):
    assert paid(completion) == 0.0


@pytest.mark.parametrize(
    "completion",
    [
        "Answer: B",
        "Answer: **B**",
        "Answer: (B)",
        "Answer: Option B",
        "Answer: B) It orbits the Earth",  # its own text
        "Answer: B: it orbits the earth",
        "Answer: B) It orbits",  # its own text cut short
        "Answer: It orbits the Earth",
        "\\boxed{B}",
        "<answer>(B) It orbits the Earth</answer>",
        "The answer is B.",
    ],
)
def test_a_label_with_its_own_text_keeps_paying(completion):
    assert paid(completion) == 1.0


def test_own_text_holding_another_options_text_is_not_a_second_option():
    options = ["42 apples", "42", "7", "9"]
    assert paid("Answer: A) 42 apples", options, answer=0) == 1.0
    assert paid("Answer: A) 42", options, answer=0) == 0.0  # exactly B's text


def test_accept_text_false_reads_labels_only():
    assert paid("Answer: B) 42", verifier=LABELS_ONLY) == 1.0
    assert paid("Answer: B or \u0421", verifier=LABELS_ONLY) == 0.0  # look-alike labels still count


DIGIT_ROW = {"text": ["50 C", "100 C", "150 C"], "label": ["1", "2", "3"]}


@pytest.mark.parametrize(
    "completion", ["The answer is (2 or 1).", "2) or 1", "The answer is (2) or maybe 3", "2: or 3"]
)
def test_a_bare_digit_label_after_the_label_is_a_second_label(completion):
    assert paid(completion, DIGIT_ROW, answer="2") == 0.0


@pytest.mark.parametrize("completion", ["The answer is 2) 100 C", "The answer is 2: 100 C", "(2)", "The answer is 2."])
def test_a_digit_label_with_its_own_text_keeps_paying(completion):
    assert paid(completion, DIGIT_ROW, answer="2") == 1.0


def test_a_working_sentence_ending_on_a_digit_label_names_it():
    assert paid("My gut says 3. The answer is 2.", DIGIT_ROW, answer="2") == 0.0
    assert paid("Option 3 is wrong, it is 150 C.\nThe answer is 2.", DIGIT_ROW, answer="2") == 1.0
    assert paid("Water boils at 100 C at sea level. The answer is 2.", DIGIT_ROW, answer="2") == 1.0
