"""Issue 23, item 5: an exact gold is compared exactly. ``\\pi + 10^{-250}`` is not ``\\pi``, however
many digits agree; a tolerance applies only to a decimal gold (or under ``approximate: true``)."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

MATH = build({"type": "math", "workers": 0})
APPROXIMATE = build({"type": "math", "workers": 0, "leniency": {"approximate": True}})


def score(gold: str, answer: str, verifier=MATH) -> float:
    return verifier.verify(Sample(completion=f"The answer is $\\boxed{{{answer}}}$.", fields={"answer": gold})).score


@pytest.mark.parametrize(("gold", "answer"), [
    ("\\pi", "\\pi + 10^{-250}"),
    ("\\pi", "\\pi - 10^{-12}"),
    ("\\sqrt{2}", "\\sqrt{2} + 10^{-100}"),
    ("p - q", "p - q + 10^{-250}"),
    ("x^2", "x^2 + 10^{-30}"),
    ("12", "12.000001"),
    ("12", "12 + 10^{-300}"),
    ("\\frac{1}{3}", "\\frac{1}{3} + 10^{-40}"),
    ("e", "e(1 + 10^{-200})"),
])
def test_a_near_miss_on_an_exact_gold_is_wrong(gold: str, answer: str) -> None:
    assert score(gold, answer) == 0.0


def test_approximate_is_the_switch_that_lets_a_near_miss_through() -> None:
    """Turned on knowingly, ``approximate`` applies the tolerance to exact non-integer golds; integers stay exact.
    A near miss written as a computation is not a final form either: that takes ``unsimplified`` too."""
    assert score("\\pi", "\\pi - 10^{-12}", APPROXIMATE) == 0.0
    both = build({"type": "math", "workers": 0, "leniency": {"approximate": True, "unsimplified": True}})
    assert score("\\pi", "\\pi - 10^{-12}", both) == 1.0
    assert score("\\pi", "3.14159265359", APPROXIMATE) == 1.0
    assert score("12", "12.000001", APPROXIMATE) == 0.0


@pytest.mark.parametrize(("gold", "answer"), [
    ("\\sqrt{8}", "2\\sqrt{2}"),
    ("2.5", "2.5000000001"),
    ("\\pi", "\\pi"),
    ("\\frac{1}{3}", "0.\\overline{3}"),
])
def test_equal_values_and_decimal_golds_still_match(gold: str, answer: str) -> None:
    assert score(gold, answer) == 1.0


@pytest.mark.parametrize(("gold", "answer"), [
    ("\\frac{\\sqrt{6}-\\sqrt{2}}{4}", "\\sin\\left(\\frac{\\pi}{12}\\right)"),
    ("\\frac{1}{3}", "\\frac{2}{6}"),
])
def test_equal_values_only_after_computing_need_unsimplified(gold: str, answer: str) -> None:
    """Issue 36: for a number gold these are not final answers (tests/verifiers/math/test_math_final_form.py)."""
    assert score(gold, answer) == 0.0
    assert score(gold, answer, build({"type": "math", "workers": 0, "leniency": {"unsimplified": True}})) == 1.0
