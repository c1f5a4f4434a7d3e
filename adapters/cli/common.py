"""What the CLI modules share: how a command reports an error or a progress line.

Kept apart so the command modules import it and never each other sideways. Both go through
the ``rewardsmith.cli`` logger, shown by the handler :func:`~rewardsmith.adapters.console.show_logs`
installs when the command line starts: one logging style for the library and the CLI alike.
"""

from __future__ import annotations

import logging

logger = logging.getLogger("rewardsmith.cli")


def _fail(message: str) -> int:
    """Report a usage or input error (``rewardsmith: error: …``); the exit code for it."""
    logger.error(message)
    return 2


def _say(message: str) -> None:
    """A progress or result line on stderr."""
    logger.info(message)
