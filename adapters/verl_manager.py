"""Kept so trainer configs written for rewardsmith 0.1 keep working.

verl configs name this module as ``reward.reward_manager.module.path=pkg://rewardsmith.adapters.verl_manager``
(or ``<repo>/adapters/verl_manager.py``) with ``name=RewardsmithRewardManager``, and break only at train
time; the code lives in :mod:`rewardsmith.adapters.trainers.verl_manager`, the path to use in new configs.
Like that module, this one imports torch and verl: verl loads it, nothing in rewardsmith imports it.
"""

from rewardsmith.adapters.trainers.verl_manager import OPTIONS, RewardsmithRewardManager, manager_options

__all__ = ["OPTIONS", "RewardsmithRewardManager", "manager_options"]
