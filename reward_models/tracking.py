"""Where a training run's metrics go besides ``log.jsonl``: TensorBoard, W&B, or nowhere.

Both trainers (reward models and GRPO) use this one module, so a switch behaves the same in both:

* ``report_to``: ``none`` (default), ``tensorboard``, ``wandb``, or a list of them (TRL's name and
  values). The packages are imported lazily; :func:`require` checks them before any model loads,
  so a missing one fails in a second with the ``pip install`` that fixes it.
* Metric names as TRL shows them: a ``log.jsonl`` key ``eval_<name>`` is shown as ``eval/<name>``,
  any other key as ``train/<name>`` (:func:`metric_name`; the plots use it too). The JSONL keys
  themselves do not change: other code and the docs read them.
* ``log_every: auto`` (:func:`log_interval`): every step up to 199 steps, then the largest of
  1, 2, 5, 10, 20, 50, ... that still gives at least 100 points, so a short run has a curve and a
  long one a log of a readable size.
* W&B runs offline unless ``WANDB_MODE`` or ``WANDB_API_KEY`` is set (no network needed; ``wandb
  sync`` uploads later), its files under ``<output_dir>/wandb``; TensorBoard writes to
  ``<output_dir>/tensorboard``.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from rewardsmith.verifiers import RewardsmithError

logger = logging.getLogger(__name__)

SINKS = ("tensorboard", "wandb")
Sink = Literal["none", "tensorboard", "wandb"]
"""A ``report_to`` value; a config's ``report_to`` is one or a list (``none`` alone: no sink)."""

REPORT_TO_DOC = ("where metrics go besides log.jsonl: none, tensorboard (output_dir/tensorboard), wandb "
                 "(offline unless WANDB_MODE or WANDB_API_KEY is set), or a list of them")
LOG_EVERY_DOC = ("write a log record every N steps; auto: every step up to 199 steps, then the largest of "
                 "1, 2, 5, 10, 20, 50, ... that still gives at least 100 records")

_PACKAGES = {"tensorboard": "tensorboard", "wandb": "wandb"}
_AUTO_POINTS = 100


class TrackingError(RewardsmithError, ValueError):
    """A ``report_to`` that cannot be served (a package is missing); the message says what to install."""


def log_interval(log_every: int | str, total_steps: int) -> int:
    """The number of steps between two log records: ``log_every`` itself, or for ``auto`` the
    largest of 1, 2, 5, 10, 20, 50, ... with at least 100 records over ``total_steps``."""
    if log_every != "auto":
        return int(log_every)
    best = 1
    for exponent in range(0, 10):
        for mantissa in (1, 2, 5):
            interval = mantissa * 10**exponent
            if total_steps // interval < _AUTO_POINTS:
                return best
            best = interval
    return best


def metric_name(key: str) -> str:
    """How a ``log.jsonl`` key is shown (TensorBoard, W&B, plot legends): TRL's ``eval/<name>``
    for ``eval_<name>``, ``train/<name>`` for the rest."""
    if key.startswith("eval_"):
        return "eval/" + key.removeprefix("eval_")
    return "train/" + key


def sinks(report_to: str | Sequence[str]) -> tuple[str, ...]:
    """``report_to`` as a tuple of sink names (``none`` alone: empty)."""
    names = (report_to,) if isinstance(report_to, str) else tuple(report_to)
    if "none" in names and len(names) > 1:
        raise TrackingError(f"report_to {list(names)} mixes none with sinks; give none alone, or only sinks")
    unknown = [n for n in names if n not in (*SINKS, "none")]
    if unknown:
        raise TrackingError(f"report_to: unknown sink {unknown[0]!r} (known: none, {', '.join(SINKS)})")
    return tuple(dict.fromkeys(n for n in names if n != "none"))


def require(report_to: str | Sequence[str]) -> tuple[str, ...]:
    """The sinks, after checking that their packages are installed (call it before loading a model)."""
    names = sinks(report_to)
    missing = [n for n in names if importlib.util.find_spec(_PACKAGES[n]) is None]
    if missing:
        packages = " ".join(_PACKAGES[n] for n in missing)
        raise TrackingError(f"report_to {', '.join(missing)} needs the {packages} package: pip install {packages} "
                            f"(or pip install 'rewardsmith[tracking]'), or set report_to: none")
    return names


def _scalars(record: Mapping[str, Any]) -> dict[str, float]:
    """The record's numbers under their shown names (``step``, booleans, NaN and None left out)."""
    out = {}
    for key, value in record.items():
        if key == "step" or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if isinstance(value, float) and math.isnan(value):
            continue
        out[metric_name(key)] = value
    return out


def wandb_mode() -> str | None:
    """``offline`` unless the environment says how to reach W&B (``WANDB_MODE`` or ``WANDB_API_KEY``),
    so a run never waits on a network it may not have."""
    if os.environ.get("WANDB_MODE") or os.environ.get("WANDB_API_KEY"):
        return None
    return "offline"


class Tracker:
    """The sinks of one run: ``open`` them, ``log`` each ``log.jsonl`` record, ``close`` at the end.

    With no sink every call does nothing, so the trainers call it unconditionally."""

    def __init__(self) -> None:
        self.writer: Any = None  # TensorBoard's SummaryWriter
        self.wandb_run: Any = None

    @classmethod
    def open(cls, report_to: str | Sequence[str], output_dir: Path, config: Mapping[str, Any], *,
             start_step: int = 0) -> Tracker:
        """Start each sink of ``report_to`` in ``output_dir``; ``start_step`` (a resumed run) drops
        TensorBoard events written after it by the run that stopped, so every step shows once."""
        tracker = cls()
        names = require(report_to)
        try:
            if "tensorboard" in names:
                from torch.utils.tensorboard import SummaryWriter

                kwargs = {"purge_step": start_step + 1} if start_step else {}  # drops steps > start_step
                tracker.writer = SummaryWriter(str(output_dir / "tensorboard"), **kwargs)
                logger.info(f"TensorBoard: tensorboard --logdir {output_dir / 'tensorboard'}")
            if "wandb" in names:
                import wandb

                mode = wandb_mode()
                tracker.wandb_run = wandb.init(project=os.environ.get("WANDB_PROJECT", "rewardsmith"),
                                               name=output_dir.resolve().name, dir=str(output_dir),
                                               config=dict(config), mode=mode)
                if mode == "offline":
                    run_dir = Path(tracker.wandb_run.dir).parent
                    logger.info(f"W&B: offline (neither WANDB_MODE nor WANDB_API_KEY is set); upload the run "
                                f"with `wandb sync {run_dir}`")
        except BaseException:
            tracker.close()
            raise
        return tracker

    def log(self, step: int, record: Mapping[str, Any]) -> None:
        """Send one ``log.jsonl`` record's numbers at ``step``."""
        scalars = _scalars(record)
        if not scalars:
            return
        if self.writer is not None:
            for name, value in scalars.items():
                self.writer.add_scalar(name, value, step)
        if self.wandb_run is not None:
            self.wandb_run.log(scalars, step=step)

    def close(self) -> None:
        """Flush and close every sink (safe to call twice)."""
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        if self.wandb_run is not None:
            self.wandb_run.finish()
            self.wandb_run = None


__all__ = ["LOG_EVERY_DOC", "REPORT_TO_DOC", "SINKS", "Sink", "Tracker", "TrackingError",
           "log_interval", "metric_name", "require", "sinks"]
