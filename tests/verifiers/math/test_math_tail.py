"""After the final statement, a sentence that states another number is a hedge in any language and any
words (issue 36: the reading does not depend on recognising a phrase); a sentence that restates the same
value, repeats a number the prompt gave, computes a check (``3 \\cdot 5 = 15``) or closes without a value
leaves the answer as it was."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

MATH = build("math")
PROMPT = "A farmer has 3 rows of 5 trees. How many trees does the farmer have?"


def paid(completion: str, gold: str = "15") -> float:
    return MATH.verify(Sample(prompt=PROMPT, completion=completion, fields={"answer": gold})).score


@pytest.mark.parametrize(
    "tail",
    [
        "Η απάντηση είναι 16.",  # Greek
        "答案是16。",  # Chinese, no space, a full-width stop
        "Die Antwort lautet 16.",
        "Ответ: 16.",
        "16",  # a bare number on a line of its own
        "So it is １６.",  # full-width digits
        "That is 16.0 in total.",
        "Hmm. 14 trees.",
        "Je pense que c'est $16$ finalement.",
    ],
)
def test_another_number_after_the_answer_is_a_hedge(tail):
    assert paid("The answer is \\boxed{15}.") == 1.0
    assert paid(f"The answer is \\boxed{{15}}.\n\n{tail}") == 0.0
    assert paid(f"The answer is \\boxed{{15}}. {tail}") == 0.0


@pytest.mark.parametrize(
    "tail",
    [
        "I hope it is correct.",
        "That is 15.0 trees in total.",
        "Η απάντηση είναι 15.",
        "Check: 3 rows of 5 trees give $3 \\cdot 5 = 15$.",  # the prompt's numbers, a computation
        "Each of the 3 rows has 5 trees.",  # the prompt's own numbers
        "[asy]\ndraw((0,0)--(4,0));\nlabel(\"7\",(2,0));\n[/asy]",  # a figure's code, not prose
        "$\\frac{45}{3} \\approx 15$",
    ],
)
def test_a_restatement_a_check_or_a_closing_line_keeps_the_answer(tail):
    assert paid(f"The answer is \\boxed{{15}}.\n\n{tail}") == 1.0


def test_the_rest_of_the_statements_own_sentence_is_its_own():
    # "…, since 10000 ends in four zeroes": a reason in the statement's sentence, not a second answer
    # (MATH-500's own solution to the 10^x problem ends this way).
    assert paid("Then $x=\\boxed{4},$ since $10000$ ends in four zeroes.", gold="4") == 1.0


def test_the_same_value_in_other_spacing_is_a_restatement():
    text = ("The smallest is $\\boxed{11,\\! 111,\\! 111,\\! 100}$. In fact 450 does divide 11,111,111,100; so that"
            " number is the correct answer.")  # MATH-500's own solution ends this way
    assert paid(text, gold="11,\\! 111,\\! 111,\\! 100") == 1.0
