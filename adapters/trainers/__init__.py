"""The glue to trainers: each module turns one trainer's reward call into ``verify_batch`` and back.

``trl`` (reward functions for TRL's trainers, DPO/RM pairs), ``openrlhf`` (its remote-reward request
and the ``rewardsmith export openrlhf`` file), ``verl`` (``compute_score`` for verl's per-row reward
function) and ``verl_manager`` (verl's batched reward manager; imports torch and verl, loaded only by
verl). The 0.1 paths ``rewardsmith.adapters.trl``, ``.openrlhf``, ``.verl`` and ``.verl_manager`` are
kept as compatibility modules so trainer configs and exported files written for 0.1 keep working.
Importing this package imports none of them.
"""
