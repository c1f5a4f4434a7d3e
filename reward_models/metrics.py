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

__all__ = ["AGGREGATIONS", "THRESHOLDS", "aggregate", "auroc", "baseline_auroc", "baseline_f1",
           "baseline_pairwise_accuracy", "best_of_n", "best_threshold", "by_group", "first_error", "judge_against",
           "mean_of", "pairwise_accuracy", "processbench_f1", "step_metrics"]


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


def best_of_n(groups: Mapping[Any, Sequence[tuple[float, bool, str | None]]]) -> dict[str, Any]:
    """RM@N beside majority@N and pass@N over groups of ``(rm score, correct, final answer)``.

    RM@N: the highest-scored completion is correct. majority@N: the most frequent final answer
    (ties broken by first occurrence; completions without an answer do not vote, and a group
    where none has one counts as a miss) is a correct one; absent when no completion has a final
    answer (voting is impossible, which is not a score of 0). pass@N: any completion is correct
    (the ceiling any selector can reach). random: the expected accuracy of picking one completion
    at random (the floor). ``n_min``/``n_max``: completions per group; ``answered``: completions
    with a final answer."""
    rm = maj = any_ok = rand = 0.0
    answered = 0
    for members in groups.values():
        best = max(range(len(members)), key=lambda i: members[i][0])
        rm += members[best][1]
        any_ok += any(m[1] for m in members)
        rand += sum(m[1] for m in members) / len(members)
        votes = Counter(m[2] for m in members if m[2] is not None)
        answered += votes.total()
        if votes:
            top = max(votes.values())
            winner = next(m[2] for m in members if m[2] is not None and votes[m[2]] == top)
            maj += any(m[1] for m in members if m[2] == winner)
    n = len(groups) or 1
    sizes = [len(m) for m in groups.values()] or [0]
    out: dict[str, Any] = {"rm_at_n": rm / n, "pass_at_n": any_ok / n, "random": rand / n, "groups": len(groups),
                           "n_min": min(sizes), "n_max": max(sizes), "answered": answered}
    if answered:
        out["majority_at_n"] = maj / n
    return out


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



# --------------------------------------------------------------------------- trivial baselines
#
# A figure means little alone: a reward model that learned "longer is better" or "the last step
# is the wrong one" scores well on data where that happens to hold. Each baseline below scores
# the same rows with one trivial feature (completion length, number of steps, step position) in
# whichever direction does better on these rows, so a model that does not beat it has learned
# nothing the feature does not already tell.


def baseline_auroc(labels: Sequence[float], feature: Sequence[float]) -> dict[str, Any] | None:
    """AUROC of ``feature`` used as the score, in the better direction: ``{"value", "direction"}``
    (``higher``: a larger feature scores as more likely correct; ``lower``: a smaller one). None
    when the AUROC is undefined (one class only) or the feature is the same everywhere (it then
    tells nothing, and 0.5 would only look like a baseline)."""
    if len(set(feature)) < 2:
        return None
    value = auroc(labels, feature)
    if value is None:
        return None
    return {"value": value, "direction": "higher"} if value >= 0.5 else {"value": 1.0 - value, "direction": "lower"}


def baseline_pairwise_accuracy(chosen: Sequence[float], rejected: Sequence[float]) -> dict[str, Any] | None:
    """Pairwise accuracy of choosing by a feature (the larger, or the smaller: whichever does
    better), a tie broken at random (it counts ½). None when every pair ties (it tells nothing)."""
    pairs = list(zip(chosen, rejected, strict=True))
    if not pairs or all(c == r for c, r in pairs):
        return None
    ties = sum(c == r for c, r in pairs) / 2
    higher = (sum(c > r for c, r in pairs) + ties) / len(pairs)
    lower = (sum(c < r for c, r in pairs) + ties) / len(pairs)
    return {"value": higher, "direction": "higher"} if higher >= lower else {"value": lower, "direction": "lower"}


def baseline_f1(step_features: Sequence[Sequence[float | None]], truth: Sequence[int],
                candidates: int = 64) -> dict[str, Any] | None:
    """ProcessBench first-error F1 of a rule on one feature per step: the first step whose feature
    is at or past a threshold is the first wrong one (-1 when none is); a step whose feature is None
    is never flagged. The threshold (out of up to ``candidates`` quantiles of the feature) and the
    direction (``higher``: flag large values; ``lower``: small ones) are the best on these rows, so
    the figure is the most the rule can reach here. ``{"value", "direction", "threshold"}``, or None
    when the feature is constant."""
    values = sorted({v for row in step_features for v in row if v is not None})
    if len(values) < 2:
        return None
    step = max(1, len(values) // candidates)
    grid = [*values[::step], values[-1]]
    best: dict[str, Any] | None = None
    for direction, sign in (("higher", 1.0), ("lower", -1.0)):
        for threshold in grid:
            predicted = [next((i for i, v in enumerate(row) if v is not None and sign * v >= sign * threshold), -1)
                         for row in step_features]
            f1 = processbench_f1(predicted, truth)["f1"]
            if best is None or f1 > best["value"]:
                best = {"value": f1, "direction": direction, "threshold": threshold}
    return best


def judge_against(value: float | None, baselines: Mapping[str, Mapping[str, Any]],
                  chance: float | None = None) -> list[str]:
    """What a reader must know about ``value``: below ``chance``, or not above the best baseline
    (a tie does not beat it). Short phrases, shown beside the figure."""
    if value is None:
        return []
    flags = []
    if chance is not None and value < chance:
        flags.append(f"below chance ({chance:g})")
    if baselines:
        best = max(baselines, key=lambda k: baselines[k]["value"])
        if value <= baselines[best]["value"]:
            flags.append(f"does not beat the {best} baseline ({baselines[best]['value']:.3f})")
    return flags
