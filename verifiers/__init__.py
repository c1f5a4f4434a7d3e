"""rewardsmith.verifiers: the contracts, the registry and every verifier.

Importing this package stays light (no torch, transformers, docker or fastapi):
trainer workers and the reward server import it on every start.
"""

from rewardsmith.sandbox.errors import RewardsmithError
from rewardsmith.verifiers.core import (
    MISSING,
    STATUSES,
    Sample,
    Status,
    Verdict,
    Verifier,
    as_samples,
    error,
    invalid_input,
    lookup,
    read_completion,
)
from rewardsmith.verifiers.options import Range, Spec, declare, option
from rewardsmith.verifiers.registry import SpecError, available, build, register

__all__ = [
    "MISSING",
    "STATUSES",
    "Range",
    "RewardsmithError",
    "Sample",
    "Spec",
    "SpecError",
    "Status",
    "Verdict",
    "Verifier",
    "as_samples",
    "available",
    "build",
    "declare",
    "error",
    "invalid_input",
    "lookup",
    "option",
    "read_completion",
    "register",
]
