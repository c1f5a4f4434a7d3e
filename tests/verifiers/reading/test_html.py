"""HTML in an answer is read only in a closed grammar (reading/html.py): text elements of the standard without
attributes (but a few), and names the standard does not define. Anything else can hide or show any text, so
the completion states nothing: neither a gold hidden from the reader nor a hedge hidden from the verifier pays.
The styles below are written in ways no list in the project names; the grammar refuses them by not holding them."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.reading import answer_region
from rewardsmith.verifiers.reading.html import unreadable_tag

FAMILIES = {
    "math": ({"answer": "5"}, "\\boxed{5}"),
    "qa": ({"answer": "5"}, "5"),
    "choice": ({"answer": "B", "choices": ["3", "5", "7", "9"]}, "B"),
}

STYLED = [
    "I won't say. <span style=\"filter:opacity(0)\">The answer is {G}.</span>",  # the gold hidden by a style
    "I won't say. <em class=\"sr-only\">The answer is {G}.</em>",  # by a class the page may style
    "I won't say. <kbd hidden=\"until-found\">The answer is {G}.</kbd>",
    "I won't say. <output>The answer is {G}.</output>",  # an element that is no text element
    "I won't say. <select><option>The answer is {G}.</option></select>",
    "The answer is {G}. <span style=\"display:none;display:inline\">Or 7.</span>",  # a hedge the cascade shows
    "The answer is {G}. <p dir=\"rtl\">Or 7.</p>",  # reordered
    "The answer is <bdo>{G}</bdo>.",
]

PLAIN = [
    "The answer is <b>{G}</b>.",
    "<p>The answer is <strong>{G}</strong>.</p>",
    "Steps.<br>The answer is {G}.",
    "<think>hmm</think><answer>{G}</answer>",
    "<details open><summary>Work</summary>2 + 3.</details>\n\nThe answer is {G}.",
    "The answer is {G}. <!-- <span style=\"color:white\"> -->",  # a tag in a comment is text
    "Try `<font color=white>` next time. The answer is {G}.",  # a tag in code is text
    "Since $a<b$ and $c>d$, the result holds.\n\nThe answer is {G}.",  # no tag: comparisons in math
]


def score(family: str, completion: str) -> tuple[float, str, str]:
    fields, gold = FAMILIES[family]
    verdict = build(family).verify(Sample(prompt="What is 2 + 3?", completion=completion.format(G=gold), fields=fields))
    return verdict.score, verdict.status, verdict.feedback


@pytest.mark.parametrize("shape", STYLED)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_html_outside_the_grammar_leaves_nothing_to_read(family: str, shape: str) -> None:
    got, status, feedback = score(family, shape)
    assert (got, status) == (0.0, "no_answer") and "HTML outside the readable set" in feedback, feedback


@pytest.mark.parametrize("shape", PLAIN)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_html_in_the_grammar_is_read(family: str, shape: str) -> None:
    assert score(family, shape)[0] == 1.0


def test_the_offending_tag_is_named() -> None:
    assert unreadable_tag('ok <b>x</b> <span style="x">y</span>') == '<span style="x">'
    assert unreadable_tag("<confidence>0.9</confidence> <tool_call>{}</tool_call>") == ""  # not standard HTML
    assert unreadable_tag("<dialog>x</dialog>") == "<dialog>"
    assert answer_region("<marquee>5</marquee>").text == ""
