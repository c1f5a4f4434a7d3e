"""Decide whether two parsed answers are the same, under the leniency switches.

Numbers are compared here, by value with a relative tolerance, instead of by
Math-Verify's ``evalf(chop=True)``, which calls ``1/2004!`` and ``1/2006!`` equal
because both chop to zero. Sequences are matched element by element here so the
same holds inside tuples and sets. Everything else (symbolic expressions, relations,
intervals, matrices) goes to ``math_verify.verify``, which does that well.
"""

from __future__ import annotations

from typing import Any

import sympy
from math_verify import verify as mv_verify
from sympy import Eq, FiniteSet, Interval, Set, Tuple
from sympy.core.relational import Relational
from sympy.matrices import MatrixBase

from rewardsmith.verifiers.math_leniency import Leniency
from rewardsmith.verifiers.math_parse import Parsed, normalize_text


def equivalent(gold: Parsed, pred: Parsed, leniency: Leniency) -> bool:
    """True when ``pred`` answers the question whose reference answer is ``gold``."""
    if gold.kind == "choice" or pred.kind == "choice":
        return _choice_equal(gold, pred)
    if not gold.ok or not pred.ok:
        a, b = normalize_text(gold.text), normalize_text(pred.text)
        return bool(a) and a == b
    if not leniency.percent and gold.percent != pred.percent:
        return False
    if not leniency.degrees and gold.degrees != pred.degrees:
        return False
    percent = (gold.percent, pred.percent) if leniency.percent else (False, False)
    return expr_equal(gold.expr, pred.expr, leniency, percent)


def _choice_equal(gold: Parsed, pred: Parsed) -> bool:
    letters = [_as_letter(p) for p in (gold, pred)]
    return letters[0] is not None and letters[0] == letters[1]


def _as_letter(parsed: Parsed) -> str | None:
    if parsed.kind == "choice":
        return str(parsed.expr)
    if parsed.kind == "sympy" and isinstance(parsed.expr, sympy.Symbol) and len(parsed.expr.name) == 1:
        return parsed.expr.name.upper()
    return None


def expr_equal(gold: Any, pred: Any, leniency: Leniency, percent: tuple[bool, bool] = (False, False)) -> bool:
    gold_eq, pred_eq = _is_assignment(gold), _is_assignment(pred)
    if gold_eq != pred_eq:
        if not leniency.equation_rhs:
            return False
        gold = gold.rhs if gold_eq else gold
        pred = pred.rhs if pred_eq else pred

    if _is_sequence(gold) or _is_sequence(pred):
        return _sequences_equal(gold, pred, leniency)

    if isinstance(gold, Relational) != isinstance(pred, Relational):
        if not leniency.intervals:
            return False
        return bool(mv_verify(gold, pred, timeout_seconds=None, allow_set_relation_comp=True))

    if _is_number(gold) and _is_number(pred):
        if not leniency.unsimplified and not (_is_literal(gold) and _is_literal(pred)):
            return _canonical(gold) == _canonical(pred)
        return _numbers_equal(gold, pred, leniency, percent)

    if not leniency.unsimplified:
        return _canonical(gold) == _canonical(pred)
    return bool(mv_verify(gold, pred, timeout_seconds=None))


def _is_assignment(expr: Any) -> bool:
    return isinstance(expr, Eq) and isinstance(expr.lhs, sympy.Symbol)


def _is_sequence(expr: Any) -> bool:
    return isinstance(expr, (FiniteSet, Tuple, list, tuple))


def _elements(expr: Any) -> list[Any] | None:
    if isinstance(expr, (FiniteSet, Tuple, list, tuple)):
        return list(expr.args if isinstance(expr, (FiniteSet, Tuple)) else expr)
    if isinstance(expr, Interval) and expr.left_open and expr.right_open:
        return [expr.start, expr.end]  # "(1, 2)" is a pair as often as an interval
    return None


def _sequences_equal(gold: Any, pred: Any, leniency: Leniency) -> bool:
    gold_items, pred_items = _elements(gold), _elements(pred)
    if gold_items is None or pred_items is None or len(gold_items) != len(pred_items):
        return False
    ordered = not leniency.set_order and not (isinstance(gold, FiniteSet) and isinstance(pred, FiniteSet))
    if ordered:
        return all(expr_equal(g, p, leniency) for g, p in zip(gold_items, pred_items, strict=True))
    unmatched = list(pred_items)
    for g in gold_items:
        hit = next((i for i, p in enumerate(unmatched) if expr_equal(g, p, leniency)), None)
        if hit is None:
            return False
        unmatched.pop(hit)
    return True


def _is_number(expr: Any) -> bool:
    return (
        isinstance(expr, sympy.Expr)
        and not isinstance(expr, (Set, Relational, MatrixBase))
        and not expr.free_symbols
        and bool(expr.is_number)
    )


def _is_literal(expr: Any) -> bool:
    return isinstance(expr, (sympy.Rational, sympy.Float))


def _canonical(expr: Any) -> Any:
    try:
        return expr.doit()
    except Exception:  # doit on exotic objects may raise anything; compare as given
        return expr


def _numbers_equal(gold: Any, pred: Any, leniency: Leniency, percent: tuple[bool, bool]) -> bool:
    candidates = [(gold, pred)]
    if percent[0]:
        candidates.append((gold / 100, pred))
    if percent[1]:
        candidates.append((gold, pred / 100))
    return any(_close(a, b, leniency) for a, b in candidates)


def _close(a: Any, b: Any, leniency: Leniency) -> bool:
    a, b = _canonical(a), _canonical(b)
    if a == b:
        return True
    rel, tol = sympy.Rational(str(leniency.rel_tol)), sympy.Rational(str(leniency.abs_tol))
    if isinstance(a, sympy.Rational) and isinstance(b, sympy.Rational):
        return abs(a - b) <= max(rel * max(abs(a), abs(b)), tol)
    # 30 significant digits, relative: tiny values such as 1/2004! keep their precision.
    diff = sympy.N(sympy.Abs(a - b), 30)
    scale = sympy.N(sympy.Max(sympy.Abs(a), sympy.Abs(b)), 30)
    if not (diff.is_number and scale.is_number) or diff.is_infinite or scale.is_infinite:
        return False
    return bool(diff <= max(rel * scale, tol))
