"""A minimal GRPO loop fed by any reward spec: ``rewardsmith train grpo`` and this Python API.

    from rewardsmith.adapters.grpo import GRPOConfig, train
    result = train(GRPOConfig(model="smollm2", reward="reward.yaml", max_steps=40), "prompts.jsonl")

Modules, one concept each: ``config`` (every switch, TRL's names), ``data`` (prompts in),
``vllm_engine`` (vLLM as the sampler, with the weight sync; the samplers themselves, HF and vLLM,
are ``rewardsmith.reward_models.sampling``), ``objective`` (advantages and the loss), ``sampling``
(prompt order and the pass-rate record), ``loop`` (the trainer), ``no_signal`` (why a run
learns nothing, and what to change), ``report`` (plots).
Importing this package does not import torch; ``train`` and the trainer do.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rewardsmith.adapters.grpo.config import GRPOConfig

if TYPE_CHECKING:
    from rewardsmith.adapters.grpo.loop import GRPOResult, GRPOTrainer

__all__ = ["GRPOConfig", "GRPOResult", "GRPOTrainer", "train"]


def train(config: GRPOConfig, data: str | Path, *, progress: bool = True) -> GRPOResult:
    """Load the prompts (and the held-out ones), build the reward, train, save; the CLI's path."""
    from rewardsmith.adapters.grpo.loop import build_trainer

    return build_trainer(config, data, progress=progress).run()


def __getattr__(name: str) -> Any:
    if name in ("GRPOTrainer", "GRPOResult"):
        from rewardsmith.adapters.grpo import loop

        return getattr(loop, name)
    raise AttributeError(name)
