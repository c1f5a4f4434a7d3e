"""Decide whether two parsed answers are the same, under the leniency switches.

Every comparison is ours rather than ``math_verify.verify``'s, because each of its
lenient defaults is a reward a policy can learn to farm: it compares ordered tuples as
sets, equates two undefined values, reads ``x < 5`` as 5 and applies a float tolerance to
integers. The rules here:

* **Lists** (solution lists, several boxes) match as multisets, item by item; a single
  value never equals a list of several (a hedge earns nothing), and a part of a
  multi-part gold is not the gold.
* **Order** is kept for tuples, points, vectors and intervals; only a set or a list of
  solutions may be matched in any order.
* **Numbers**: integers and exact values compare exactly (numerically to 50 digits for
  irrational constants, never with a tolerance); a relative tolerance applies only when the
  gold itself is a non-integer decimal (``approximate`` widens this). ``zoo`` and ``nan``
  equal nothing. The same rule holds inside tuples, intervals and matrices.
* **Relations** equal the set they describe (``intervals``), never a number.
* **Equations** must name what they assign (a symbol, a function, a tuple of symbols):
  ``3 = 4`` and ``a + b = 5`` are not values. A function's variable may be renamed.
* **Expressions** with variables are equal when their difference vanishes at several
  pseudo-random points drawn from the expressions themselves (exact for polynomials and
  rational functions, and far faster than ``simplify``).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

import sympy
from sympy import FiniteSet, Interval, Set, Tuple, Union
from sympy.core.relational import Relational
from sympy.matrices import MatrixBase

from rewardsmith.verifiers.math import final_form
from rewardsmith.verifiers.math.leniency import Leniency
from rewardsmith.verifiers.math.parse import Name, Parsed, choice_letter, normalize_text, parse_name, relation_set
from rewardsmith.verifiers.math.prompt import NOTHING_ASKED, Asked
from rewardsmith.verifiers.math.units import unit_dimension, unit_key

_DIGITS = 50  # precision of numeric identity tests
_ZERO = sympy.Float(10) ** -200  # relative difference of two exact values that are one (evalf reports any real gap)
_POINTS = 5  # random points for identities in variables


def equivalent(gold: Parsed, pred: Parsed, leniency: Leniency, asked: Asked = NOTHING_ASKED) -> bool:
    """True when ``pred`` answers the question whose reference answer is ``gold``; ``asked`` is what the
    prompt asks for (a unit, a percentage, the order of a tuple), which a bare gold leaves unsaid."""
    same, problem = compare(gold, pred, leniency, asked)
    return same and not problem


def compare(gold: Parsed, pred: Parsed, leniency: Leniency, asked: Asked = NOTHING_ASKED) -> tuple[bool, str]:
    """Whether ``pred`` has the gold's value, and, if it has, why it still does not answer (""): it names
    the tuple in another order than the question's, or it equals a number gold only after computing
    (:mod:`~rewardsmith.verifiers.math.final_form`)."""
    if not _same_answer(gold, pred, leniency, asked):
        return False, ""
    gold_value, pred_value = resolve(gold, leniency), resolve(pred, leniency)
    if gold_value is None or pred_value is None:
        return True, "an equation chain that contradicts itself"
    misnamed = _reordered_name(pred_value, asked) or _unasked_label(pred_value, asked)
    if misnamed:
        return True, misnamed
    if final_form.applies(gold_value, leniency):
        return True, final_form.not_final(gold_value, pred_value, leniency, asked)
    return True, ""


def _reordered_name(pred: Parsed, asked: Asked) -> str:
    """``(q, p) = (3, 2)`` where the question asks for ``(p, q)``: the name says q is 3, which the tuple
    ``(3, 2)`` in the asked order does not."""
    if not asked.names or pred.name is None or pred.name.kind != "tuple":
        return ""
    asked_name = parse_name("(" + ", ".join(asked.names) + ")")
    if asked_name is None or asked_name.head == pred.name.head:
        return ""
    return f"the tuple is named ({pred.name.head}), not ({asked_name.head}) as the question asks"


_LABEL_WORDS = re.compile(
    r"\\(?:text|textrm|textnormal|textbf|mathrm|mbox|operatorname)\s*\{([^{}]*[A-Za-z]{2}[^{}]*)\}"
)


def _unasked_label(pred: Parsed, asked: Asked) -> str:
    """``\\text{Wrong answer} = 12``: a name in words must name something the prompt speaks of (each word
    begins a word of the prompt: ``\\text{min}`` for "minimum"); a label the prompt never mentions says
    what the value is not, or nothing."""
    for item in pred.items if pred.kind == "list" else (pred,):
        if item.name is None:
            continue
        lhs = item.text.split("=", 1)[0] if "=" in item.text else item.text.split("\\in", 1)[0]
        for label in _LABEL_WORDS.finditer(lhs):
            words = [w.lower() for w in re.findall(r"[A-Za-z]+", label.group(1))]
            unasked = [w for w in words if not any(said.startswith(w.removesuffix("s")) for said in asked.words)]
            if unasked:
                return f"the label {label.group(0)!r} names nothing the prompt asks for"
    return ""


def _same_answer(gold: Parsed, pred: Parsed, leniency: Leniency, asked: Asked) -> bool:
    """The value comparison alone, under the switches and what the prompt asks."""
    gold_value, pred_value = resolve(gold, leniency), resolve(pred, leniency)
    if gold_value is None or pred_value is None:
        return False  # an equation chain that contradicts itself ("x = 3 = 4")
    if units_disagree(gold_value, pred_value, asked):
        return False
    if leniency.percent:
        pred_value = read_percent(pred_value, gold_value, asked)
    if gold_value.kind == "sympy" and isinstance(gold_value.expr, Tuple):
        pred_value = in_asked_order(pred_value, asked)
    return _equivalent(gold_value, pred_value, leniency)


def in_asked_order(pred: Parsed, asked: Asked) -> Parsed:
    """Named values answering a tuple gold, read as the tuple the question asks for: ``b = 2, a = 1``
    answers "the ordered pair (a, b)" as ``(1, 2)``, and ``b = 1, a = 2`` does not. A name given twice
    (``a = 1, a = 2``), or names other than the asked ones, are not that tuple at all."""
    if pred.kind != "list" or not pred.items:
        return pred
    names = [item.name.head if item.name is not None and item.name.kind == "symbol" else None for item in pred.items]
    if None in names:
        return pred
    if len(set(names)) != len(names):
        return Parsed(text=pred.text, reason="one name given several values, not a tuple")
    if not asked.names:
        return pred
    if set(names) != set(asked.names) or any(item.kind != "sympy" for item in pred.items):
        return Parsed(text=pred.text, reason=f"names other than the asked ({', '.join(asked.names)})")
    by_name = dict(zip(names, pred.items, strict=True))
    return Parsed(text=pred.text, expr=Tuple(*(by_name[name].expr for name in asked.names)), kind="sympy")


def units_disagree(gold: Parsed, pred: Parsed, asked: Asked = NOTHING_ASKED) -> bool:
    """Whether the answer's unit names another quantity than the gold's, or than the one the prompt
    asks for: ``3 mm`` for ``3 m``, ``7 cents`` for ``\\$7``, ``4 seconds`` for "how many minutes".
    A unit on one side only is no disagreement (``10 cm`` answers 10), and neither is a unit we
    cannot name."""
    pred_unit = unit_key(pred.units) if pred.units else None
    if pred_unit is None:
        return False
    gold_unit = unit_key(gold.units) if gold.units else None
    if gold_unit is not None:
        return gold_unit != pred_unit
    if asked.unit is None:
        return False
    # "how many inches" answered "25 square inches" is not a different unit, only its square.
    same_base = asked.unit.partition("^")[0] == pred_unit.partition("^")[0]
    comparable = unit_dimension(asked.unit) is not None or unit_dimension(pred_unit) is not None
    return comparable and not same_base


def read_percent(pred: Parsed, gold: Parsed, asked: Asked = NOTHING_ASKED) -> Parsed:
    """An answer's ``X%`` read once: as X where the gold is itself a percentage or the prompt asks for one,
    else as X/100 (``9\\%`` does not answer 9, ``0.4\\%`` does not answer 0.4; ``40\\%`` answers 0.4)."""
    if pred.kind == "list":
        return replace(pred, items=tuple(read_percent(item, gold, asked) for item in pred.items))
    if not pred.percent or gold.percent or not isinstance(pred.expr, sympy.Expr):
        return pred
    if asked.percent:
        return replace(pred, percent=False)
    return replace(pred, expr=pred.expr / 100, percent=False)


def combine_statements(statements: Sequence[Parsed], leniency: Leniency) -> Parsed:
    """One answer from every statement of it: the same value stated twice is that value, in the form
    stated last (``\\frac{8}{2}``, that is ``4``, is 4 as written last: the form a final-form gold judges);
    different values become one list of them, which only a gold listing them all equals."""
    distinct: list[Parsed] = []
    for statement in statements:
        same = next((n for n, seen in enumerate(distinct) if same_value(statement, seen, leniency)), None)
        if same is None:
            distinct.append(statement)
        else:
            distinct[same] = statement
    if len(distinct) == 1:
        return distinct[0]
    items: list[Parsed] = []
    for statement in distinct:
        for item in statement.items if statement.kind == "list" else (statement,):
            if not any(same_value(item, seen, leniency) for seen in items):
                items.append(item)
    return Parsed(text=" | ".join(s.text for s in distinct), kind="list", items=tuple(items))


def same_value(a: Parsed, b: Parsed, leniency: Leniency) -> bool:
    """Two statements of one value, whatever their form (a form is judged against the gold, once)."""
    return _same_answer(a, b, leniency, NOTHING_ASKED) and _same_answer(b, a, leniency, NOTHING_ASKED)


def resolve(parsed: Parsed, leniency: Leniency) -> Parsed | None:
    """``x = \\frac42 = 2`` is ``x = 2``; a chain whose sides differ is None."""
    if parsed.kind == "list":
        items = [resolve(item, leniency) for item in parsed.items]
        return None if any(i is None for i in items) else replace(parsed, items=tuple(items))  # type: ignore[arg-type]
    if not parsed.chain:
        return parsed
    value = replace(parsed, chain=(), name=None)
    for side in parsed.chain:
        if not side.ok or not same_value(side, value, leniency):
            return None
    return replace(parsed, chain=())


def _equivalent(gold: Parsed, pred: Parsed, leniency: Leniency) -> bool:
    gold, pred = _as_assignment(gold, pred.name), _as_assignment(pred, gold.name)
    if gold.name is not None or pred.name is not None:
        if gold.name is not None and pred.name is not None:
            renamed = _match_names(gold.name, pred.name, pred)
            if renamed is None:
                return False
            pred = renamed
        elif (gold.kind == "equation") != (pred.kind == "equation"):
            return _equations_equal(_as_equation(gold), _as_equation(pred))
        elif not leniency.equation_rhs:
            return False
        gold, pred = replace(gold, name=None), replace(pred, name=None)
    listed = _lists_equal(gold, pred, leniency)
    if listed is not None:
        return listed
    return _values_equal(gold, pred, leniency)


# -- lists and sets of answers ---------------------------------------------------------------

def _members(parsed: Parsed) -> tuple[list[Parsed], str] | None:
    """The answers a value holds, and how they may be matched: in ``any`` order or in ``order``."""
    if parsed.kind == "list":
        return list(parsed.items), "any"
    if parsed.kind != "sympy":
        return None
    if isinstance(parsed.expr, FiniteSet):
        return [_wrap(e, parsed) for e in parsed.expr.args], "any"
    if isinstance(parsed.expr, Tuple) or (isinstance(parsed.expr, MatrixBase) and 1 in parsed.expr.shape):
        return [_wrap(e, parsed) for e in _sequence(parsed.expr) or []], "order"
    return None


def _wrap(expr: Any, parent: Parsed) -> Parsed:
    return Parsed(text=str(expr), expr=expr, kind="sympy", percent=parent.percent, degrees=parent.degrees)


def _lists_equal(gold: Parsed, pred: Parsed, leniency: Leniency) -> bool | None:
    """Compare collections of answers; None when that is not what the two are."""
    gold_members, pred_members = _members(gold), _members(pred)
    if gold_members is None and pred_members is None:
        return None
    if gold_members is None or pred_members is None:
        single = gold if gold_members is None else pred
        if single.kind == "sympy" and (isinstance(single.expr, Set) or _is_relation(single.expr)):
            return None  # "(1, 3)" against an interval or "1 < x < 3": compared as sets
        # A single value against several: "3 | 4" for gold 4 is a hedge; "1" for gold "1, 2" is partial.
        items = (pred_members or gold_members or ([], ""))[0]
        if len(items) != 1:
            return False
        return _equivalent(gold, items[0], leniency) if gold_members is None else _equivalent(items[0], pred, leniency)
    (gold_items, gold_order), (pred_items, pred_order) = gold_members, pred_members
    if len(gold_items) != len(pred_items):
        return False
    if "order" in (gold_order, pred_order) and not leniency.set_order:
        if gold.kind != "list" and pred.kind != "list" and gold_order != pred_order:
            return False  # a set is not a tuple: "\\{1, 3\\}" does not answer "(3, 1)"
        return all(_equivalent(g, p, leniency) for g, p in zip(gold_items, pred_items, strict=True))
    return _match_all(gold_items, pred_items, leniency)


def _match_all(gold_items: list[Parsed], pred_items: list[Parsed], leniency: Leniency) -> bool:
    """A perfect matching between the two multisets (augmenting paths; lists are short)."""
    owner: dict[int, int] = {}  # pred index → gold index

    def assign(g: int, seen: set[int]) -> bool:
        for p, item in enumerate(pred_items):
            if p in seen or not _equivalent(gold_items[g], item, leniency):
                continue
            seen.add(p)
            if p not in owner or assign(owner[p], seen):
                owner[p] = g
                return True
        return False

    return all(assign(g, set()) for g in range(len(gold_items)))


# -- names -----------------------------------------------------------------------------------

def _match_names(gold: Name, pred: Name, value: Parsed) -> Parsed | None:
    """The prediction with its function variables renamed to the gold's, or None when the
    names differ (``y = 2`` does not answer ``x = 2``; ``g(x) = x`` does not answer ``f(x) = x``)."""
    if {gold.kind, pred.kind} == {"function", "symbol"}:
        function, symbol = (gold, pred) if gold.kind == "function" else (pred, gold)
        # "y = x^2 - 1" answers "f(x) = x^2 - 1": y is the usual name of a function's value.
        return value if symbol.head == "y" and len(function.args) == 1 else None
    if gold.kind != pred.kind or gold.head != pred.head or len(gold.args) != len(pred.args):
        return None
    if gold.args == pred.args or value.kind != "sympy":
        return value
    if any(not re.fullmatch(r"[A-Za-z]\w*", arg) for arg in (*gold.args, *pred.args)):
        return None  # f(4) is not f(5): only variables may be renamed
    mapping = dict(zip(pred.args, gold.args, strict=True))
    symbols = value.expr.free_symbols if isinstance(value.expr, sympy.Basic) else set()
    if any(_symbol_key(s) in gold.args and _symbol_key(s) not in mapping for s in symbols):
        return None  # the prediction uses the gold's variable as something else
    swap = {s: sympy.Symbol(mapping[_symbol_key(s)], **s.assumptions0) for s in symbols if _symbol_key(s) in mapping}
    return replace(value, expr=value.expr.xreplace(swap))


def _as_assignment(parsed: Parsed, other: Name | None) -> Parsed:
    """``c = 3, a = 1, b = 2`` as the tuple ``(a, b, c) = (1, 2, 3)`` when the other side names that tuple."""
    if other is None or other.kind != "tuple" or parsed.kind != "list":
        return parsed
    names = other.head.split(",")
    values: dict[str, Any] = {}
    for item in parsed.items:
        if item.name is None or item.name.kind != "symbol" or item.kind != "sympy" or item.chain:
            return parsed
        values[item.name.head] = item.expr
    if sorted(values) != sorted(names) or len(values) != len(parsed.items):
        return parsed
    return Parsed(text=parsed.text, expr=Tuple(*(values[n] for n in names)), kind="sympy", name=other)


def _symbol_key(symbol: sympy.Symbol) -> str:
    return re.sub(r"[\s{}\\]", "", symbol.name)


def _as_equation(parsed: Parsed) -> Any:
    """``y = 2x + 3`` as the equation it is, for comparison with ``2x - y + 3 = 0``."""
    if parsed.kind == "equation":
        return parsed.expr
    named = parsed.name is not None and parsed.name.kind == "symbol"
    if named and parsed.kind == "sympy" and isinstance(parsed.expr, sympy.Expr):
        return sympy.Eq(sympy.Symbol(parsed.name.head, real=True), parsed.expr, evaluate=False)
    return None


def _equations_equal(gold: Any, pred: Any) -> bool:
    """Two equations are one when ``lhs − rhs`` of one is a nonzero constant times the other's."""
    if gold is None or pred is None:
        return False
    g, p = _unify(gold.lhs - gold.rhs), _unify(pred.lhs - pred.rhs)
    if g == 0 or p == 0 or g.free_symbols != p.free_symbols or not g.free_symbols:
        return False
    ratios = _sample(g / p, g.free_symbols)
    if len(ratios) < 2 or any(r == 0 for r in ratios):
        return False
    first = ratios[0]
    return all(_negligible(r - first, abs(first)) for r in ratios[1:])


