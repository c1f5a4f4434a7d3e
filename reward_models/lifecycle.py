"""What every training run here goes through, whatever it trains: the reward-model trainer
(:mod:`.train`) and the GRPO loop (``rewardsmith.adapters.grpo.loop``) share it.

* a fingerprint of the settings a run cannot change halfway (model, seed, batch shape...);
* checkpoints (:mod:`.checkpoint`'s format) and resuming from the last complete one, refused
  when it is from a run with another fingerprint;
* the final model written to a temporary folder and renamed, so a run killed mid-save leaves no
  half-written ``model/``;
* the progress bar, the optimizer (AdamW) and its learning-rate schedule.

Each trainer keeps its own losses, batching and log records.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from rewardsmith.reward_models.checkpoint import read_latest, restore, trainable_weights, write_checkpoint

logger = logging.getLogger(__name__)


def fingerprint(config: Any, keys: Iterable[str], **extra: Any) -> dict[str, Any]:
    """What must match for a resume to continue the same run: ``keys`` of ``config``, plus ``extra``
    (facts about the data, e.g. how many rows)."""
    return {"config": {k: getattr(config, k) for k in keys}, **extra}


def save_checkpoint(out: Path, step: int, model: Any, optimizer: Any, scheduler: Any, fingerprint: dict[str, Any],
                    keep: int, **extra: Any) -> Path:
    """Trainable weights, optimizer, scheduler, RNG states, the fingerprint and whatever else the
    trainer keeps (``extra``) as ``out/checkpoints/step-N`` (see :mod:`.checkpoint`)."""
    state = {"fingerprint": fingerprint, "weights": trainable_weights(model), "optimizer": optimizer.state_dict(),
             "scheduler": scheduler.state_dict(), **extra}
    return write_checkpoint(out, step, state, keep)


def resume(out: Path, fingerprint: dict[str, Any], model: Any, optimizer: Any, scheduler: Any, *, total: int,
           ) -> dict[str, Any] | None:
    """The state of the last complete checkpoint under ``out``, with the weights, optimizer,
    scheduler and RNG restored from it (and said in the log), or None when there is none; a
    ValueError when it is from a run with another fingerprint."""
    found = read_latest(out, fingerprint)
    if found is None:
        return None
    path, state = found
    restore(state, model, optimizer, scheduler)
    logger.info("resuming from %s (step %s of %s)", path, state["step"], total)
    return state


def save_model(out: Path, model: Any, tokenizer: Any, files: Mapping[str, str] | None = None) -> Path:
    """``model`` and ``tokenizer`` as a plain HF checkpoint in ``out/model``, with ``files`` (name:
    text) beside them; written to a temporary folder and renamed, so ``model/`` is whole or absent."""
    target = out / "model"
    tmp = target.with_name(f".model.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    for name, text in (files or {}).items():
        (tmp / name).write_text(text)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def progress(total: int, done: int, enabled: bool, desc: str) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, initial=done, disable=not enabled, desc=desc, unit="step", dynamic_ncols=True)


def adamw(params: list[Any], lr: float, weight_decay: float, betas: tuple[float, float] = (0.9, 0.999)) -> Any:
    """AdamW, fused where torch has a fused kernel for these tensors (one kernel instead of a loop
    over the parameters: a fifth of the optimizer step's time on a CPU, measured on MiniLM)."""
    import torch

    try:
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas, fused=True)
    except (RuntimeError, TypeError, ValueError):  # a device or dtype without the fused kernel
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, betas=betas)


def lr_schedule(name: str, optimizer: Any, warmup_ratio: float, steps: int) -> Any:
    """transformers' ``name`` schedule over ``steps`` optimizer steps, warming up for the first
    ``warmup_ratio`` of them."""
    from transformers import get_scheduler

    return get_scheduler(name, optimizer, num_warmup_steps=int(warmup_ratio * steps), num_training_steps=steps)
