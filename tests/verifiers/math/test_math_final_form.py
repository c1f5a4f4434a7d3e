"""Issue 36, section 2: for a number gold, an answer that equals it only after the grader computes is
not a final answer and scores 0 (verifiers/math/final_form.py; docs/verifiers/math.md, "Final form").

Each class has wrong forms that must score 0 and honest forms of the same values that must keep
scoring 1; the ``unsimplified`` switch is checked both ways.
"""

from __future__ import annotations

from typing import Any

import pytest

from rewardsmith.verifiers import Sample, Verdict, build

MATH = build({"type": "math", "workers": 0})
UNSIMPLIFIED = build({"type": "math", "workers": 0, "leniency": {"unsimplified": True}})
STRICT = build({"type": "math", "workers": 0, "leniency": {"unsimplified": False}})


def grade(gold: str, answer: str, prompt: str = "", verifier: Any = MATH) -> Verdict:
    completion = f"So the final answer is $\\boxed{{{answer}}}$."
    return verifier.verify(Sample(prompt=prompt, completion=completion, fields={"answer": gold}))


def not_final(gold: str, answer: str, prompt: str = "") -> str:
    """The reason the answer is not final: it has the gold's value (``not_final`` is set only then)."""
    verdict = grade(gold, answer, prompt)
    assert verdict.score == 0.0 and verdict.correct is False, verdict.feedback
    return verdict.details.get("not_final", "")


# -- an operation or function the gold does not have ---------------------------------------------

@pytest.mark.parametrize(("gold", "answer"), [
    ("21", r"\binom{7}{2}"),
    ("21", r"\dbinom{7}{2}"),
    ("4", r"\log_3 81"),
    ("221", r"13 \cdot 17"),
    ("221", r"13 \times 17"),
    ("6", "3!"),
    ("1024", "2^{10}"),
    ("25", "5^2"),
    ("-1", r"e^{i\pi}"),
    ("1", r"(\sqrt{2}+1)(\sqrt{2}-1)"),
    (r"\frac{\sqrt{6}-\sqrt{2}}{4}", r"\sin\left(\frac{\pi}{12}\right)"),
    (r"\frac{\sqrt{3}}{2}", r"\cos 30^\circ"),
    ("(221, 2)", r"(13 \cdot 17, 2)"),
    ("1, 4", r"1, 2^2"),
    ("5", r"x = 2 + 3"),
])
def test_an_operation_the_gold_lacks_is_computed_not_final(gold: str, answer: str) -> None:
    assert not_final(gold, answer)


def test_the_questions_own_expression_boxed_back_is_not_an_answer() -> None:
    prompt = r"Compute $3 + 4 \cdot 5 - 2^2$."
    assert not_final("19", r"3 + 4 \cdot 5 - 2^2", prompt)
    assert grade("19", "19", prompt).score == 1.0


@pytest.mark.parametrize(("gold", "answer"), [
    (r"\frac{\pi}{2}", r"\pi/2"),
    (r"\pi/2", r"\frac{\pi}{2}"),
    (r"\frac{\pi}{2}", r"\frac{1}{2}\pi"),
    (r"2+\sqrt{3}", r"\sqrt{3}+2"),
    (r"\frac{\sqrt{6}-\sqrt{2}}{4}", r"\frac{-\sqrt{2}+\sqrt{6}}{4}"),
    ("2^{10}", "1024"),  # fewer operations than the gold is fine
    (r"\frac{\sqrt{3}}{2}", r"\dfrac{\sqrt{3}}{2}"),
    ("10000", "10{,}000"),
    ("10", r"10\text{ cm}"),
    ("(3, 2)", "(3, 2)"),
    ("-2 + 3i", "3i - 2"),
    ("x^2+2x+1", "(x+1)^2"),  # an expression gold: unsimplified stays on
])
def test_the_same_operations_in_another_order_or_dress_are_final(gold: str, answer: str) -> None:
    verdict = grade(gold, answer)
    assert verdict.score == 1.0, verdict.feedback


# -- fractions in lowest terms --------------------------------------------------------------------

