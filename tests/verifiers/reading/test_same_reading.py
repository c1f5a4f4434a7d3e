"""The same shapes fed to ``math`` and ``qa`` get the same reading: both read through verifiers/reading, so
what one family hides the other hides too (issue 36: ``<!-- <think> -->`` once split them, 0 vs 1.0)."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build

FAMILIES = {"math": build("math"), "qa": build("qa")}

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
    ("The answer is \\boxed{5}. [See](https://x.org/\\boxed{3})", 1.0),
    # what is hidden answers nothing: paid by neither
    ("The answer is <!-- \\boxed{5} --> unclear.", 0.0),
    ("The answer is `\\boxed{5}`.", 0.0),
    ("The answer is ~~\\boxed{5}~~.", 0.0),
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
]


@pytest.mark.parametrize(("completion", "expected"), SHAPES)
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_math_and_qa_read_the_same_shapes_the_same_way(family: str, completion: str, expected: float) -> None:
    verdict = FAMILIES[family].verify(Sample(prompt="What is 2 + 3?", completion=completion, fields={"answer": "5"}))
    assert verdict.score == expected, (family, verdict.status, verdict.feedback)