# -- single values ---------------------------------------------------------------------------

def _values_equal(gold: Parsed, pred: Parsed, leniency: Leniency) -> bool:
    if gold.kind == "choice" or pred.kind == "choice":
        return _choice_equal(gold, pred)
    if not leniency.choices and (choice_letter(gold.text) or choice_letter(pred.text)):
        return _text_equal(gold, pred)  # strict: "(B)" and "B" are different strings
    if gold.base and pred.base and gold.base != pred.base:
        return False  # 52_8 is not 52_9 (a numeral without a base takes the question's)
    if "undefined" in (gold.kind, pred.kind):
        return False  # 3:00 read as 3/0 and 12:00 read as 12/0 are not one answer
    if gold.kind == "equation" or pred.kind == "equation":
        return _equations_equal(_as_equation(gold), _as_equation(pred))
    if gold.kind == "congruence" or pred.kind == "congruence":
        return gold.kind == pred.kind and gold.expr == pred.expr
    if gold.kind == "ratio" or pred.kind == "ratio":
        return _ratio_equal(gold, pred, leniency)
    if not gold.ok or not pred.ok or "text" in (gold.kind, pred.kind):
        return _text_equal(gold, pred)
    if not leniency.percent and gold.percent != pred.percent:
        return False
    if not leniency.degrees and gold.degrees != pred.degrees:
        return False
    return any(expr_equal(g, p, leniency) for g, p in _readings(gold, pred, leniency))


