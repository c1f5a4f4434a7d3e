"""What every training run here goes through, whatever it trains: the reward-model trainer
(:mod:`.train`) and the GRPO loop (``rewardsmith.adapters.grpo.loop``) share it.

* what a run does with an output folder that already holds a run (:func:`claim_output_dir`):
  resume it, refuse, or, when asked to overwrite, clear it; decided before anything loads;
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
from typing import Any, Literal

from rewardsmith.reward_models.checkpoint import (
    CHECKPOINTS,
    checkpoint_dirs,
    read_latest,
    restore,
    trainable_weights,
    write_checkpoint,
)
from rewardsmith.verifiers import RewardsmithError

logger = logging.getLogger(__name__)

# What a run writes into its output folder (names and glob patterns), so that a rerun can tell a
# previous run from unrelated files, and --overwrite removes the run's files and nothing else.
# A trainer that writes a new kind of file adds its name here.
RUN_FILES = ("log.jsonl", "samples.jsonl", "result.json", "curves*.png", "model", CHECKPOINTS, "tensorboard",
             "wandb", ".model.tmp*")
RESULT_FILE = "result.json"  # written last: its presence means the run finished


class OutputDirInUse(RewardsmithError, ValueError):
    """The output folder holds a previous run that this one would overwrite (and cannot resume)."""


def previous_run_files(out: Path) -> list[Path]:
    """The files and folders of a previous run under ``out`` (see :data:`RUN_FILES`), sorted."""
    if not out.is_dir():
        return []
    return sorted({path for pattern in RUN_FILES for path in out.glob(pattern)})


def claim_output_dir(out: Path, *, resume: bool, overwrite: bool) -> Literal["new", "resume", "overwritten"]:
    """What a run does with ``out``, decided before any model loads (so a refusal is instant).

    * no previous run's files (absent, empty, or only other files): ``new``;
    * ``overwrite``: the previous run's files (checkpoints included) are removed: ``overwritten``;
    * an unfinished run (no ``result.json``) with a checkpoint, and ``resume`` on: ``resume``;
    * anything else (a finished run, a run without checkpoints, checkpoints with ``resume`` off)
      raises :class:`OutputDirInUse` saying what is there: silently starting over would
      overwrite its log, samples and model.
    """
    if out.exists() and not out.is_dir():
        raise OutputDirInUse(f"the output folder {str(out)!r} is a file; pass another --output-dir")
    found = previous_run_files(out)
    if not found:
        return "new"
    if overwrite:
        for path in found:
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        logger.info("overwrite: removed the previous run's %s from %s", _listing(out, found), out)
        return "overwritten"
    checkpoints = checkpoint_dirs(out)
    finished = (out / RESULT_FILE).is_file()
    if checkpoints and resume and not finished:
        return "resume"
    if finished:
        what = "a finished run (nothing to resume)"
    elif checkpoints:
        what = f"an unfinished run with checkpoints (last: {checkpoints[-1].name}), and resume is off"
    else:
        what = "a previous run's files and no checkpoint to resume from"
    raise OutputDirInUse(f"{out} holds {what}: {_listing(out, found)}; rerun with --overwrite to start over, "
                         f"or pass another --output-dir")


def _listing(out: Path, found: list[Path]) -> str:
    """``model/, result.json, checkpoints/ (step-2, step-4)``: what a previous run left."""
    names = []
    for path in found:
        name = path.name + ("/" if path.is_dir() else "")
        if path.name == CHECKPOINTS:
            steps = [p.name for p in checkpoint_dirs(out)]
            name += f" ({', '.join(steps)})" if steps else " (none complete)"
        names.append(name)
    return ", ".join(names)


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
