"""Answer extraction for the math verifier: every form a completion or a gold answer takes.

Extraction decides *which* span gets graded, so a wrong pick is a wrong reward however
good the grading is; these tests pin each form, its priority and its failure modes.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, Verdict
from rewardsmith.verifiers.math import MathVerifier
from rewardsmith.verifiers.math.extract import extract_answer, extract_gold
from rewardsmith.verifiers.reading.boxes import balanced_group, last_boxed


def grade(gold: str, completion: str, **options: object) -> Verdict:
    """One sample through the in-process verifier (no pool: fast, deterministic)."""
    return MathVerifier(workers=0, **options).verify(Sample(completion=completion, fields={"answer": gold}))


# -- extract_answer: the span and the form that found it ------------------------------------

@pytest.mark.parametrize(
    ("completion", "span", "method"),
    [
        # \boxed{}: the last one, braces balanced, escaped braces literal.
        (r"So $x = \boxed{\frac{1}{2}}$.", r"\frac{1}{2}", "boxed"),
        (r"First \boxed{3}, then on reflection \boxed{5}.", "3 | 5", "boxed"),  # every box counts
        (r"\boxed{\{1, 2\}}", r"\{1, 2\}", "boxed"),
        (r"\boxed{\left\{ 1 \right\}}", r"\left\{ 1 \right\}", "boxed"),
        (r"\boxed{\sqrt{\frac{a}{b^{2}}}} and more text", r"\sqrt{\frac{a}{b^{2}}}", "boxed"),
        (r"\fbox{7}", "7", "boxed"),
        (r"\boxed{1} then \fbox{2}", "1 | 2", "boxed"),
        (r"\boxed{4} and again \boxed{4}", "4", "boxed"),  # the same statement twice is one
        (r"$\boxed 5$", "5", "boxed"),
        (r"\boxed 12 is it", "12", "boxed"),
        # Phrases: every one counts; math delimiters and markdown come off.
        ("The final answer is $\\frac{3}{4}$. I hope it is correct.", r"\frac{3}{4}", "phrase"),
        ("Final answer: 9", "9", "phrase"),
        ("The answer is 12.", "12", "phrase"),
        ("the answer is 3. Wait, no: the answer is 4.", "3 | 4", "phrase"),
        ("The answer is 3.5.", "3.5", "phrase"),
        ("Answer: 7", "7", "phrase"),
        ("Answer: \\(2\\).", "2", "phrase"),
        ("**Final Answer:** 2", "2", "phrase"),
        ("**Answer**: $5$", "5", "phrase"),
        ("The answer is **5**.", "5", "phrase"),
        ("The answer is $\\$36$.", r"\$36", "phrase"),  # an escaped $ is not the closing delimiter
        ("The answer is 1/2004!", "1/2004!", "phrase"),  # "!" after a digit is a factorial
        ("The answer is seven!", "seven", "phrase"),  # after a word it is punctuation
        # GSM8K's "#### N".
        ("She sells 9 eggs.\n#### 18", "18", "gsm8k"),
        ("#### 1\nWait.\n#### 2", "1 | 2", "gsm8k"),
        ("#### $18", "18", "gsm8k"),
        # <answer>…</answer>, also around a box or a phrase, and ahead of a box outside it.
        ("<think>2+2</think><answer>4</answer>", "4", "answer_tag"),
        (r"<answer>so \boxed{42}</answer>", "42", "answer_tag"),
        ("<answer>The answer is 42.</answer>", "42", "answer_tag"),
        (r"\boxed{1} <answer>$2$</answer>", "1 | 2", "answer_tag"),  # a box outside the tag counts too
        (r"<answer>$2$</answer> so \boxed{2}", "2", "answer_tag"),
        ("<answer>#### 18</answer>", "18", "answer_tag"),
        # The last number, when nothing else is there.
        ("I think there are 17 apples", "17", "last_number"),
        ("We get 3, then 5, so yes", "5", "last_number"),
        ("The total is 1,234 apples", "1,234", "last_number"),
        ("the balance ends at -0.5 in the end", "-0.5", "last_number"),
        (r"We find $\cos \angle RPS = -\frac{24}{25}$.", r"-\frac{24}{25}", "last_number"),  # not the 25
        # The closing sentence, when it opens as a conclusion.
        (r"Therefore, $\cos \angle RPS = -\frac{24}{25}$.", r"-\frac{24}{25}", "conclusion"),
        ("So the tables have 310 legs in total.", "310", "conclusion"),
    ],
)
def test_extract_answer_forms(completion: str, span: str, method: str) -> None:
    found = extract_answer(completion, last_number=method == "last_number")
    assert found is not None
    assert (found.text, found.method) == (span, method)


@pytest.mark.parametrize(
    ("completion", "method"),
    [
        (r"\boxed{3} and the answer is 4", "boxed"),  # a box beats a phrase
        ("The answer is 4\n#### 5", "gsm8k"),  # the GSM8K mark beats a phrase
        (r"<answer>1</answer> \boxed{2}", "answer_tag"),  # the tag beats everything
        ("The answer is 4, after 5 tries", "phrase"),  # a phrase beats the last number
    ],
)
def test_extraction_priority(completion: str, method: str) -> None:
    found = extract_answer(completion)
    assert found is not None and found.method == method


@pytest.mark.parametrize(
    "completion",
    [
        r"Since the radius is positive, $r = \sqrt{5}$ meters.",
        r"The speed is $18\pi \cdot \frac{2}{3} = 12\pi$ inches per second.",
        r"So we get $x^2 + x + 1.$",
        "The midpoint is (-1, 6).",
        r"$$\equiv 3 \pmod 9.$$",
        "the value is 3x-6",
        r"This is $11 \sqrt{5} + 11.$",
    ],
)
def test_last_number_is_not_taken_from_a_formula(completion: str) -> None:
    """Grading the 5 of ``\\sqrt{5}`` would reward a wrong answer; no answer is the honest verdict."""
    assert extract_answer(completion) is None


@pytest.mark.parametrize(
    ("completion", "span"),
    [
        (r"Volume $= 20 \times 2 = 40 \text{ cubic inches}$", "40"),
        (r"Charlie makes \(\$440\) for the day.", "440"),
        (r"We find the angle is $120^\circ.$", "120"),
        (r"It is \textbf{5}.", "5"),
        ("She makes 9 * 2 = $18 every day.", "18"),
        ("We get 2^5 = 32.", "32"),
    ],
)
def test_last_number_standing_alone(completion: str, span: str) -> None:
    found = extract_answer(completion, last_number=True)
    assert found is not None and (found.text, found.method) == (span, "last_number")


def test_last_number_fallback_is_opt_in() -> None:
    assert extract_answer("I think it is 18 in total", last_number=True).text == "18"
    assert extract_answer("I think it is 18 in total") is None


@pytest.mark.parametrize("completion", ["", "I do not know.", r"\boxed{", "<answer>", "the answer is"])
def test_no_answer_found(completion: str) -> None:
    assert extract_answer(completion) is None


def test_balanced_group_skips_escapes() -> None:
    """``\\{`` is a literal brace; ``\\\\`` is a line break, so the brace after it is real."""
    assert balanced_group(r"{a\}b}", 0) == (r"a\}b", 6)
    assert balanced_group(r"{a\\{b}c}", 0) == (r"a\\{b}c", 9)
    assert balanced_group("{unclosed", 0) is None
    assert balanced_group("x{}", 0) is None
    assert last_boxed(r"\boxed{a} \boxed{b") == "a"  # an unclosed last box does not hide the closed one


# -- extract_gold: gold answers as datasets write them ---------------------------------------

@pytest.mark.parametrize(
    ("gold", "span"),
    [
        ("1/3", "1/3"),
        (r"\frac13", r"\frac13"),
        ("x=2", "x=2"),
        (r"$\pi/2$", r"\pi/2"),
        (r"\(\pi/2\)", r"\pi/2"),
        ("#### 18", "18"),
        ("Janet sells 9 eggs.\n#### 18", "18"),
        ("(B)", "(B)"),
        (r"\boxed{5}", "5"),
        ("  42 ", "42"),
    ],
)
def test_extract_gold(gold: str, span: str) -> None:
    assert extract_gold(gold) == span


@pytest.mark.parametrize(
    ("gold", "completion"),
    [
        ("1/3", r"\boxed{\frac{1}{3}}"),
        (r"\frac13", r"\boxed{1/3}"),
        ("x=2", r"\boxed{2}"),
        ("x=2", r"\boxed{x = 2}"),
        (r"$\pi/2$", r"\boxed{\frac{\pi}{2}}"),
        ("#### 18", "The answer is 18."),
        ("(B)", r"\boxed{B}"),
        ("(B)", "The answer is (B)."),
    ],
)
def test_gold_accepted_as_bare_string(gold: str, completion: str) -> None:
    verdict = grade(gold, completion)
    assert (verdict.correct, verdict.status, verdict.score) == (True, "ok", 1.0)


@pytest.mark.parametrize(
    ("gold", "completion"),
    [("1/3", r"\boxed{\frac{1}{4}}"), ("x=2", r"\boxed{3}"), ("#### 18", "#### 19"), ("(B)", r"\boxed{C}")],
)
def test_gold_forms_reject_wrong_answers(gold: str, completion: str) -> None:
    verdict = grade(gold, completion)
    assert (verdict.correct, verdict.status, verdict.score) == (False, "ok", 0.0)


# -- the same forms through the verifier ------------------------------------------------------

@pytest.mark.parametrize(
    ("completion", "method"),
    [
        (r"Nested: \boxed{\textbf{\frac{1}{2}}}", "boxed"),
        (r"\fbox{0.5}", "boxed"),
        (r"\boxed 0.5", "boxed"),
        ("The final answer is $\\frac12$. I hope it is correct.", "phrase"),
        ("The answer is 1/2.", "phrase"),
        ("Answer: 0.5", "phrase"),
        ("Half of it.\n#### 0.5", "gsm8k"),
        ("<answer>1/2</answer>", "answer_tag"),
        (r"<answer>\boxed{\dfrac{1}{2}}</answer>", "answer_tag"),
        ("we end with 0.5 of the cake", "last_number"),
    ],
)
def test_verifier_grades_every_form(completion: str, method: str) -> None:
    verdict = grade(r"\frac{1}{2}", completion, last_number=method == "last_number")
    assert verdict.correct is True and verdict.status == "ok"
    assert verdict.details["method"] == method


def test_last_number_off_by_default_gives_no_answer() -> None:
    assert grade("18", "I think it is 18 in total", last_number=True).correct is True
    verdict = grade("18", "I think it is 18 in total")
    assert (verdict.correct, verdict.status, verdict.score) == (False, "no_answer", 0.0)


def test_number_inside_a_formula_is_not_graded() -> None:
    """The last-number fallback would otherwise call 5 right for ``\\sqrt{5}``."""
    verdict = grade("5", r"Since the radius is positive, $r = \sqrt{5}$ meters.")
    assert (verdict.correct, verdict.status) == (False, "no_answer")
    assert grade("12", r"The speed is $12\pi$ inches per second.").correct is False


@pytest.mark.parametrize("completion", ["", "I don't know.", "Let me think about it"])
def test_completion_without_answer_is_no_answer(completion: str) -> None:
    verdict = grade("5", completion)
    assert (verdict.correct, verdict.status, verdict.score) == (False, "no_answer", 0.0)
    assert verdict.feedback


def test_chat_completion_uses_last_assistant_turn() -> None:
    """TRL passes conversational completions as message lists."""
    messages = [{"role": "assistant", "content": r"\boxed{4}"}, {"role": "user", "content": "sure?"},
                {"role": "assistant", "content": r"Yes: \boxed{5}"}]
    verdict = MathVerifier(workers=0).verify(Sample(completion=messages, fields={"answer": "5"}))
    assert verdict.correct is True