def _readings(gold: Parsed, pred: Parsed, leniency: Leniency) -> list[tuple[Any, Any]]:
    """The value pairs to try: as written, and under the percent and degree switches."""
    pairs = [(gold.expr, pred.expr)]
    if leniency.percent and isinstance(gold.expr, sympy.Expr) and isinstance(pred.expr, sympy.Expr):
        if gold.percent and not pred.percent:
            pairs.append((gold.expr / 100, pred.expr))
        if pred.percent and not gold.percent:
            pairs.append((gold.expr, pred.expr / 100))
    both_values = isinstance(gold.expr, sympy.Expr) and isinstance(pred.expr, sympy.Expr)
    if leniency.degrees and gold.degrees != pred.degrees and both_values:
        if gold.degrees:
            pairs.append((gold.expr * sympy.pi / 180, pred.expr))
        else:
            pairs.append((gold.expr, pred.expr * sympy.pi / 180))
    return pairs


def _text_equal(gold: Parsed, pred: Parsed) -> bool:
    a, b = normalize_text(gold.text), normalize_text(pred.text)
    return bool(a) and a == b


def _choice_equal(gold: Parsed, pred: Parsed) -> bool:
    letters = [_as_letter(p) for p in (gold, pred)]
    return letters[0] is not None and letters[0] == letters[1]


