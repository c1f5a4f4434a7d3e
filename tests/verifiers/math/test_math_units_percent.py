"""Issue 23, items 3 and 4: units and scales are compared, not dropped, and a percent is read once.

When both sides carry a unit they must be the same unit; a unit on the answer alone must be the
one the prompt asks for (a bare gold of 4 to "how many minutes" is 4 minutes); count nouns and a
unit the prompt does not contradict are the bare number. ``X%`` is X where the gold is a
percentage or the prompt asks for one, and X/100 everywhere else, never both.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.math.prompt import read_prompt
from rewardsmith.verifiers.math.units import unit_key

MATH = build({"type": "math", "workers": 0})


def score(gold: str, completion: str, prompt: str = "") -> float:
    return MATH.verify(Sample(prompt=prompt, completion=completion, fields={"answer": gold})).score


@pytest.mark.parametrize(("gold", "completion", "prompt"), [
    ("3 \\text{ m}", r"\boxed{3\,\text{mm}}", ""),
    ("3 \\text{ m}", r"\boxed{3 \text{ km}}", ""),
    ("\\$7", r"The answer is 7 cents.", ""),
    ("\\$32,\\!348", r"\boxed{32348 \text{ cents}}", ""),
    ("4", r"\boxed{4 \text{ seconds}}", "A kettle boils in 240 seconds. How many minutes is that?"),
    ("4 \\text{ minutes}", r"\boxed{4 \text{ seconds}}", ""),
    ("5", r"\boxed{5 \text{ g}}", "How many kilograms of flour are left?"),
    ("5", r"\boxed{5 \text{ grams}}", "Express the mass in kilograms."),
    ("12", r"\boxed{12 \text{ feet}}", "How many inches long is the board?"),
    ("29", r"\boxed{29 \text{ dollars}}", "How many cents does she have?"),
    ("36", r"\boxed{36 \text{ hours}}", "How many seconds does it take?"),
    ("10", r"\boxed{10 \text{ cm}^2}", "What is the area in square meters?"),
    ("6", r"\boxed{6 tens}", ""),  # a plural that counts by a number is not a count noun
    ("6", r"\boxed{6 halves}", ""),
    ("6", r"\boxed{6 pairs}", ""),
    ("6", r"\boxed{6 thousand}", ""),
    ("12", r"\boxed{12 ish}", ""),
])
def test_another_unit_is_another_quantity(gold: str, completion: str, prompt: str) -> None:
    assert score(gold, completion, prompt) == 0.0


@pytest.mark.parametrize(("gold", "completion", "prompt"), [
    ("3 \\text{ m}", r"\boxed{3\,\text{m}}", ""),
    ("3 \\text{ m}", r"\boxed{3 \text{ meters}}", ""),
    ("3 \\text{ m}", r"\boxed{3}", ""),
    ("\\$7", r"The answer is \boxed{7}.", ""),
    ("\\$7", r"The answer is \boxed{7 \text{ dollars}}.", ""),
    ("\\$32,\\!348", r"\boxed{32,\!348 \text{ dollars}}", ""),
    ("4", r"\boxed{4 \text{ minutes}}", "A kettle boils in 240 seconds. How many minutes is that?"),
    ("30", r"\boxed{30 \text{ dollars}}", "How much money does she have?"),
    ("30", r"\boxed{30 \text{ dollars}}", ""),
    ("10", r"\boxed{10 \text{ cm}}", ""),
    ("864 \\mbox{ inches}^2", r"\boxed{864 \text{ square inches}}", ""),
    ("25", r"\boxed{25 \text{ square inches}}", "What is the area, in inches, of the square?"),
    ("5", r"\boxed{5 \text{ kg}}", "How many kilograms of flour are left?"),
    ("6", r"\boxed{6 marbles}", "How many marbles are red?"),  # count nouns are the bare number
    ("310", "The answer is 310 legs.", ""),
    ("6", r"\boxed{6 \text{ apples}}", ""),
])
def test_the_same_unit_or_a_unit_nobody_contradicts_is_the_number(gold: str, completion: str, prompt: str) -> None:
    assert score(gold, completion, prompt) == 1.0


@pytest.mark.parametrize(("gold", "completion", "prompt", "expected"), [
    ("9", r"\boxed{9\%}", "How many marbles are red?", 0.0),
    ("0.4", r"\boxed{0.4\%}", "", 0.0),
    ("\\frac{3}{5}", r"\boxed{\frac{3}{5}\%}", "", 0.0),
    ("0.4", r"\boxed{40\%}", "", 1.0),
    ("\\frac{3}{5}", r"\boxed{60\%}", "", 1.0),
    ("25", r"\boxed{25\%}", "What percent of 40 is 10?", 1.0),
    ("25", r"\boxed{25\%}", "By what percentage did the price rise?", 1.0),
    ("25", r"\boxed{0.25\%}", "What percent of 40 is 10?", 0.0),
    ("50\\%", r"\boxed{50}", "", 1.0),
    ("50\\%", r"\boxed{50\%}", "", 1.0),
    ("12", r"\boxed{12\%}", "20% of the 60 students wear glasses. How many students wear glasses?", 0.0),
])
def test_a_percent_is_read_once(gold: str, completion: str, prompt: str, expected: float) -> None:
    assert score(gold, completion, prompt) == expected


def test_what_the_prompt_asks_is_read_from_its_question() -> None:
    asked = read_prompt("A rope is 3 meters long. How many centimeters is it?")
    assert asked.unit == "centimeter" and not asked.percent
    assert read_prompt("How long, in minutes, does it take? Express your answer in seconds.").unit == "second"
    assert read_prompt("20% of the class left. How many stayed?").percent is False
    assert read_prompt("What percent of 40 is 10?").percent is True
    assert read_prompt("").unit is None


@pytest.mark.parametrize(("written", "key"), [
    (r"\text{ cm}", "centimeter"), ("cm^2", "centimeter^2"), (r"\text{ square centimeters}", "centimeter^2"),
    ("sq cm", "centimeter^2"), ("dollars", "dollar"), ("$", "dollar"), (r"\mbox{ inches}^2", "inch^2"),
    ("m", "meter"), ("M", None), ("apples", None),
])
def test_units_are_keyed_by_what_they_measure(written: str, key: str | None) -> None:
    assert unit_key(written) == key
