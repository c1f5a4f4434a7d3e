"""Kept so trainer configs written for rewardsmith 0.1 keep working.

verl configs name this module as ``reward.custom_reward_function.path=pkg://rewardsmith.adapters.verl``
(or ``<repo>/adapters/verl.py``) with ``name=compute_score``, and break only at train time; the code
lives in :mod:`rewardsmith.adapters.trainers.verl`, the path to use in new configs.
"""

from rewardsmith.adapters.trainers.verl import (
    DEFAULT_SPEC,
    ENV_ON_ERROR,
    ENV_SPEC,
    EXTRA_KEYS,
    HEALTH,
    HEALTH_WINDOW,
    compute_score,
    compute_score_batch,
    configure,
    plain_value,
    resolve_on_error,
    result,
    row_sample,
    score_samples,
    verifier,
)

__all__ = ["DEFAULT_SPEC", "ENV_ON_ERROR", "ENV_SPEC", "EXTRA_KEYS", "HEALTH", "HEALTH_WINDOW", "compute_score",
           "compute_score_batch", "configure", "plain_value", "resolve_on_error", "result", "row_sample",
           "score_samples", "verifier"]
