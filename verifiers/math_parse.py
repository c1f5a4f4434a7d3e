"""Turn an answer span into something gradeable: a sympy object, a choice letter, or text.

The span is cleaned according to the leniency switches (units, degree signs, percent,
mixed numbers, plain-text math) and then parsed whole, with latex2sympy (the parser
behind Math-Verify) or, for plain text such as ``sqrt(2)/2``, with sympy's own
parser. A span that does not parse whole stays unparsed: we never fall back to a
number found inside it, which is how plain Math-Verify turns ``5\\weird{q}`` into 5.

Where latex2sympy's reading would grade wrong answers right, the span is read here
first: words (``east``) stay text rather than a product of letters that equals
``seat``; a numeral keeps its base (``52_8``); thousands separators (``10\\,000``) are
not a product; a comma list stays a list (order and repeats kept). sympy's plain-text
parser evaluates Python, so only arithmetic, single letters and known function names
ever reach it.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sympy

from rewardsmith.verifiers.math_leniency import Leniency

CHOICE = re.compile(
    r"^(?P<wrap>\\(?:text|textbf|mathrm|mathbf)\s*\{)?\s*(?P<word>(?:option|choice)\s+)?(?P<open>\()?\s*"
    r"(?P<letter>[A-Ea-e])\s*\)?\.?\s*\}?$",
    re.IGNORECASE,
)
DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree|\s*\bdegrees?\b", re.IGNORECASE)
PERCENT = re.compile(r"\\?%\s*$|\s*\bpercent\s*$", re.IGNORECASE)
# LaTeX spacing that may sit between a number and its unit: "10\ \text{cm}", "10\,\mathrm{m}".
_GAP = r"(?P<gap>(?:\s|\\[,;:! ]|~)*)"
TEXT_UNITS = re.compile(
    _GAP + r"\\(?:text|mbox|mathrm|textrm|textnormal|rm)\s*\{\s*(?P<word>[A-Za-z][A-Za-z .^/\d-]*)\}"
    r"(?:\^\{?\d\}?)?\s*$"
)
WORD_UNITS = re.compile(
    r"(?<=[\d}])" + _GAP + r"(?:(?:square|sq\.?|cubic)\s+)?(?P<word>[a-zA-Z]{2,})\.?(?:\^\{?\d\}?)?"
    r"(?:\s+(?:per|an?|each)\s+[a-zA-Z]+)?\s*$"
)
MIXED_NUMBER = re.compile(r"(?<![\d.}])(\d+)\s*\\[dt]?frac")
# A plain-text function name, i.e. one without the backslash LaTeX would need ("3pi/4", "2sqrt3").
BARE_FUNC = re.compile(r"(?<![\\A-Za-z])(?:sqrt|pi|sin|cos|tan|cot|sec|csc|log|ln|exp|abs)(?![A-Za-z])")
PLAIN_FUNCS = re.compile(BARE_FUNC.pattern + r"|\*\*|\^")
SCIENTIFIC = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)[eE][+-]?\d+$")
# Thousands separators as written in LaTeX and prose: 1,000  1{,}000  10,\!000  10\,000  10 000.
THOUSANDS = re.compile(r"^-?\d{1,3}(?:(?:,\\!|\{,\}|\\,|\\!|\\ |~|,| )\d{3})+(?:\.\d+)?$")
_THOUSANDS_SEP = re.compile(r",\\!|\{,\}|\\,|\\!|\\ |~|,| ")
# A numeral with its base: 52_8, 4210_{5}, 1A_{16}.
BASE_NUMERAL = re.compile(r"^([0-9A-Za-z]+)_\{?(\d{1,2})\}?$")
# A span of plain words ("east", "no solution"): text, not a product of single-letter symbols.
WORDS = re.compile(r"^[A-Za-z]+(?:[\s-]+[A-Za-z]+)*$")

# Names that are math, not units or prose: "2 pi" is 2π and "arcsin x" is not a word answer.
# ("sec" and "min" are left out: after a number they are seconds and minutes.)
_MATH_WORDS = {
    "pi", "sqrt", "sin", "cos", "tan", "cot", "csc", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
    "log", "ln", "exp", "abs", "inf", "infty", "infinity", "mod", "gcd", "lcm", "det", "i", "e",
}
# Words that follow a number without being its unit: math names and glue ("3 and 4", "x equals").
_NOT_UNITS = _MATH_WORDS | {"and", "or", "to", "equals", "is", "are", "the", "of"}
# Units that may be written glued to the number ("10cm", "5kg") or that have only two letters.
# Any other word needs a space before it and three letters ("5 apples"): "5xy" is an expression.
_UNIT_ABBREVIATIONS = {
    "mm", "cm", "dm", "km", "in", "ft", "yd", "mi", "mg", "kg", "lb", "lbs", "oz", "ml", "cl", "dl", "hr", "hrs",
    "min", "mins", "sec", "secs", "mph", "kph", "kmh", "cc", "sq", "usd", "am", "pm", "rs", "gal", "ha", "kw",
    "kwh", "mb", "gb", "kb", "hz", "khz", "mhz", "nm", "cents",
}


@dataclass(frozen=True)
class Parsed:
    """A parsed answer. ``expr`` is a sympy object, a choice letter, or None (text, unparsed)."""

    text: str  # the cleaned span, for string comparison and reporting
    expr: Any = None
    kind: str = "unparsed"  # sympy, choice, text (words such as "east"), unparsed
    percent: bool = False
    degrees: bool = False
    units: str = ""
    base: int | None = None  # the base of a numeral written with one ("52_8")

    @property
    def ok(self) -> bool:
        return self.kind != "unparsed"


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
    text = span.strip().strip("$").strip()
    if leniency.choices:
        letter = choice_letter(text)
        if letter:
            return Parsed(text=text, expr=letter, kind="choice")
    text, percent, degrees, units = _strip_decorations(text, leniency)
    if not text:
        return Parsed(text=span.strip())
    if THOUSANDS.match(text):
        text = _THOUSANDS_SEP.sub("", text)
    numeral = BASE_NUMERAL.match(text)
    if numeral and (numeral.group(1).isdigit() or _valid_numeral(numeral.group(1), int(numeral.group(2)))):
        # latex2sympy drops the subscript, which makes 52_8 equal 52_9; keep the digits and the base.
        digits, base = numeral.group(1), int(numeral.group(2))
        if not _valid_numeral(digits, base):
            return Parsed(text=text)  # "40_0", "19_8": not a numeral in any base
        if digits.isdigit():
            return Parsed(text=text, expr=sympy.Integer(digits), kind="sympy", base=base)
        return Parsed(text=digits, kind="text", base=base)
    if WORDS.match(text) and _is_prose(text):
        return Parsed(text=text, kind="text", percent=percent, degrees=degrees, units=units)
    expr = _parse_math(text, leniency)
    if expr is None:
        return Parsed(text=text, percent=percent, degrees=degrees, units=units)
    return Parsed(text=text, expr=expr, kind="sympy", percent=percent, degrees=degrees, units=units)


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
    """Words such as ``east`` or ``no solution`` are text: as a product of symbols ``east`` would equal ``seat``."""
    words = re.split(r"[\s-]+", text.lower())
    return any(len(w) >= 4 for w in words) and not any(w in _NOT_UNITS for w in words)


def _strip_decorations(text: str, leniency: Leniency) -> tuple[str, bool, bool, str]:
    """Remove what the switches allow: %, degree signs, units."""
    percent = degrees = False
    units = ""
    stripped = PERCENT.sub("", text)
    if stripped != text:
        percent, text = True, stripped.strip()
    stripped = DEGREES.sub("", text)
    if stripped != text:
        degrees, text = True, stripped.strip()
    if leniency.units:
        text = _unwrap_text_number(text)
        for pattern in (TEXT_UNITS, WORD_UNITS):
            match = pattern.search(text)
            if match and match.start() > 0 and _is_unit(match, glued_ok=pattern is TEXT_UNITS):
                units = (units + " " + match.group(0).strip()).strip()
                text = text[: match.start()].strip()
    return text, percent, degrees, units


def _unwrap_text_number(text: str) -> str:
    r"""``\text{4 inches}`` is the number 4 with a unit, not one long symbol."""
    match = re.fullmatch(r"\\(?:text|mbox|textrm|mathrm)\s*\{\s*(-?\d[^{}]*)\}", text)
    return match.group(1).strip() if match else text


def _is_unit(match: re.Match[str], glued_ok: bool) -> bool:
    word = match.group("word").strip().lower()
    if word in _NOT_UNITS or word.split(" ", 1)[0] in _NOT_UNITS:
        return False
    if glued_ok or word in _UNIT_ABBREVIATIONS:
        return True
    # A word glued to the number ("5xy") or of two letters ("5 ab") is more likely algebra.
    return bool(match.group("gap")) and len(word) >= 3


def _parse_math(text: str, leniency: Leniency) -> Any:
    if not leniency.mixed_numbers:
        text = MIXED_NUMBER.sub(r"\1\\cdot\\frac", text)
    if "\\" not in text:
        if leniency.plain_text:
            if SCIENTIFIC.match(text):
                return sympy.Rational(text)
            if PLAIN_FUNCS.search(text):
                expr = _parse_plain(text)
                if expr is not None:
                    return expr
        elif BARE_FUNC.search(text):
            return None  # strict: "sqrt(2)" or "pi" without a backslash is not LaTeX
    return _parse_latex(text)


def _parse_latex(text: str) -> Any:
    # latex2sympy's own unit removal is off: its list strips "m", "t", "ab", "pi sq m"… from
    # "2m" or "5ab"; units are removed above, under the ``units`` switch, with guards.
    from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, normalize_latex

    config = NormalizationConfig(
        basic_latex=True, units=False, malformed_operators=True, nits=True, boxed="all", equations=False
    )
    try:
        normalized = normalize_latex(text, config=config)
    except Exception:  # normalisation is regex work, but be safe with odd input
        return None
    if not normalized.strip():
        return None
    expr = _latex_to_sympy(normalized)
    if isinstance(expr, sympy.FiniteSet):
        # "1, 2" parses as a set, which forgets order and repeats; keep a written list a list.
        items = _top_level_split(normalized)
        if len(items) > 1:
            parts = [_latex_to_sympy(item) for item in items]
            if all(part is not None for part in parts):
                return sympy.Tuple(*parts)
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
    except Exception:  # latex2sympy raises bare Exception for text it does not understand
        return None


def _top_level_split(text: str) -> list[str]:
    """Split at commas outside any bracket: ``(1,2],[3,4)`` is two items, ``\\{1,2\\}`` one."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [item for item in items if item] if depth == 0 else [text]


