"""Reward-model data: the step splitter's round trip, the three row formats checked row by row,
ProcessBench conversion, outcome labels from a scored file, and the synthetic error generator."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter

import pytest
from conftest import REPO

from rewardsmith.reward_models.data import (
    DataError,
    Pair,
    Point,
    Stepwise,
    from_processbench,
    label_counts,
    load_examples,
    outcome_rows,
    require_examples,
)
from rewardsmith.reward_models.steps import StepSplitter
from rewardsmith.reward_models.synthetic import generate

# --------------------------------------------------------------------------- splitter


@pytest.mark.parametrize("separator", ["\n\n", "\n", " ки\n", "<step>"])
@pytest.mark.parametrize("steps", [["one"], ["a b", "c", "d e f"], ["x = 1 + 2 = 3.", "So x is 3."]])
def test_split_inverts_join(separator, steps):
    splitter = StepSplitter(separator)
    text = splitter.join(steps)
    assert splitter.split(text) == steps
    joined, spans = splitter.joined_spans(steps)
    assert joined == text
    assert [joined[a:b] for a, b in spans] == steps


def test_split_trims_whitespace_and_drops_empty_pieces():
    splitter = StepSplitter()
    text = "  first step \n\n\n\n second\n\n   \n\nthird  "
    assert splitter.split(text) == ["first step", "second", "third"]
    spans = splitter.spans(text)
    assert [text[a:b] for a, b in spans] == ["first step", "second", "third"]
    assert splitter.prefixes(text)[1].endswith("second")
    assert splitter.split("") == [] and splitter.split(" \n\n ") == []


def test_separator_must_not_be_empty():
    with pytest.raises(ValueError, match="non-empty"):
        StepSplitter("")


# --------------------------------------------------------------------------- formats


def numbered(rows):
    return list(enumerate(rows, start=1))


def test_formats_are_detected_and_parsed():
    pairs = load_examples(numbered([{"prompt": "p", "chosen": "a", "rejected": "b", "margin": 0.5}]))
    assert pairs.kind == "pairwise" and pairs.examples == [Pair("p", "a", "b", 0.5, line=1)]
    points = load_examples(numbered([{"prompt": "p", "completion": "c", "label": True}]))
    assert points.kind == "pointwise" and points.examples == [Point("p", "c", 1.0, line=1)]
    steps = load_examples(numbered([{"prompt": "p", "steps": ["s1", " s2 "], "labels": [1, 0.25]}]))
    assert steps.kind == "stepwise"
    assert steps.examples[0].steps == ("s1", "s2") and steps.examples[0].labels == (1.0, 0.25)


def test_chat_messages_are_accepted_as_text():
    row = {"prompt": [{"role": "user", "content": "2+2?"}], "chosen": [{"role": "assistant", "content": "4"}],
           "rejected": [{"role": "assistant", "content": "5"}]}
    loaded = load_examples(numbered([row]), "pairwise")
    assert not loaded.problems and loaded.examples[0].chosen[0]["content"] == "4"


BAD_STEPWISE = [
    ({"prompt": "p", "labels": [1]}, "missing steps"),
    ({"prompt": "p", "steps": [], "labels": []}, "non-empty list"),
    ({"prompt": "p", "steps": ["a", "  "], "labels": [1, 1]}, "non-empty string"),
    ({"prompt": "p", "steps": ["a", "b"], "labels": [1]}, "1 labels for 2 steps"),
    ({"prompt": "p", "steps": ["a"], "labels": [1.5]}, r"labels\[0\] must be in \[0, 1\]"),
    ({"prompt": "p", "steps": ["a"], "labels": [-0.1]}, r"must be in \[0, 1\]"),
    ({"prompt": "p", "steps": ["a"], "labels": [float("nan")]}, "finite"),
    ({"prompt": "p", "steps": ["a"], "labels": ["yes"]}, "must be a number"),
    ({"prompt": "p", "steps": "a", "labels": [1]}, "non-empty list"),
    ({"prompt": 3, "steps": ["a"], "labels": [1]}, "prompt must be text"),
]


def test_malformed_rows_are_reported_by_line_and_skipped():
    good = {"prompt": "p", "steps": ["a", "b"], "labels": [1, 0]}
    rows = [good] + [row for row, _ in BAD_STEPWISE] + ["Expecting value: line 1 column 1", good]
    loaded = load_examples(numbered(rows), "stepwise")
    assert len(loaded.examples) == 2 and [e.line for e in loaded.examples] == [1, len(rows)]
    assert [p.line for p in loaded.problems] == list(range(2, len(rows)))
    for problem, (_, expected) in zip(loaded.problems, BAD_STEPWISE, strict=False):
        assert re.search(expected, problem.message), (problem, expected)
    assert "Expecting value" in loaded.problems[-1].message
    text = loaded.describe()
    assert text.startswith("2 stepwise rows; 11 skipped (line 2: missing steps")


@pytest.mark.parametrize(("row", "expected"), [
    ({"prompt": "p", "completion": "c", "label": 2}, r"label must be in \[0, 1\]"),
    ({"prompt": "p", "completion": "", "label": 1}, "completion is empty"),
    ({"prompt": "p", "completion": 5, "label": 1}, "completion must be text"),
])
def test_bad_pointwise_rows(row, expected):
    loaded = load_examples(numbered([row]), "pointwise")
    assert not loaded.examples and re.search(expected, loaded.problems[0].message)


def test_a_file_with_no_usable_row_fails_with_what_to_do():
    loaded = load_examples(numbered([{"question": "q", "answer": "a"}, {"prompt": "p"}]))
    assert not loaded.examples and len(loaded.problems) == 2
    with pytest.raises(DataError, match=r"data.jsonl: no usable row in 2 rows \(first: line 1: no known format"):
        require_examples(loaded, "data.jsonl")


def test_rows_before_the_first_usable_one_are_counted_too():
    rows = [{"junk": 1}, {"prompt": "p", "completion": "c", "label": 0}]
    loaded = load_examples(numbered(rows), ("pairwise", "pointwise"))
    assert loaded.kind == "pointwise" and len(loaded.examples) == 1 and loaded.problems[0].line == 1


# --------------------------------------------------------------------------- converters


def test_processbench_rows_convert_with_steps_after_the_first_error_dropped():
    row = {"id": "x", "problem": "q", "steps": ["a", "b", "c", "d"], "label": 1, "final_answer_correct": False}
    out = from_processbench(row)
    assert out["steps"] == ["a", "b"] and out["labels"] == [True, False] and out["first_error"] == 1
    assert from_processbench(row, keep_after_error=True)["labels"] == [True, False, False, False]
    clean = from_processbench({**row, "label": -1})
    assert clean["labels"] == [True] * 4
    example = load_examples(numbered([out]), "stepwise").examples[0]
    assert isinstance(example, Stepwise) and example.first_error == 1
    with pytest.raises(ValueError, match="outside"):
        from_processbench({**row, "label": 4})


def scored(prompt, completion, score, correct, status="ok"):
    return {"prompt": prompt, "completion": completion, "reward": score,
            "verdict": {"score": score, "correct": correct, "status": status}}


SCORED = [
    scored("q1", "right", 1.0, True), scored("q1", "wrong", 0.0, False), scored("q1", "blank", 0.0, False, "no_answer"),
    scored("q2", "a", 1.0, True), scored("q2", "b", 1.0, True),  # a tie: no pair
    scored("q3", "down", 0.0, None, "error"), scored("q3", "bad", 0.0, None, "invalid_input"),
    scored("q4", "alone", 1.0, True),
]


def test_outcome_pointwise_keeps_judgements_and_skips_outages():
    out = outcome_rows(numbered(SCORED), "pointwise")
    assert [r["completion"] for r in out.rows] == ["right", "wrong", "blank", "a", "b", "alone"]
    assert [r["label"] for r in out.rows] == [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    assert out.skipped == Counter({"status error": 1, "status invalid_input": 1})
    assert "6 rows (0.0: 2, 1.0: 4)" in out.describe()


def test_outcome_pairwise_is_best_against_worst_with_ties_skipped():
    out = outcome_rows(numbered(SCORED), "pairwise")
    assert out.rows == [{"prompt": "q1", "chosen": "right", "rejected": "wrong", "chosen_score": 1.0,
                         "rejected_score": 0.0}]
    assert out.skipped["tied prompts"] == 1 and out.skipped["prompts with one completion"] == 1
    assert load_examples(numbered(out.rows), "pairwise").examples[0].chosen == "right"


def test_outcome_labels_from_score_for_graded_rewards():
    rows = [scored("q", "half", 0.5, None), scored("q", "over", 3.0, None)]
    out = outcome_rows(numbered(rows), "pointwise", label_from="score")
    assert [r["label"] for r in out.rows] == [0.5, 1.0]
    assert not outcome_rows(numbered(rows), "pointwise").rows  # no `correct`: says so instead of guessing


# --------------------------------------------------------------------------- synthetic


def test_synthetic_rows_are_valid_stepwise_rows_with_one_first_error():
    rows = generate(300, seed=5)
    loaded = load_examples(numbered(rows), "stepwise")
    assert not loaded.problems and len(loaded.examples) == 600
    for row in rows:
        first = row["first_error"]
        expected = [first < 0 or i < first for i in range(len(row["steps"]))]
        assert row["labels"] == expected
    assert Counter(r["first_error"] == -1 for r in rows) == Counter({True: 300, False: 300})
    counts = label_counts(loaded.examples)
    assert counts["all_correct_rows"] == 300


def test_synthetic_errors_contradict_earlier_text_and_propagate():
    rows = generate(400, seed=6)
    kinds = Counter()
    for clean, wrong in zip(rows[::2], rows[1::2], strict=True):
        assert clean["pair"] == wrong["pair"] and clean["prompt"] == wrong["prompt"]
        first = wrong["first_error"]
        kinds[wrong["error_kind"]] += 1
        assert clean["steps"][:first] == wrong["steps"][:first]  # identical until the error
        assert clean["steps"][first] != wrong["steps"][first]
        final = int(re.findall(r"\d+", wrong["steps"][-1])[-1])
        assert str(final) != wrong["answer"]  # the wrong solution's answer is wrong
        assert int(re.findall(r"\d+", clean["steps"][-1])[-1]) == int(clean["answer"])
        for step in wrong["steps"][1:-1]:  # every operation step's arithmetic holds, even after the error
            x, op, n, y = re.search(r"(\d+) ([+-]) (\d+) = (\d+)", step).groups()
            assert (int(x) + int(n) if op == "+" else int(x) - int(n)) == int(y)
    assert set(kinds) == {"start", "carry", "answer"}


def test_synthetic_arithmetic_errors_break_one_equation():
    rows = generate(100, seed=7, kinds=("arithmetic",))
    for wrong in rows[1::2]:
        step = wrong["steps"][wrong["first_error"]]
        x, op, n, y = re.search(r"(\d+) ([+-]) (\d+) = (\d+)", step).groups()
        assert (int(x) + int(n) if op == "+" else int(x) - int(n)) != int(y)


def test_heldout_variant_shares_no_template_and_uses_larger_numbers():
    base = generate(200, seed=1)
    held = generate(200, seed=1, variant="heldout")

    def shapes(rows):
        return {re.sub(r"\d+", "N", s) for r in rows for s in r["steps"]}

    assert not shapes(base) & shapes(held)
    assert min(int(re.findall(r"\d+", r["steps"][0])[0]) for r in held[::2]) >= 100
    assert max(int(re.findall(r"\d+", r["steps"][0])[0]) for r in base[::2]) < 100


def test_single_change_variants_change_one_thing_each():
    """heldout-templates: unseen templates, training's numbers; heldout-numbers: the reverse."""
    base = generate(200, seed=1)
    templates = generate(200, seed=1, variant="heldout-templates")
    numbers = generate(200, seed=1, variant="heldout-numbers")

    def shapes(rows):
        return {re.sub(r"\d+", "N", s) for r in rows for s in r["steps"]}

    def starts(rows):
        return [int(re.findall(r"\d+", r["steps"][0])[0]) for r in rows[::2]]

    assert not shapes(base) & shapes(templates) and max(starts(templates)) < 100
    shared = shapes(numbers) & shapes(base)  # same templates (names and items drawn anew)
    assert len(shared) > len(shapes(numbers)) / 2 and min(starts(numbers)) >= 100
    with pytest.raises(ValueError, match="variant must be one of"):
        generate(2, variant="other")


def test_synthetic_generation_is_deterministic():
    assert json.dumps(generate(20, seed=3)) == json.dumps(generate(20, seed=3))
    assert json.dumps(generate(20, seed=3)) != json.dumps(generate(20, seed=4))


def test_data_modules_import_no_torch():
    code = ("import sys; import rewardsmith.reward_models.data, rewardsmith.reward_models.steps, "
            "rewardsmith.reward_models.synthetic; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