# A choice followed by its content: "(B) 12", "B) 12", "\text{(B)} 12".
_LEADING_CHOICE = re.compile(r"^(?:\\text(?:bf)?\s*\{)?\s*\(?([A-E])\)\}?\s+(\S.*)$", re.DOTALL)
# Another option or a choice between values after it: "(B) or (C)", "(A) 12 or D", "(A) 12 and 13".
_ANY_CHOICE = re.compile(r"\([A-Ea-e]\)|\b[A-E]\b|\b(?:or|and)\b|\\(?:text|mbox)\s*\{\s*(?:or|and)\s*\}")


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


def _ratio_equal(gold: Parsed, pred: Parsed, leniency: Leniency) -> bool:
    """Times compare exactly; ratios in proportion (``2:4`` is ``1:2``), and a two-part ratio
    equals the number it stands for (``1:2`` is ``\\frac12``)."""
    if gold.time or pred.time:
        return gold.time and pred.time and gold.expr == pred.expr
    if gold.kind == "ratio" and pred.kind == "ratio":
        a, b = gold.expr, pred.expr
        if len(a) != len(b) or 0 in (a[0], b[0]):
            return False
        return all(x * b[0] == y * a[0] for x, y in zip(a, b, strict=True))
    ratio, other = (gold, pred) if gold.kind == "ratio" else (pred, gold)
    if len(ratio.expr) != 2 or ratio.expr[1] == 0 or other.kind != "sympy" or not _is_number(other.expr):
        return False
    value = ratio.expr[0] / ratio.expr[1]
    return _numbers_equal(value, other.expr, leniency) if ratio is gold else _numbers_equal(other.expr, value, leniency)


