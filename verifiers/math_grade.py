"""Decide whether two parsed answers are the same, under the leniency switches.

Numbers are compared here, by value with a relative tolerance, instead of by
Math-Verify's ``evalf(chop=True)``, which calls ``1/2004!`` and ``1/2006!`` equal
because both chop to zero; integers are compared exactly. Sequences are matched
element by element here so the same holds inside tuples and sets. Equations are
unwrapped here too (math-verify takes the right side of any equation, so ``6 = 5``
would answer 5). Everything else (symbolic expressions, relations, intervals,
matrices) goes to ``math_verify.verify``, which does that well.
"""

from __future__ import annotations

import re
from typing import Any

import sympy
from math_verify import verify as mv_verify
from sympy import Eq, FiniteSet, Interval, Set, Tuple
from sympy.core.relational import Relational
from sympy.matrices import MatrixBase

from rewardsmith.verifiers.math_leniency import Leniency
from rewardsmith.verifiers.math_parse import Parsed, choice_letter, normalize_text


def equivalent(gold: Parsed, pred: Parsed, leniency: Leniency) -> bool:
    """True when ``pred`` answers the question whose reference answer is ``gold``."""
    if gold.kind == "choice" or pred.kind == "choice":
        return _choice_equal(gold, pred)
    if not leniency.choices and (choice_letter(gold.text) or choice_letter(pred.text)):
        return _text_equal(gold, pred)  # strict: "(B)" and "B" are different strings
    if gold.base and pred.base and gold.base != pred.base:
        return False  # 52_8 is not 52_9 (a numeral without a base takes the question's)
    if not gold.ok or not pred.ok or "text" in (gold.kind, pred.kind):
        return _text_equal(gold, pred)
    if not leniency.percent and gold.percent != pred.percent:
        return False
    if not leniency.degrees and gold.degrees != pred.degrees:
        return False
    percent = (gold.percent, pred.percent) if leniency.percent else (False, False)
    return expr_equal(gold.expr, pred.expr, leniency, percent)


def _text_equal(gold: Parsed, pred: Parsed) -> bool:
    a, b = normalize_text(gold.text), normalize_text(pred.text)
    return bool(a) and a == b


def _choice_equal(gold: Parsed, pred: Parsed) -> bool:
    letters = [_as_letter(p) for p in (gold, pred)]
    return letters[0] is not None and letters[0] == letters[1]


# A choice followed by its content: "(B) 12", "B) 12", "\text{(B)} 12".
_LEADING_CHOICE = re.compile(r"^(?:\\text(?:bf)?\s*\{)?\s*\(?([A-E])\)\}?\s+(\S.*)$", re.DOTALL)
_ANY_CHOICE = re.compile(r"\([A-Ea-e]\)|\b[A-E]\)")


def _as_letter(parsed: Parsed) -> str | None:
    if parsed.kind == "choice":
        return str(parsed.expr)
    letter = choice_letter(parsed.text, bare_lowercase=True)
    if letter is None:
        match = _LEADING_CHOICE.match(parsed.text)
        # "(B) or (C)" hedges between options: no letter at all, or the hedge would be rewarded.
        if match and not _ANY_CHOICE.search(match.group(2)):
            letter = match.group(1)
    return letter


def expr_equal(gold: Any, pred: Any, leniency: Leniency, percent: tuple[bool, bool] = (False, False)) -> bool:
    if _false_equation(gold) or _false_equation(pred):
        return False  # "6 = 5" is not an answer of 5, whatever math-verify's rhs rule says
    gold_eq, pred_eq = isinstance(gold, Eq), isinstance(pred, Eq)
    if gold_eq != pred_eq and (_names_value(gold, False) if gold_eq else _names_value(pred, True)):
        if not leniency.equation_rhs:
            return False
        gold = gold.rhs if gold_eq else gold
        pred = pred.rhs if pred_eq else pred

    if _is_sequence(gold) or _is_sequence(pred):
        return _sequences_equal(gold, pred, leniency)

    if _is_relation(gold) != _is_relation(pred):
        if not leniency.intervals:
            return False
        return _relation_matches_set(gold, pred)

    if _is_number(gold) and _is_number(pred):
        if not leniency.unsimplified and not (_is_literal(gold) and _is_literal(pred)):
            return _canonical(gold) == _canonical(pred)
        return _numbers_equal(gold, pred, leniency, percent)

    if not leniency.unsimplified:
        return _canonical(gold) == _canonical(pred)
    return bool(mv_verify(gold, pred, timeout_seconds=None))


