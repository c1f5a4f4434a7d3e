"""The shared final-answer reader (verifiers/reading/statements.py): where it reads, which form decides,
and that every statement of it is kept so that the families see a hedge."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.reading.statements import FORMS, MAX_STATEMENTS, final_answer, plain, visible_region


def texts(completion: str, forms=FORMS) -> list[str] | None:
    found = final_answer(completion, forms)
    return None if found is None else found.texts


@pytest.mark.parametrize(
    ("completion", "expected", "form"),
    [
        ("<answer>B</answer>", ["B"], "answer_tag"),
        ("<answer>The answer is (C).</answer>", ["(C)"], "answer_tag"),
        ("So we get \\boxed{Paris}.", ["Paris"], "boxed"),
        ("The final answer is Paris.", ["Paris"], "phrase"),
        ("Answer: St. Louis. It lies on the Mississippi.", ["St. Louis"], "phrase"),
        ("**Final Answer:** B", ["B"], "phrase"),
        ("The correct option is D, because the rest are false.", ["D"], "phrase"),
        ("My answer is Berlin", ["Berlin"], "phrase"),
        ("Paris", ["Paris"], "bare"),
    ],
)
def test_each_form_reads_the_stated_answer(completion, expected, form):
    found = final_answer(completion)
    assert found is not None and found.texts == expected and found.form == form


def test_the_strongest_form_decides_and_earlier_weaker_statements_count_too():
    # Any committed statement in the answer region counts (issue 36): an answer stated before the tag is a
    # second answer, not working (working belongs in the reasoning block, which is not the answer region).
    found = final_answer("The answer is A.\n<answer>B</answer>")
    assert found is not None and found.form == "answer_tag" and found.texts == ["A", "B"]
    assert texts("The answer is B.\n<answer>B</answer>") == ["B", "B"]


def test_weaker_statements_after_the_deciding_one_count_as_statements():
    assert texts("<answer>B</answer>\nSo \\boxed{C}.") == ["B", "C"]
    assert texts("\\boxed{A}. The answer is B.") == ["A", "B"]


def test_every_statement_of_the_deciding_form_is_kept():
    assert texts("\\boxed{A} or \\boxed{B}") == ["A", "B"]
    assert texts("<answer>A</answer><answer>B</answer>") == ["A", "B"]


@pytest.mark.parametrize(
    "completion",
    [
        "\\boxed{B}, or maybe C",
        "\\boxed{B} (or C)",
        "<answer>B</answer> Actually, C.",
        "\\boxed{B}. Alternatively C.",
    ],
)
def test_what_a_cue_after_a_statement_offers_is_a_statement(completion):
    found = final_answer(completion)
    assert found is not None and found.texts[-1] == "C" and found.statements[-1].form == "offer"


@pytest.mark.parametrize(
    "completion",
    [
        "The answer is not B.",
        "The answer is definitely not Paris.",
        "It is not \\boxed{B}.",
        "not <answer>B</answer>",
        "The answer is B?",
        "\\boxed{B}, but that is wrong.",
        "\\boxed{B} is incorrect.",
    ],
)
def test_denied_asked_or_retracted_statements_are_not_answers(completion):
    assert final_answer(completion) is None


def test_reasoning_and_comments_are_never_read():
    assert final_answer("<think>The answer is B.</think>") is None
    assert final_answer("<think>\\boxed{B}") is None  # unclosed: everything after is reasoning
    # A stray </think> hides nothing unless the spec says the template opened the block.
    assert texts("The answer is B.</think>The answer is C.") == ["B", "C"]
    assert final_answer("The answer is B.</think>The answer is C.", prompt_opens_think=True).texts == ["C"]
    assert final_answer("<!-- The answer is B. -->") is None
    assert visible_region("<think>x</think>b") == " b"
    assert visible_region("a<think>x</think>b") == "a x b"  # reasoning comes first: a late block is text


@pytest.mark.parametrize(
    "completion",
    [
        "I think it is B but I am not sure about it at all honestly",  # negation
        "Is it B?",
        "Maybe B",
        "line one\nB",
        "\\boxed{}",
        "<answer></answer>",
        "",
        "one two three four five six seven eight nine ten eleven twelve thirteen",
    ],
)
def test_a_bare_answer_is_one_short_committed_line(completion):
    assert final_answer(completion) is None


def test_bare_is_only_read_when_listed():
    assert final_answer("Paris", ("answer_tag", "boxed", "phrase")) is None
    assert final_answer("The answer is Paris.", ("answer_tag",)) is None


def test_spam_overflows():
    found = final_answer(" ".join(f"\\boxed{{{i}}}" for i in range(40)))
    assert found is not None and found.overflow and len(found.statements) > MAX_STATEMENTS


def test_unclosed_box_and_nested_boxes():
    assert final_answer("\\boxed{B") is None
    assert texts("\\boxed{\\boxed{B}}") == ["\\boxed{B}"]


def test_plain_removes_dress():
    assert plain("\\text{(B)}") == "(B)"
    assert plain("**Paris**.") == "Paris"
    assert plain("$\\textbf{\\text{B}}$") == "B"


def test_linear_on_long_input():
    import time

    text = "The answer is " + "x" * 200_000 + " (" * 50_000 + "\\boxed{" * 10_000
    start = time.perf_counter()
    final_answer(text)
    assert time.perf_counter() - start < 5  # a guard against a quadratic blow-up, far above the real cost


@pytest.mark.parametrize(
    "completion",
    [
        "\\boxed{\\phantom{B}}",
        "\\boxed{\\hphantom{B}}",
        "The answer is \\boxed{{\\color{white}B}}.",
        "I could not finish.\n% \\boxed{B}",
        "I could not finish. \\iffalse \\boxed{B} \\fi",
        "I could not finish.\n```\nprint(r'\\boxed{B}')\n```",
        "<!-- \\boxed{B} -->",
        "\\textcolor{white}{\\boxed{B}}",
    ],
)
def test_what_a_reader_never_sees_is_not_read(completion):
    found = final_answer(completion)
    assert found is None or all("B" not in text for text in found.texts), found


def test_visible_colour_is_dress():
    assert plain("\\color{blue}{2}") == "2"


@pytest.mark.parametrize(
    ("completion", "offered"),
    [
        ("The answer is \\boxed{B}. Also, x = A works.", "A"),
        ("\\boxed{B}\\ \\text{(or A)}", "A"),
        ("Answer: B. But it could also be A.", "A"),
        ("Answer: 2. On second thought, the right value is 3.", "3"),
        ("\\boxed{B}. A is also correct.", "A"),
    ],
)
def test_offers_after_the_answer_are_statements(completion, offered):
    found = final_answer(completion)
    assert found is not None and offered in [s.text for s in found.statements if s.form == "offer"], found


@pytest.mark.parametrize(
    "completion",
    [
        "So it could be anything, for example 2.",
        "Therefore, 2 is wrong.",
        "Answer: I am not sure it is 2.",
        "Answer: maybe B",
        "The answer might be B.",
        "The answer is \\boxed{William Shakespeare",
    ],
)
def test_doubt_guesses_and_unclosed_answers_are_not_statements(completion):
    assert final_answer(completion) is None


@pytest.mark.parametrize(
    "completion",
    [
        "The answer is (B), but that is wrong.",
        "Answer: B - no wait, that's incorrect",
        "So the answer is (B)? I cannot tell.",
    ],
)
def test_a_phrase_taken_back_or_asked_in_its_own_sentence_is_not_a_statement(completion):
    assert final_answer(completion) is None


@pytest.mark.parametrize("unit", ["<answer>B</answer>", "\\boxed{B}", "<answer></answer>"])
def test_spam_past_the_reading_limit_overflows_instead_of_hiding_the_last_statement(unit):
    found = final_answer(unit * 200 + "<answer>C</answer>\\boxed{D}")
    assert found is not None and (found.overflow or {"C", "D"} <= set(found.texts))
    spam_after = final_answer("<answer>C</answer>" + "\\boxed{C}" * 200 + "\\boxed{D}")
    assert spam_after is not None and spam_after.overflow
    phrases_after = final_answer("<answer>C</answer>" + "The answer is C. " * 200 + "The answer is D.")
    assert phrases_after is not None and phrases_after.overflow


def test_spam_is_read_in_linear_time():
    import time

    start = time.perf_counter()
    for text in ("<answer>x</answer>" * 20_000, "\\boxed{x}" * 20_000, "The answer is x. " * 20_000):
        final_answer(text)
    assert time.perf_counter() - start < 5  # a guard against a quadratic blow-up, far above the real cost
