"""Kept so OpenRLHF reward files written by rewardsmith 0.1 keep working.

``rewardsmith export openrlhf`` wrote ``reward_func.py`` files that import ``as_tensors``,
``openrlhf_health`` and ``score_queries`` from here, and OpenRLHF loads them only at train time;
the code lives in :mod:`rewardsmith.adapters.trainers.openrlhf`, which files exported now import.
"""

from rewardsmith.adapters.trainers.openrlhf import (
    CONSUMER,
    HEALTH_MIN_ROWS,
    as_tensors,
    component_paths,
    export_source,
    label_fix,
    log_keys,
    openrlhf_health,
    reward_dict,
    row_logs,
    score_queries,
    split_response,
    to_samples,
)

__all__ = ["CONSUMER", "HEALTH_MIN_ROWS", "as_tensors", "component_paths", "export_source", "label_fix", "log_keys",
           "openrlhf_health", "reward_dict", "row_logs", "score_queries", "split_response", "to_samples"]