@pytest.mark.parametrize(("gold", "answer"), [
    (r"\frac{3}{2}", r"\frac{6}{4}"),
    (r"\frac{1}{3}", r"\frac{2}{6}"),
    (r"\frac{3}{2}", "6/4"),
    ("4", r"\frac{8}{2}"),
    ("4", r"\frac{4}{1}"),
    ("0.5", r"\frac{2}{4}"),
    (r"\frac{13}{4}", r"3\frac{2}{8}"),
    (r"\frac{13}{4}", r"2\frac{5}{4}"),
    ("5", r"x = \frac{10}{2}"),
])
def test_a_fraction_not_in_lowest_terms_is_not_final(gold: str, answer: str) -> None:
    assert not_final(gold, answer)


@pytest.mark.parametrize(("gold", "answer"), [
    (r"\frac{1}{2}", r"\frac{1}{2}"),
    (r"\frac{1}{2}", "1/2"),
    ("0.5", r"\frac12"),
    (r"\frac12", "0.5"),
    (r"-\frac{3}{4}", r"\frac{-3}{4}"),
    (r"\frac{-3}{4}", r"-\frac{3}{4}"),
    (r"\frac{13}{4}", r"3\frac{1}{4}"),
    ("4.5", r"4\frac{1}{2}"),
    (r"\frac{2}{4}", r"\frac{2}{4}"),  # the gold writes it so itself
    ("4", r"x = \frac{8}{2} = 4"),  # the last side is the answer
])
def test_a_fraction_in_lowest_terms_or_a_decimal_is_final(gold: str, answer: str) -> None:
    verdict = grade(gold, answer)
    assert verdict.score == 1.0, verdict.feedback


@pytest.mark.parametrize(("gold", "answer", "score"), [
    ("1:2", "2:4", 0.0), (r"\frac12", "6:12", 0.0), ("1:2", "1:2", 1.0), (r"\frac12", "1:2", 1.0), ("2:4", "2:4", 1.0),
])
def test_a_ratio_must_be_in_lowest_terms_like_a_fraction(gold: str, answer: str, score: float) -> None:
    assert grade(gold, answer).score == score


# -- radicals -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("gold", "answer"), [
    (r"2\sqrt{3}", r"\sqrt{12}"),
    ("2", r"\sqrt{4}"),
    (r"2\sqrt[3]{2}", r"\sqrt[3]{16}"),
    ("3", r"\sqrt[3]{27}"),
    (r"6\sqrt{3}", r"\sqrt{108}"),
])
def test_a_radical_with_a_perfect_power_factor_is_not_final(gold: str, answer: str) -> None:
    assert not_final(gold, answer)


@pytest.mark.parametrize(("gold", "answer"), [
    (r"\sqrt{12}", r"2\sqrt{3}"),  # the gold's value as sympy writes it
    (r"\sqrt{8}", r"2\sqrt{2}"),
    (r"\sqrt{12}", r"\sqrt{12}"),  # the gold writes it so itself
    (r"\frac{\sqrt{3}}{3}", r"\frac{1}{\sqrt{3}}"),
    (r"5\sqrt{2}", r"5 \sqrt{2}"),
    (r"\sqrt[3]{2}", r"\sqrt[3]{2}"),
])
def test_a_radical_in_lowest_form_is_final(gold: str, answer: str) -> None:
    verdict = grade(gold, answer)
    assert verdict.score == 1.0, verdict.feedback


# -- indeterminate forms --------------------------------------------------------------------------

@pytest.mark.parametrize(("gold", "answer"), [("1", "0^0"), ("1", r"\infty^0"), ("1", r"\infty^{0}")])
def test_an_indeterminate_form_is_not_a_value(gold: str, answer: str) -> None:
    assert "indeterminate" in not_final(gold, answer)


@pytest.mark.parametrize(("gold", "answer"), [("1", r"1^\infty"), ("0", r"\infty - \infty"), ("0", r"0 \cdot \infty")])
def test_indeterminate_forms_sympy_leaves_undefined_score_zero_too(gold: str, answer: str) -> None:
    assert grade(gold, answer).score == 0.0


def test_an_honest_infinity_still_answers_infinity() -> None:
    assert grade(r"\infty", r"\infty").score == 1.0
    assert grade(r"(-\infty, 2)", r"(-\infty, 2)").score == 1.0


# -- scripts the gold lacks -----------------------------------------------------------------------

