"""What the question asks for, read from the prompt: a unit, a percentage, and the numbers it gives.

A bare gold answer of 4 to "how many minutes…?" means 4 minutes, so ``4 seconds`` is wrong
even though the gold carries no unit; a gold of 9 means 9, not 9%, unless the question asks
for a percentage. The numbers the prompt gives are what an echoing completion repeats, so the
(opt-in) last-number fallback never takes one of them.

Pure string work on the prompt, done once per row in the calling process; the result is small
and hashable, so it travels to the grading workers with the pair it belongs to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from rewardsmith.verifiers.math.units import UNIT_NAMES, unit_key

_UNIT_FORMS = sorted((form for form in UNIT_NAMES if len(form) >= 3), key=len, reverse=True)
# "how many minutes", "how much money, in dollars", "in centimeters?", "number of hours", "express … in kg".
_ASKED_UNIT = re.compile(
    r"\b(?:how\s+many|how\s+much|in|in\s+terms\s+of|number\s+of|measured\s+in)\s+(?:square\s+|cubic\s+|sq\.?\s+)?("
    + "|".join(re.escape(form) for form in _UNIT_FORMS) + r"|cm|mm|km|kg|mg|ml)\b",
    re.IGNORECASE,
)
_ASKED_PERCENT = re.compile(
    r"\b(?:what|which|how\s+many)\s+(?:\w+\s+){0,2}percent(?:age)?\b|\b(?:as|in|to\s+the\s+nearest)\s+(?:a\s+)?"
    r"(?:whole\s+)?(?:percent(?:age)?|%)|\bpercent(?:age)?\s+(?:increase|decrease|change|of\s+the)\b[^.?]*\?"
    r"|\bpercent(?:age)?\b[^.]*\?",
    re.IGNORECASE,
)
# "Express your answer in base 5", "in base-10": the base the answer is asked in.
_ASKED_BASE = re.compile(r"\bin\s+base[\s-]*\$?\s*(\d{1,2})\b", re.IGNORECASE)
# "the ordered pair $(a, b)$", "in the form (x, y, z)", "Enter your answer as $(p,q)$".
_TUPLE_NAMES = re.compile(
    r"(?:ordered\s+(?:pair|triple|tuple|quadruple)s?|in\s+the\s+form|answer\s+as|as\s+an?\s+ordered\s+\w+)"
    r"[^(\n]{0,12}\(\s*((?:[A-Za-z]\s*,\s*){1,5}[A-Za-z])\s*(?:\\right\s*)?\)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z]{2,}")
_WORDS_TAIL = 3000  # the prompt's last characters whose words a label may use (the problem, not a long preamble)
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w.]\d)")
_MAX_NUMBERS = 64


@dataclass(frozen=True)
class Asked:
    """What a prompt asks for. ``unit``: a :func:`~rewardsmith.verifiers.math.units.unit_key` or None;
    ``percent``: the question asks for a percentage; ``numbers``: the values the prompt gives; ``names``:
    the variables of a tuple the question asks for, in its order; ``base``: the base the answer is asked in;
    ``words``: the words of the prompt's end (the problem), which a ``\\text{…}`` name on the answer must
    come from."""

    unit: str | None = None
    percent: bool = False
    numbers: frozenset[Fraction] = frozenset()
    names: tuple[str, ...] = ()  # the variables of an asked tuple: "the ordered pair (a, b)" -> ("a", "b")
    base: int | None = None  # the base the answer is asked in: "express your answer in base 5" -> 5
    words: frozenset[str] = frozenset()  # the prompt's words, lower-cased: what a label on the answer may name


NOTHING_ASKED = Asked()


@lru_cache(maxsize=4096)  # a GRPO group shares one prompt
def read_prompt(prompt: str) -> Asked:
    """Read a prompt once; an empty prompt asks nothing in particular."""
    if not prompt.strip():
        return NOTHING_ASKED
    question = _question(prompt)
    units = _ASKED_UNIT.findall(question)
    numbers = frozenset(value for match in _NUMBER.finditer(prompt[-20_000:])
                        if (value := number_value(match.group(0))) is not None)
    names = _TUPLE_NAMES.findall(question)
    bases = _ASKED_BASE.findall(question)
    return Asked(unit=unit_key(units[-1]) if units else None, percent=bool(_ASKED_PERCENT.search(question)),
                 numbers=frozenset(sorted(numbers)[:_MAX_NUMBERS]) if len(numbers) > _MAX_NUMBERS else numbers,
                 names=tuple(n.strip() for n in names[-1].split(",")) if names else (),
                 base=int(bases[-1]) if bases else None,
                 words=frozenset(word.lower() for word in _WORD.findall(prompt[-_WORDS_TAIL:])))


def number_value(written: str) -> Fraction | None:
    """``1,234`` → 1234, ``-0.5`` → -1/2; None for anything that is not a plain number."""
    try:
        return Fraction(written.replace(",", "").strip())
    except (ValueError, ZeroDivisionError):
        return None


def _question(prompt: str) -> str:
    """The part of the prompt that asks: from its last question on (instructions after it included), else its
    last 300 characters."""
    tail = prompt[-3000:]
    marks = [m.end() for m in re.finditer(r"\?", tail)]
    if not marks:
        return tail[-300:]
    end = marks[-1]
    start = max(tail.rfind(". ", 0, end), tail.rfind("\n", 0, end), tail.rfind("? ", 0, end - 1))
    return tail[start + 1 :]