# -- sympy values ----------------------------------------------------------------------------

def expr_equal(gold: Any, pred: Any, leniency: Leniency) -> bool:
    """Equality of two sympy values: numbers, expressions, relations, sets, tuples, matrices."""
    gold_seq, pred_seq = _sequence(gold), _sequence(pred)
    if gold_seq is not None or pred_seq is not None:
        if gold_seq is None or pred_seq is None:
            return _pair_matches_set(gold, pred, leniency)
        if len(gold_seq) != len(pred_seq) or _shape(gold) != _shape(pred):
            return False
        return all(expr_equal(g, p, leniency) for g, p in zip(gold_seq, pred_seq, strict=True))
    if isinstance(gold, FiniteSet) or isinstance(pred, FiniteSet):
        if not (isinstance(gold, FiniteSet) and isinstance(pred, FiniteSet)):
            return False
        return _match_all([_wrap(e, Parsed("")) for e in gold.args], [_wrap(e, Parsed("")) for e in pred.args],
                          leniency)
    gold_rel, pred_rel = _is_relation(gold), _is_relation(pred)
    if gold_rel or pred_rel:
        return _relations_equal(gold, pred, leniency)
    if isinstance(gold, Set) or isinstance(pred, Set):
        return isinstance(gold, Set) and isinstance(pred, Set) and _sets_equal(gold, pred, leniency)
    if not (isinstance(gold, sympy.Expr) and isinstance(pred, sympy.Expr)):
        return gold == pred
    if _is_number(gold) and _is_number(pred):
        if leniency.unsimplified is False and not (_is_literal(gold) and _is_literal(pred)):
            return _canonical(gold) == _canonical(pred)
        return _numbers_equal(gold, pred, leniency)
    if _is_number(gold) != _is_number(pred):
        return False
    if leniency.unsimplified is False:
        return _canonical(_unify(gold)) == _canonical(_unify(pred))
    return _identity(gold, pred)


