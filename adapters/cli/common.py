"""What the CLI modules share: the parser class, and how a command reports an error or a progress line.

Kept apart so the command modules import it and never each other sideways. Errors and progress go
through the ``rewardsmith.cli`` logger, shown by the handler :func:`~rewardsmith.adapters.console.show_logs`
installs when the command line starts: one logging style for the library and the CLI alike.
:class:`Parser` is the class of every parser in the tree (subparsers inherit it): no abbreviated
flags, and a typo gets the closest valid name and the usage of the command it was typed for.
"""

from __future__ import annotations

import argparse
import difflib
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger("rewardsmith.cli")


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that refuses abbreviated flags (``--over`` is not ``--overwrite``: a flag
    added later must not change what an old command line means) and answers a typo with a suggestion.

    Subparsers made by ``add_subparsers().add_parser`` are of this class too (argparse's default).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        """As argparse's, but an unknown argument is reported by the (sub)command it was typed for,
        with its usage line and the closest flag of that command."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            chosen = selected_parser(self, parsed)
            hints = [hint for extra in extras if (hint := suggest_flag(chosen, extra))]
            chosen.error(f"unrecognized arguments: {' '.join(extras)}" + "".join(f"; {h}" for h in hints))
        return parsed

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """An invalid choice (a subcommand, a --device value) names the closest valid one."""
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        match = difflib.get_close_matches(str(value), names, n=1, cutoff=0.6)
        hint = f"; did you mean {match[0]!r}?" if match else ""
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint} (choose from {', '.join(names)})")


def suggest_flag(parser: argparse.ArgumentParser, typed: str) -> str | None:
    """``did you mean --overwrite?`` for a flag close to one of ``parser``'s own, else None."""
    if not typed.startswith("-"):
        return None
    flag = typed.partition("=")[0]
    flags = [option for action in parser._actions for option in action.option_strings]
    match = difflib.get_close_matches(flag, flags, n=1, cutoff=0.6)
    return f"did you mean {match[0]}?" if match else None


def selected_parser(parser: argparse.ArgumentParser, namespace: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost (sub)parser the command line selected (``train grpo`` -> the grpo parser)."""
    found = True
    while found:
        found = False
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = getattr(namespace, action.dest, None)
                if chosen in action.choices:
                    parser, found = action.choices[chosen], True
                    break
    return parser


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


RUN_CONFIG_KEYS = ("device", "overwrite", "log_every", "report_to")
"""The config keys :func:`add_run_flags` sets (``--no-resume`` is read by :func:`_config_from_args`)."""


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags every ``train`` command has alike: logging (:func:`add_tracking_flags`), the device,
    what to do with a used output folder, the progress bar and ``--list-config``."""
    add_tracking_flags(parser)
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default=None,
                        help="auto (cuda when available), cpu or cuda (default: auto)")
    parser.add_argument("--no-resume", action="store_true", help="never resume from OUTPUT_DIR's checkpoints (a "
                        "folder holding them is then refused without --overwrite)")
    parser.add_argument("--overwrite", action="store_true", default=None,
                        help="start over in an OUTPUT_DIR that holds a previous run, removing its files")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--list-config", action="store_true", help="print every config key and exit")


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
    """Ctrl-C during training: the checkpoints stay, and the same command resumes from them (with
    none written yet, a rerun needs --overwrite)."""
    from rewardsmith.reward_models.checkpoint import checkpoint_dirs

    if checkpoint_dirs(Path(output_dir)):
        _say(f"rewardsmith: interrupted; rerun the same command to resume from the last checkpoint in "
             f"{output_dir}/checkpoints")
    else:
        _say(f"rewardsmith: interrupted before the first checkpoint; rerun with --overwrite to start over in "
             f"{output_dir}")
    return 130
