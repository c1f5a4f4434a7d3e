"""Whether an answer is written in final form: a value the grader need not compute to see.

When the gold is a number or a closed form (no variables: ``221``, ``\\frac{3}{4}``, ``2\\sqrt{3}``,
``(1, \\frac{\\pi}{2})``, a ratio ``1:2``), an answer that equals it only after the grader computes is
the question handed back, not an answer: ``\\binom{7}{2}`` for 21, ``\\log_3 81`` for 4, ``13 \\cdot 17`` for 221.
The rule is mechanical. Each value is read twice: as sympy computes it (the ``expr`` the grader
compares) and as written, parsed without evaluation (:func:`~rewardsmith.verifiers.math.parse.
written_tree`). The written tree's *operations* are its internal nodes, counted as

* ``add``: a sum of n terms counts n - 1; ``mul``: a product of n factors counts n - 1, through
  nested products (``\\frac{a}{b}`` is ``a`` times ``b^{-1}``); one whole number above the bar and one
  below are a single factor, the coefficient (``\\frac{2\\pi}{3}`` counts one, ``13 \\cdot 17`` one);
* ``root`` (a power with a fractional exponent), ``pow`` (any other power), and each function by its
  name (``binomial``, ``log``, ``sin``, ``factorial``, …): one each;
* one sign (``-x``) and a fraction of two integers (``\\frac{3}{4}``, ``3/4``) count nothing: they are
  how numbers are written; tuples, sets, intervals and relations are structure, and in a condition
  on a variable (``|x| \\ge 1`` for an interval) only the numbers count.

The gold's *forms* are the gold as written, its value as sympy writes it (``\\sqrt{8}`` is
``2\\sqrt{2}``), that value over one denominator, as ``a + bi`` when complex, and in radians for a
degree gold. An answer equal to the gold is in final form when, for every value it holds:

1. it uses no operation that none of the gold's forms has, and no more operations than the largest
   of them (``2\\sqrt{2}`` answers ``\\sqrt{8}``, ``\\frac{1}{2}\\pi`` answers ``\\frac{\\pi}{2}``);
2. every fraction of two integers is in lowest terms with a denominator above 1 (``\\frac{2}{4}``,
   ``\\frac{6}{3}`` are not), and so is a fraction's coefficient (``\\frac{6\\pi}{8}`` is not), unless
   the gold writes such a fraction itself; a number carries one sign (``-(-5)`` is computed);
3. no root of an integer or a fraction has a factor that is a perfect power of its index
   (``\\sqrt{12}``, ``\\sqrt[3]{16}``, ``\\sqrt{4}`` are not), unless the gold writes one itself;
4. it holds no indeterminate form (``0^0``, ``\\infty^0``, ``1^\\infty``, ``0 \\cdot \\infty``,
   ``\\infty - \\infty``);
5. it carries no subscript, and no ``\\text{…}`` words, the gold lacks (``21_5``, ``21^{+1}_{-1}``,
   ``5\\,\\text{exactly}``); a numeral's base subscript is accepted where the gold carries that
   base or the question asks for the answer in it (``255_{10}`` for "express it in base 10");
6. a ratio's whole parts have no common factor (``2:4`` is not), unless the gold's have;
7. its written form can be read at all (what the unevaluated parse cannot build is not vouched for).

Units, percent and degree signs, currency signs and thousands separators come off before any of this
(they are dress, compared by their own switches); so do names: ``x = \\frac{8}{2} = 4`` is read as its
last side, ``4``. A degree gold also counts in radians (``30^\\circ`` takes ``\\frac{\\pi}{6}``).

Expression golds (with variables) are not held to this: there ``unsimplified`` decides, on by
default, so ``(x+1)^2`` answers ``x^2+2x+1``. For number golds ``unsimplified: true`` turns the
rule off, knowingly.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

import sympy
from sympy.core.relational import Relational
from sympy.logic.boolalg import Boolean
from sympy.matrices import MatrixBase

from rewardsmith.verifiers.math.leniency import Leniency
from rewardsmith.verifiers.math.parse import DEGREE_FACTOR, Parsed, written_tree
from rewardsmith.verifiers.math.prompt import NOTHING_ASKED, Asked

# A fraction of two integers as LaTeX or plain text writes it: \frac{6}{4}, \frac64, 6/4.
_INT = r"\s*(-?\s*\d+)\s*"
_FRACTION = re.compile(
    r"\\frac\s*(?:\{" + _INT + r"\}|(\d))\s*(?:\{" + _INT + r"\}|(\d))"
    r"|(?<![\w.\\}^_])(\d+)\s*/\s*(\d+)(?![\d.])"
)
_MIXED = re.compile(r"(?<![\d.}])(\d+)\s*\\frac\s*(?:\{\s*(\d+)\s*\}|(\d))\s*(?:\{\s*(\d+)\s*\}|(\d))")
_SUBSCRIPT = re.compile(r"_")
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DOUBLE_SIGN = re.compile(r"[-+]\s*[({]?\s*[-+]")  # -(-5), 3 + -2: a sign computed
_WORDS = re.compile(r"\\(?:text|textrm|textnormal|mathrm|mbox|operatorname)\s*\{[^{}]*[A-Za-z]{2}[^{}]*\}")
_FACTOR_LIMIT = 10**5  # trial division bound when looking for a perfect-power factor under a root
_INDETERMINATE_POWERS = ((0, 0), (sympy.oo, 0), (-sympy.oo, 0), (sympy.zoo, 0), (1, sympy.oo), (1, -sympy.oo))


def applies(gold: Parsed, leniency: Leniency) -> bool:
    """Whether the gold is a number or closed form (every value without variables) and the rule is on."""
    if leniency.unsimplified is True:
        return False
    values = list(_values(gold))
    return bool(values) and all(
        (value.kind == "sympy" and isinstance(value.expr, sympy.Basic) and not value.expr.free_symbols)
        or (value.kind == "ratio" and not value.time)
        for value in values
    )


def not_final(gold: Parsed, pred: Parsed, leniency: Leniency, asked: Asked = NOTHING_ASKED) -> str:
    """Why ``pred``, whose value equals the number gold ``gold``, is not written in final form ("" when it
    is). Call only where :func:`applies`."""
    gold_values = list(_values(gold))
    gold_texts = [text for value in gold_values for text in value.written]
    gold_text = " ".join(gold_texts)
    for value in _values(pred):
        if value.kind == "ratio" and not value.time:
            if _unreduced_ratio(value) and not any(_unreduced_ratio(g) for g in gold_values if g.kind == "ratio"):
                return f"the ratio {value.text!r} is not in lowest terms"
            continue
        if value.kind != "sympy":
            continue
        if value.base and not any(g.base == value.base for g in gold_values) and value.base != asked.base:
            return f"a base-{value.base} subscript the gold and the question lack"
        for text in value.written:
            if text in gold_texts:
                continue  # written as the gold is written: the gold's own form
            reason = _text_not_final(text, gold_text)
            if reason:
                return reason
            tree = _written(text, leniency)
            if isinstance(tree, str):
                return tree
            reason = _tree_not_final(tree, gold_texts, leniency)
            if reason:
                return reason
            reason = _operations_problem(text, _operations(tree), gold, leniency)
            if reason:
                return reason
    return ""


def _operations_problem(text: str, ops: Counter[str], gold: Parsed, leniency: Leniency) -> str:
    """Rule 1: operations none of the gold's forms has, or more of them than the largest form has.
    The gold's rewritten forms (one denominator, ``a + bi``) are built only when the others refuse."""
    reason = ""
    for rewritten in (False, True):
        try:
            allowed, budget = _gold_operations(gold, leniency, rewritten)
        except TypeError:  # a value sympy cannot hash: not cached
            allowed, budget = _gold_operations.__wrapped__(gold, leniency, rewritten)
        extra = sorted(op for op in ops if op not in allowed)
        if extra:
            reason = f"{text!r} uses {', '.join(extra)}, which the gold does not: computed, not final"
        elif sum(ops.values()) > budget:
            reason = f"{text!r} takes more operations than the gold: computed, not final"
        else:
            return ""
    return reason


