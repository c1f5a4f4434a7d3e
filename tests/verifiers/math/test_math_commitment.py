"""Issue 23, item 1: a number is an answer only when the completion commits to it. Denied, doubted,
asked, retracted or echoed numbers score 0; the last-number fallback is off by default, and when a
user turns it on it still never takes a prompt's number or one in a question, a negation, a
condition or an "a or b" choice. A closing sentence that opens as a conclusion commits."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

STRICT = build({"type": "math", "workers": 0})
LAST_NUMBER = build({"type": "math", "workers": 0, "last_number": True})


def score(gold: str, completion: str, prompt: str = "", verifier=STRICT) -> float:
    return verifier.verify(Sample(prompt=prompt, completion=completion, fields={"answer": gold})).score


@pytest.mark.parametrize(("gold", "completion"), [
    ("12", "It is definitely not 12."),
    ("12", "The answer cannot be 12."),
    ("12", "12 is not the answer."),
    ("9", "Is it 9? That fails the first equation."),
    ("9", "Could it be 9? No."),
    ("7", "Maybe 7, maybe not; I am not sure."),
    ("12", r"It is definitely not $\boxed{12}$."),
    ("12", r"The answer is not \boxed{12}."),
    ("9", r"Is it $\boxed{9}$?"),
    ("9", r"Could the answer be \boxed{9}? I doubt it."),
    ("5", r"I first thought the answer was \boxed{5}, but that is wrong."),
    ("5", r"\boxed{5} is wrong."),
    ("5", r"My guess was \boxed{5}. Oops, that is incorrect."),
    ("\\frac{14}{3}", r"It is \boxed{\frac{14}{3}}, but this is a mistake."),
    ("4", r"We get $4$ rather than $\boxed{4}$ here."),
])
def test_denied_doubted_or_retracted_scores_zero(gold: str, completion: str) -> None:
    assert score(gold, completion) == 0.0
    assert score(gold, completion, verifier=LAST_NUMBER) == 0.0


@pytest.mark.parametrize(("gold", "completion"), [
    ("12", r"Checking: 13 is not the answer, so the answer is \boxed{12}."),
    ("7", r"I first thought \boxed{5}, but that is wrong. The answer is \boxed{7}."),
    ("9", r"Is 8 right? No. The answer is $\boxed{9}$."),
    ("12", r"It is \boxed{12}, and that is the answer."),
    ("3", r"It is not true that x is 4. The answer is \boxed{3}."),
])
def test_a_committed_answer_beside_a_denial_still_counts(gold: str, completion: str) -> None:
    assert score(gold, completion) == 1.0


PROMPT = "Tom has 3 bags with 4 apples each. He gives away 12 apples. How many apples are left?"


@pytest.mark.parametrize("completion", [
    PROMPT,
    f"We are asked: {PROMPT}\nLet me think about this.",
    f"{PROMPT}\n\n{PROMPT}",
    "We are given 3, 4 and 12.",
    "Tom has 3 bags with 4 apples each. He gives away 12 apples.",
])
def test_an_echo_of_the_prompt_answers_nothing(completion: str) -> None:
    # gold 12 sits in the prompt; the completion only repeats it (4 would be the gold of "3 * 4")
    for gold in ("12", "4", "3"):
        assert score(gold, completion, PROMPT) == 0.0
        assert score(gold, completion, PROMPT, LAST_NUMBER) == 0.0


def test_the_last_number_fallback_is_opt_in() -> None:
    completion = "Three bags of four apples make 12 apples, and after giving 12 away he has 0"
    assert score("0", completion) == 0.0
    assert score("0", completion, verifier=LAST_NUMBER) == 1.0


@pytest.mark.parametrize(("gold", "completion", "why"), [
    ("20", "We are given 20 apples in the problem, and I get 20", "the prompt's own number"),
    ("7", "Should it be 7? Perhaps", "a question"),
    ("7", "It should be something other than 7", "a negation"),
    ("7", "If the sides are equal, the perimeter is 7", "a condition"),
    ("5", "We get x = 3 or x = 5", "an 'or' list"),
    ("5", "Suppose the total were 5", "a supposition"),
    ("5", "Nothing works here, not even 5", "a negation before it"),
])
def test_the_last_number_fallback_refuses_what_is_not_stated(gold: str, completion: str, why: str) -> None:
    prompt = "A box holds 20 apples. How many pears are there?"
    assert score(gold, completion, prompt, LAST_NUMBER) == 0.0, why


@pytest.mark.parametrize(("gold", "completion"), [
    ("310", "Each table has 4 legs, 40 * 4 = 160.\n\nTherefore, the restaurant's tables have a total of 310 legs."),
    ("2", "Speed = 8 miles / 4 miles/hour.\n\nSo, it took James 2 hours to walk to the store."),
    ("14", r"Sum: \[7 + 2 + 2 + 3 = 14\] Therefore, the least possible sum of these integers is **14**."),
    ("-\\frac{24}{25}", r"\[\cos = -\frac{24}{25}\] Therefore, $\cos \angle RPS = -\frac{24}{25}$."),
    ("3", r"The first term of the continued fraction is 3. Thus, \( b = 3 \)."),
    ("7", "Change: $20 - $13 = $7. **Answer:** Verna received $7.00 in change."),
    ("7", "Working: x = 3 and y = 4.\n\nThus, 3 + 4 = 7. Therefore, the total is 7."),  # one value, twice
    ("7", "So x = 3.\n\nTherefore, the total is 7."),  # an earlier paragraph's conclusion is working
])
def test_a_closing_conclusion_commits(gold: str, completion: str) -> None:
    verdict = STRICT.verify(Sample(completion=completion, fields={"answer": gold}))
    assert verdict.score == 1.0, verdict.feedback
    assert verdict.details["method"] in ("conclusion", "phrase")


@pytest.mark.parametrize(("gold", "completion"), [
    ("12", "Therefore, it is not 12."),
    ("5", "Therefore, x = 3 or x = 5."),
    ("9", "So is it 9?"),
    ("12", "Thus, if x were 4, then y is 12."),
    ("12", "Therefore, it is 13. Therefore, it is 12."),  # two conclusions in the last paragraph: a hedge
    ("12", "So x is 13.\nThus, the total is 12."),
    ("12", "So it could be anything, for example 12."),
    ("12", "Therefore, 12 is wrong."),
    ("12", "We found 12 earlier. The rest of the argument is unclear to me."),  # the closing sentence says nothing
    ("12", "12 apples were counted. That settles it."),  # no conclusion marker: a mention, not a commitment
])
def test_a_conclusion_that_does_not_commit_answers_nothing(gold: str, completion: str) -> None:
    assert score(gold, completion) == 0.0
