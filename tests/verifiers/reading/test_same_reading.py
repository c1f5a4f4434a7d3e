"""The same shapes fed to ``math``, ``qa`` and ``choice`` get the same reading: all read through
verifiers/reading, so what one family hides the others hide too (issue 36: ``<!-- <think> -->`` once split
them, 0 vs 1.0)."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

FAMILIES = {"math": build("math"), "qa": build("qa"), "choice": build("choice")}
OPENED = {
    "math": build({"type": "math", "prompt_opens_think": True}),
    "qa": build({"type": "qa", "prompt_opens_think": True}),
    "choice": build({"type": "choice", "prompt_opens_think": True}),
}
# The gold is 5 for every family: choice's option B is "5", and an option's exact text names it.
FIELDS = {"answer": "5", "choices": ["3", "5", "7", "9"]}


def score(verifier, completion: str) -> tuple[float, str, str]:
    verdict = verifier.verify(Sample(prompt="What is 2 + 3?", completion=completion, fields=FIELDS))
    return verdict.score, verdict.status, verdict.feedback

SHAPES = [
    # what renders shows the answer: paid by both
    ("<!-- <think> -->\nThe answer is \\boxed{5}.", 1.0),
    ("The answer is \\boxed{5}. ~~The answer is \\boxed{3}.~~", 1.0),
    ("The answer is \\boxed{5}. <del>\\boxed{3}</del>", 1.0),
    ("The answer is \\boxed{5}. `\\boxed{3}`", 1.0),
    ("The answer is \\boxed{5}.\n```\n\\boxed{3}\n```", 1.0),
    ("The answer is \\boxed{5}. <!-- \\boxed{3} -->", 1.0),
    ("The answer is \\boxed{5}. \\iffalse \\boxed{3} \\fi", 1.0),
    ("The answer is \\boxed{5}.\n% \\boxed{3}", 1.0),
    ("The answer is \\boxed{5\u200b}.", 1.0),
    ("[See](https://x.org/\\boxed{3}). The answer is \\boxed{5}.", 1.0),
    # what is hidden answers nothing: paid by neither
    ("The answer is <!-- \\boxed{5} --> unclear.", 0.0),
    ("The answer is `\\boxed{5}`.", 0.0),
    ("The answer is ~~\\boxed{5}~~.", 0.0),
    ("The answer is ~\\boxed{5}~.", 0.0),  # GitHub strikes a single-tilde run too
    ("It is ~ not struck ~ here. The answer is \\boxed{5}.", 1.0),  # a tilde beside a space opens nothing
    ("The answer is \\boxed{\\phantom{5}}.", 0.0),
    ("The answer is \\boxed{\\cancel{5}}.", 0.0),
    ("The answer is \\boxed{\\textcolor{white}{5}}.", 0.0),
    ("I could not finish. <!-- never closed \\boxed{5}", 0.0),
    ("![\\boxed{5}](plot.png)", 0.0),
    # a completion that redefines commands has no readable answer
    ("\\def\\boxed#1{3} The answer is \\boxed{5}.", 0.0),
    ("\\renewcommand{\\boxed}[1]{3} The answer is \\boxed{5}.", 0.0),
    ("\\newcommand{\\five}{5} The answer is \\boxed{5}.", 0.0),
    # a visible second value is still a hedge for both
    ("The answer is \\boxed{5}. The answer is \\boxed{3}.", 0.0),
    ("The answer is \\boxed{5}. [\\boxed{3}](https://x.org)", 0.0),
    # reasoning blocks the completion opens are not the answer region; a stray close hides nothing
    ("<think>The answer is \\boxed{3}.</think> The answer is \\boxed{5}.", 1.0),
    ("<think>The answer is \\boxed{5}.</think> The answer is \\boxed{3}.", 0.0),
    ("<think>The answer is \\boxed{5}.", 0.0),
    ("The answer is \\boxed{3}. </think> The answer is \\boxed{5}.", 0.0),
    ("The answer is \\boxed{5}. </think>", 1.0),
    ("<!-- </think> --> The answer is \\boxed{5}.", 1.0),
]

# With prompt_opens_think (the chat template opened the block): everything up to the first </think> is reasoning.
OPENED_SHAPES = [
    ("The answer is \\boxed{3}. </think> The answer is \\boxed{5}.", 1.0),
    ("The answer is \\boxed{5}. </think> The answer is \\boxed{3}.", 0.0),
    ("The answer is \\boxed{5}.", 0.0),  # never closed: all reasoning
    ("Hmm. </think> The answer is \\boxed{5}. </think> The answer is \\boxed{3}.", 0.0),  # one block only
    ("Hmm. </think> <think>\\boxed{3}</think> The answer is \\boxed{5}.", 1.0),
]


@pytest.mark.parametrize(("completion", "expected"), SHAPES)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_reads_the_same_shapes_the_same_way(family: str, completion: str, expected: float) -> None:
    got, status, feedback = score(FAMILIES[family], completion)
    assert got == expected, (family, status, feedback)


@pytest.mark.parametrize(("completion", "expected"), OPENED_SHAPES)
@pytest.mark.parametrize("family", sorted(OPENED))
def test_prompt_opens_think_moves_the_region_the_same_way(family: str, completion: str, expected: float) -> None:
    got, status, feedback = score(OPENED[family], completion)
    assert got == expected, (family, status, feedback)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_stray_close_that_cost_the_reward_names_the_option(family: str) -> None:
    got, _, feedback = score(FAMILIES[family], "The answer is \\boxed{3}. </think> The answer is \\boxed{5}.")
    assert got == 0.0 and "prompt_opens_think: true" in feedback
    got, _, feedback = score(FAMILIES[family], "The answer is \\boxed{3}. The answer is \\boxed{5}.")
    assert got == 0.0 and "prompt_opens_think" not in feedback  # no stray close: no hint


# The answer region is one rule for every family, whatever its answer looks like (reasoning_gym reads it with
# reading.statements, tested above through qa and choice; its scorers need the sandbox): each family states a right
# answer ``a`` and a wrong one ``w`` in its own form, and the same region shapes pay the same.
RIGHT_CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
WRONG_CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
IN_FORM = {
    "math": ({"type": "math"}, {"answer": "5"}, "The answer is \\boxed{5}.", "The answer is \\boxed{3}."),
    "qa": ({"type": "qa"}, {"answer": "5"}, "The answer is \\boxed{5}.", "The answer is \\boxed{3}."),
    "choice": ({"type": "choice"}, FIELDS, "The answer is \\boxed{B}.", "The answer is \\boxed{A}."),
    "json": ({"type": "json", "workers": 0, "schema_field": None}, {"reference": {"x": 5}}, '{"x": 5}', '{"x": 3}'),
    "tool_call": (
        {"type": "tool_call"},
        {"ground_truth": [{"get_weather": {"city": ["Paris"]}}]},
        RIGHT_CALL,
        WRONG_CALL,
    ),
    "ifeval": (  # the instruction "no commas": the answer is the response the instruction judges
        {"type": "ifeval"},
        {"instruction_id_list": ["punctuation:no_comma"], "kwargs": [{}]},
        "The sky is blue and the grass is green in the spring.",
        "The sky is blue, and the grass is green, in the spring.",
    ),
}
REGION_SHAPES = [
    ("<think>{w}</think>\n{a}", False, 1.0),  # a block the completion opens is reasoning
    ("<think>{a}</think>\n{w}", False, 0.0),
    ("<think>{a}", False, 0.0),  # never closed: all reasoning
    ("{a}\n<think>{w}", False, 0.0),  # reasoning comes first: a block opened after the answer hides nothing
    ("{a}\n<think>{w}</think>", False, 0.0),
    ("<think>{w}</think>\n{a}\n<think>{w}</think>", False, 0.0),
    ("<think>{w}</think>\n<think>{w}</think>\n{a}", False, 1.0),  # blocks before any answer text are reasoning
    ("{w}\n</think>\n{a}", False, 0.0),  # a stray close hides nothing: both are read, a hedge
    ("{w}\n</think>\n{a}", True, 1.0),  # unless the spec says the template opened the block
    ("{a}\n</think>\n{w}", True, 0.0),
    ("{a}", True, 0.0),  # opened by the template, never closed
]


@pytest.mark.parametrize(("shape", "opened", "expected"), REGION_SHAPES)
@pytest.mark.parametrize("family", sorted(IN_FORM))
def test_every_family_cuts_the_same_answer_region(family: str, shape: str, opened: bool, expected: float) -> None:
    spec, fields, right, wrong = IN_FORM[family]
    reward = build({**spec, "prompt_opens_think": opened})
    completion = shape.format(a=right, w=wrong)
    verdict = reward.verify(Sample(prompt="What is 2 + 3?", completion=completion, fields=fields))
    assert verdict.status in ("ok", "no_answer"), (family, verdict.feedback)  # read and scored, not refused
    assert verdict.score == expected, (family, completion, verdict.status, verdict.feedback)