@lru_cache(maxsize=4096)  # a GRPO group shares one gold
def _gold_operations(gold: Parsed, leniency: Leniency, rewritten: bool) -> tuple[frozenset[str], int]:
    """The operations an answer to ``gold`` may use, and how many: those of the gold as written, of its
    value as sympy computes it (``\\sqrt{8}`` is ``2\\sqrt{2}``), in radians for a degree gold, and, with
    ``rewritten``, of that value over one denominator and as ``a + bi``."""
    forms = []
    for value in _values(gold):
        for text in value.written:
            tree = _written(text, leniency)
            if not isinstance(tree, str):
                forms.append(_operations(tree))
        computed = _computed(value.expr)
        forms.append(_operations(computed))
        if rewritten:
            forms.extend(_operations(form) for form in _rewritten(computed))
        if value.degrees:
            forms.append(_operations(_computed(value.expr * sympy.pi / 180)))
    return frozenset().union(*forms), max(sum(form.values()) for form in forms)


def _rewritten(value: Any) -> list[Any]:
    """The gold's value over one denominator (``\\frac{3+4i}{5}`` for ``\\frac35+\\frac45 i``) and, when
    complex, as ``a + bi`` (``\\frac12+\\frac{\\sqrt3}{2}i`` for ``e^{i\\pi/3}``): forms as final as the gold's."""
    if not isinstance(value, sympy.Expr):
        return []
    forms = []
    for rewrite in (sympy.together, sympy.expand_complex):
        if rewrite is sympy.expand_complex and not value.has(sympy.I):
            continue
        try:
            forms.append(rewrite(value))
        except Exception:  # a rewrite sympy cannot do adds no form
            continue
    return forms


