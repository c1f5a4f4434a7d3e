"""After the final statement, only the grammar's tail (issue 36, ``reading.frame.unclosed``): the rest of the
statement's own sentence may describe the quantity in words (units, the prompt's numbers, ``\\%``, ``^\\circ``,
``\\pmod{n}``), and every later sentence must be a closing one ("I hope it is correct."). Anything else leaves
no final answer (``no_answer``) whatever it says, in any language and any words: a second value, a
correction in number words, a check, a remark, a figure, a symbol. The verdict does not depend on
recognising what a later sentence says."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

MATH = build("math")
PROMPT = "A farmer has 3 rows of 5 trees. How many trees does the farmer have?"


def verdict(completion: str, gold: str = "15"):
    return MATH.verify(Sample(prompt=PROMPT, completion=completion, fields={"answer": gold}))


def paid(completion: str, gold: str = "15") -> float:
    return verdict(completion, gold).score


@pytest.mark.parametrize(
    "tail",
    [
        "Η απάντηση είναι 16.",  # Greek
        "答案是16。",  # Chinese, no space, a full-width stop
        "Die Antwort lautet 16.",
        "16",  # a bare number on a line of its own
        "So it is １６.",  # full-width digits
        "Hmm. 14 trees.",
        "Actually, I think it is sixteen.",  # a correction in words
        "Wait, I think it is 5.",  # a number the prompt gave
        "On reflection the count is 3 + 3 = 6.",  # shaped as a computation
        "Check: 3 rows of 5 trees give $3 \\cdot 5 = 15$.",  # a check: honest, but outside the grammar
        "Each of the 3 rows has 5 trees.",  # a remark
        "[asy]\ndraw((0,0)--(4,0));\nlabel(\"7\",(2,0));\n[/asy]",  # a figure: its labels show anything
        "$\\frac{45}{3} \\approx 15$",
    ],
)
def test_a_sentence_after_the_answer_that_is_not_a_closing_one_leaves_no_answer(tail):
    assert paid("The answer is \\boxed{15}.") == 1.0
    for completion in (f"The answer is \\boxed{{15}}.\n\n{tail}", f"The answer is \\boxed{{15}}. {tail}"):
        seen = verdict(completion)
        assert (seen.score, seen.status) == (0.0, "no_answer"), completion
        assert "follows it" in seen.feedback


@pytest.mark.parametrize(
    "tail",
    [
        "I hope it is correct.",
        "Final Answer: The final answer is 15. I hope it is correct.",  # Minerva's format: the same answer again
        "The answer is $\\boxed{15}$.",
        "#### 15",
    ],
)
def test_a_closing_sentence_or_the_same_answer_again_keeps_it(tail):
    assert paid(f"The answer is \\boxed{{15}}.\n\n{tail}") == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        "The farmer has $\\boxed{15}$ trees.",
        "The farmer has $\\boxed{15}$ trees in the 3 rows.",  # the prompt's own numbers
        "The farmer has $\\boxed{15}$ trees, or 15 in all.",  # the answer's own value
        "The answer is $\\boxed{15}$ square units.",
    ],
)
def test_words_describing_the_quantity_finish_its_sentence(completion):
    assert paid(completion) == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        "The answer is $\\boxed{15}$ \u274c",  # a cross: a symbol, not a word
        "The answer is $\\boxed{15}$ \U0001f6ab.",
        "The farmer has $\\boxed{15}$ trees, not 16.",  # a number neither the prompt's nor the answer's
        "The answer is $\\boxed{15} = 16$.",
    ],
)
def test_anything_but_words_after_the_value_in_its_sentence_leaves_no_answer(completion):
    seen = verdict(completion)
    assert (seen.score, seen.status) == (0.0, "no_answer")
    assert "follows it in its sentence" in seen.feedback


def test_units_degrees_percent_and_a_modulus_finish_a_sentence():
    assert paid("The angle is $\\boxed{40}^\\circ$.", gold="40") == 1.0
    asked = "What percent of the trees are oaks?"
    share = MATH.verify(Sample(prompt=asked, completion="The share is $\\boxed{40}\\%$.", fields={"answer": "40"}))
    assert share.score == 1.0
    assert paid("The share is $\\boxed{40}\\%$.", gold="40") == 0.0  # 40% when a count was asked: not 40
    prompt = "Find the remainder of 2^10 modulo 7."
    completion = "So $2^{10} \\equiv \\boxed{2} \\pmod{7}$."
    assert MATH.verify(Sample(prompt=prompt, completion=completion, fields={"answer": "2"})).score == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        "$\\overset{\\text{no: }16}{\\boxed{15}}$",  # an annotation above the box
        "$\\underbrace{\\boxed{15}}_{\\text{wrong, it is }16}$",
        "$\\frac{\\boxed{15}}{1}$",  # inside a formula
        "$x_{\\boxed{15}}$",
    ],
)
def test_a_box_inside_an_annotation_or_a_formula_is_not_stated_on_its_own(completion):
    seen = verdict(completion)
    assert (seen.score, seen.status) == (0.0, "no_answer")
    assert paid("$\\mathbf{\\boxed{15}}$") == paid("$\\textcolor{red}{\\boxed{15}}$") == 1.0  # styles are fine


def test_the_same_value_in_other_spacing_closes_a_statement():
    text = "The smallest is $\\boxed{11,\\! 111,\\! 111,\\! 100}$."
    assert paid(text, gold="11,\\! 111,\\! 111,\\! 100") == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        "The farmer has at most $\\boxed{15}$ trees.",  # a word before the box that changes the quantity
        "The farmer has more than $\\boxed{15}$ trees.",
        "The count is negative $\\boxed{15}$.",
        "The farmer has $\\boxed{15}$ percent of the trees.",  # ... or after it
        "The count is $\\boxed{15}$ squared.",
        "The farmer has $\\boxed{15}$ or fewer trees.",
        "$-\\boxed{15}$",  # a formula around the box
        "$2 \\times \\boxed{15}$",
        "$1\\boxed{5}$",
        "$\\boxed{15}^2$",
        "$\\boxed{15}!$",
        "$\\boxed{15}$½",  # a number that is no digit
        "$\\boxed{15}$. \\end{XVI}",  # a lone \end prints as written
        "$\\boxed{15}$. < XVI >",  # not a tag: a reader sees it
        "$\\boxed{15}$.\n16. ",  # an empty list item shows its number
    ],
)
def test_what_changes_the_value_beside_the_box_leaves_no_answer(completion):
    seen = verdict(completion)
    assert (seen.score, seen.status) == (0.0, "no_answer"), seen.feedback


def test_a_relation_or_a_closed_environment_around_the_box_is_fine():
    assert paid("\\[ 3 \\cdot 5 = \\boxed{15}. \\]") == 1.0
    assert paid("\\begin{align*} t &= 3 \\cdot 5 \\\\ &= \\boxed{15}.\n\\end{align*}") == 1.0
    assert paid("The farmer has $\\boxed{15}$ trees in the larger field.") == 1.0  # "larger" names the field


def test_two_statements_of_one_value_do_not_lift_the_tail_rule():
    # two spans (15 and 15.0) of one value: still refused by what follows them, never paid
    assert paid("The answer is $\\boxed{15}$, that is $\\boxed{15.0}$. \u274c") == 0.0
    assert verdict("It is $\\boxed{15}$ or maybe $\\boxed{16}$.").status == "ok"  # a hedge is reported as one
