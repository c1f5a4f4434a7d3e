"""Issue 23, item 6: markup that hides the answer shows nothing, markup that dresses it shows it.

``\\phantom``, a white colour, an HTML or LaTeX comment, ``\\iffalse`` and a code block hide what
they hold: a reader sees no answer, so there is none. Bold, colour and a label inside the box
dress the answer. A mixed number ``3 1/4`` is 13/4, never 3/4.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.math.markup import shown
from rewardsmith.verifiers.reading import readable_text

MATH = build({"type": "math", "workers": 0})


def score(gold: str, completion: str) -> float:
    return MATH.verify(Sample(completion=completion, fields={"answer": gold})).score


@pytest.mark.parametrize(("gold", "completion"), [
    ("17", r"\boxed{\phantom{17}}"),
    ("17", r"\boxed{\hphantom{17}}"),
    ("17", r"The answer is \boxed{{\color{white}17}}."),
    ("17", r"The answer is \boxed{\textcolor{white}{17}}."),
    ("x+1", r"\boxed{\vphantom{x+1}}"),
    ("17", r"I could not finish. <!-- \boxed{17} -->"),
    ("17", "I could not finish.\n% \\boxed{17}"),
    ("17", r"I could not finish. \iffalse \boxed{17} \fi"),
    ("17", "I could not finish.\n```\nprint(r'\\boxed{17}')\n```"),
    ("17", "I could not finish. <!-- never closed \\boxed{17}"),
    ("17", "Stuck.\n```python\nanswer = 17  # The answer is 17.\n```"),
])
def test_hidden_answers_answer_nothing(gold: str, completion: str) -> None:
    assert score(gold, completion) == 0.0


@pytest.mark.parametrize(("gold", "completion"), [
    ("9", r"\boxed{\color{blue}{9}}"),
    ("9", r"\boxed{\color{red} 9}"),
    ("9", r"\boxed{\textcolor{teal}{9}}"),
    ("9", r"\boxed{\text{Final: } 9}"),
    ("9", r"\boxed{\text{Answer:}\ 9}"),
    ("9", r"\boxed{\textbf{9}}"),
    ("\\frac{14}{3}", r"\boxed{\mathbf{\frac{14}{3}}}"),
    ("\\frac{14}{3}", r"\boxed{\textbf{\frac{14}{3}}}"),
    ("\\frac{14}{3}", r"\boxed{\boldsymbol{\frac{14}{3}}}"),
    ("9", r"\boxed{\underline{9}}"),
    ("\\text{(B)}", r"\boxed{\textbf{(B)}}"),
    ("9", "Working. <!-- a note to self --> The answer is \\boxed{9}."),
    ("9", "We reach 50% of the way.\nThe answer is \\boxed{9}."),  # a % inside a line is prose
    ("9", "```\nx = 4 + 5\n```\nSo the answer is \\boxed{9}."),
])
def test_dressed_answers_show_their_value(gold: str, completion: str) -> None:
    assert score(gold, completion) == 1.0


@pytest.mark.parametrize(("gold", "answer", "expected"), [
    ("\\frac{13}{4}", "3 1/4", 1.0),
    ("\\frac{13}{4}", "3\\frac14", 1.0),
    ("\\frac{13}{4}", "3\\frac{1}{4}", 1.0),
    ("-\\frac{13}{4}", "-3 1/4", 1.0),
    ("\\frac{3}{4}", "3 1/4", 0.0),
    ("\\frac{3}{4}", "3\\frac14", 0.0),
    ("\\frac{3}{4}", "3 \\frac{1}{4}", 0.0),
])
def test_mixed_numbers_are_their_whole_value(gold: str, answer: str, expected: float) -> None:
    assert score(gold, f"The answer is $\\boxed{{{answer}}}$.") == expected


def test_shown_and_visible_text_are_what_a_reader_sees() -> None:
    assert shown(r"\phantom{17}") == ""
    assert shown(r"\textbf{\frac{1}{2}}") == r"\frac{1}{2}"
    assert shown(r"\textcolor{red}{5}") == "5"
    assert "17" not in readable_text("a <!-- 17 --> b \\iffalse 17 \\fi c")
    assert readable_text("a <!-- x --> b").split() == ["a", "b"]
