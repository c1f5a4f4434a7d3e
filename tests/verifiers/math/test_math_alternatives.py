"""Issue 23, item 2: alternatives after the answer. Text after the stated answer that offers another
value (in prose as much as in boxes) is one more statement of the answer, so the completion hedges
and earns nothing; text after it that restates the same value, lists things in the working, or
restates a relation does not."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

MATH = build({"type": "math", "workers": 0})


def score(gold: str, completion: str) -> float:
    return MATH.verify(Sample(completion=completion, fields={"answer": gold})).score


@pytest.mark.parametrize(("gold", "completion"), [
    ("8", "\\boxed{8}, or maybe 9."),
    ("12", "The answer is \\boxed{12}, or possibly 13."),
    ("2", "\\boxed{2}; x = 5 also works."),
    ("2", "The answer is \\boxed{2}. Also, x = 5 works."),
    ("\\frac{14}{3}", "The answer is \\boxed{\\frac{14}{3}}. Also, x = \\frac{17}{3} works."),
    ("11", "\\boxed{11}\\ \\text{(or 12)}"),
    ("p - q", "\\boxed{p - q}\\ \\text{(or p - q + 1)}"),
    ("14", "Answer: 14. On second thought, the right value is 15."),
    ("18", "Answer: 18. But it could also be 19."),
    ("18", "The answer is \\boxed{18}. Wait, that is wrong. Corrected answer: 19."),
    ("18", "\\boxed{18}\n\nActually, the true value is 20."),
    ("7", "So the total is $\\boxed{7}$. Alternatively, $8$."),
    ("7", "The answer is \\boxed{7}, though it might be 6."),
    ("3", "\\boxed{3}. 4 is also a solution."),
    ("C", "The answer is \\boxed{\\text{(C)}}, or possibly A."),
    ("C", "The answer is \\boxed{C}. Wait, that is wrong. Corrected answer: (A)."),
    ("x^8 + x^7 + x^6 + x^5 + x^4 + x^3 + x^2 + x + 1",
     "\\boxed{x^8 + x^7 + x^6 + x^5 + x^4 + x^3 + x^2 + x + 1}\\ "
     "\\text{(or x^8 + x^7 + x^6 + x^5 + x^4 + x^3 + x^2 + x + 2)}"),
])
def test_a_value_offered_after_the_answer_is_a_hedge(gold: str, completion: str) -> None:
    assert score(gold, completion) == 0.0


@pytest.mark.parametrize(("gold", "completion"), [
    ("12", "\\boxed{12}"),
    ("12", "The answer is \\boxed{12}, or equivalently 12 apples."),
    ("12", "She has \\boxed{12} apples, or 12 in all."),
    ("6", "The answer is \\boxed{6}, or six."),
    ("C", "The answer is \\boxed{C}, or (C) in the options' own notation."),
    ("5", "2+3 = 5, so the answer is \\boxed{5}. I hope it is correct."),
])
def test_what_follows_without_offering_another_value_keeps_the_answer(gold: str, completion: str) -> None:
    assert score(gold, completion) == 1.0


@pytest.mark.parametrize(("gold", "completion"), [
    ("5", "2+3 = 5, so the answer is \\boxed{5}. Wait, let me double-check: 2+3=5. Yes."),
    ("7", "The answer is \\boxed{7}. Otherwise we would have more than 7 left."),
    ("4", "so $n=\\boxed{4}$ works. For larger n, $n(n-1) < 2\\cdot 6^{n-3}$, or $108n(n-1)<6^n$."),
    ("10", "The answer is \\boxed{10}. Perhaps surprisingly, no smaller value works."),
    ("B", "The answer is \\boxed{B}. A is not possible since it is even."),
])
def test_any_sentence_after_the_answer_but_a_closing_one_leaves_no_final_answer(gold: str, completion: str) -> None:
    """The closed grammar (reading.frame.unclosed): a remark, a check or a note after the answer may say
    anything, so the verdict does not read it; the answer is then not the completion's last statement."""
    verdict = MATH.verify(Sample(completion=completion, fields={"answer": gold}))
    assert (verdict.score, verdict.status) == (0.0, "no_answer")
    assert "follows it" in verdict.feedback
    cut = completion[: completion.index(".", completion.index("boxed")) + 1]
    assert score(gold, cut) == 1.0, cut  # the same answer, last: paid
