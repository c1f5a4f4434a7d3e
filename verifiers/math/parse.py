"""Turn an answer span into a structured answer: values, lists, named values, relations, sets.

The span is read in two layers. The outer layer is ours: Unicode and markup are normalised,
a written list is split at its top-level separators (``1, 2``, ``x = 1 or x = 2``,
``$1$ and $2$``), ``\\pm`` is expanded, an equation is split into the name it assigns and
its value (``g(x) = x^2``, ``(p, q) = (3, 2)``), set-builder notation becomes the set it
describes, and ratios and clock times stay themselves (``12:00`` is not 12/0). The leaves
go to latex2sympy (the parser behind Math-Verify) or, for plain text such as
``sqrt(2)/2``, to sympy's own parser. A leaf that does not parse whole stays unparsed: we
never fall back to a number found inside it, which is how plain Math-Verify turns
``5\\weird{q}`` into 5.

Where latex2sympy's reading would grade wrong answers right, the span is read here
first: words (``east``) stay text rather than a product of letters that equals
``seat``; a numeral keeps its base (``52_8``); thousands separators (``10\\,000``) are
not a product; only real units are dropped (``5 thousand`` is not 5); a span too large
to evaluate (``5^{5^{5^{5^5}}}``, ``100000!``) is refused before sympy sees it. sympy's
plain-text parser evaluates Python, so only arithmetic, single letters and known function
names ever reach it.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any

import sympy

from rewardsmith.verifiers.math.leniency import Leniency
from rewardsmith.verifiers.math.markup import shown
from rewardsmith.verifiers.math.units import UNIT_PREFIXES, is_count_noun, is_unit, words

MAX_SPAN_CHARS = 1500  # an answer longer than this is not an answer (and would be slow to parse)
MAX_DIGITS = 100_000  # a number with more digits than this is refused before sympy builds it
MAX_NESTING = 40  # deeper brackets are refused: no answer needs them, and parsing slows sharply

CHOICE = re.compile(
    r"^(?P<wrap>\\(?:text|textbf|mathrm|mathbf)\s*\{)?\s*(?P<word>(?:option|choice)\s+)?(?P<open>\()?\s*"
    r"(?P<letter>[A-Ea-e])\s*\)?\.?\s*\}?$",
    re.IGNORECASE,
)
DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree|\s*\bdegrees?\b", re.IGNORECASE)
TRAILING_DEGREES = re.compile(
    r"(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree|\s*\bdegrees?\b|\s*\\(?:text|mathrm)\s*\{\s*degrees?\s*\})\s*$",
    re.IGNORECASE,
)
DEGREE_FACTOR = r"\cdot\frac{\pi}{180}"  # what a degree sign inside a formula becomes
TRIG = re.compile(r"\\(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])")
PERCENT = re.compile(r"\\?%\s*$|\s*\bpercent\s*$", re.IGNORECASE)
# LaTeX spacing that may sit between a number and its unit: "10\ \text{cm}", "10\,\mathrm{m}".
_GAP = r"(?P<gap>(?:\s|\\[,;:! ]|~)*)"
TEXT_UNITS = re.compile(
    _GAP + r"\\(?:text|mbox|mathrm|textrm|textnormal|rm)\s*\{\s*(?P<word>[A-Za-z][A-Za-z .^/\d-]*)\}"
    r"(?P<power>\^\{?\d\}?)?\s*$"
)
WORD_UNITS = re.compile(
    r"(?<=[\d}])" + _GAP + r"(?P<word>(?:(?:square|sq\.?|cubic)\s+)?[a-zA-Z][a-zA-Z/]+)\.?(?P<power>\^\{?\d\}?)?\s*$"
)
PLAIN_MIXED_NUMBER = re.compile(r"^(-?)(\d+)\s+(\d+)\s*/\s*(\d+)$")
MIXED_NUMBER = re.compile(r"(?<![\d.}])(\d+)\s*\\[dt]?frac")
# A plain-text function name, i.e. one without the backslash LaTeX would need ("3pi/4", "2sqrt3").
BARE_FUNC = re.compile(r"(?<![\\A-Za-z])(?:sqrt|pi|sin|cos|tan|cot|sec|csc|log|ln|exp|abs)(?![A-Za-z])")
PLAIN_FUNCS = re.compile(BARE_FUNC.pattern + r"|\*\*|\^")
SCIENTIFIC = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+$")
# Thousands separators as written in LaTeX and prose: 1,000  1{,}000  10,\!000  10\,000  10 000.
THOUSANDS = re.compile(r"^-?\d{1,3}(?:(?:,\\!|\{,\}|\\,|\\!|\\ |~|,| )\d{3})+(?:\.\d+)?$")
_THOUSANDS_THEN_WORDS = re.compile(
    r"^(-?\d{1,3}(?:(?:,\\!|\{,\}|,)\d{3})+(?:\.\d+)?)((?:\s|\\[,;: ]|\\text|\\mbox|\\mathrm)\D*)$"
)
_THOUSANDS_SEP = re.compile(r",\\!|\{,\}|\\,|\\!|\\ |~|,| ")
# A numeral with its base: 52_8, 4210_{5}, 1A_{16}.
BASE_NUMERAL = re.compile(r"^([0-9A-Za-z]+)_\{?(\d{1,2})\}?$")
# A span of plain words ("east", "no solution"): text, not a product of single-letter symbols.
WORDS = re.compile(r"^[A-Za-z]+(?:[\s-]+[A-Za-z]+)*$")
# Clock times and ratios compare as themselves: "12:00" is not 12/0, "3:00" is not 12:00.
TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s*(am|pm|a\.m\.|p\.m\.))?$", re.IGNORECASE)
RATIO = re.compile(r"^\d+(?:\.\d+)?(?:\s*:\s*\d+(?:\.\d+)?)+$")
REPEATING = re.compile(r"^(-?)(\d*)\.(\d*)\\(?:overline|bar|dot)\s*\{(\d+)\}$")

# Names that are math, not units or prose: "2 pi" is 2π and "arcsin x" is not a word answer.
_MATH_WORDS = {
    "pi", "sqrt", "sin", "cos", "tan", "cot", "csc", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "log", "ln", "exp", "abs", "inf", "infty", "infinity", "mod", "gcd", "lcm", "det", "i", "e",
}
_NUMBER_WORDS = {
    word: n for n, word in enumerate(re.findall(
        r"\w+", "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty"
    ))
}

# Answers in words that name a set, and words that say the same thing.
_NAMED_SETS = {
    **dict.fromkeys(
        ["no solution", "no solutions", "no real solution", "no real solutions", "none", "empty set",
         "the empty set", "no such number", "no such numbers"], sympy.S.EmptySet),
    **dict.fromkeys(["all integers", "every integer", "the integers", "all integer values"], sympy.S.Integers),
    **dict.fromkeys(["all real numbers", "all reals", "every real number", "the real numbers"], sympy.S.Reals),
}
_TEXT_SYNONYMS = {"dne": "does not exist", "does not exists": "does not exist"}

_UNICODE = {
    "∞": r"\infty ", "∪": r"\cup ", "∩": r"\cap ", "≤": r"\le ", "≥": r"\ge ", "≠": r"\ne ", "±": r"\pm ",
    "∓": r"\mp ", "π": r"\pi ", "·": r"\cdot ", "×": r"\times ", "÷": r"\div ", "−": "-", "–": "-", "∈": r"\in ",
    "θ": r"\theta ", "α": r"\alpha ", "β": r"\beta ", "γ": r"\gamma ", "λ": r"\lambda ", "φ": r"\phi ",
    "°": r"^\circ ", "²": "^2", "³": "^3", "¹": "^1", "⁰": "^0", "√": r"\sqrt", "∅": r"\emptyset ", "ℝ": r"\mathbb{R}",
    "⟨": r"\langle ", "⟩": r"\rangle ", "…": r"\ldots ", "\u00a0": " ", "\u2009": " ", "\u202f": " ",
}
_UNICODE_RE = re.compile("|".join(map(re.escape, _UNICODE)))
_NON_ASCII_NUMERAL = re.compile(r"[^\x00-\x7f]")


def _ascii_numerals(text: str) -> str:
    """Digits of any script as ASCII (``１２``, ``١٢`` are 12) and vulgar fractions as LaTeX (``½`` is
    ``\\frac{1}{2}``; ``1½`` the mixed number 3/2)."""
    if text.isascii():
        return text
    return _NON_ASCII_NUMERAL.sub(_ascii_numeral, text)


def _ascii_numeral(match: re.Match[str]) -> str:
    char = match.group(0)
    if unicodedata.category(char) == "Nd":
        return str(unicodedata.digit(char))
    if unicodedata.category(char) == "No" and "FRACTION" in unicodedata.name(char, ""):
        value = Fraction(unicodedata.numeric(char)).limit_denominator(12)
        return f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
    return char
_SQRT_UNICODE_ARG = re.compile(r"\\sqrt(?![A-Za-z\[{])\s*(\d+|[A-Za-z]|\([^()]*\))")
_NOISE = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big|displaystyle|textstyle)(?![A-Za-z])\s*|\\!")
_SAME_COMMANDS = (
    (r"\varnothing", r"\emptyset"), (r"\langle", "("), (r"\rangle", ")"), (r"\lbrace", r"\{"), (r"\rbrace", r"\}"),
)
# Words around an answer that do not change it: "\text{only } x = 0", "f(x) = x \text{ for all } x \in \mathbb{R}".
_QUALIFIER = re.compile(
    r"^(?:\\text\s*\{\s*(?:only|exactly)\s*\}|(?:only|exactly)\s)\s*|\s*\\text\s*\{\s*only\s*\}$"
    r"|\s*(?:\\text\s*\{\s*for\s+(?:all|every)\s*\}|\\forall)\s*[A-Za-z](?:\s*\\in\s*\\mathbb\s*\{?[RZNQC]\}?)?\s*$"
)


@dataclass(frozen=True)
class Name:
    """What an equation assigns: ``x``, ``m_{\\max}``, ``f(x)``, ``(p, q)``.

    ``head`` is the normalised name (a function's name, or the names of a tuple joined by
    commas); ``args`` the variable names of a function, so ``f(z) = z`` and ``f(x) = x``
    can be compared up to renaming.
    """

    kind: str  # symbol, function, tuple
    head: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Parsed:
    """A parsed answer.

    ``kind``: ``sympy`` (``expr`` is a sympy object: number, expression, relation, set,
    tuple, matrix), ``choice`` (a letter), ``text`` (words), ``ratio`` (``expr`` a tuple of
    numbers; ``time`` set for a clock time), ``undefined`` (``1/0``, ``0/0``: equal to
    nothing), ``equation`` (a relation between expressions that names nothing, such as
    ``x^2 + y^2 = 1``), ``congruence`` (``expr`` is (residue, modulus)), ``list``
    (``items``: several answers, e.g. solutions), or
    ``unparsed``. ``name`` is set when an equation names the value (``x = 2``); ``chain``
    holds the other sides of ``x = \\frac42 = 2``, which must all agree.
    """

    text: str  # the cleaned span, for string comparison and reporting
    expr: Any = None
    kind: str = "unparsed"
    percent: bool = False
    degrees: bool = False
    units: str = ""
    base: int | None = None  # the base of a numeral written with one ("52_8")
    # The LaTeX each value in ``expr`` was read from (one per entry of a tuple, interval or set), after
    # units, signs and separators came off: what :mod:`~rewardsmith.verifiers.math.final_form` reads.
    written: tuple[str, ...] = ()
    name: Name | None = None
    chain: tuple[Parsed, ...] = ()
    items: tuple[Parsed, ...] = ()
    time: bool = False
    reason: str = ""  # why a span stayed unparsed

    @property
    def ok(self) -> bool:
        if self.kind == "list":
            return all(item.ok for item in self.items)
        return self.kind != "unparsed" and all(side.ok for side in self.chain)


def normalize_text(span: str) -> str:
    """A whitespace- and markup-insensitive form for string comparison of unparsed answers."""
    text = re.sub(r"\\(?:left|right|displaystyle|!|,|;|:|quad|qquad)", "", span)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = re.sub(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox)\s*\{([^{}]*)\}", r"\1", text)
    return re.sub(r"\s+", "", text).strip(".").lower()


def choice_letter(text: str, bare_lowercase: bool = False) -> str | None:
    """The multiple-choice letter a span stands for (``(B)``, ``B``, ``\\text{(B)}``, ``option b``).

    A bare lowercase letter is a variable (or Euler's ``e``), not a choice, unless
    ``bare_lowercase``: then ``b`` still answers a question whose gold is ``(B)``.
    """
    match = CHOICE.match(text.strip())
    if not match:
        return None
    letter = match.group("letter")
    decorated = match.group("wrap") or match.group("word") or match.group("open")
    if letter.islower() and not decorated and not bare_lowercase:
        return None
    return letter.upper()


def parse_answer(span: str, leniency: Leniency) -> Parsed:
    """Parse an answer span under the given leniency switches."""
    return _parse_cached(span, leniency)


@lru_cache(maxsize=65536)
def _parse_cached(span: str, leniency: Leniency) -> Parsed:
    text = clean(span)
    if not text:
        return Parsed(text=span.strip(), reason="empty")
    if len(text) > MAX_SPAN_CHARS:
        return Parsed(text=text[:200], reason=f"longer than {MAX_SPAN_CHARS} characters")
    if leniency.choices:
        letter = choice_letter(text)
        if letter:
            return Parsed(text=text, expr=letter, kind="choice")
    too_big = _too_big(text)
    if too_big:
        return Parsed(text=text, reason=too_big)
    parsed = _parse_list(text, leniency)
    if parsed.kind != "list" and not parsed.units and _CURRENCY.match(span.strip().lstrip("$ ")):
        parsed = replace(parsed, units="$")  # "\$7": seven dollars, which 7 cents is not
    return parsed


_CURRENCY = re.compile(r"\\\$|\\(?=\d)")


def clean(span: str) -> str:
    """Unicode, sizing commands and enclosing dollars and punctuation removed."""
    text = shown(_UNICODE_RE.sub(lambda m: _UNICODE[m.group(0)], _ascii_numerals(span)))
    text = _SQRT_UNICODE_ARG.sub(lambda m: r"\sqrt{" + m.group(1) + "}", text)
    text = _NOISE.sub("", text)
    for written, meant in _SAME_COMMANDS:
        text = text.replace(written, meant)
    text = re.sub(r"\\(?:dfrac|tfrac)", r"\\frac", text)
    text = re.sub(r"\\(?:leqslant|leq)(?![A-Za-z])", r"\\le", text)
    text = re.sub(r"\\(?:geqslant|geq)(?![A-Za-z])", r"\\ge", text)
    text = re.sub(r"\\(?:neq)(?![A-Za-z])", r"\\ne", text)
    text = text.strip().strip("$").strip().replace(":=", "=")
    text = re.sub(r"^\\[\[(]|\\[\])]$", "", text).strip()
    # A currency sign is never part of the value: "\$31,800", and the typo "\15" for "\$15".
    text = re.sub(r"^(?:\\\$|\$|\\(?=\d))\s*", "", text)
    text = text.rstrip(".;,").strip()
    ordinal = _ORDINAL.match(text)
    return ordinal.group(1) if ordinal else text  # "21st", "3^{\\text{rd}}": the number


_ORDINAL = re.compile(r"^(\d+)\s*(?:\^\s*\{?\s*(?:\\(?:text|textrm|mathrm)\s*\{)?\s*)?(?:st|nd|rd|th)\s*\}?\s*\}?$")


# -- lists -------------------------------------------------------------------------------------

_SEPARATOR_WORDS = {"and", "or", ",", "and/or", ", and", ", or", "or else"}


def split_items(text: str) -> tuple[list[str], list[str]]:
    """Split at top-level separators: commas, semicolons, ``and``/``or`` (bare or in ``\\text``),
    ``\\quad``. Brackets of any kind (``( [ \\{``) nest; ``[1, 2)`` is one item."""
    items, separators, depth, start, i = [], [], 0, 0, 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            word = re.match(r"\\([A-Za-z]+|.)", text[i:])
            token = word.group(1) if word else ""
            if token in ("{", "(", "["):
                depth += 1
            elif token in ("}", ")", "]"):
                depth -= 1
            elif depth == 0 and token in ("text", "mbox", "textrm", "mathrm", "textnormal"):
                group = re.match(r"\\[A-Za-z]+\s*\{([^{}]*)\}", text[i:])
                if group and group.group(1).strip().lower() in _SEPARATOR_WORDS:
                    items.append(text[start:i])
                    separators.append(group.group(1).strip().lower().lstrip(", ") or ",")
                    i += group.end()
                    start = i
                    continue
                if group:
                    i += group.end()
                    continue
            elif depth == 0 and token in ("quad", "qquad"):
                items.append(text[start:i])
                separators.append(",")
                i += len(token) + 1
                start = i
                continue
            i += 1 + len(token)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and ch in ",;":
            items.append(text[start:i])
            separators.append(",")
            start = i + 1
        elif depth == 0 and ch.isspace():
            word = re.match(r"\s+(and|or)\s+", text[i:])
            if word:
                items.append(text[start:i])
                separators.append(word.group(1))
                i += word.end()
                start = i
                continue
        i += 1
    items.append(text[start:])
    if depth != 0:
        return [text], []
    kept = [(item.strip(), sep) for item, sep in zip(items, ["", *separators], strict=True)]
    if any(not item for item, _ in kept):
        return [text], []
    return [item for item, _ in kept], [sep for _, sep in kept[1:]]


def _parse_list(text: str, leniency: Leniency) -> Parsed:
    if THOUSANDS.match(text):
        return _parse_item(text, leniency)
    grouped = _THOUSANDS_THEN_WORDS.match(text)
    if grouped and "," not in grouped.group(2):  # "32,348 dollars": one number with its unit
        return _parse_item(_THOUSANDS_SEP.sub("", grouped.group(1)) + grouped.group(2), leniency)
    items, separators = split_items(text)
    if len(items) == 1:
        return _parse_item(text, leniency)
    parsed = [_parse_item(item, leniency) for item in items]
    joined = _join_relations(parsed, separators)
    if joined is not None:
        return joined
    # "x = 1, 2": the name of the first item covers the bare values after it.
    name = parsed[0].name
    if name is not None:
        parsed = [p if p.name is not None or p.kind == "list" else replace(p, name=name) for p in parsed]
    flat: list[Parsed] = []
    for p in parsed:
        flat.extend(p.items if p.kind == "list" else (p,))
    return Parsed(text=text, kind="list", items=tuple(flat))


def _join_relations(parsed: list[Parsed], separators: list[str]) -> Parsed | None:
    """``x < 2 or x > 3`` is one condition (a union), not two answers; likewise with ``and``."""
    if len(set(separators)) != 1 or separators[0] not in ("and", "or"):
        return None
    if not all(p.kind == "sympy" and p.name is None and _is_relation(p.expr) for p in parsed):
        return None
    symbols = {frozenset(p.expr.free_symbols) for p in parsed}
    if len(symbols) != 1:
        return None
    join = sympy.Or if separators[0] == "or" else sympy.And
    text = f" {separators[0]} ".join(p.text for p in parsed)
    return Parsed(text=text, expr=join(*(p.expr for p in parsed)), kind="sympy")


def _is_relation(expr: Any) -> bool:
    from sympy.core.relational import Relational

    if isinstance(expr, Relational) and not isinstance(expr, sympy.Eq):
        return True
    return isinstance(expr, (sympy.And, sympy.Or)) and all(_is_relation(arg) for arg in expr.args)


# -- items: ±, set-builder, equations, leaves --------------------------------------------------

_PM = re.compile(r"\\(pm|mp)(?![A-Za-z])")
# "x \approx 5", "f \sim 5", "x \to 5": a value this is close to, or tends to, is not the value.
_NOT_EQUAL_TO = re.compile(
    r"\\(?:approx|thickapprox|sim|simeq|cong|propto|to|rightarrow|Rightarrow|longrightarrow|mapsto|gtrsim|lesssim|"
    r"ll|gg|asymp|doteq)(?![A-Za-z])|[≈→∼≃≅]"
)
_SET_BUILDER = re.compile(
    r"^\\\{\s*(?P<var>[A-Za-z])\s*(?:\\in\s*\\mathbb\s*\{?\s*R\s*\}?\s*)?(?:\\mid|\\vert|\||:)\s*(?P<cond>.+?)\s*\\\}$"
)


def _parse_item(text: str, leniency: Leniency) -> Parsed:
    text = _QUALIFIER.sub("", text).strip()
    if not text:
        return Parsed(text=text, reason="empty")
    if _PM.search(text):
        variants = [_PM.sub(lambda m, s=sign: s if m.group(1) == "pm" else _flip(s), text) for sign in ("+", "-")]
        parts = [_parse_item(v, leniency) for v in variants]
        return Parsed(text=text, kind="list", items=tuple(parts))
    if _NOT_EQUAL_TO.search(text):
        return Parsed(text=text, reason="an approximate or limiting statement, not a value")
    builder = _SET_BUILDER.match(text)
    if builder:
        return _parse_set_builder(text, builder.group("var"), builder.group("cond"), leniency)
    sides = _split_equation(text)
    if len(sides) > 1:
        return _parse_equation(text, sides, leniency)
    congruence = CONGRUENCE.match(text)
    if congruence:
        return _parse_congruence(text, congruence, leniency)
    membership = re.match(r"^(?P<lhs>.+?)\s*\\in\s*(?P<rhs>.+)$", text)
    if membership:
        name = parse_name(membership.group("lhs"))
        if name is not None:
            value = _parse_leaf(membership.group("rhs"), leniency)
            return replace(value, name=name, text=text)
    return _parse_leaf(text, leniency)


CONGRUENCE = re.compile(
    r"^(?P<lhs>.+?)\s*\\equiv\s*(?P<rhs>.+?)\s*(?:\\pmod\s*|\(\s*\\(?:bmod|mod)\s*|\\(?:bmod|mod)\s*|\(\s*mod\s+)"
    r"\{?\s*(?P<modulus>\d+)\s*\}?\s*\)?$"
)


def _parse_congruence(text: str, match: re.Match[str], leniency: Leniency) -> Parsed:
    """``n \\equiv 3 \\pmod 4``: the residue class, so ``n \\equiv -1 \\pmod{4}`` is the same answer."""
    name = parse_name(match.group("lhs"))
    residue = _parse_leaf(match.group("rhs"), leniency)
    modulus = int(match.group("modulus"))
    if name is None or modulus == 0 or residue.kind != "sympy" or not isinstance(residue.expr, sympy.Integer):
        return Parsed(text=text, reason="a congruence other than name ≡ integer (mod integer)")
    return Parsed(text=text, expr=(int(residue.expr) % modulus, modulus), kind="congruence", name=name)


def _flip(sign: str) -> str:
    return "-" if sign == "+" else "+"


def _split_equation(text: str) -> list[str]:
    """Split at top-level ``=`` signs that are equalities (not ``<=``, ``>=``, ``!=``, ``:=``)."""
    sides, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "=" and depth == 0:
            if (i > 0 and text[i - 1] in "<>!:=") or text[i + 1 : i + 2] == "=":
                continue
            sides.append(text[start:i])
            start = i + 1
    sides.append(text[start:])
    return [s.strip() for s in sides] if all(s.strip() for s in sides) else [text]


def _parse_equation(text: str, sides: list[str], leniency: Leniency) -> Parsed:
    """``x = 3``, ``f(x) = x^2``, ``(p, q) = (3, 2)``, ``3 = x``, ``x = \\frac42 = 2`` name a value;
    any other equation (``x^2 + y^2 = 1``, ``3 = 4``, ``a + b = 5``) names nothing."""
    name = parse_name(sides[0])
    if name is not None:
        values = [_parse_list(side, leniency) for side in sides[1:]]
        return replace(values[-1], name=name, chain=tuple(values[:-1]), text=text)
    if len(sides) == 2:
        name = parse_name(sides[1])
        if name is not None:
            return replace(_parse_list(sides[0], leniency), name=name, text=text)
    parts = [_parse_leaf(side, leniency) for side in sides]
    if not all(p.ok and p.kind == "sympy" for p in parts):
        return Parsed(text=text, reason="an equation whose sides do not parse")
    return Parsed(
        text=text, kind="equation", expr=sympy.Eq(parts[0].expr, parts[-1].expr, evaluate=False),
        chain=tuple(parts[1:-1]),
    )


_GREEK = words(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi rho sigma tau "
    "upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega"
)
_SYMBOL = (
    r"(?:[A-Za-z]|\\(?:" + "|".join(sorted(_GREEK)) + r")(?![A-Za-z])|\\(?:text|mathrm|operatorname)\s*\{[A-Za-z ]+\})"
    r"(?:\s*_\s*(?:\{[^{}]{1,20}\}|[A-Za-z0-9]))?(?:'{1,3}|\^\s*\{?\s*\*\s*\}?)?"
)
_SYMBOL_RE = re.compile(rf"^{_SYMBOL}$")
_SEGMENT = re.compile(r"^(?:m\s*)?(?:\\angle\s*|\\overline\s*\{|\\overarc\s*\{|\\widehat\s*\{)?[A-Z]{1,4}\}?$")
_ARGUMENT = rf"(?:{_SYMBOL}|-?\d+(?:\.\d+)?)"
_FUNCTION = re.compile(
    rf"^(?P<head>{_SYMBOL})\s*(?:\^\s*\{{?\s*-1\s*\}}?)?\s*\(\s*(?P<args>{_ARGUMENT}(?:\s*,\s*{_ARGUMENT})*)\s*\)$"
)
_TUPLE_NAME = re.compile(rf"^\(\s*(?P<args>{_SYMBOL}(?:\s*,\s*{_SYMBOL})+)\s*\)$")


def parse_name(text: str) -> Name | None:
    """The name an equation side gives, or None when it is a number or an expression.

    Symbols (``x``, ``x_1``, ``m_{\\max}``, ``\\theta``, ``\\text{speed}``), geometric names
    (``AB``, ``\\angle ABC``), functions of symbols (``f(x)``, ``g(x, y)``, ``f^{-1}(x)``)
    and tuples of symbols (``(p, q)``) name a value, as does a function at a number (``f(4)``);
    ``3``, ``a + b`` and ``2x`` do not.
    """
    text = text.strip()
    if _SYMBOL_RE.match(text) or _SEGMENT.match(text):
        if text in ("e", "i") or re.fullmatch(r"\\(?:pi|Pi)", text):
            return None  # constants, not names
        return Name("symbol", _name_key(text))
    function = _FUNCTION.match(text)
    if function:
        args = tuple(_name_key(a) for a in re.split(r"\s*,\s*", function.group("args").strip()))
        head = _name_key(text[: text.index("(")])
        if len(set(args)) == len(args):
            return Name("function", head, args)
    pair = _TUPLE_NAME.match(text)
    if pair:
        names = tuple(_name_key(a) for a in re.split(r"\s*,\s*", pair.group("args").strip()))
        return Name("tuple", ",".join(names))
    return None


def _name_key(text: str) -> str:
    key = re.sub(r"\\(?:text|mathrm|operatorname|overline|angle|widehat|overarc)\s*", "", text)
    key = re.sub(r"[\s{}\\]", "", key)
    return key


def _parse_set_builder(text: str, var: str, condition: str, leniency: Leniency) -> Parsed:
    """``\\{x \\mid -1 < x < 1\\}`` is the interval it describes."""
    inner = _parse_list(condition, leniency)
    if inner.kind != "sympy" or not _is_relation(inner.expr):
        return Parsed(text=text, reason="a set-builder condition that is not an inequality")
    symbols = inner.expr.free_symbols
    if len(symbols) != 1 or next(iter(symbols)).name != var:
        return Parsed(text=text, reason="a set-builder condition on another variable")
    as_set = relation_set(inner.expr)
    if as_set is None:
        return Parsed(text=text, reason="a set-builder condition sympy cannot solve")
    return Parsed(text=text, expr=as_set, kind="sympy")


def relation_set(expr: Any) -> Any:
    """The set of reals an inequality in one variable describes, or None."""
    try:
        return expr.as_set()
    except Exception:  # as_set raises NotImplementedError and others for what it cannot solve
        return None


# -- leaves -----------------------------------------------------------------------------------

def _parse_leaf(text: str, leniency: Leniency) -> Parsed:
    """One value. An answer that does not parse keeps its text as written: it is compared as text,
    and "30" left of "30^\\circ\\%" after its signs came off must not read as 30."""
    parsed = _read_leaf(text, leniency)
    return parsed if parsed.kind != "unparsed" else replace(parsed, text=text)


def _read_leaf(text: str, leniency: Leniency) -> Parsed:
    if leniency.choices:
        letter = choice_letter(text)
        if letter:
            return Parsed(text=text, expr=letter, kind="choice")
    text, percent, degrees, units = _strip_decorations(text, leniency)
    if not text:
        return Parsed(text=text, reason="empty")
    if percent and degrees:
        return Parsed(text=text, reason="both a percent and a degree sign")  # "30^\circ\%" would be 30, 0.3 and π/6
    flags = {"percent": percent, "degrees": degrees, "units": units}
    if THOUSANDS.match(text):
        text = _THOUSANDS_SEP.sub("", text)
    time = TIME.match(text)
    if time:
        parts = tuple(int(p) for p in time.groups()[:3] if p is not None)
        suffix = (time.group(4) or "").replace(".", "").lower()
        return Parsed(text=f"{text}", expr=(*parts, suffix), kind="ratio", time=True, **flags)
    if RATIO.match(text):
        parts = tuple(sympy.Rational(p.strip()) for p in text.split(":"))
        return Parsed(text=text, expr=parts, kind="ratio", **flags)
    bracketed = _parse_bracketed(text, leniency)
    if bracketed is not None:
        return replace(bracketed, **flags)
    repeating = REPEATING.match(text)
    if repeating:
        return Parsed(text=text, expr=_repeating_decimal(*repeating.groups()), kind="sympy", **flags)
    numeral = BASE_NUMERAL.match(text)
    if numeral and (numeral.group(1).isdigit() or _valid_numeral(numeral.group(1), int(numeral.group(2)))):
        # latex2sympy drops the subscript, which makes 52_8 equal 52_9; keep the digits and the base.
        digits, base = numeral.group(1), int(numeral.group(2))
        if not _valid_numeral(digits, base):
            return Parsed(text=text, reason="not a numeral in any base")
        if digits.isdigit():
            return Parsed(text=text, expr=sympy.Integer(digits), kind="sympy", base=base)
        return Parsed(text=digits, kind="text", base=base)
    word, marked = _unwrap_text(text)
    if word is not None:
        key = " ".join(word.lower().split())
        if key in _NUMBER_WORDS:
            return Parsed(text=text, expr=sympy.Integer(_NUMBER_WORDS[key]), kind="sympy", **flags)
        if key in _NAMED_SETS:
            return Parsed(text=text, expr=_NAMED_SETS[key], kind="sympy", **flags)
        if marked or _is_prose(word):
            return Parsed(text=_TEXT_SYNONYMS.get(key, word), kind="text", **flags)
    if _is_sentence(text):  # "I am not sure it is 0" is not the product I·a·m·…·0
        return Parsed(text=text, reason="a sentence, not a value", **flags)
    mixed = PLAIN_MIXED_NUMBER.match(text)
    if mixed:  # "3 1/4" is 13/4, never 3/4 (nor 3·1/4)
        if not leniency.mixed_numbers:
            return Parsed(text=text, reason="a mixed number, with mixed_numbers off")
        sign, whole, numerator, denominator = mixed.groups()
        if int(denominator) == 0 or int(numerator) >= int(denominator):
            return Parsed(text=text, reason="not a mixed number")
        value = int(whole) + sympy.Rational(int(numerator), int(denominator))
        return Parsed(text=text, expr=-value if sign else value, kind="sympy", **flags)
    expr = _parse_math(text, leniency)
    if expr is None:
        return Parsed(text=text, reason="does not parse as LaTeX", **flags)
    if _undefined(expr):
        return Parsed(text=text, expr=expr, kind="undefined", **flags)
    return Parsed(text=text, expr=expr, kind="sympy", written=(text,), **flags)


def _parse_bracketed(text: str, leniency: Leniency) -> Parsed | None:
    """Tuples, intervals and sets read here, element by element, so that order is kept and a
    backwards pair stays itself: latex2sympy reads ``(3, 1)`` as the open interval from 3 to
    1, which is empty and so equal to every other backwards pair.

    ``(a, b)`` is a pair (it compares with an open interval too), ``[a, b)``, ``(a, b]`` and
    ``[a, b]`` are intervals (ends in order), ``(a, b, c)`` and ``[a, b, c]`` are tuples and
    ``\\{a, b\\}`` is a set. None when the span is not one bracketed list.
    """
    if text.startswith("\\{") and text.endswith("\\}") and _encloses(text, 2):
        inner, kind = text[2:-2], "set"
    elif text[:1] in "([" and text[-1:] in ")]" and _encloses(text, 1):
        inner, kind = text[1:-1], text[0] + text[-1]
    else:
        return None
    items, separators = split_items(inner) if inner.strip() else ([], [])
    if any(sep != "," for sep in separators):
        return None
    if kind != "set" and len(items) < 2:
        return None  # "(x + 1)": grouping, not a tuple
    parts = [_parse_list(item, leniency) if kind == "set" else _parse_leaf(item, leniency) for item in items]
    if not all(p.kind == "sympy" and p.name is None for p in parts):
        return Parsed(text=text, reason="a bracketed list with an item that does not parse")
    exprs = [p.expr for p in parts]
    written = tuple(w for p in parts for w in p.written)
    if kind == "set":
        return Parsed(text=text, expr=sympy.FiniteSet(*exprs) if exprs else sympy.EmptySet, kind="sympy",
                      written=written)
    if kind in ("[)", "(]", "[]") and len(exprs) == 2:
        return replace(_interval(text, exprs[0], exprs[1], kind[0] == "(", kind[1] == ")"), written=written)
    return Parsed(text=text, expr=sympy.Tuple(*exprs), kind="sympy", written=written)


def _encloses(text: str, width: int) -> bool:
    """Whether the bracket opening ``text`` (``width`` characters) closes only at its very end."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and i < len(text) - 1:
                return False
    return depth == 0


def _interval(text: str, start: Any, end: Any, left_open: bool, right_open: bool) -> Parsed:
    try:
        ordered = sympy.Le(start, end)
    except TypeError:  # ends that are not real (a complex number, a tuple)
        return Parsed(text=text, reason="an interval whose ends are not real numbers")
    if ordered is sympy.false:
        return Parsed(text=text, reason="an interval whose ends are out of order")
    try:
        interval = sympy.Interval(start, end, left_open, right_open)
    except (TypeError, ValueError):
        return Parsed(text=text, reason="an interval sympy cannot build")
    return Parsed(text=text, expr=interval, kind="sympy")


def _unwrap_text(text: str) -> tuple[str | None, bool]:
    r"""The words of ``east`` or ``\text{no solution}`` (None when the span is not plain words),
    and whether they were marked as text (then even a short word such as ``odd`` is a word)."""
    match = re.fullmatch(r"\\(?:text|textbf|textit|mathrm|mbox|textrm)\s*\{([^{}]*)\}", text)
    inner = match.group(1).strip() if match else text
    return (inner if WORDS.match(inner) else None), match is not None


def _repeating_decimal(sign: str, whole: str, fixed: str, repeat: str) -> Any:
    """``0.\\overline{3}`` = 1/3, ``0.1\\overline{6}`` = 1/6."""
    value = sympy.Integer(whole or 0) + sympy.Rational(int(fixed or 0), 10 ** len(fixed))
    value += sympy.Rational(int(repeat), (10 ** len(repeat) - 1) * 10 ** len(fixed))
    return -value if sign else value


def _undefined(expr: Any) -> bool:
    try:
        atoms = expr.atoms() if isinstance(expr, sympy.Basic) else set()
    except Exception:  # exotic objects without atoms(): not undefined as far as we can tell
        return False
    return any(atom in (sympy.zoo, sympy.nan) for atom in atoms)


def _valid_numeral(digits: str, base: int) -> bool:
    if not 2 <= base <= 36 or not any(ch.isdigit() for ch in digits):
        return False
    if not digits.isdigit() and base <= 10:
        return False
    try:
        int(digits, base)
    except ValueError:
        return False
    return True


def _is_prose(text: str) -> bool:
    """Words such as ``east``, ``no solution`` or ``the first player`` are text: as a product of
    symbols ``east`` would equal ``seat``. Short letters and math names (``xy``, ``sin x``) are not."""
    words = re.split(r"[\s-]+", text.lower())
    if any(w in _MATH_WORDS for w in words):
        return False
    return len(words) >= 3 or any(len(w) >= 4 for w in words)


_TWO_WORDS = re.compile(r"(?<![\\A-Za-z])([A-Za-z]{2,})\s+([A-Za-z]{2,})(?![A-Za-z])")


def _is_sentence(text: str) -> bool:
    """Two plain words in a row outside ``\\text{…}`` (``ab + bc`` and ``\\sin x`` are math)."""
    bare = re.sub(r"\\[A-Za-z]+\s*(?:\{[^{}]*\})?", " ", text)
    return any(not {a.lower(), b.lower()} & _MATH_WORDS for a, b in _TWO_WORDS.findall(bare))


def _strip_decorations(text: str, leniency: Leniency) -> tuple[str, bool, bool, str]:
    """Remove what the switches allow: %, degree signs, units of measure."""
    percent = degrees = False
    units = ""
    unsigned = re.sub(r"^\\\$\s*|^\$\s*(?=\d)", "", text).strip()  # a currency sign inside a list item
    if unsigned != text:
        units, text = "$", unsigned
    stripped = PERCENT.sub("", text)
    if stripped != text:
        percent, text = True, stripped.strip()
    trailing = TRAILING_DEGREES.search(text)
    if trailing and not DEGREES.search(text[: trailing.start()]) and not TRIG.search(text):
        degrees, text = True, text[: trailing.start()].strip()  # "30^\circ": a value in degrees
    elif DEGREES.search(text):
        # Inside a formula ("\sin 15^\circ", "2 \cdot 30^\circ") a degree is π/180 of a radian.
        text = DEGREES.sub(lambda _: DEGREE_FACTOR, text)
    if leniency.units:
        text = _unwrap_text_number(text)
        for pattern in (TEXT_UNITS, WORD_UNITS):
            match = pattern.search(text)
            if match and match.start() > 0 and _is_unit(match, marked=pattern is TEXT_UNITS):
                units = (units + " " + match.group(0).strip()).strip()
                text = text[: match.start()].strip()
        text = re.sub(r"\\(?:,|;|:|!|\s)+$|~+$", "", text).strip()
        counted = _COUNTED.match(text)
        if counted and not units and is_count_noun(counted.group(2)):
            text, units = counted.group(1), counted.group(2)  # "6 marbles": 6, the marbles are what is counted
    return text, percent, degrees, units


_COUNTED = re.compile(r"^(-?\d+(?:\.\d+)?)\s+(?:\\text\s*\{\s*)?([a-z]+)\s*\}?$")


def _unwrap_text_number(text: str) -> str:
    r"""``\text{4 inches}`` is the number 4 with a unit, not one long symbol."""
    match = re.fullmatch(r"\\(?:text|mbox|textrm|mathrm)\s*\{\s*(-?\d[^{}]*)\}", text)
    return match.group(1).strip() if match else text


def _is_unit(match: re.Match[str], marked: bool) -> bool:
    """Only real units of measure go, never a word that changes the value ("5 thousand").

    In ``\\text{…}`` (``marked``) any listed unit counts, even one letter (``\\text{m}``); bare,
    a unit needs two letters and a space before it unless it is a listed abbreviation glued
    to the number (``5kg``): ``2m``, ``5xy`` and ``5 ab`` stay algebra.
    """
    word = match.group("word").strip()
    if not is_unit(word):
        return False
    if marked:
        return True
    if len(word) < 2:
        return False
    glued = not match.group("gap")
    return not glued or word.lower().split()[-1] not in UNIT_PREFIXES


@lru_cache(maxsize=16384)
def written_tree(text: str, leniency: Leniency) -> Any:
    """A value as written, before sympy computes anything (``13 \\cdot 17`` stays a product, ``0^0`` a
    power); None when it does not parse that way. ``text`` is a :attr:`Parsed.written` entry."""
    try:
        with sympy.evaluate(False):
            return _parse_math(text, leniency, evaluate=False)
    except Exception:  # whatever the unevaluated parse cannot build has no form we can vouch for
        return None


def _parse_math(text: str, leniency: Leniency, evaluate: bool = True) -> Any:
    if not leniency.mixed_numbers:
        text = MIXED_NUMBER.sub(r"\1\\cdot\\frac", text)
    text = text.replace("<=", r"\le ").replace(">=", r"\ge ").replace("!=", r"\ne ").replace("=<", r"\le ")
    if "\\" not in text:
        if leniency.plain_text:
            if SCIENTIFIC.match(text):
                return sympy.Rational(text)
            if PLAIN_FUNCS.search(text):
                expr = _parse_plain(text, evaluate)
                if expr is not None:
                    return _settle(expr)
        elif BARE_FUNC.search(text):
            return None  # strict: "sqrt(2)" or "pi" without a backslash is not LaTeX
    return _parse_latex(text)


def _parse_latex(text: str) -> Any:
    # latex2sympy's own unit removal is off: its list strips "m", "t", "ab", "pi sq m"… from
    # "2m" or "5ab"; units are removed above, under the ``units`` switch, with guards. Its box
    # removal is off too: it would read "x \ne \boxed{4}" as 4 (boxes were found upstream).
    from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, normalize_latex

    config = NormalizationConfig(
        basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="none", equations=False
    )
    try:
        normalized = normalize_latex(text, config=config)
    except Exception:  # normalisation is regex work, but be safe with odd input
        return None
    if not normalized.strip():
        return None
    expr = _latex_to_sympy(normalized)
    if isinstance(expr, sympy.FiniteSet) and not normalized.lstrip().startswith("\\{"):
        return None  # a bare list reached latex2sympy whole: our splitter refused it (unbalanced)
    return _settle(expr)




def _settle(expr: Any) -> Any:
    """latex2sympy's output in the form we compare: ``i`` as the imaginary unit, a scalar
    times a matrix multiplied out, ``\\mathbb{R} \\setminus [2, 3]`` as the union it is."""
    if not isinstance(expr, sympy.Basic):
        return expr
    imaginary = {s: sympy.I for s in expr.free_symbols if isinstance(s, sympy.Symbol) and s.name == "i"}
    if imaginary:
        expr = expr.subs(imaginary)
    if isinstance(expr, sympy.Set) and not isinstance(expr, (sympy.FiniteSet, sympy.Interval)):
        try:
            expr = expr.func(*expr.args)  # latex2sympy builds set operations unevaluated
        except Exception:  # an operation sympy cannot settle: compare it as written
            return expr
    if isinstance(expr, sympy.MatrixBase):
        return sympy.ImmutableMatrix(expr)
    if isinstance(expr, sympy.MatrixExpr) or expr.has(sympy.MatrixBase):
        try:
            settled = expr.doit()
        except Exception:  # an ill-formed product such as a matrix times a set
            return expr
        if isinstance(settled, sympy.MatrixBase):
            return sympy.ImmutableMatrix(settled)
    return expr


def _latex_to_sympy(normalized: str) -> Any:
    from latex2sympy2_extended.latex2sympy2 import latex2sympy
    from math_verify.grader import should_treat_as_complex

    try:
        return latex2sympy(
            normalized,
            is_real=not should_treat_as_complex(normalized),
            convert_degrees=False,
            normalization_config=None,
        )
    except Exception:  # latex2sympy raises bare Exception (and others) for text it does not understand
        return None


# -- size guard -------------------------------------------------------------------------------

_LONG_DIGITS = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")
_LIMITED = re.compile(r"\\(?:sum|prod)\s*_\s*(?:\{[^{}]*\}|\S)\s*\^\s*|\\[dt]?binom\s*|\\Gamma\s*|\\exp\s*")
MAX_EXPONENT = 10**7  # of a number written in digits (its digits are bounded separately)
MAX_OTHER_EXPONENT = 10**4  # of anything else: (1 + 10^{-20})^{10^{20}} would be computed exactly
MAX_FACTORIAL = 20_000  # also the largest argument of Γ, and of exp
MAX_TERMS = 100_000  # upper limit of a sum or product, and the top of a binomial coefficient
_SIZED = re.compile(r"[!^]|\\Gamma|\\binom|\\prod|\\sum")  # what makes a number written without letters huge


def _too_big(text: str) -> str:
    """Why sympy must not evaluate this span (it would run for minutes or exhaust memory), or "".

    sympy evaluates integer arithmetic exactly as it builds an expression, so ``(300!)!`` or
    ``2^{10^{10}}`` never finishes. The size of every power, factorial, Γ, binomial, exp and
    sum or product limit is estimated from the text (digits, sums, products, fractions, powers,
    factorials, roots); one that is too large, or a number written without letters whose size
    the estimate cannot read, is refused. Letters make it symbolic: ``(2n)!`` and ``x^{100}``
    are never evaluated. Work the text does not show (an integral sympy's ``integrate``
    struggles with) is what the worker pool's hard limit is for.
    """
    if _LONG_DIGITS.search(text):
        return f"a number with more than {MAX_DIGITS} digits"
    if _nesting(text) > MAX_NESTING:
        return f"brackets nested more than {MAX_NESTING} deep"
    text = text.replace("**", "^")
    for caret in re.finditer(r"\^", text):
        if _power_too_big(_group_before(text, caret.start()), _exponent_at(text, caret.end())):
            return "a power too large to evaluate"
    for bang in re.finditer(r"!", text):
        if _argument_too_big(_group_before(text, bang.start()), MAX_FACTORIAL):
            return "a factorial too large to evaluate"
    for match in _LIMITED.finditer(text):
        limit = MAX_TERMS if "\\Gamma" not in match.group(0) and "\\exp" not in match.group(0) else MAX_FACTORIAL
        if _argument_too_big(_group_at(text, match.end()), limit):
            return "a sum, product, binomial, gamma or exponential too large to evaluate"
    return ""


def _numeric(text: str) -> bool:
    """Written without variables: nothing but digits, operators and commands remains."""
    return not re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", text))


def _argument_too_big(argument: str, limit: int) -> bool:
    size = _log10_value(argument)
    if size is None:
        return _numeric(argument) and bool(_SIZED.search(argument))
    return size > math.log10(limit)


def _power_too_big(base: str, exponent: str) -> bool:
    size = _log10_value(exponent)
    if size is None:
        return _numeric(exponent) and bool(_SIZED.search(exponent))
    base_size = _log10_value(base)
    if base_size is None:
        limit = 100 if _numeric(base) and _SIZED.search(base) else MAX_OTHER_EXPONENT
        return size > math.log10(limit)
    if re.fullmatch(r"\s*\d+(?:\.\d+)?\s*", base):
        return size > math.log10(MAX_EXPONENT) or 10**size * abs(base_size) > MAX_DIGITS * 10
    return 10**min(size, 300) * abs(base_size) > MAX_DIGITS * 10 or size > math.log10(MAX_OTHER_EXPONENT)


def _nesting(text: str) -> int:
    """How deep brackets nest (the LaTeX parser slows down sharply with depth)."""
    depth = deepest = 0
    for token in re.finditer(r"[([{]|[)\]}]", text):
        depth += 1 if token.group(0) in "([{" else -1
        deepest = max(deepest, depth)
    return deepest


def _group_at(text: str, start: int) -> str:
    """The brace or parenthesis group (or the number) starting at ``start``."""
    while start < len(text) and text[start].isspace():
        start += 1
    if start < len(text) and text[start] in "{(":
        end = _closing(text, start)
        return text[start + 1 : end] if end is not None else text[start + 1 :]
    token = re.match(r"-?\d+(?:\.\d+)?", text[start:])
    return token.group(0) if token else ""


def _exponent_at(text: str, start: int) -> str:
    """The exponent starting at ``start``, with the rest of a brace-less tower: ``2^10^10``."""
    exponent = _group_at(text, start)
    tail = re.match(r"\s*-?\d+(?:\.\d+)?\s*\^", text[start:])
    return text[start:] if tail and not text[start:].lstrip().startswith("{") else exponent


def _closing(text: str, start: int) -> int | None:
    """Index of the bracket that closes the one at ``start``."""
    opening, closing = text[start], {"{": "}", "(": ")", "[": "]"}[text[start]]
    depth = 0
    for i in range(start, len(text)):
        depth += 1 if text[i] == opening else -1 if text[i] == closing else 0
        if depth == 0:
            return i
    return None


def _group_before(text: str, end: int) -> str:
    """The operand that ends just before ``end``: what a ``!`` or ``^`` applies to."""
    head = text[:end].rstrip()
    if head.endswith((")", "}", "]")):
        opening = {")": "(", "}": "{", "]": "["}[head[-1]]
        depth = 0
        for i in range(len(head) - 1, -1, -1):
            depth += 1 if head[i] == head[-1] else -1 if head[i] == opening else 0
            if depth == 0:
                inner = head[i + 1 : -1]
                # "10^{10}!" and "300!!": the factorial applies to the whole power or factorial.
                power = re.search(r"(?:\d+(?:\.\d+)?|\})\s*\^\s*$", head[:i])
                return head[power.start() : -0 or None] if power else inner
        return ""
    token = re.search(r"(?:\d+(?:\.\d+)?\s*\^\s*)?(?:\d+(?:\.\d+)?)!*$", head)
    return token.group(0) if token else ""


def _log10_value(text: str) -> float | None:
    """log10 of the size of a number written with digits, +, −, ×, fractions, powers, factorials,
    Γ and binomials; None for anything else (a variable, a root, π). Signed: ``10^{-20}`` is -20,
    and ``0.5^{-100}`` (2^100) is 30."""
    text = text.strip().lstrip("+-").strip()
    while text and text[0] in "{(" and _closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip().lstrip("+-").strip()
    if not text:
        return None
    terms = _split_top(text, "+-")
    if len(terms) > 1:
        sizes = [_log10_value(t) for t in terms]
        return None if any(v is None for v in sizes) else max(sizes) + math.log10(len(sizes))  # type: ignore[type-var]
    factors = _split_top(re.sub(r"\\cdot|\\times", "*", text), "*")
    if len(factors) > 1:
        sizes = [_log10_value(f) for f in factors]
        return None if any(v is None for v in sizes) else sum(sizes)  # type: ignore[arg-type]
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        value = float(text)
        return math.log10(value) if value > 0 else None
    fraction = re.fullmatch(r"\\[dt]?frac\s*(\{.*)", text, re.DOTALL)
    if fraction:
        top = _group_at(fraction.group(1), 0)
        bottom = _group_at(fraction.group(1), len(top) + 2)
        sizes = (_log10_value(top), _log10_value(bottom))
        return None if None in sizes else sizes[0] - sizes[1]  # type: ignore[operator]
    if text.endswith("!"):
        argument = _log10_value(_group_before(text, len(text) - 1))
        return None if argument is None else _factorial_size(argument)
    gamma = re.fullmatch(r"\\Gamma\s*(\(.*\)|\{.*\})", text, re.DOTALL)
    if gamma:
        argument = _log10_value(gamma.group(1))
        return None if argument is None else _factorial_size(argument)
    root = re.fullmatch(r"\\sqrt\s*(?:\[\s*(\d+)\s*\])?\s*(\{.*\})", text, re.DOTALL)
    if root and _closing(root.group(2), 0) == len(root.group(2)) - 1:
        inner = _log10_value(root.group(2))
        return None if inner is None else inner / int(root.group(1) or 2)
    binomial = re.fullmatch(r"\\[dt]?binom\s*(\{.*)", text, re.DOTALL)
    if binomial:
        top = _log10_value(_group_at(binomial.group(1), 0))
        return None if top is None else 10 ** min(top, 300) * math.log10(2)
    power = re.fullmatch(r"(.+?)\s*\^\s*(.+)", text, re.DOTALL)
    if power:
        base, exponent = _log10_value(power.group(1)), power.group(2).strip()
        exponent = _group_at(exponent, 0) if exponent[:1] in ("{", "(") else exponent
        size = _log10_value(exponent)
        if base is None or size is None:
            return None
        value = 10 ** min(size, 300) * base
        return -value if exponent.strip().startswith("-") else value
    return None


def _factorial_size(log_argument: float) -> float:
    """log10(n!) ≈ n·log10(n) for n = 10^log_argument (an upper bound is all the guard needs)."""
    if log_argument > 300:
        return math.inf
    n = 10**log_argument
    return n * max(log_argument, 1.0)


def _split_top(text: str, operators: str) -> list[str]:
    """Split at the operators that sit outside every bracket (a sign right after ^ or an operator stays)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch in operators and depth == 0 and i > start and text[i - 1] not in "^*+-/e":
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


# -- plain text -------------------------------------------------------------------------------

# Plain-text math is parsed by sympy's parse_expr, which calls eval(): only these names,
# single letters and arithmetic ever reach it, so a completion cannot run code
# ("__import__('os').system(...)") or reach sympy internals.
_PLAIN_NAMES = ("sqrt", "pi", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "abs")
_PLAIN_ALLOWED = re.compile(r"^[0-9A-Za-z\s+\-*/^().,=]*$")
_LONE_DOT = re.compile(r"(?<!\d)\.(?!\d)")


def _parse_plain(text: str, evaluate: bool = True) -> Any:
    from math_verify.grader import should_treat_as_complex
    from sympy.parsing.sympy_parser import convert_xor, implicit_multiplication_application, standard_transformations

    if not _PLAIN_ALLOWED.match(text) or _LONE_DOT.search(text) or "=" in text:
        return None
    # Any other run of letters is a product of one-letter symbols ("xy"), never a Python name.
    safe = re.sub(r"[A-Za-z]+", lambda m: m.group(0) if m.group(0) in _PLAIN_NAMES else " ".join(m.group(0)), text)
    safe = re.sub(r"(?<=[A-Za-z])(?=\d)", " ", safe)  # "sqrt2" is sqrt(2), not the name sqrt2
    # Same assumptions as latex2sympy gives its symbols, or x from "x^2" and x from "x \\cdot x" differ.
    real = not should_treat_as_complex(text)
    names: dict[str, Any] = {
        letter: sympy.Symbol(letter, real=True) if real else sympy.Symbol(letter)
        for letter in string.ascii_letters
        if letter != "e"
    }
    names.update(
        pi=sympy.pi, e=sympy.E, sqrt=sympy.sqrt, ln=sympy.log, log=sympy.log, exp=sympy.exp, abs=sympy.Abs,
        sin=sympy.sin, cos=sympy.cos, tan=sympy.tan, cot=sympy.cot, sec=sympy.sec, csc=sympy.csc,
    )
    transformations = (*standard_transformations, implicit_multiplication_application, convert_xor)
    from sympy.parsing.sympy_parser import parse_expr

    try:
        return parse_expr(safe, local_dict=dict(names), transformations=transformations, evaluate=evaluate)
    except Exception:  # sympy's parser raises many types (SyntaxError, TokenError, TypeError)
        return None