def _computed(expr: Any) -> Any:
    try:
        return expr.doit()
    except Exception:  # doit on exotic objects may raise anything: the value as parsed
        return expr


def _written(text: str, leniency: Leniency) -> Any:
    """The tree of a value as written, or why it has none (a str). A mixed number ``3\\frac{1}{4}`` is
    one number, read as ``\\frac{13}{4}`` when ``mixed_numbers`` is on (its fraction must be proper)."""
    if _PLAIN_NUMBER.fullmatch(text):
        return sympy.Rational(text)  # most answers: a number, no operation to read (and no parse to pay)
    text = text.replace(DEGREE_FACTOR, r"\cdot\pi")  # a degree is a unit, its π/180 not the answer's sum
    if leniency.mixed_numbers:
        mixed = _MIXED.search(text)
        if mixed:
            whole, top, bottom = (int(g) for g in mixed.groups() if g is not None)
            if not 0 < top < bottom:
                return f"the mixed number {mixed.group(0)!r} has an improper fraction"
            text = text[: mixed.start()] + f"\\frac{{{whole * bottom + top}}}{{{bottom}}}" + text[mixed.end() :]
    tree = written_tree(text, leniency)
    pieces = _top_level_split(text, "\\cup")
    if tree is None and len(pieces) > 1:  # a union is read piece by piece (sympy will not leave it unbuilt)
        trees = [written_tree(piece, leniency) for piece in pieces]
        tree = None if any(t is None for t in trees) else sympy.Tuple(*trees)
    return f"{text!r} cannot be read as written" if tree is None else tree


def _top_level_split(text: str, command: str) -> list[str]:
    """``text`` cut at each ``command`` outside every bracket."""
    pieces, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text.startswith(command, i) and depth == 0 and not text[i + len(command) : i + len(command) + 1].isalpha():
            pieces.append(text[start:i])
            i += len(command)
            start = i
            continue
        depth += 1 if text[i] in "([{" else -1 if text[i] in ")]}" else 0
        i += 1
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces]


def _unreduced_ratio(ratio: Parsed) -> bool:
    """``2:4``, ``6:3``: whole parts with a common factor (``1.5:2`` has no such reading and passes)."""
    parts = ratio.expr
    return all(isinstance(p, sympy.Integer) for p in parts) and math.gcd(*(int(p) for p in parts)) > 1


def _values(parsed: Parsed) -> Iterator[Parsed]:
    """The values of an answer: the items of a list, else the answer itself (named or not)."""
    if parsed.kind == "list":
        for item in parsed.items:
            yield from _values(item)
    else:
        yield parsed


# -- operations ------------------------------------------------------------------------------

def _operations(expr: Any) -> Counter[str]:
    """The operations of a tree (see the module's docstring), counted."""
    found: Counter[str] = Counter()
    _count(expr, found, in_product=False)
    return found


