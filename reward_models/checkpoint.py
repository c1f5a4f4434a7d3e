"""Checkpoints a killed run resumes from: trainable weights, optimizer, scheduler, RNG and
whatever else the trainer keeps, in one file per step.

Shared by the reward-model trainer and the GRPO loop (through :mod:`.lifecycle`). A checkpoint is written to a temporary
folder and renamed, with its completion marker last, so a run killed mid-save resumes from the
checkpoint before; a fingerprint of what must not change (model, seed, batch shape...) is
stored with it and checked on resume, so a changed config never continues a different run.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

CHECKPOINTS = "checkpoints"
STATE_FILE = "trainer_state.pt"
DONE_FILE = "complete.json"


def checkpoint_dirs(out: Path) -> list[Path]:
    """The complete checkpoints under ``out``, oldest first."""
    root = out / CHECKPOINTS
    found = [p for p in root.glob("step-*") if (p / DONE_FILE).is_file()] if root.is_dir() else []
    return sorted(found, key=lambda p: int(p.name.split("-")[1]))


def trainable_weights(model: Any) -> dict[str, Any]:
    """Only what training changes (all weights, or a LoRA model's adapters): small checkpoints."""
    return {n: p.detach().cpu() for n, p in model.named_parameters() if p.requires_grad}


def rng_state() -> dict[str, Any]:
    import numpy as np
    import torch

    return {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state(),
            "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None}


def write_checkpoint(out: Path, step: int, state: dict[str, Any], keep: int) -> Path:
    """``state`` (plus the RNG states) as ``out/checkpoints/step-N``; the oldest beyond ``keep`` go."""
    import torch

    target = out / CHECKPOINTS / f"step-{step}"
    tmp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    torch.save({**state, "step": step, "rng": rng_state()}, tmp / STATE_FILE)
    (tmp / DONE_FILE).write_text(json.dumps({"step": step}))
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    for old in checkpoint_dirs(out)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return target


def read_latest(out: Path, fingerprint: dict[str, Any]) -> tuple[Path, dict[str, Any]] | None:
    """The last complete checkpoint and its state, or None; a ValueError when it is from a run
    with another fingerprint (continuing it would mix two runs)."""
    import torch

    found = checkpoint_dirs(out)
    if not found:
        return None
    state = torch.load(found[-1] / STATE_FILE, map_location="cpu", weights_only=False)
    if state["fingerprint"] != fingerprint:
        raise ValueError(f"{found[-1]} is from a different run ({state['fingerprint']} vs {fingerprint}); "
                         f"rerun with --overwrite to start over, or pass another --output-dir")
    return found[-1], state


def restore(state: dict[str, Any], model: Any, optimizer: Any, scheduler: Any) -> None:
    """Weights, optimizer, scheduler and RNG as they were when ``state`` was written."""
    import numpy as np
    import torch

    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, value in state["weights"].items():
            params[name].copy_(value.to(params[name].device))
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    rng = state["rng"]
    random.setstate(rng["python"])
    np.random.set_state(rng["numpy"])
    torch.set_rng_state(rng["torch"])
    if rng["cuda"] is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])
