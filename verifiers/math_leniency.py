"""The documented leniency switches of the ``math`` verifier.

Every switch is a place where graders disagree; each is on by default because a
human grader would accept the answer, and each can be turned off in the spec
(``{"type": "math", "leniency": {"percent": false}}``) for stricter rewards.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Leniency:
    """What counts as the same answer.

    - ``percent``: ``50\\%`` ≡ ``0.5`` ≡ ``\\frac12`` and ``50\\%`` ≡ ``50``; off, a percent sign
      must be on both sides or neither.
    - ``units``: trailing units are ignored (``10\\text{ cm}``, ``18 dollars``, ``\\$18``); off, they
      are parsed as part of the answer.
    - ``degrees``: ``30^\\circ`` ≡ ``30``; off, the degree sign must be on both sides or neither.
    - ``unsimplified``: answers equal after simplification count (``(x+1)^2`` ≡ ``x^2+2x+1``);
      off, only sympy's automatic canonical form is compared (``\\frac{2}{4}`` still ≡ ``\\frac12``).
    - ``rel_tol`` / ``abs_tol``: numbers within ``max(rel_tol·max(|a|,|b|), abs_tol)`` are equal.
      ``rel_tol`` is relative so ``1/2004!`` and ``1/2006!`` stay different; set both to 0 for
      exact comparison.
    - ``set_order``: comma lists, sets and tuples compare without regard to order; off, in order.
    - ``intervals``: an inequality equals the interval it describes (``k < -5`` ≡ ``(-\\infty,-5)``).
    - ``equation_rhs``: ``x = 2`` ≡ ``2``; off, an equation only matches an equation.
    - ``choices``: multiple-choice letters match in any dress (``(B)``, ``B``, ``\\text{(B)}``,
      ``option b``); off, letters are compared as plain text.
    - ``plain_text``: plain-text math parses (``sqrt(2)/2``, ``pi/2``, ``x^2``).
    - ``mixed_numbers``: ``2\\frac{2}{3}`` is ``8/3``; off, it is ``2·\\frac23``.
    """

    percent: bool = True
    units: bool = True
    degrees: bool = True
    unsimplified: bool = True
    rel_tol: float = 1e-6
    abs_tol: float = 0.0
    set_order: bool = True
    intervals: bool = True
    equation_rhs: bool = True
    choices: bool = True
    plain_text: bool = True
    mixed_numbers: bool = True

    @classmethod
    def from_spec(cls, spec: Leniency | Mapping[str, Any] | None) -> Leniency:
        if spec is None:
            return cls()
        if isinstance(spec, Leniency):
            return spec
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(f"unknown leniency switch {', '.join(unknown)}; switches: {', '.join(sorted(known))}")
        return cls(**dict(spec))
