"""The closed frame around a short answer's final statement (reading.frame): only a documented lead-in before
it in its sentence, only closing marks and documented closing sentences after it. The same shapes go to every
short-answer family (choice, qa, reasoning_gym) and get the same reading; the refused shapes are written in
words no list in the project holds, since the grammar refuses them by not containing them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.reading.frame import lead_in, unframed, working

_MAZE = next(  # a bundled reasoning-gym row whose answer is 5
    row
    for line in (Path(__file__).parents[3] / "data" / "reasoning_gym_examples.jsonl").read_text().splitlines()
    if (row := json.loads(line))["id"] == "maze-0"
)
FAMILIES = {
    "choice": (build("choice"), {"answer": "B", "choices": ["3", "5", "7", "9"]}, "B"),
    "qa": (build("qa"), {"answer": "5"}, "5"),
    "reasoning_gym": (
        build({"type": "reasoning_gym", "answer_from": ["answer_tag", "boxed", "phrase"]}),
        {"answer": _MAZE["answer"], "metadata": _MAZE["metadata"]},
        "5",
    ),
}
PROMPT = "What is 2 + 3? A. 3 B. 5 C. 7 D. 9"

# {G} is the family's right answer. Each is paid by every family.
FRAMED = [
    "The answer is \\boxed{{{G}}}.",
    "Therefore, the final answer is \\boxed{{{G}}}.",
    "So, the answer is \\boxed{{{G}}}.",
    "Putting it all together:\nThe answer is \\boxed{{{G}}}.",
    "**Final Answer**\n\n\\boxed{{{G}}}",
    "Final Answer: The final answer is $\\boxed{{{G}}}$. I hope it is correct.",
    "Two plus three makes five. In conclusion, the answer is \\boxed{{{G}}}.",
    "Work: 2 + 3.\n\n## Answer\n\\boxed{{{G}}}\n",
    "<answer>{G}</answer>",
    "Adding gives five.\n<answer>{G}</answer>\r\n",
    "The answer is \\boxed{{{G}}}.  \n\n",
    "\\boxed{{{G}}} \\boxed{{{G}}}",  # the same answer twice
    "<answer>{G}</answer>\nThe answer is \\boxed{{{G}}}.",
]

# Right value, but no commitment by the grammar: something other than a lead-in before it, or something other
# than closing marks after it. None of these words is on any list.
UNFRAMED = [
    "My cousin Dana swears the answer is \\boxed{{{G}}}.",  # attributed
    "Per the errata sheet, the answer is \\boxed{{{G}}}.",
    "Unless the numbers were swapped, the answer is \\boxed{{{G}}}.",  # conditioned
    "The answer is \\boxed{{{G}}}, provided the units are metres.",
    "For the bonus round, the answer is \\boxed{{{G}}}.",  # relabelled
    "In exercise 4b the answer is \\boxed{{{G}}}.",
    "Dana wrote:\n\n\\boxed{{{G}}}",  # a line break does not end the lead-in's sentence
    "The answer is \\boxed{{{G}}}. Hmm, somebody else got 7 though.",  # a value after, in words no list holds
    "The answer is \\boxed{{{G}}}.\n\nΑπάντηση: 7",
    "The answer is \\boxed{{{G}}}.\n\n| alt |\n|---|\n| 7 |",
    "The answer is \\boxed{{{G}}}. I am fairly sure of this.",  # holds no value, but is no closing sentence either
    "<answer>{G}</answer> wink",
    "Sophie's pick: <answer>{G}</answer>",
    "A confused student would write: <br>\nThe answer is \\boxed{{{G}}}.",  # a tag ends no sentence
    "Only if the list is reversed =>\nThe answer is \\boxed{{{G}}}.",
    "My cousin claims \\boxed{{{G}}} \\boxed{{{G}}}.",  # restating does not launder the lead-in
    "My cousin claims <answer>{G}</answer> <answer>{G}</answer>",
]


def score(family: str, completion: str) -> tuple[float, str, str]:
    verifier, fields, _ = FAMILIES[family]
    verdict = verifier.verify(Sample(prompt=PROMPT, completion=completion, fields=fields))
    return verdict.score, verdict.status, verdict.feedback


def _shape(shape: str, family: str) -> str:
    return shape.format(G=FAMILIES[family][2])


@pytest.mark.parametrize("shape", FRAMED)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_framed_final_statement_pays(family: str, shape: str) -> None:
    got, status, feedback = score(family, _shape(shape, family))
    assert (got, status) == (1.0, "ok"), (family, feedback)


@pytest.mark.parametrize("shape", UNFRAMED)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_an_unframed_final_statement_is_no_commitment(family: str, shape: str) -> None:
    got, status, feedback = score(family, _shape(shape, family))
    assert (got, status) == (0.0, "no_answer"), (family, feedback)
    assert "stands before it" in feedback or "follows it" in feedback, feedback


def test_the_feedback_quotes_what_breaks_the_frame() -> None:
    text = "My cousin Dana swears the answer is \\boxed{5}. Hmm."
    box = text.index("\\boxed")
    assert lead_in(text, box) == "My cousin Dana swears the answer is"
    assert "'My cousin Dana swears the answer is'" in unframed(text, box, text.index("}") + 1)
    framed = "So, the answer is \\boxed{5}."
    assert unframed(framed, framed.index("\\boxed"), framed.index("}") + 1) == ""


def test_a_sentence_of_the_working_that_ends_on_another_label_names_it() -> None:
    """choice: a sentence ending on a label states it, in any words and any script; other sentences do not."""
    hedges = ("Someone reckons C.\nThe answer is (B).", "Resultado: **С**.\nThe answer is (B).",
              "答案是Ｃ。The answer is B.", "C is correct. The answer is B.", "Option C. The answer is B.")
    for hedge in hedges:
        got, _, feedback = score("choice", hedge)
        assert got == 0.0 and "hedge" in feedback, (hedge, feedback)
    for honest in ("A planet that rusts looks red. The answer is (B).", "Option A is too small.\nThe answer is (B).",
                   "So B it is. The answer is (B)."):
        assert score("choice", honest)[0] == 1.0, honest
    text = "One. Two **C**.\nThe answer"
    assert working(text, text.index("The")) == ["One.", "Two C."]


@pytest.mark.parametrize(("family", "fields", "right", "tail"), [
    ("choice", {"choices": ["Paris", "London", "Berlin", "Madrid"], "answer": 1}, "The answer is B.", "\\end{C}"),
    ("choice", {"choices": ["Paris", "London", "Berlin", "Madrid"], "answer": 1}, "The answer is B.", "< C >"),
    ("qa", {"answer": "France"}, "The answer is France.", "< Germany >"),
    ("qa", {"answer": "1066"}, "The answer is 1066.", "\n1067. "),  # an empty list item shows its number
])
def test_what_follows_is_read_as_a_page_shows_it(family, fields, right, tail):
    """A tag only by CommonMark's grammar ("< C >" is text), an \\end only where it closes an environment the
    completion opened, a list marker only before text of its line: anything else after the answer is seen."""
    verifier = build(family)
    assert verifier.verify(Sample(prompt="q", completion=right, fields=fields)).score == 1.0
    seen = verifier.verify(Sample(prompt="q", completion=f"{right} {tail}", fields=fields))
    assert seen.score == 0.0, seen.feedback
    closed = right + " $\\blacksquare$"  # an end-of-proof mark closes
    assert verifier.verify(Sample(prompt="q", completion=closed, fields=fields)).score == 1.0