def _count(expr: Any, found: Counter[str], in_product: bool) -> None:
    if isinstance(expr, MatrixBase):
        for entry in expr:
            _count(entry, found, in_product=False)
        return
    if not isinstance(expr, sympy.Basic) or not expr.args:
        return
    if isinstance(expr, (sympy.Tuple, sympy.Set, Relational, Boolean)) or expr.free_symbols:
        # Structure, or a condition on a variable (|x| \ge 1 for an interval): only its numbers count.
        for arg in expr.args:
            _count(arg, found, in_product=False)
        return
    if _integer_fraction(expr) is not None:
        return
    if isinstance(expr, sympy.Add):
        found["add"] += len(expr.args) - 1
        for arg in expr.args:
            _count(arg, found, in_product=False)
        return
    if isinstance(expr, sympy.Mul):
        every = _product_factors(expr)
        factors = [a for a in every if a != -1]  # a sign is how a number is written
        signs = len(every) - len(factors) + sum(1 for a in factors if _signed(a))
        # One whole number above the bar and one below are the coefficient, a number as written
        # (the 2 and 3 of \frac{2\pi}{3}); a second one on either side is arithmetic left undone.
        tops = [a for a in factors if isinstance(a, sympy.Number)]
        bottoms = [a for a in factors if _reciprocal_integer(a)]
        others = [a for a in factors if a not in tops and a not in bottoms]
        coefficient = 1 if tops or bottoms else 0
        undone = max(len(tops) - 1, 0) + max(len(bottoms) - 1, 0)
        found["mul"] += max(len(others) + coefficient - 1, 0) + undone + (1 if signs > 1 else 0)
        for arg in others:
            _count(arg, found, in_product=True)
        return
    if isinstance(expr, sympy.Pow):
        base, exponent = expr.args[0], _exponent(expr)
        if not (exponent == -1 and in_product):  # a fraction's denominator: the product already counts it
            found["root" if isinstance(exponent, sympy.Rational) and not exponent.is_integer else "pow"] += 1
        _count(base, found, in_product=False)
        if not (exponent == -1 or (isinstance(exponent, sympy.Rational) and exponent.p == 1)):
            _count(exponent, found, in_product=False)
        return
    found[type(expr).__name__.lower()] += 1
    for arg in expr.args:
        _count(arg, found, in_product=False)


def _exponent(power: Any) -> Any:
    """A power's exponent, an unevaluated ``1/3`` (``\\sqrt[3]{x}`` as written) read as the fraction."""
    exponent = power.args[1]
    fraction = _integer_fraction(exponent)
    return sympy.Rational(*fraction) if fraction is not None and fraction[1] != 0 else exponent


def _reciprocal_integer(expr: Any) -> bool:
    return isinstance(expr, sympy.Pow) and expr.args[1] == -1 and isinstance(expr.args[0], sympy.Integer)


def _signed(expr: Any) -> bool:
    """A negative number or a negated factor: a second sign on it is a computation."""
    return (isinstance(expr, sympy.Number) and bool(expr.is_negative)) or (
        isinstance(expr, sympy.Mul) and any(a == -1 for a in expr.args))


def _product_factors(expr: Any) -> list[Any]:
    """The factors of a product, through nested products: ``\\frac{6\\pi}{8}`` is 6, π and 8⁻¹."""
    if not isinstance(expr, sympy.Mul):
        return [expr]
    return [factor for arg in expr.args for factor in _product_factors(arg)]


def _unreduced_coefficient(product: Any) -> bool:
    """``\\frac{6\\pi}{8}``: whole numbers above and below a fraction bar that share a factor."""
    if not isinstance(product, sympy.Mul):
        return False
    top = bottom = 1
    for factor in _product_factors(product):
        if isinstance(factor, sympy.Integer):
            top *= abs(int(factor))
        elif (isinstance(factor, sympy.Pow) and factor.args[1] == -1 and isinstance(factor.args[0], sympy.Integer)):
            bottom *= abs(int(factor.args[0]))
    return bottom > 1 and math.gcd(top, bottom) > 1


def _integer_fraction(expr: Any) -> tuple[int, int] | None:
    """``p / q`` with both integers, as the unevaluated tree holds ``6/4``: (p, q); else None."""
    if isinstance(expr, sympy.Pow) and expr.args[1] == -1 and isinstance(expr.args[0], sympy.Integer):
        return 1, int(expr.args[0])
    if isinstance(expr, sympy.Mul) and len(expr.args) == 2:
        a, b = expr.args
        for top, bottom in ((a, b), (b, a)):
            if (isinstance(top, sympy.Integer) and isinstance(bottom, sympy.Pow) and bottom.args[1] == -1
                    and isinstance(bottom.args[0], sympy.Integer)):
                return int(top), int(bottom.args[0])
    return None


# -- the written checks ----------------------------------------------------------------------