def _sequence(expr: Any) -> list[Any] | None:
    """The elements of an ordered value: a tuple, a vector, a matrix (row by row)."""
    if isinstance(expr, Tuple):
        return list(expr.args)
    if isinstance(expr, MatrixBase):
        return list(expr)
    return None


def _shape(expr: Any) -> tuple[int, ...]:
    """Matrices must agree in shape, except that a row or column vector is a tuple."""
    if isinstance(expr, MatrixBase) and 1 not in expr.shape:
        return tuple(expr.shape)
    return ()


def _pair_matches_set(gold: Any, pred: Any, leniency: Leniency) -> bool:
    """``(1, 3)`` written as a pair is also the open interval from 1 to 3 (never ``(3, 1)``)."""
    pair, other = (gold, pred) if _sequence(gold) is not None else (pred, gold)
    items = _sequence(pair)
    if items is None or len(items) != 2 or not isinstance(pair, Tuple):
        return False
    if _is_relation(other):
        if not leniency.intervals:
            return False
        other = relation_set(other)
    if not isinstance(other, Interval) or not (other.left_open and other.right_open):
        return False
    start, end = (items[0], items[1])
    if pair is gold:
        return _numbers_equal(start, other.start, leniency) and _numbers_equal(end, other.end, leniency)
    return _numbers_equal(other.start, start, leniency) and _numbers_equal(other.end, end, leniency)


def _is_relation(expr: Any) -> bool:
    """An inequality, or a chain or union of them: ``-2 \\le x \\le 7`` is ``And(-2 <= x, x <= 7)``."""
    if isinstance(expr, Relational):
        return True
    return isinstance(expr, (sympy.And, sympy.Or)) and all(_is_relation(arg) for arg in expr.args)


def _relations_equal(gold: Any, pred: Any, leniency: Leniency) -> bool:
    """Relations compare as the sets of reals they describe; a relation never equals a number."""
    if _is_relation(gold) != _is_relation(pred):
        if not leniency.intervals:
            return False
        relation, other = (gold, pred) if _is_relation(gold) else (pred, gold)
        if not isinstance(other, Set) or len(relation.free_symbols) != 1:
            return False
        solutions = relation_set(relation)
        if solutions is None:
            return False
        return _sets_equal(solutions, other, leniency) if relation is pred else _sets_equal(other, solutions, leniency)
    if gold.free_symbols != pred.free_symbols:
        return False  # "x < 3" does not answer "y < 3"
    if len(gold.free_symbols) == 1:
        gold_set, pred_set = relation_set(gold), relation_set(pred)
        if gold_set is not None and pred_set is not None:
            return _sets_equal(gold_set, pred_set, leniency)
    return bool(gold == pred or gold.canonical == pred.canonical)


def _sets_equal(gold: Any, pred: Any, leniency: Leniency) -> bool:
    """Unions of intervals and finite sets, piece by piece, ends compared as numbers."""
    gold_parts, pred_parts = _pieces(gold), _pieces(pred)
    if gold_parts is None or pred_parts is None:
        return bool(gold == pred)
    if len(gold_parts) != len(pred_parts):
        return False
    for g, p in zip(gold_parts, pred_parts, strict=True):
        if isinstance(g, Interval) and isinstance(p, Interval):
            if (g.left_open, g.right_open) != (p.left_open, p.right_open):
                return False
            if not (_numbers_equal(g.start, p.start, leniency) and _numbers_equal(g.end, p.end, leniency)):
                return False
        elif isinstance(g, FiniteSet) and isinstance(p, FiniteSet):
            if not expr_equal(g, p, leniency):
                return False
        elif g != p:
            return False
    return True