# Plain-text math is parsed by sympy's parse_expr, which calls eval(): only these names,
# single letters and arithmetic ever reach it, so a completion cannot run code
# ("__import__('os').system(...)") or reach sympy internals.
_PLAIN_NAMES = ("sqrt", "pi", "sin", "cos", "tan", "cot", "sec", "csc", "log", "ln", "exp", "abs")
_PLAIN_ALLOWED = re.compile(r"^[0-9A-Za-z\s+\-*/^().,=]*$")
_LONE_DOT = re.compile(r"(?<!\d)\.(?!\d)")


def _parse_plain(text: str) -> Any:
    from math_verify.grader import should_treat_as_complex
    from sympy.parsing.sympy_parser import convert_xor, implicit_multiplication_application, standard_transformations

    if not _PLAIN_ALLOWED.match(text) or _LONE_DOT.search(text):
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
    if "=" in safe:
        lhs, _, rhs = safe.partition("=")
        if "=" in rhs:
            return None
        left, right = _parse_plain_expr(lhs, names, transformations), _parse_plain_expr(rhs, names, transformations)
        return None if left is None or right is None else sympy.Eq(left, right, evaluate=False)
    return _parse_plain_expr(safe, names, transformations)


def _parse_plain_expr(text: str, names: dict[str, Any], transformations: tuple[Any, ...]) -> Any:
    from sympy.parsing.sympy_parser import parse_expr

    try:
        return parse_expr(text, local_dict=dict(names), transformations=transformations, evaluate=True)
    except Exception:  # sympy's parser raises many types (SyntaxError, TokenError, TypeError)
        return None
