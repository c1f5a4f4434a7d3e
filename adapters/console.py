"""Where the library's log records are shown: one handler on the ``rewardsmith`` logger.

Library modules only log (``logging.getLogger(__name__)``, all under ``rewardsmith``); whoever
runs them decides what is shown. The CLI and the reward server install this handler, which
writes to the current ``sys.stderr`` (so a test's capture sees it) through ``tqdm.write`` when
tqdm is loaded, so a message never breaks a progress bar. Used as a library, rewardsmith prints
nothing of its own: configure ``logging`` as for any library.
"""

from __future__ import annotations

import logging
import sys

ROOT = "rewardsmith"


class CliFormatter(logging.Formatter):
    """The CLI's plain lines: ``rewardsmith: error: …``, ``warning: …``, and progress as it is."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.levelno >= logging.ERROR:
            message += "\n" + self.formatException(record.exc_info)
        if record.levelno >= logging.ERROR:
            return f"rewardsmith: error: {message}"
        if record.levelno >= logging.WARNING:
            return f"warning: {message}"
        return message


class ConsoleHandler(logging.Handler):
    """Writes each record to the ``sys.stderr`` of the moment, around any progress bar."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record)
            tqdm = sys.modules.get("tqdm")
            if tqdm is not None:
                tqdm.tqdm.write(text, file=sys.stderr)
            else:
                sys.stderr.write(text + "\n")
                sys.stderr.flush()
        except Exception:  # a log line must never take the job down
            self.handleError(record)


def show_logs(level: str | int = "INFO", formatter: logging.Formatter | None = None) -> None:
    """Show the ``rewardsmith`` loggers' records at ``level`` and above on stderr (once per process)."""
    logger = logging.getLogger(ROOT)
    logger.setLevel(level.upper() if isinstance(level, str) else level)
    handler = next((h for h in logger.handlers if isinstance(h, ConsoleHandler)), None)
    if handler is None:
        handler = ConsoleHandler()
        logger.addHandler(handler)
    handler.setFormatter(formatter or CliFormatter())
