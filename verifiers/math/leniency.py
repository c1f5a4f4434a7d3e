"""The documented leniency switches of the ``math`` verifier.

Every switch is a place where graders disagree. The ones on by default accept answers a
careful human grader accepts and that a policy cannot farm (``10 cm`` for 10); each can be
turned off in the spec (``{"type": "math", "leniency": {"percent": false}}``) for stricter
rewards. ``set_order`` and ``approximate`` are off by default because they do let wrong
answers through (``(7, 6)`` for ``(6, 7)``, ``0.333333`` for ``\\frac13``): turn them on
knowingly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from rewardsmith.verifiers.options import Range, coerce, option


@dataclass(frozen=True)
class Leniency:
    """What counts as the same answer.

    - ``percent``: a percentage gold ``50\\%`` takes ``0.5``, ``\\frac12`` and ``50``; an answer's ``X\\%`` is
      read once, as X/100, or as X where the question asks for a percentage (``9\\%`` never answers 9
      otherwise); off, a percent sign must be on both sides or neither.
    - ``units``: trailing units of measure, currency and time are ignored (``10\\text{ cm}``, ``12 cm^2``,
      ``18 dollars``, ``5kg``, ``60 km/h``) unless the gold carries another unit or the question asks
      for another (``3 mm`` never answers ``3 m``, nor ``4 seconds`` "how many minutes"); off, they are
      parsed as part of the answer. Only words on
      the list in :mod:`~rewardsmith.verifiers.math.units` are units: ``5 thousand``, ``2 dozen``,
      ``5 squared`` and ``6 tens`` keep their word, and ``5xy``, ``2 pi`` and ``3\\mathrm{i}`` their
      letters. A plain plural count noun names what is counted and is dropped too (``6 marbles``,
      ``310 legs``). A currency sign (``\\$18``) is dropped with either setting.
    - ``degrees``: ``30^\\circ`` ≡ ``30`` ≡ ``\\frac{\\pi}{6}``; off, the degree sign must be on both sides or
      neither. Inside a formula a degree is always π/180 (``\\sin 30^\\circ`` is ``\\frac12``).
    - ``unsimplified``: whether an answer that equals the gold only after the grader computes counts.
      Unset (the default), it does for expression golds (``(x+1)^2`` ≡ ``x^2+2x+1``) and does not for
      number golds, whose answers must be in final form (:mod:`~rewardsmith.verifiers.math.final_form`:
      ``13 \\cdot 17``, ``\\binom{7}{2}``, ``\\frac{6}{4}``, ``\\sqrt{12}`` do not answer 221, 21,
      ``\\frac32``, ``2\\sqrt3``). ``true``: it counts for both (turn on knowingly: a policy learns to hand
      the question back). ``false``: expressions compare by sympy's automatic canonical form only
      (``\\frac{2}{4}`` still ≡ ``\\frac12`` there) and numbers must be in final form.
    - ``rel_tol`` / ``abs_tol``: when the gold is a non-integer decimal (``2.5``, ``0.3333``), numbers
      within ``max(rel_tol·|gold|, abs_tol)`` of it are equal. Any other gold compares exactly,
      to the last digit (``1000000.5`` is not ``1000000``; ``1/2004!`` is not ``1/2006!``), and so do
      the ends of intervals and the entries of tuples and matrices.
    - ``approximate`` (off): the tolerance also applies to non-integer golds that are not decimals,
      so a decimal approximation answers an exact value (``0.333333`` ≡ ``\\frac13``,
      ``1.414214`` ≡ ``\\sqrt2``). Integers stay exact.
    - ``set_order`` (off): tuples, points and vectors match in any order (``(2, 1)`` ≡ ``(1, 2)``).
      Off, only sets and lists of solutions (``1, 2``, ``x = 1 or x = 2``) ignore order; lists keep
      their repeats (``1, 1, 2`` ≠ ``1, 2``).
    - ``intervals``: an inequality, or a chain of them, equals the interval it describes
      (``k < -5`` ≡ ``(-\\infty,-5)``, ``-2 \\le x \\le 7`` ≡ ``[-2, 7]``).
    - ``equation_rhs``: a named value equals the bare value (``x = 2`` ≡ ``2``, ``g(x) = x^2`` ≡ ``x^2``,
      ``(p, q) = (3, 2)`` ≡ ``(3, 2)``); off, a named answer only matches a named gold. The name
      must be a symbol, a function of symbols or a tuple of symbols: ``3 = 4``, ``x = 3 = 4`` and
      ``a + b = 5`` never answer 4 or 5 with any setting.
    - ``choices``: multiple-choice letters match in any dress (``(B)``, ``B``, ``\\text{(B)}``,
      ``option b``, ``(B) 12``; a hedge such as ``(B) or (C)`` does not); off, letters are
      compared as plain text.
    - ``plain_text``: plain-text math parses (``sqrt(2)/2``, ``pi/2``, ``x**2``, ``1.5e3``); off, a
      span with a function name lacking its backslash (``sqrt``, ``pi``) does not parse.
    - ``mixed_numbers``: ``2\\frac{2}{3}`` is ``8/3``; off, it is ``2·\\frac23``.
    """

    OPTION_NOUN = "leniency switch"  # what the options are called in messages (not a field)

    percent: bool = option(True, "a 50\\% gold takes 0.5 and 50; an answer's X\\% is X/100 unless a percent is asked")
    units: bool = option(True, "a unit nobody contradicts is ignored (10 cm ≡ 10; not 3 mm for 3 m)")
    degrees: bool = option(True, "30^\\circ ≡ 30 ≡ π/6")
    unsimplified: bool | None = option(
        None, "answers equal only after computing count: unset, for expression golds ((x+1)^2 ≡ x^2+2x+1) but "
              "not number golds (13 \\cdot 17 does not answer 221); true: for both; false: for neither")
    rel_tol: Annotated[float, Range(ge=0)] = option(1e-6, "relative tolerance when the gold is a non-integer decimal")
    abs_tol: Annotated[float, Range(ge=0)] = option(0.0, "absolute tolerance when the gold is a non-integer decimal")
    set_order: bool = option(False, "tuples and points match in any order (lets (7, 6) answer (6, 7))")
    approximate: bool = option(False, "the tolerance also applies to exact golds (0.333333 ≡ \\frac13)")
    intervals: bool = option(True, "an inequality equals the interval it describes (k < -5 ≡ (-∞, -5))")
    equation_rhs: bool = option(True, "a named value equals the bare value (x = 2 ≡ 2)")
    choices: bool = option(True, "multiple-choice letters match in any dress ((B) ≡ B ≡ option b)")
    plain_text: bool = option(True, "plain-text math parses (sqrt(2)/2, pi/2, x**2)")
    mixed_numbers: bool = option(True, "2\\frac{2}{3} is 8/3")

    @classmethod
    def from_spec(cls, spec: Leniency | Mapping[str, Any] | None) -> Leniency:
        """The switches of a spec's ``leniency`` mapping (None: the defaults), checked like every option."""
        return cls() if spec is None else coerce(spec, cls, ("leniency",))
