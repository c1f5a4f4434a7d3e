"""Issue 23, item 7: a multiple-choice answer that names two options (or an option and another
choice) inside one piece of text is a hedge: ``\\text{(A) or D}``, ``\\text{(A) 12 or D}``."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

MATH = build({"type": "math", "workers": 0})


def score(gold: str, completion: str) -> float:
    return MATH.verify(Sample(completion=completion, fields={"answer": gold})).score


@pytest.mark.parametrize("completion", [
    r"\boxed{\text{(A) or D}}",
    r"\boxed{\text{(A) 12 or D}}",
    r"\boxed{\text{(A) 12 or (D) 15}}",
    r"\boxed{\text{(A) and (B)}}",
    r"\boxed{(A)\text{ or }(D)}",
    r"\boxed{\text{(A) 12, D}}",
    r"\boxed{A, B, C, D}",
    "The answer is (A), (B), (C), (D) or (E).",
    r"The answer is \boxed{\text{(A)}}. Also, x = D works.",
])
def test_two_options_in_one_answer_earn_nothing(completion: str) -> None:
    assert score("\\text{(A)}", completion) == 0.0


@pytest.mark.parametrize("completion", [
    r"\boxed{\text{(A)}}",
    r"\boxed{A}",
    r"\boxed{\text{(A) 12}}",
    r"\boxed{\textbf{(A)}}",
    r"The answer is (A).",
    r"The answer is \boxed{\text{(A)}}. Final Answer: (A).",
])
def test_one_option_in_any_dress_is_the_answer(completion: str) -> None:
    assert score("\\text{(A)}", completion) == 1.0
