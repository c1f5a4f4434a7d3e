"""Kept so trainer configs written for rewardsmith 0.1 keep working.

``from rewardsmith.adapters.trl import reward_funcs, reward_weights`` in a training script goes on
working; the code lives in :mod:`rewardsmith.adapters.trainers.trl`, the path to use in new code.
"""

from rewardsmith.adapters.trainers.trl import (
    RewardError,
    RewardFunc,
    async_reward_funcs,
    dpo_pairs,
    preference_pairs,
    reward_funcs,
    reward_weights,
)

__all__ = ["RewardError", "RewardFunc", "async_reward_funcs", "dpo_pairs", "preference_pairs", "reward_funcs",
           "reward_weights"]
