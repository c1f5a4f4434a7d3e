"""What the CLI modules share: how a command reports an error or a progress line.

Kept apart so the command modules import it and never each other sideways (``grpo`` used to
import these from the reward-model commands, which import ``grpo``: a cycle).
"""

from __future__ import annotations

import sys


def _fail(message: str) -> int:
    print(f"rewardsmith: error: {message}", file=sys.stderr)
    return 2


def _say(message: str) -> None:
    print(message, file=sys.stderr)
