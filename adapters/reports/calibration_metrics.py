"""Calibration metrics for stated confidences: Brier, ECE, MCE, AUROC, reliability curve.

numpy is imported here, at the top: this module lives beside the ``calibrate`` command, outside
the torch- and numpy-free ``rewardsmith.verifiers`` (the ``brier`` reward does not need it).
numpy comes with the ``plots`` extra.

Definitions (``p`` predicted probabilities in [0, 1], ``y`` labels in {0, 1}, N rows):

* **Brier** = mean((p − y)²), as ``sklearn.metrics.brier_score_loss``.
* **Bins** exactly as ``sklearn.calibration.calibration_curve``: edges are
  ``linspace(0, 1, n_bins + 1)`` (``uniform``, equal width) or
  ``percentile(p, linspace(0, 100, n_bins + 1))`` (``quantile``, equal mass, numpy's
  linear interpolation); a row goes to bin ``searchsorted(edges[1:-1], p)`` (side left), so
  bins are right-closed: [e0, e1], (e1, e2], …, (e_{n-1}, e_n]; a value on an interior edge
  belongs to the lower bin. Quantile edges may repeat (many equal predictions): the
  zero-width bins are empty.
* **Reliability curve**: per non-empty bin, mean predicted probability (``prob_pred``),
  observed frequency of positives (``prob_true``) and the count; empty bins are dropped
  from ``prob_pred``/``prob_true`` as sklearn does (kept, with count 0, in ``bins()``).
* **ECE** = Σ_b (n_b / N)·|prob_true_b − prob_pred_b| over those bins (Guo et al. 2017);
  **MCE** = max_b |prob_true_b − prob_pred_b| over non-empty bins.
* **AUROC**: :func:`rewardsmith.reward_models.metrics.auroc` (the reward models' own, labels
  first): the Mann–Whitney U statistic / (n_pos·n_neg), ranks averaged over ties (so a tied
  positive–negative pair counts ½); ``None`` when only one class is present.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rewardsmith.reward_models.metrics import auroc

STRATEGIES = ("uniform", "quantile")
ArrayLike = Sequence[float] | Sequence[bool] | Any


def _check(probs: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate once, so every metric agrees on what a bad input is."""
    p = np.asarray(probs, dtype=float).ravel()
    y_raw = np.asarray(labels).ravel()
    if p.shape != y_raw.shape:
        raise ValueError(f"probs and labels differ in length ({p.size} vs {y_raw.size})")
    if p.size == 0:
        raise ValueError("no rows to compute calibration metrics on")
    if not np.all(np.isfinite(p)) or p.min() < 0.0 or p.max() > 1.0:
        raise ValueError("probabilities must be finite and within [0, 1]")
    y = y_raw.astype(float)
    if not np.all((y == 0.0) | (y == 1.0)):
        raise ValueError("labels must be 0/1 or booleans")
    return p, y


def brier_score(probs: ArrayLike, labels: ArrayLike) -> float:
    """Mean squared error of the probability; 0 is perfect, 0.25 is always saying ½."""
    p, y = _check(probs, labels)
    return float(np.average((y - p) ** 2))


def bin_edges(probs: ArrayLike, n_bins: int = 10, strategy: str = "uniform") -> np.ndarray:
    """The n_bins + 1 edges sklearn's ``calibration_curve`` uses for ``strategy``."""
    if int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, int(n_bins) + 1)
    if strategy == "quantile":
        p = np.asarray(probs, dtype=float).ravel()
        return np.percentile(p, np.linspace(0, 1, int(n_bins) + 1) * 100)
    raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")


@dataclass(frozen=True)
class ReliabilityCurve:
    """Per-bin statistics for all ``n_bins`` bins (empty bins have count 0 and NaN means)."""

    edges: np.ndarray  # n_bins + 1
    counts: np.ndarray  # n_bins, int
    sum_pred: np.ndarray  # n_bins
    sum_true: np.ndarray  # n_bins
    strategy: str

    @property
    def nonempty(self) -> np.ndarray:
        return self.counts != 0

    @property
    def prob_pred(self) -> np.ndarray:
        """Mean predicted probability per non-empty bin (sklearn's second return value)."""
        keep = self.nonempty
        return self.sum_pred[keep] / self.counts[keep]

    @property
    def prob_true(self) -> np.ndarray:
        """Observed frequency of positives per non-empty bin (sklearn's first return value)."""
        keep = self.nonempty
        return self.sum_true[keep] / self.counts[keep]

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def bins(self) -> list[dict[str, Any]]:
        """One record per bin, empty ones included, for tables and JSON."""
        rows = []
        for i, count in enumerate(self.counts.tolist()):
            mean_pred = self.sum_pred[i] / count if count else None
            observed = self.sum_true[i] / count if count else None
            rows.append({
                "bin": i,
                "lower": float(self.edges[i]),
                "upper": float(self.edges[i + 1]),
                "count": int(count),
                "mean_predicted": None if mean_pred is None else float(mean_pred),
                "observed_frequency": None if observed is None else float(observed),
                "gap": None if count == 0 else float(abs(observed - mean_pred)),
            })
        return rows


def reliability_curve(
    probs: ArrayLike, labels: ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> ReliabilityCurve:
    """Bin the predictions exactly as sklearn's ``calibration_curve`` (see the module doc)."""
    p, y = _check(probs, labels)
    edges = bin_edges(p, n_bins, strategy)
    ids = np.searchsorted(edges[1:-1], p)
    n = len(edges) - 1
    return ReliabilityCurve(
        edges=edges,
        counts=np.bincount(ids, minlength=n),
        sum_pred=np.bincount(ids, weights=p, minlength=n),
        sum_true=np.bincount(ids, weights=y, minlength=n),
        strategy=strategy,
    )


def expected_calibration_error(
    probs: ArrayLike, labels: ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> float:
    """Count-weighted mean |observed − predicted| over the bins: how far off, on average."""
    curve = reliability_curve(probs, labels, n_bins, strategy)
    weights = curve.counts[curve.nonempty] / curve.total
    return float(np.sum(weights * np.abs(curve.prob_true - curve.prob_pred)))


def max_calibration_error(
    probs: ArrayLike, labels: ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> float:
    """The worst bin's |observed − predicted|: how far off at worst."""
    curve = reliability_curve(probs, labels, n_bins, strategy)
    return float(np.max(np.abs(curve.prob_true - curve.prob_pred)))


def calibration_summary(
    probs: ArrayLike, labels: ArrayLike, n_bins: int = 10, strategy: str = "uniform"
) -> dict[str, Any]:
    """Every metric at once, JSON-ready (the ``calibrate`` command writes this)."""
    p, y = _check(probs, labels)
    curve = reliability_curve(p, y, n_bins, strategy)
    return {
        "n": int(p.size),
        "positives": int(y.sum()),
        "accuracy": float(y.mean()),
        "mean_confidence": float(p.mean()),
        "overconfidence": float(p.mean() - y.mean()),
        "brier": brier_score(p, y),
        "ece": expected_calibration_error(p, y, n_bins, strategy),
        "mce": max_calibration_error(p, y, n_bins, strategy),
        "ece_uniform": expected_calibration_error(p, y, n_bins, "uniform"),
        "ece_quantile": expected_calibration_error(p, y, n_bins, "quantile"),
        "auroc": auroc(y, p),
        "n_bins": int(n_bins),
        "strategy": strategy,
        "bins": curve.bins(),
    }
