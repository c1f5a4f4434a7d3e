"""The one error policy every adapter and the CLI share: what a ``status=error`` verdict becomes.

An ``error`` is an infrastructure fault (a sandbox down, a judge unreachable), never a judgement
of the completion, so no adapter may turn it into a reward of 0 without being told to:

* ``none``: no reward (TRL leaves ``None`` out of its sums and means; the scoring job writes
  ``null``). Only where the consumer can take a missing reward.
* ``zero``: reward 0, and the row is counted as an error in the adapter's metrics. For
  consumers that cannot take a missing reward (verl, OpenRLHF), this is the explicit choice.
* ``raise``: stop with :class:`RewardError`, so a run never trains through an outage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

from rewardsmith.verifiers import RewardsmithError
from rewardsmith.verifiers.core import Verdict

OnError = Literal["none", "zero", "raise"]
ON_ERROR: tuple[str, ...] = get_args(OnError)
# Consumers whose reward tensor has no hole for a missing value (verl, OpenRLHF).
NO_MISSING: tuple[str, ...] = ("zero", "raise")


class RewardError(RewardsmithError, RuntimeError):
    """A verifier returned ``status=error`` and the policy is ``on_error="raise"``."""


def check_on_error(value: str, allowed: Sequence[str] = ON_ERROR, consumer: str = "") -> OnError:
    """``value`` if it is a policy ``consumer`` can carry out; else a ValueError that says which are."""
    if value in allowed:
        return value  # type: ignore[return-value]
    why = ""
    if value == "none" and "none" not in allowed:
        why = f" ({consumer or 'this consumer'} cannot take a missing reward)"
    raise ValueError(f"on_error must be one of {', '.join(allowed)}, got {value!r}{why}")


def apply_on_error(verdict: Verdict, on_error: OnError, where: str = "rewardsmith") -> float | None:
    """The reward a consumer gets for ``verdict`` under ``on_error``."""
    if verdict.status != "error":
        return float(verdict.score)
    if on_error == "raise":
        raise RewardError(f"{where}: verifier error: {verdict.feedback}")
    return 0.0 if on_error == "zero" else None


def raise_on_errors(verdicts: Sequence[Verdict], on_error: OnError, where: str = "rewardsmith") -> None:
    """Under ``raise``, one :class:`RewardError` for a batch with any error, naming how many and the first."""
    if on_error != "raise":
        return
    errors = [v for v in verdicts if v.status == "error"]
    if errors:
        raise RewardError(f"{where}: {len(errors)} of {len(verdicts)} verdicts have status=error: {errors[0].feedback}")
