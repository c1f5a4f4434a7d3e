"""The one base of rewardsmith's own errors: ``except RewardsmithError`` catches every error the
library raises on purpose (a bad spec, unreadable input, a backend down, a model that cannot load).

It lives in the lowest layer (the sandbox, which every other package may import) so that the
sandbox's own errors can share it; users import it from ``rewardsmith.verifiers``. Each error
also keeps its builtin base (``ValueError``, ``RuntimeError``), so existing ``except`` clauses
still catch it. Standard library only, and importing it starts none of the sandbox machinery.
"""

from __future__ import annotations

__all__ = ["RewardsmithError"]


class RewardsmithError(Exception):
    """Base of every error rewardsmith raises for its users; the message says what to do."""