@pytest.mark.parametrize(("gold", "answer", "prompt"), [
    ("21", "21_5", ""),
    ("21", "21_{5}", "How many apples are left?"),
    ("21", "21^{+1}_{-1}", ""),
    ("21", "21_{10}", "Express your answer in base 5."),
])
def test_a_subscript_or_script_the_gold_lacks_is_not_final(gold: str, answer: str, prompt: str) -> None:
    assert not_final(gold, answer, prompt)


@pytest.mark.parametrize(("gold", "answer", "prompt"), [
    ("255", "255_{10}", "What's the largest eight-digit base 2 integer? Express your answer in base 10."),
    ("1022_5", "1022_5", "Express $137_{10}$ in base 5."),
    ("1022_5", "1022_{5}", ""),
])
def test_a_base_the_gold_or_question_names_is_final(gold: str, answer: str, prompt: str) -> None:
    verdict = grade(gold, answer, prompt)
    assert verdict.score == 1.0, verdict.feedback


# -- names and labels -----------------------------------------------------------------------------

ASKS_PQ = "Find the ordered pair $(p, q)$ that solves the system."


@pytest.mark.parametrize("answer", ["(q, p) = (3, 2)", "(q,p)=(3,2)"])
def test_a_tuple_named_in_another_order_than_asked_is_wrong(answer: str) -> None:
    assert "named" in not_final("(3, 2)", answer, ASKS_PQ)


@pytest.mark.parametrize("answer", ["(p, q) = (3, 2)", "(3, 2)", "q = 2, p = 3"])
def test_a_tuple_named_in_the_asked_order_or_unnamed_answers(answer: str) -> None:
    verdict = grade("(3, 2)", answer, ASKS_PQ)
    assert verdict.score == 1.0, verdict.feedback


@pytest.mark.parametrize(("answer", "prompt"), [
    (r"\text{Wrong answer} = 12", "What is the area of the square?"),
    (r"\text{wrong} = 12", "What is the area of the square?"),
    (r"\text{not the area} = 12", "What is the area of the square?"),
    (r"\text{area} = 12", ""),  # no prompt: nothing a label could be vouched against
])
def test_a_label_that_names_nothing_asked_is_wrong(answer: str, prompt: str) -> None:
    assert "label" in not_final("12", answer, prompt)


@pytest.mark.parametrize(("answer", "prompt"), [
    (r"\text{area} = 12", "What is the area of the square?"),
    (r"\text{Area} = 12", "What is the area of the square?"),
    (r"\text{min} = 12", "Find the minimum value of x."),
    ("x = 12", "Solve for x."),
])
def test_a_label_naming_the_asked_quantity_answers(answer: str, prompt: str) -> None:
    verdict = grade("12", answer, prompt)
    assert verdict.score == 1.0, verdict.feedback


# -- the unsimplified switch ----------------------------------------------------------------------

@pytest.mark.parametrize(("gold", "answer"), [
    ("221", r"13 \cdot 17"), ("21", r"\binom{7}{2}"), (r"\frac{3}{2}", r"\frac{6}{4}"), (r"2\sqrt{3}", r"\sqrt{12}"),
])
def test_unsimplified_true_lets_computed_forms_of_number_golds_through(gold: str, answer: str) -> None:
    """Off by default for number golds; a user turns it on knowingly."""
    assert grade(gold, answer).score == 0.0
    assert grade(gold, answer, verifier=UNSIMPLIFIED).score == 1.0


def test_unsimplified_false_keeps_number_golds_final_and_expressions_canonical() -> None:
    assert grade("221", r"13 \cdot 17", verifier=STRICT).score == 0.0
    assert grade("221", "221", verifier=STRICT).score == 1.0
    assert grade("x^2+2x+1", "(x+1)^2", verifier=STRICT).score == 0.0
    assert grade("x^2+2x+1", "(x+1)^2").score == 1.0  # unset: expression golds take equivalent forms


@pytest.mark.parametrize(("completion", "score"), [
    ("We get $\\boxed{\\frac{8}{2}}$, that is $\\boxed{4}$.", 1.0),
    ("We get $\\boxed{4}$, that is $\\boxed{\\frac{8}{2}}$.", 0.0),
])
def test_one_value_stated_twice_is_judged_in_the_form_stated_last(completion: str, score: float) -> None:
    """Two statements of one value are one answer, not a hedge; the last one is its final form."""
    verdict = MATH.verify(Sample(completion=completion, fields={"answer": "4"}))
    assert verdict.score == score and "several different" not in verdict.feedback, verdict.feedback