def _is_relation(expr: Any) -> bool:
    """An inequality, or a chain of them: ``-2 \\le x \\le 7`` parses as ``And(-2 <= x, x <= 7)``."""
    if isinstance(expr, Relational):
        return True
    return isinstance(expr, (sympy.And, sympy.Or)) and all(_is_relation(arg) for arg in expr.args)


def _relation_matches_set(gold: Any, pred: Any) -> bool:
    relation, other = (gold, pred) if _is_relation(gold) else (pred, gold)
    if isinstance(relation, Eq) and not isinstance(other, Set):
        return False  # an equation left here is not an assignment: it has no value to compare
    if mv_verify(gold, pred, timeout_seconds=None, allow_set_relation_comp=True):
        return True
    # math-verify compares one inequality with an interval; a chain needs the solution set.
    if not isinstance(other, Set) or len(relation.free_symbols) != 1:
        return False
    try:
        solutions = relation.as_set()
    except Exception:  # as_set raises NotImplementedError and others for what it cannot solve
        return False
    return solutions == other or bool(mv_verify(solutions, other, timeout_seconds=None))


def _names_value(expr: Eq, named_expression: bool) -> bool:
    """Whether the equation ``expr`` stands for its right side, compared with a bare value.

    ``x = 2`` and ``2 + 3 = 5`` are; so is ``a + b = 5`` in a completion (the question asked
    for ``a + b``), but not in a gold answer: ``x^2 + y^2 = 1`` is a curve, not the number 1.
    """
    if isinstance(expr.lhs, sympy.Symbol):
        return True
    if not expr.lhs.free_symbols and not expr.rhs.free_symbols:
        return True  # a true numeric equation; false ones are rejected before
    return named_expression and bool(expr.lhs.free_symbols)


def _false_equation(expr: Any) -> bool:
    if not isinstance(expr, Eq) or expr.lhs.free_symbols or expr.rhs.free_symbols:
        return False
    if not (_is_number(expr.lhs) and _is_number(expr.rhs)):
        return False
    return not _close(expr.lhs, expr.rhs, Leniency(rel_tol=0.0, abs_tol=0.0))


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
    # A set ("\\{1, 2\\}") has no order to respect; lists and tuples do when set_order is off.
    ordered = not leniency.set_order and not (isinstance(gold, FiniteSet) or isinstance(pred, FiniteSet))
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
    if a is sympy.nan or b is sympy.nan:
        return False  # "0 \\infty" is undefined, not equal to anything (Max() would raise on it)
    if a == b:
        return True
    if isinstance(a, sympy.Integer) and isinstance(b, sympy.Integer):
        return False  # counts are exact: 123456789 is not 123456788, however small the relative gap
    a, b = _exact_decimal(a), _exact_decimal(b)
    rel, tol = sympy.Rational(str(leniency.rel_tol)), sympy.Rational(str(leniency.abs_tol))
    if isinstance(a, sympy.Rational) and isinstance(b, sympy.Rational):
        return abs(a - b) <= max(rel * max(abs(a), abs(b)), tol)
    # 30 significant digits, relative: tiny values such as 1/2004! keep their precision.
    try:
        diff = sympy.N(sympy.Abs(a - b), 30)
        scale = sympy.N(sympy.Max(sympy.Abs(a), sympy.Abs(b)), 30)
    except (TypeError, ValueError):  # not comparable (zoo, nan inside an expression)
        return False
    if not (diff.is_number and scale.is_number) or diff.is_infinite or scale.is_infinite:
        return False
    return bool(diff <= max(rel * scale, tol))


def _exact_decimal(expr: Any) -> Any:
    """A decimal literal as the exact number it spells (``0.333333`` is 333333/10⁶), not its binary float,
    so the tolerance boundary does not depend on rounding."""
    if isinstance(expr, sympy.Float):
        try:
            return sympy.Rational(str(expr))
        except (TypeError, ValueError):
            return expr
    return expr
