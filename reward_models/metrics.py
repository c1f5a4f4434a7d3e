"""Reward-model metrics: pairwise accuracy, AUROC, ProcessBench's first-error F1, Best-of-N.

Pure functions of scores and labels (numpy where needed, no torch), shared by training's
evaluation, ``rewardsmith eval rm`` and the benchmarks, so a figure in a log and one in a report
are computed the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.verifiers.reward_model import AGGREGATIONS, aggregate

__all__ = ["AGGREGATIONS", "THRESHOLDS", "aggregate", "auroc", "best_of_n", "best_threshold", "by_group",
           "first_error", "mean_of", "pairwise_accuracy", "processbench_f1", "step_metrics"]


def auroc(labels: Sequence[float], scores: Sequence[float]) -> float | None:
    """Area under the ROC curve of ``scores`` against binary ``labels`` (≥ 0.5 is positive), labels
    first as in scikit-learn's ``roc_auc_score``, which it equals: the Mann–Whitney U statistic /
    (n_pos·n_neg), ranks averaged over ties (a tied positive–negative pair counts ½). None when
    only one class is present (it is undefined, not 0.5).

    numpy only, imported here: the calibration report computes it without loading scikit-learn.
    """
    import numpy as np

    y = np.asarray(labels, dtype=float).ravel() >= 0.5
    s = np.asarray(scores, dtype=float).ravel()
    if y.shape != s.shape:
        raise ValueError(f"labels and scores differ in length ({y.size} vs {s.size})")
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    u = _average_ranks(s)[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def _average_ranks(values: Any) -> Any:
    """1-based ranks of a numpy array, ties sharing the mean of the ranks they span (scipy's ``rankdata``)."""
    import numpy as np

    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    starts = np.r_[True, sorted_values[1:] != sorted_values[:-1]]
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    last = np.r_[first[1:], values.size] - 1
    mean_rank = (first + last) / 2.0 + 1.0
    ranks = np.empty(values.size, dtype=float)
    ranks[order] = mean_rank[group]
    return ranks


def pairwise_accuracy(chosen: Sequence[float], rejected: Sequence[float]) -> float | None:
    """Share of pairs whose chosen completion scores strictly higher (a tie counts as wrong)."""
    if not chosen:
        return None
    return sum(c > r for c, r in zip(chosen, rejected, strict=True)) / len(chosen)


def first_error(step_scores: Sequence[float], threshold: float) -> int:
    """ProcessBench's prediction: the first step whose P(correct) is below ``threshold``, or -1."""
    return next((i for i, s in enumerate(step_scores) if s < threshold), -1)


def processbench_f1(predicted: Sequence[int], truth: Sequence[int]) -> dict[str, float]:
    """ProcessBench's metric: the harmonic mean of the accuracy on erroneous solutions (the exact
    first wrong step) and on correct ones (predicting -1)."""
    err = [p == t for p, t in zip(predicted, truth, strict=True) if t >= 0]
    ok = [p == -1 for p, t in zip(predicted, truth, strict=True) if t < 0]
    acc_err = sum(err) / len(err) if err else 0.0
    acc_ok = sum(ok) / len(ok) if ok else 0.0
    f1 = 2 * acc_err * acc_ok / (acc_err + acc_ok) if acc_err + acc_ok else 0.0
    return {"f1": f1, "error_accuracy": acc_err, "correct_accuracy": acc_ok, "n_error": len(err), "n_correct": len(ok)}


THRESHOLDS = tuple(round(0.05 * k, 2) for k in range(1, 20))


def best_threshold(step_scores: Sequence[Sequence[float]], truth: Sequence[int],
                   grid: Sequence[float] = THRESHOLDS) -> tuple[float, dict[str, float]]:
    """The threshold on the grid that maximises first-error F1 on these rows (choose it on a
    declared split, then apply it to the others), with the F1 it gets there."""
    best: tuple[float, dict[str, float]] | None = None
    for threshold in grid:
        result = processbench_f1([first_error(s, threshold) for s in step_scores], truth)
        if best is None or result["f1"] > best[1]["f1"]:
            best = (threshold, result)
    assert best is not None
    return best


def best_of_n(groups: Mapping[Any, Sequence[tuple[float, bool, str | None]]]) -> dict[str, float]:
    """RM@N beside majority@N and pass@N over groups of ``(rm score, correct, final answer)``.

    RM@N: the highest-scored completion is correct. maj@N: the most frequent final answer (ties
    broken by first occurrence; completions without an answer do not vote) is a correct one.
    pass@N: any completion is correct (the ceiling any selector can reach). Also ``random``:
    the expected accuracy of picking one completion at random (the floor)."""
    rm = maj = any_ok = rand = 0.0
    for members in groups.values():
        best = max(range(len(members)), key=lambda i: members[i][0])
        rm += members[best][1]
        any_ok += any(m[1] for m in members)
        rand += sum(m[1] for m in members) / len(members)
        votes = Counter(m[2] for m in members if m[2] is not None)
        if votes:
            top = max(votes.values())
            winner = next(m[2] for m in members if m[2] is not None and votes[m[2]] == top)
            maj += any(m[1] for m in members if m[2] == winner)
    n = len(groups) or 1
    return {"rm_at_n": rm / n, "majority_at_n": maj / n, "pass_at_n": any_ok / n, "random": rand / n,
            "groups": len(groups)}


def mean_of(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def step_metrics(step_scores: Sequence[Sequence[float]], step_labels: Sequence[Sequence[float]],
                 threshold: float = 0.5) -> dict[str, Any]:
    """Step-level AUROC and accuracy of a PRM against step labels."""
    flat_s = [s for row in step_scores for s in row]
    flat_y = [y for row in step_labels for y in row]
    accuracy = mean_of([float((s >= threshold) == (y >= 0.5)) for s, y in zip(flat_s, flat_y, strict=True)])
    return {"step_auroc": auroc(flat_y, flat_s), "step_accuracy": accuracy, "steps": len(flat_s)}


def by_group(keys: Sequence[Any], values: Sequence[Any]) -> dict[Any, list[Any]]:
    out: dict[Any, list[Any]] = {}
    for key, value in zip(keys, values, strict=True):
        out.setdefault(key, []).append(value)
    return out

