"""Issue 23, recall: answers in ordinary dress parse and count. Unicode digits and vulgar fractions,
repeating decimals (``\\overline``, ``\\bar``, ``\\dot``), a trailing comma or period inside a box,
ordinal suffixes, ``\\lt``/``\\gt``/``\\neq``, "N percent", GSM8K's ``A: 18`` and ``#### 18``, and
named values given in another order than the asked tuple's. Each with a wrong twin that stays wrong."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

MATH = build({"type": "math", "workers": 0})


def score(gold: str, completion: str, prompt: str = "") -> float:
    return MATH.verify(Sample(prompt=prompt, completion=completion, fields={"answer": gold})).score


PAIR = "Find the ordered pair $(a, b)$ of integers that satisfies both equations."

CASES = [
    # (gold, right answer, wrong answer, prompt)
    ("12", r"\boxed{１２}", r"\boxed{１３}", ""),
    ("12", r"\boxed{١٢}", r"\boxed{١٣}", ""),
    ("\\frac{1}{2}", r"\boxed{½}", r"\boxed{⅓}", ""),
    ("\\frac{3}{4}", "The answer is ¾.", "The answer is ¼.", ""),
    ("\\frac{3}{2}", r"\boxed{1½}", r"\boxed{2½}", ""),
    ("\\frac{1}{3}", r"\boxed{0.\overline{3}}", r"\boxed{0.\overline{6}}", ""),
    ("\\frac{1}{3}", r"\boxed{0.\bar{3}}", r"\boxed{0.3}", ""),
    ("\\frac{1}{6}", r"\boxed{0.1\dot{6}}", r"\boxed{0.1\dot{7}}", ""),
    ("12", r"\boxed{12,}", r"\boxed{13,}", ""),
    ("12", r"\boxed{12.}", r"\boxed{13.}", ""),
    ("3", r"\boxed{3rd}", r"\boxed{4th}", ""),
    ("21", r"\boxed{21^{\text{st}}}", r"\boxed{22^{\text{nd}}}", ""),
    ("x < 3", r"\boxed{x \lt 3}", r"\boxed{x \gt 3}", ""),
    ("x \\neq 3", r"\boxed{x \ne 3}", r"\boxed{x = 3}", ""),
    ("25\\%", "The answer is 25 percent.", "The answer is 26 percent.", ""),
    ("18", "Q: How many?\nA: 18", "Q: How many?\nA: 19", ""),
    ("18", "**A:** 18", "**A:** 17", ""),
    ("18", "6 * 3 = 18\n#### 18", "6 * 3 = 18\n#### 17", ""),
    ("(1, 2)", r"\boxed{b = 2, a = 1}", r"\boxed{b = 1, a = 2}", PAIR),
    ("(1, 2)", r"\boxed{a = 1, b = 2}", r"\boxed{a = 1, a = 2}", PAIR),
]


@pytest.mark.parametrize(("gold", "right", "wrong", "prompt"), CASES)
def test_ordinary_dress_parses_and_counts(gold: str, right: str, wrong: str, prompt: str) -> None:
    assert score(gold, right, prompt) == 1.0
    assert score(gold, wrong, prompt) == 0.0


def test_names_must_be_the_asked_ones() -> None:
    assert score("(1, 2)", r"\boxed{x = 1, y = 2}", PAIR) == 0.0
    assert score("(1, 2)", r"\boxed{a = 1, b = 2}") == 1.0  # no names asked: positional, as before


def test_a_capital_a_only_at_a_line_start_is_an_answer() -> None:
    assert score("18", "Point A: (1, 18) lies on the line.") == 0.0
    assert score("18", "a: 18") == 0.0
