"""What the CLI modules share: how a command reports an error or a progress line.

Kept apart so the command modules import it and never each other sideways. Both go through
the ``rewardsmith.cli`` logger, shown by the handler :func:`~rewardsmith.adapters.console.show_logs`
installs when the command line starts: one logging style for the library and the CLI alike.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

logger = logging.getLogger("rewardsmith.cli")


def _fail(message: str) -> int:
    """Report a usage or input error (``rewardsmith: error: …``); the exit code for it."""
    logger.error(message)
    return 2


def _say(message: str) -> None:
    """A progress or result line on stderr."""
    logger.info(message)


def _list_or_require_data(args: argparse.Namespace, command: str, config_type: type, data: str) -> int | None:
    """What a ``train`` command does before it reads a config: ``--list-config`` prints every key
    (exit 0), a missing ``--data`` is an error; None when the command goes on."""
    from rewardsmith.verifiers.options import format_options

    if args.list_config:
        print(format_options(command, config_type))
        return 0
    if not args.data:
        return _fail(f"give the training {data} with --data FILE")
    return None


def _config_from_args(args: argparse.Namespace, config_type: Any, flags: Iterable[str], **fixed: Any) -> Any:
    """``--config FILE``'s mapping with the flags given on the command line over it (``--no-resume``
    included), checked by the config type."""
    from rewardsmith.verifiers.yaml_text import read_mapping

    values = read_mapping(args.config) if args.config is not None else {}
    overrides = {name: getattr(args, name) for name in flags} | fixed
    if args.no_resume:
        overrides["resume"] = False
    return config_type.from_mapping(values, **overrides)


def add_tracking_flags(parser: argparse.ArgumentParser) -> None:
    """``--log-every`` and ``--report-to``, the same on every ``train`` command."""
    parser.add_argument("--log-every", type=_log_every, default=None, metavar="N|auto",
                        help="write a log record every N steps; auto (default): every step up to 199 steps, then "
                             "about 100 records per run")
    parser.add_argument("--report-to", nargs="+", choices=["none", "tensorboard", "wandb"], default=None,
                        metavar="SINK", help="where the metrics go besides log.jsonl, one or more of: none (default), "
                                             "tensorboard (events in OUTPUT_DIR/tensorboard), wandb (offline "
                                             "unless WANDB_MODE or WANDB_API_KEY is set)")


def _log_every(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected auto or a whole number of steps >= 1, got {text!r}")
    return value


def _interrupted(output_dir: str | Path) -> int:
    """Ctrl-C during training: the checkpoints stay, and the same command resumes from them."""
    _say(f"rewardsmith: interrupted; rerun the same command to resume from the last checkpoint in "
         f"{output_dir}/checkpoints")
    return 130