def _pieces(value: Any) -> list[Any] | None:
    parts = list(value.args) if isinstance(value, Union) else [value]
    if not all(isinstance(p, (Interval, FiniteSet)) or p in (sympy.S.Reals, sympy.S.EmptySet) for p in parts):
        return None
    parts = [Interval(-sympy.oo, sympy.oo) if p == sympy.S.Reals else p for p in parts]
    try:
        return sorted(parts, key=lambda p: float(p.inf) if p != sympy.S.EmptySet else float("-inf"))
    except (TypeError, ValueError):  # symbolic ends: keep sympy's own order
        return parts


def _is_number(expr: Any) -> bool:
    return (
        isinstance(expr, sympy.Expr)
        and not isinstance(expr, (Set, Relational, MatrixBase))
        and not expr.free_symbols
        and bool(expr.is_number)
    )


def _is_value(expr: Any) -> bool:
    return _is_number(expr) or expr in (sympy.oo, -sympy.oo)


def _is_literal(expr: Any) -> bool:
    return isinstance(expr, (sympy.Rational, sympy.Float))


def _canonical(expr: Any) -> Any:
    try:
        return expr.doit()
    except Exception:  # doit on exotic objects may raise anything; compare as given
        return expr


def _numbers_equal(gold: Any, pred: Any, leniency: Leniency) -> bool:
    """Exact, unless the gold is itself a decimal approximation (or ``approximate`` is on)."""
    gold, pred = _canonical(gold), _canonical(pred)
    if not (_is_value(gold) and _is_value(pred)):
        return False
    if sympy.zoo in (gold, pred) or sympy.nan in (gold, pred) or gold.has(sympy.zoo, sympy.nan) or pred.has(
        sympy.zoo, sympy.nan
    ):
        return False
    if gold == pred:
        return True
    if gold.is_infinite or pred.is_infinite:
        return False
    if _tolerant(gold, leniency):
        return _within_tolerance(gold, pred, leniency)
    return _exactly_equal(_exact(gold), _exact(pred))


def _tolerant(gold: Any, leniency: Leniency) -> bool:
    """Whether the gold is an approximation, so a nearby value answers it too."""
    if gold.has(sympy.Float):
        value = _exact(gold)
        return not (isinstance(value, sympy.Rational) and value.is_integer)
    if leniency.approximate:
        return not (isinstance(gold, sympy.Rational) and gold.is_integer)
    return False


def _exact(expr: Any) -> Any:
    """Decimal literals as the exact numbers they spell (``0.333333`` is 333333/10⁶), not binary floats."""
    if not expr.has(sympy.Float):
        return expr
    try:
        return expr.xreplace({f: sympy.Rational(str(f)) for f in expr.atoms(sympy.Float)})
    except (TypeError, ValueError):
        return expr


def _exactly_equal(gold: Any, pred: Any) -> bool:
    if isinstance(gold, sympy.Rational) and isinstance(pred, sympy.Rational):
        return gold == pred
    if _known_gap(gold - pred):
        return False
    if isinstance(gold, sympy.Rational) or isinstance(pred, sympy.Rational):
        other = pred if isinstance(gold, sympy.Rational) else gold
        if other.is_rational is False:
            return False  # a fraction is never an irrational value, however close
    return _numerically_zero(gold - pred, gold, pred)


def _known_gap(difference: Any) -> bool:
    """Whether sympy has already reduced a difference to a nonzero exact number (``\\pi + 10^{-250}``
    minus ``\\pi`` is ``10^{-250}``): not equal, however small; no tolerance hides it."""
    if not isinstance(difference, sympy.Expr) or difference.free_symbols or difference.has(sympy.Float):
        return False
    coefficient, rest = difference.as_coeff_Mul()
    if not isinstance(coefficient, sympy.Rational) or coefficient == 0:
        return False
    return rest == 1 or isinstance(rest, sympy.NumberSymbol) or (
        isinstance(rest, sympy.Pow) and all(isinstance(x, sympy.Rational) for x in rest.args) and rest.is_positive)


def _numerically_zero(diff: Any, a: Any, b: Any) -> bool:
    """Whether two exact values are one: their difference evaluates to zero (sympy tracks accuracy
    through cancellation, so a true zero comes back as zero or as a bound with no digits left),
    or to a part in 10²⁰⁰ of the *smaller* of the two. The smaller: next to a gigantic answer
    such as ``(300!)!`` every gold would otherwise look negligibly far away."""
    values = [_evaluate(x) for x in (diff, a, b)]
    if any(v is None for v in values):
        return False
    difference, left, right = values
    return _negligible(difference, min(abs(left), abs(right)))


def _evaluate(expr: Any) -> Any:
    """``expr`` to 50 significant digits, or None when it is not a finite number sympy can evaluate."""
    try:
        value = sympy.N(expr, _DIGITS)
    except (TypeError, ValueError, ArithmeticError, RecursionError):
        return None
    if not getattr(value, "is_number", False) or value.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return None
    return value


