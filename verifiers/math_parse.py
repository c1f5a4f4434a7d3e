"""Turn an answer span into something gradeable: a sympy object, a choice letter, or text.

The span is cleaned according to the leniency switches (units, degree signs, percent,
mixed numbers, plain-text math) and then parsed whole, with latex2sympy (the parser
behind Math-Verify) or, for plain text such as ``sqrt(2)/2``, with sympy's own
parser. A span that does not parse whole stays unparsed: we never fall back to a
number found inside it, which is how plain Math-Verify turns ``5\\weird{q}`` into 5.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rewardsmith.verifiers.math_leniency import Leniency

CHOICE = re.compile(
    r"^(?:\\text\{)?\s*(?:option\s+|choice\s+)?\(?\s*([A-Ea-e])\s*\)?\.?\s*\}?$", re.IGNORECASE
)
DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree|\s*\bdegrees?\b", re.IGNORECASE)
PERCENT = re.compile(r"\\?%\s*$|\s*\bpercent\s*$", re.IGNORECASE)
TEXT_UNITS = re.compile(r"\s*\\(?:text|mbox|mathrm|textrm)\s*\{\s*[A-Za-z][A-Za-z .^/\d-]*\}(?:\^\{?\d\}?)?\s*$")
WORD_UNITS = re.compile(
    r"(?<=[\d}])\s*(?:square\s+|cubic\s+)?(?:[a-zA-Z]{2,}\.?)(?:\s+(?:per|an?|each)\s+[a-zA-Z]+)?\s*$"
)
MIXED_NUMBER = re.compile(r"(?<![\d.}])(\d+)\s*\\[dt]?frac")
PLAIN_FUNCS = re.compile(r"\b(?:sqrt|pi|sin|cos|tan|log|ln|exp|abs)\b|\*\*|\^")
CURRENCY = re.compile(r"^\\?\$\s*|\s*(?:USD|dollars?)\s*$")
THOUSANDS = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")

# Words that end a span but are not units: "3 and 4" or "x equals" must not be eaten.
_NOT_UNITS = {"and", "or", "to", "equals", "is", "are", "the", "of"}


@dataclass(frozen=True)
class Parsed:
    """A parsed answer. ``expr`` is a sympy object, a choice letter, or None (unparsed)."""

    text: str  # the cleaned span, for string comparison and reporting
    expr: Any = None
    kind: str = "unparsed"  # sympy, choice, unparsed
    percent: bool = False
    degrees: bool = False
    units: str = ""

    @property
    def ok(self) -> bool:
        return self.kind != "unparsed"


def normalize_text(span: str) -> str:
    """A whitespace- and markup-insensitive form for string comparison of unparsed answers."""
    text = re.sub(r"\\(?:left|right|displaystyle|!|,|;|:|quad|qquad)", "", span)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = re.sub(r"\\text\{([^{}]*)\}", r"\1", text)
    return re.sub(r"\s+", "", text).strip(".").lower()


def parse_answer(span: str, leniency: Leniency) -> Parsed:
    """Parse an answer span under the given leniency switches."""
    return _parse_cached(span, leniency)


@lru_cache(maxsize=65536)
def _parse_cached(span: str, leniency: Leniency) -> Parsed:
    text = span.strip().strip("$").strip()
    if leniency.choices:
        choice = CHOICE.match(text)
        if choice:
            return Parsed(text=text, expr=choice.group(1).upper(), kind="choice")
    text, percent, degrees, units = _strip_decorations(text, leniency)
    if not text:
        return Parsed(text=span.strip())
    if THOUSANDS.match(text):
        text = text.replace(",", "")
    expr = _parse_math(text, leniency)
    if expr is None:
        return Parsed(text=text, percent=percent, degrees=degrees, units=units)
    return Parsed(text=text, expr=expr, kind="sympy", percent=percent, degrees=degrees, units=units)


def _strip_decorations(text: str, leniency: Leniency) -> tuple[str, bool, bool, str]:
    """Remove what the switches allow: %, degree signs, units, currency."""
    percent = degrees = False
    units = ""
    stripped = PERCENT.sub("", text)
    if stripped != text:
        percent, text = True, stripped.strip()
    stripped = DEGREES.sub("", text)
    if stripped != text:
        degrees, text = True, stripped.strip()
    if leniency.units:
        for pattern in (TEXT_UNITS, WORD_UNITS, CURRENCY):
            match = pattern.search(text)
            if match and match.start() > 0 and match.group(0).strip().lower().strip(".") not in _NOT_UNITS:
                units = (units + " " + match.group(0).strip()).strip()
                text = (text[: match.start()] + text[match.end():]).strip()
    return text, percent, degrees, units


def _parse_math(text: str, leniency: Leniency) -> Any:
    if not leniency.mixed_numbers:
        text = MIXED_NUMBER.sub(r"\1\\cdot\\frac", text)
    if leniency.plain_text and "\\" not in text and PLAIN_FUNCS.search(text):
        expr = _parse_plain(text)
        if expr is not None:
            return expr
    return _parse_latex(text, units=leniency.units)


def _parse_latex(text: str, units: bool) -> Any:
    from latex2sympy2_extended.latex2sympy2 import NormalizationConfig, latex2sympy, normalize_latex
    from math_verify.grader import should_treat_as_complex

    config = NormalizationConfig(
        basic_latex=True, units=units, malformed_operators=True, nits=True, boxed="all", equations=False
    )
    try:
        normalized = normalize_latex(text, config=config)
        if not normalized.strip():
            return None
        return latex2sympy(
            normalized,
            is_real=not should_treat_as_complex(normalized),
            convert_degrees=False,
            normalization_config=None,
        )
    except Exception:  # latex2sympy raises bare Exception for text it does not understand
        return None


def _parse_plain(text: str) -> Any:
    import sympy
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    names = {"pi": sympy.pi, "e": sympy.E, "sqrt": sympy.sqrt, "ln": sympy.log, "abs": sympy.Abs}
    transformations = standard_transformations + (implicit_multiplication_application, convert_xor)
    if "=" in text:
        lhs, _, rhs = text.partition("=")
        left, right = _parse_plain(lhs), _parse_plain(rhs)
        return None if left is None or right is None else sympy.Eq(left, right, evaluate=False)
    try:
        return parse_expr(text, local_dict=names, transformations=transformations, evaluate=True)
    except Exception:  # sympy's parser raises many types (SyntaxError, TokenError, TypeError)
        return None