def _text_not_final(text: str, gold_text: str) -> str:
    """Fractions not in lowest terms, and subscripts or words the gold lacks, read off the LaTeX (the
    parser folds ``\\frac{6}{4}`` into 3/2 and drops a subscript, so the tree cannot show them)."""
    for match in _FRACTION.finditer(text):
        top, bottom = _fraction_parts(match)
        if not _lowest_terms(top, bottom) and not _has_unreduced_fraction(gold_text):
            return f"the fraction {match.group(0).strip()!r} is not in lowest terms"
    if _DOUBLE_SIGN.search(text) and not _DOUBLE_SIGN.search(gold_text):
        return f"{text!r} has two signs in a row: computed, not final"
    if _SUBSCRIPT.search(text) and not _SUBSCRIPT.search(gold_text):
        return f"{text!r} carries a subscript the gold lacks"
    words = _WORDS.search(text)
    if words and not _WORDS.search(gold_text):
        return f"{text!r} carries words ({words.group(0)}) the gold lacks"
    return ""


def _fraction_parts(match: re.Match[str]) -> tuple[int, int]:
    groups = [g for g in match.groups() if g is not None]
    top, bottom = (int(g.replace(" ", "")) for g in groups)
    return top, bottom


def _lowest_terms(top: int, bottom: int) -> bool:
    return bottom not in (0, 1, -1) and math.gcd(top, bottom) == 1


def _has_unreduced_fraction(text: str) -> bool:
    return any(not _lowest_terms(*_fraction_parts(m)) for m in _FRACTION.finditer(text))


def _tree_not_final(tree: Any, gold_texts: list[str], leniency: Leniency) -> str:
    for node in sympy.preorder_traversal(tree) if isinstance(tree, sympy.Basic) else ():
        if isinstance(node, sympy.Pow):
            base, exponent = node.args[0], _exponent(node)
            if any(base == b and exponent == e for b, e in _INDETERMINATE_POWERS):
                return f"the indeterminate form {sympy.sstr(node)}"
            if _unreduced_root(node) and not _gold_writes(gold_texts, leniency, _unreduced_root):
                return f"the root {sympy.sstr(node)} is not in lowest form (a perfect-power factor)"
        if isinstance(node, sympy.Mul):
            if _unreduced_coefficient(node) and not _gold_writes(gold_texts, leniency, _unreduced_coefficient):
                return f"the fraction in {sympy.sstr(node)} is not in lowest terms"
            args = node.args
            if any(a == 0 for a in args) and any(a in (sympy.oo, -sympy.oo, sympy.zoo) for a in args):
                return "the indeterminate form 0·∞"
        if isinstance(node, sympy.Add):
            args = set(node.args)
            if sympy.oo in args and (-sympy.oo in args or sympy.Mul(-1, sympy.oo, evaluate=False) in args):
                return "the indeterminate form ∞ - ∞"
    return ""


def _gold_writes(gold_texts: list[str], leniency: Leniency, test: Callable[[Any], bool]) -> bool:
    """Whether the gold, as written, has a node that passes ``test`` (then the answer may have one too)."""
    for text in gold_texts:
        tree = _written(text, leniency)
        if isinstance(tree, sympy.Basic) and any(test(node) for node in sympy.preorder_traversal(tree)):
            return True
    return False


def _unreduced_root(node: Any) -> bool:
    if not isinstance(node, sympy.Pow):
        return False
    exponent = _exponent(node)
    return isinstance(exponent, sympy.Rational) and not exponent.is_integer and _reducible_root(node.args[0],
                                                                                                exponent.q)


def _reducible_root(radicand: Any, index: int) -> bool:
    """Whether a root of an integer or a fraction of integers has a factor that is a perfect ``index``-th
    power: ``\\sqrt{12}`` (4·3), ``\\sqrt{4}``, ``\\sqrt{\\frac{9}{2}}``."""
    fraction = _integer_fraction(radicand)
    if isinstance(radicand, sympy.Rational):
        parts = (abs(radicand.p), radicand.q)
    elif fraction is not None:
        parts = (abs(fraction[0]), abs(fraction[1]))
    else:
        return False
    return any(_perfect_power_factor(n, index) for n in parts)


def _perfect_power_factor(n: int, index: int) -> bool:
    if n < 2 or index < 2:
        return False
    if sympy.integer_nthroot(n, index)[1]:
        return True
    factors = sympy.factorint(n, limit=_FACTOR_LIMIT)
    return any(exponent >= index for prime, exponent in factors.items() if prime <= _FACTOR_LIMIT)
