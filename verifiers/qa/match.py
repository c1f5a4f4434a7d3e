"""How a short answer is compared with a gold alias: SQuAD v1.1's normalisation, with numbers read as numbers.

SQuAD's normalisation drops every punctuation character, so on its own ``2.5`` equals ``25`` and ``-7``
equals ``7``. Here each number written in the text is first read as an exact decimal and set apart
from the words; then the words are normalised as SQuAD does, and two texts are equal only when the
words are equal *and* the numbers are, in order. So:

* ``2.5`` ≠ ``25``, ``-7`` ≠ ``7``, ``1.000`` ≠ ``1000`` (a point is a decimal point);
* ``2.50`` = ``2.5``, ``+7`` = ``7``, ``1,000`` = ``1000`` (a comma groups thousands only when every group
  after the first has three digits and the first has one to three: ``1,5`` and ``10,00`` are no number);
* a sign is a sign only at the start of a token (``(-7)``, ``−7``, ``–7``); ``1-7`` and ``COVID-19`` are
  words and numbers as SQuAD splits them; a number with a leading zero (``007``), one starting with a
  point (``.5``) or in a dotted run (``1.2.3``) is not read as a number: it stays a word;
* a unit or symbol stays what SQuAD makes of it: ``7 km`` ≠ ``7``; ``$5`` = ``5`` and ``7%`` = ``7`` as before;
  number words are words (``seven`` ≠ ``7``).

Both sides are read through :func:`~rewardsmith.verifiers.reading.fold` first, so a look-alike letter
or digit from another script, a fullwidth digit and a Unicode minus (``−``) are what they look like.
The gold decides: an alias that is one number is matched only by that number (under F1 too, where
``7 km`` would otherwise earn partial credit against ``7``).

:mod:`~rewardsmith.verifiers.qa.normalize` keeps SQuAD's own functions, which ``benchmarks/qa_parity.py``
checks against the official script; this module is what the ``qa`` verifier scores with.
"""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal
from functools import lru_cache

from rewardsmith.verifiers.json_value import exact_number
from rewardsmith.verifiers.qa.normalize import normalize
from rewardsmith.verifiers.reading import fold

# A number: an optional sign at the start of a token, then an integer without a leading zero (digits, or
# 1-3 digits and groups of three after commas), an optional decimal part. Not inside a word, not next to
# another digit, point or comma that would make it part of a longer dotted or grouped run.
_NUMBER = re.compile(
    r"(?<![\w.,+-])([-+])?"
    r"((?:0|[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d*)(?:\.\d+)?)"
    r"(?![\w]|[.,]\d)"
)
_MARK = "\x00"  # stands for a number among the words: SQuAD's normalisation keeps it, and it is never typed


def _numbers(text: str) -> tuple[str, list[str]]:
    """``text`` with every number replaced by a mark, and the numbers' canonical forms in order."""
    found: list[str] = []

    def mark(match: re.Match[str]) -> str:
        value = Decimal(match.group(2).replace(",", ""))
        if match.group(1) == "-":
            value = value.copy_negate()  # exact: unary minus rounds to the process's context
        found.append(_canonical(value))
        return _MARK

    return _NUMBER.sub(mark, text), found


def _canonical(value: Decimal) -> str:
    """One spelling per value, set apart from any digits left among the words (``#2.5#``)."""
    return "#0#" if value == 0 else f"#{format(exact_number(value), 'f')}#"


@lru_cache(maxsize=4096)
def _read(text: str) -> tuple[str, int]:
    """The compared key of ``text`` and how many numbers it holds (cached: a row's aliases are read per statement)."""
    folded = fold(text)
    if not any(c.isdigit() for c in folded):
        return normalize(folded), 0
    marked, numbers = _numbers(folded)
    words = normalize(marked)
    for number in numbers:
        words = words.replace(_MARK, number, 1)
    return words, len(numbers)


def key(text: str) -> str:
    """``text`` as it is compared: folded, numbers read as exact decimals, words normalised as SQuAD does."""
    return _read(text)[0]


def is_number(text: str) -> bool:
    """Whether ``text`` is one number and nothing else once read (``1,000``, ``-2.5``, ``$5``)."""
    words, count = _read(text)
    return count == 1 and words.startswith("#") and words.endswith("#") and words.count("#") == 2


# Marks SQuAD's normalisation drops that leave a short answer meaning what it meant: sentence punctuation,
# brackets, quotes, a dash, a currency or percent sign (kept from SQuAD: $5 = 5, 7% = 7). Any other mark in a
# prediction and not in the gold (<8, ~8, !France, 2^5) changes what it says, so it matches nothing.
_NEUTRAL_MARKS = frozenset(".,;:'\"()[]-–—$%+")


def _foreign_marks(prediction: str, gold: str) -> bool:
    """Whether ``prediction`` holds a mark that is neither neutral nor in ``gold``."""
    seen = {c for c in fold(gold) if not c.isalnum() and not c.isspace()}
    allowed = seen | _NEUTRAL_MARKS
    return any(not c.isalnum() and not c.isspace() and c not in allowed for c in fold(prediction))


_OPENING = "([{\"'“‘«$"
_CLOSING = ")]}\"'”’».,;:!?%"


_EDGES = re.compile(r"((?:[^\w]|_)*).*?((?:[^\w]|_)*)", re.DOTALL)  # a word's leading and trailing marks


def _glued(text: str) -> list[tuple[str, str]]:
    """The marks glued to each word's start and end once its punctuation is set aside (``O+`` has ``+``,
    ``C++`` has ``++``, ``C#`` has ``#``, ``7+`` has ``+``): part of the word, so both sides must carry the same."""
    found = []
    for token in fold(text).split():
        core = token.lstrip(_OPENING).rstrip(_CLOSING)
        if not any(c.isalnum() for c in core):
            continue
        if is_number(core.lstrip("+-−")):
            core = core.lstrip("+-−")  # a number's sign is its value, compared as a number
        head, tail = _EDGES.fullmatch(core).groups()
        if head or tail:
            found.append((head, tail))
    return found


def _marks_differ(prediction: str, gold: str) -> bool:
    """A mark that changes what the prediction says: one neither neutral nor in the gold, or marks glued to its
    words that differ from the gold's (``O+`` is not ``O-``, ``C`` is not ``C++``, ``7+`` is not ``7``)."""
    return _foreign_marks(prediction, gold) or _glued(prediction) != _glued(gold)


def same(prediction: str, gold: str) -> bool:
    """Exact match: the same words and the same numbers, in the same order, and no mark that changes them."""
    expected = key(gold)
    return bool(expected) and key(prediction) == expected and not _marks_differ(prediction, gold)


def f1(prediction: str, gold: str) -> float:
    """Token F1 over the compared tokens (words and numbers); against a gold that is one number, 1 or 0."""
    if _marks_differ(prediction, gold):
        return 0.0
    if is_number(gold):
        return float(same(prediction, gold))
    predicted, expected = key(prediction).split(), key(gold).split()
    shared = sum((Counter(predicted) & Counter(expected)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(expected)
    return 2 * precision * recall / (precision + recall)
