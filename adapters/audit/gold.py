"""What a gold answer is, read with plain string work, and values that are certainly not it.

The families need a *wrong* value they can prove wrong without a grader: for a number, another
number; for an expression, the expression plus one (``x^2+1`` is not ``x^2``); for a letter,
another letter. A gold this module cannot read with certainty (prose, an equation, something
containing infinity) gets no wrong value, and the families that need one skip the row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rewardsmith.verifiers.math.extract import extract_gold

GoldKind = str  # number, letter, tuple, interval, set, list, expression, other

_LETTER = re.compile(r"^\s*(?:\\text\{\s*)?\(?\s*([A-E])\s*\)?\s*\}?\s*$")
_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")
_FRAC = re.compile(r"^([-+]?)\\[dt]?frac\s*\{\s*(-?\d+)\s*\}\s*\{\s*(\d+)\s*\}$")
_SLASH = re.compile(r"^([-+]?\d+)\s*/\s*(\d+)$")
_DRESS = re.compile(r"\\[,;!: ]|\\left|\\right|\$|\\\$|\\%|%")
NUMBERS_IN_TEXT = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
# Golds whose "plus one" is not certainly another value, or not an expression at all.
_NOT_EXPRESSION = re.compile(r"\\infty|\\pm|\\mp|=|<|>|\\le|\\ge|\\lt|\\gt|\\neq|\\text|\\mathrm|\\in\b|\\cup|"
                             r"\\cap|\\emptyset|\\varnothing|\\begin|\\\\|\\{|;")


@dataclass(frozen=True)
class Gold:
    """The gold as a reader sees it: its text, its kind, and its pieces."""

    text: str  # the answer span (``#### 18`` gives ``18``, a box is opened)
    kind: GoldKind
    value: Fraction | None = None  # a plain number's exact value
    items: tuple[str, ...] = ()  # a tuple's, interval's, set's or list's entries, in order
    letter: str | None = None

    @classmethod
    def read(cls, raw: object) -> Gold | None:
        if raw is None:
            return None
        if isinstance(raw, Mapping | list | tuple):  # a QA row's aliases (SQuAD, TriviaQA, a list): the first
            from rewardsmith.verifiers.qa.golds import read_aliases

            aliases = read_aliases(raw)
            return None if isinstance(aliases, str) else cls.read(aliases[0])
        text = extract_gold(str(raw)).strip()
        if not text:
            return None
        letter = _LETTER.match(text)
        if letter:
            return cls(text, "letter", letter=letter.group(1))
        value = number_value(text)
        if value is not None:
            return cls(text, "number", value=value)
        bare = text.replace("\\left", "").replace("\\right", "").strip()
        if bare.startswith("\\{") and bare.endswith("\\}"):
            return cls(text, "set", items=tuple(split_top(bare[2:-2])))
        if bare[:1] in "([" and bare[-1:] in ")]":
            items = tuple(split_top(bare[1:-1]))
            if len(items) >= 2:
                kind = "tuple" if bare[0] == "(" and bare[-1] == ")" and "\\infty" not in bare else "interval"
                return cls(text, kind, items=items)
        items = tuple(split_top(text))
        if len(items) >= 2:
            return cls(text, "list", items=items)
        if not _NOT_EXPRESSION.search(text) and re.search(r"[\d\\a-zA-Z]", text):
            return cls(text, "expression")
        return cls(text, "other")

    def wrong(self, k: int = 0) -> str | None:
        """The ``k``-th value that is certainly not the gold (None when none can be made)."""
        if self.kind == "letter" and self.letter:
            others = [c for c in "ABCDE" if c != self.letter]
            return others[k % len(others)]
        if self.kind == "number" and self.value is not None:
            shift = (1, 2, 7, -1)[k % 4]
            return format_number(self.value + shift, like=self.text)
        if self.kind == "expression":
            return f"{self.text} + {k + 1}"
        return None

    def as_text(self) -> Gold:
        """The gold of a short-answer (``qa``) row: a number stays a number, anything else is text, not
        a formula ("Washington, D.C." is no list to reorder, "Paris" no expression to add 1 to)."""
        return self if self.kind in ("number", "letter") else Gold(self.text, "other")

    @property
    def exact(self) -> bool:
        """A value written exactly (an integer or a fraction), not a decimal that may be rounded."""
        return self.value is not None and "." not in self.text


def choice_gold(options: Any, answer: Any) -> Gold | None:
    """The label of the option a multiple-choice row's gold names (an index, a label or an option's
    text: ``choice``'s own reading of the row), as a gold; None when the row has no readable pair."""
    from rewardsmith.verifiers.choice.row import read_gold, read_options

    read = read_options(options)
    index = None if isinstance(read, str) else read_gold(answer, read)
    if isinstance(read, str) or not isinstance(index, int):
        return None
    return Gold.read(read.labels[index])


def number_value(text: str) -> Fraction | None:
    """``18``, ``-2.5``, ``1,000``, ``\\frac{3}{4}``, ``3/4``, ``\\$18`` as an exact value; else None."""
    bare = _DRESS.sub("", text).strip()
    if _NUMBER.match(bare):
        return Fraction(bare.replace(",", ""))
    frac = _FRAC.match(bare) or _SLASH.match(bare)
    if frac:
        groups = frac.groups()
        sign, numerator, denominator = (groups if len(groups) == 3 else ("", *groups))
        if int(denominator) == 0:
            return None
        value = Fraction(int(numerator), int(denominator))
        return -value if sign == "-" else value
    return None


def format_number(value: Fraction, like: str = "") -> str:
    """``value`` written as the gold writes numbers: an integer, a decimal, or ``\\frac{p}{q}``."""
    if value.denominator == 1:
        return str(value.numerator)
    decimals = re.search(r"\.(\d+)", like)
    if decimals and "frac" not in like and "/" not in like:
        places = len(decimals.group(1))
        return f"{float(value):.{places}f}"
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def split_top(text: str) -> list[str]:
    """``text`` split at the commas outside any braces or brackets, each piece stripped."""
    pieces, depth, start = [], 0, 0
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            if text[i + 1] in "{}":
                depth += 1 if text[i + 1] == "{" else -1
            i += 2
            continue
        if char in "{([":
            depth += 1
        elif char in "})]":
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(text[start:i].strip())
            start = i + 1
        i += 1
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


def prompt_numbers(prompt: str) -> list[str]:
    """The numbers a prompt states, in order, each once."""
    return list(dict.fromkeys(m.group(0) for m in NUMBERS_IN_TEXT.finditer(prompt)))