def _negligible(difference: Any, scale: Any) -> bool:
    if difference == 0:
        return True
    try:
        parts = difference.as_real_imag()
    except (TypeError, ValueError, ArithmeticError):
        return False
    return all(part == 0 or _no_digits_left(part) or abs(part) <= _ZERO * scale for part in parts)


def _no_digits_left(value: Any) -> bool:
    """A float evalf could only bound: what it returns for a difference that cancels to zero."""
    return isinstance(value, sympy.Float) and value._prec < 8


def _within_tolerance(gold: Any, pred: Any, leniency: Leniency) -> bool:
    """``|gold - pred| <= max(rel_tol·|gold|, abs_tol)``: relative to the gold, the approximation;
    relative to the larger of the two, a gigantic answer would be "close" to any gold."""
    rel, tol = sympy.Rational(str(leniency.rel_tol)), sympy.Rational(str(leniency.abs_tol))
    gold, pred = _exact(gold), _exact(pred)
    if isinstance(gold, sympy.Rational) and isinstance(pred, sympy.Rational):
        return abs(gold - pred) <= max(rel * abs(gold), tol)
    difference, target = _evaluate(gold - pred), _evaluate(gold)
    if difference is None or target is None:
        return False
    return bool(abs(difference) <= max(rel * abs(target), tol))


# -- identities in variables -----------------------------------------------------------------

def _unify(expr: Any) -> Any:
    """Every symbol as a plain real symbol of the same name, so ``x`` from either parser is one ``x``."""
    if not isinstance(expr, sympy.Basic):
        return expr
    symbols = expr.free_symbols
    swap = {s: _real_symbol(_symbol_key(s)) for s in symbols if isinstance(s, sympy.Symbol)}
    return expr.xreplace(swap) if swap else expr


@lru_cache(maxsize=4096)
def _real_symbol(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, real=True)


def _identity(gold: Any, pred: Any) -> bool:
    """Equal as functions of their variables: the same symbols, and a difference that vanishes
    (to 50 digits) at several random points, negative ones included (``\\sqrt{x^2}`` is not ``x``)."""
    gold, pred = _unify(gold), _unify(_exact(pred))
    gold = _exact(gold)
    if gold == pred:
        return True
    if gold.free_symbols != pred.free_symbols or _known_gap(gold - pred):
        return False
    values = _sample(gold - pred, gold.free_symbols, scale_of=(gold, pred))
    return bool(values) and all(v is not None and v == 0 for v in values)


_PIECEWISE = (sympy.floor, sympy.ceiling, sympy.frac, sympy.Mod, sympy.sign, sympy.Abs, sympy.Piecewise,
              sympy.Heaviside, sympy.Min, sympy.Max)


def _sample(expr: Any, symbols: set[Any], scale_of: tuple[Any, Any] | None = None) -> list[Any]:
    """``expr`` at pseudo-random points; with ``scale_of``, 0 where it is negligible next to those two
    expressions there. Points where it cannot be evaluated are left out.

    The points are drawn from a hash of ``expr`` itself, with denominators drawn too: reproducible,
    yet an answer cannot be built to agree with the gold exactly at them (as ``x + \\sin(N\\pi x)``
    could on a fixed grid). Functions that jump at the integers are also tried at integers, where
    ``\\lceil x \\rceil - 1`` and ``\\lfloor x \\rfloor`` part; sums and products up to a variable only
    there (elsewhere sympy may never finish).
    """
    rng = random.Random(hashlib.blake2b(sympy.srepr(expr).encode(), digest_size=8).digest())
    ordered = sorted(symbols, key=lambda s: s.name)
    whole = expr.has(sympy.Sum, sympy.Product)
    jumps = expr.has(*_PIECEWISE)
    out: list[Any] = []
    for n in range(_POINTS + (2 if jumps and not whole else 0)):
        if whole:
            point = {s: sympy.Integer(rng.randint(2, 13)) for s in ordered}
        elif n >= _POINTS:
            point = {s: sympy.Integer(rng.randint(-3, 4)) for s in ordered}
        else:
            point = {s: sympy.Rational(rng.randint(-30_000, 30_000), rng.randint(9_001, 99_991)) for s in ordered}
        value = _evaluate(expr.xreplace(point))
        if value is None:
            continue
        if scale_of is not None:
            sides = [_evaluate(side.xreplace(point)) for side in scale_of]
            if any(side is None for side in sides):
                continue
            value = 0 if _negligible(value, min(abs(side) for side in sides)) else value
        out.append(value)
    return out
