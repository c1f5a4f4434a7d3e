"""Turn vectors: a rollout's reward placed at the policy turns that earned it, and the one scalar it reduces to.

A trainer that credits each turn (the GRPO loop's multi-turn mode) and one that takes a scalar must pay the
same reward, so the vector and its reduction travel together (``details["turns"]`` of an ``agent`` verdict)
and :func:`consistent` checks the scalar against them.

* ``sum``: the rewards added (the default; one turn gives the outcome itself);
* ``last``: the last turn's reward alone (terms earned at earlier turns do not count);
* ``discounted``: ``Σ γ^t r_t`` from the first turn, so a reward earned later is worth less.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

Reduction = Literal["sum", "last", "discounted"]
REDUCTIONS: tuple[Reduction, ...] = ("sum", "last", "discounted")


def reduce(rewards: Sequence[float], reduction: Reduction, gamma: float = 1.0) -> float:
    """The scalar a turn vector is worth under ``reduction``."""
    if not rewards:
        return 0.0
    if reduction == "sum":
        return math.fsum(rewards)
    if reduction == "last":
        return float(rewards[-1])
    if reduction == "discounted":
        return math.fsum(gamma**t * r for t, r in enumerate(rewards))
    raise ValueError(f"reduction must be one of {', '.join(REDUCTIONS)}, got {reduction!r}")


def record(rewards: Sequence[float], reduction: Reduction, gamma: float) -> dict[str, Any]:
    """What a verdict carries of its turn vector (``details["turns"]``)."""
    return {"rewards": [float(r) for r in rewards], "reduction": reduction, "gamma": gamma}


def consistent(score: float, turns: Mapping[str, Any], tolerance: float = 1e-9) -> bool:
    """Whether ``score`` is what the recorded turn vector reduces to: the check a trainer crediting turns
    makes before it uses the vector in place of the scalar."""
    value = reduce(turns["rewards"], turns["reduction"], turns.get("gamma", 1.0))
    return abs(value - score) <= tolerance * max(1.0, abs(score))
