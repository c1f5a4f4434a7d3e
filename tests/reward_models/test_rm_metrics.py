"""`eval rm`'s figures without a model: the trivial baselines beside each AUROC and F1, the flags
a reader must see (below chance, not above a baseline), Best-of-N leaving out what the data
cannot give, and the table that lays them out."""

from __future__ import annotations

import pytest

from rewardsmith.adapters.reports.rm_eval import format_eval
from rewardsmith.reward_models import metrics


def test_a_feature_that_orders_the_labels_perfectly_is_a_baseline_of_auroc_one_either_way():
    labels = [1, 1, 1, 0, 0, 0]
    assert metrics.baseline_auroc(labels, [9, 8, 7, 3, 2, 1]) == {"value": 1.0, "direction": "higher"}
    assert metrics.baseline_auroc(labels, [1, 2, 3, 7, 8, 9]) == {"value": 1.0, "direction": "lower"}
    assert metrics.baseline_auroc(labels, [5, 1, 5, 1, 5, 1])["value"] == pytest.approx(2 / 3)
    assert metrics.baseline_auroc(labels, [4] * 6) is None  # a constant feature tells nothing
    assert metrics.baseline_auroc([1, 1], [1, 2]) is None  # one class: undefined


def test_pairwise_baseline_breaks_ties_at_random_and_is_absent_when_every_pair_ties():
    assert metrics.baseline_pairwise_accuracy([10, 10, 3], [5, 10, 9]) == {"value": 0.5, "direction": "higher"}
    assert metrics.baseline_pairwise_accuracy([1, 1, 9], [5, 5, 9]) == {"value": pytest.approx(5 / 6),
                                                                       "direction": "lower"}
    assert metrics.baseline_pairwise_accuracy([2, 3], [2, 3]) is None


def test_first_error_f1_baselines_find_a_shortcut_in_the_data():
    # Correct solutions have 2 steps; wrong ones 3, wrong at their last step (ProcessBench rows cut
    # after the first error look like this): position alone ("step 2 is wrong") gets F1 1.
    truth = [-1, -1, 2, 2]
    position = [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    assert metrics.baseline_f1(position, truth) == {"value": 1.0, "direction": "higher", "threshold": 2.0}
    last_only = [[None, 2.0], [None, 2.0], [None, None, 3.0], [None, None, 3.0]]
    assert metrics.baseline_f1(last_only, truth)["value"] == 1.0
    assert metrics.baseline_f1([[1.0], [1.0]], [-1, 0]) is None
    # a feature unrelated to the errors: no threshold does well
    assert metrics.baseline_f1([[0.0, 5.0], [0.0, 1.0], [0.0, 5.0], [0.0, 1.0]], [-1, -1, 1, 1])["value"] < 0.7


def test_flags_say_below_chance_and_which_baseline_was_not_beaten():
    baselines = {"length": {"value": 0.9}, "steps": {"value": 0.6}}
    assert metrics.judge_against(0.42, baselines, 0.5) == ["below chance (0.5)",
                                                           "does not beat the length baseline (0.900)"]
    assert metrics.judge_against(0.9, baselines) == ["does not beat the length baseline (0.900)"]  # a tie
    assert metrics.judge_against(0.95, baselines, 0.5) == []
    assert metrics.judge_against(None, baselines, 0.5) == []


def test_majority_is_absent_without_final_answers_and_present_with_them():
    no_answers = {"p": [(0.9, True, None), (0.1, False, None)], "q": [(0.2, True, None), (0.8, False, None)]}
    result = metrics.best_of_n(no_answers)
    assert "majority_at_n" not in result
    assert result == {"rm_at_n": 0.5, "pass_at_n": 1.0, "random": 0.5, "groups": 2, "n_min": 2, "n_max": 2,
                      "answered": 0}
    # the right answer in the minority: majority@N 0 beside pass@N 1, both computed
    minority = {"p": [(0.9, True, "4"), (0.1, False, "5"), (0.2, False, "5")]}
    result = metrics.best_of_n(minority)
    assert (result["majority_at_n"], result["pass_at_n"], result["rm_at_n"], result["answered"]) == (0.0, 1.0, 1.0, 3)


def report(auroc, length, best_of_n):
    return {"model": "rm/model", "kind": "orm", "files": {"points": {
        "file": "points.jsonl", "form": "pointwise", "rows": 4, "skipped": 0, "auroc": auroc, "accuracy": 0.5,
        "baselines": {"auroc": {"length": {"value": length, "direction": "higher"}}},
        "flags": {"auroc": metrics.judge_against(auroc, {"length": {"value": length}}, 0.5)},
        "best_of_n": best_of_n}}}


def test_the_table_puts_each_baseline_and_flag_beside_its_figure_and_explains_best_of_n():
    bon = metrics.best_of_n({"p": [(0.9, True, None), (0.1, False, None)]})
    text = format_eval(report(0.4, 1.0, bon))
    line = next(x for x in text.splitlines() if x.strip().startswith("AUROC"))
    assert line.split()[1:3] == ["0.400", "1.000"]
    assert "below chance (0.5); does not beat the length baseline (1.000)" in line
    assert "1 of 1 figures do not beat a trivial baseline; 1 below chance." in text
    header = next(x for x in text.splitlines() if "RM@N" in x and "pass@N" in x)
    assert "majority@N" not in header  # absent, not 0
    assert "majority@N: absent, no completion has a final answer to vote with" in text
    for name in ("RM@N", "majority@N", "pass@N", "random"):  # each name explained in the note
        assert any(x.strip().startswith(name + " ") for x in text.splitlines()[-8:]), name
    good = format_eval(report(0.95, 0.6, bon))
    assert "0 of 1 figures do not beat" in good and "below chance" not in good.split("0 of 1")[0]
