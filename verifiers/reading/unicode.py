"""Characters as a reader sees them: what renders as nothing is not there, and a look-alike is what it looks like.

Two steps, kept apart because they apply to different text:

* :func:`strip_invisible` removes what renders as nothing (zero-width and format characters, variation
  selectors, Hangul fillers, tag characters, the soft hyphen, ...); bidi controls stay (they reorder
  what is shown, so a span holding one is not read as its characters in order). It changes no visible
  character, so it is safe on LaTeX source: :func:`~rewardsmith.verifiers.reading.visible` applies it to
  the whole completion.
* :func:`fold` also applies NFKC and the Unicode TR39 confusable mapping (``disarm``'s table, Unicode 17, folded
  toward Latin; digits keep their value), so a Cyrillic ``В``, a fullwidth ``Ｂ`` and a mathematical ``𝐁`` are
  all ``B``, an Arabic-Indic ``٥`` is ``5`` and an Arabic comma is a comma. A digit that looks like a
  different ASCII digit (Bengali ``৪``, 4, looks like 8) is read as neither: it becomes U+FFFD. A superscript
  or subscript is raised or lowered, not a digit in line: ``2⁵`` folds to ``2^5``, ``H₂O`` to ``H_2O``. It
  rewrites characters a parser interprets, so it is for labels, keywords and short answers, never for LaTeX
  source wholesale.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# A code point that renders blank yet is neither a format character nor default-ignorable: the braille blank.
_BLANK = frozenset([0x2800])


@lru_cache(maxsize=1)
def _ignorable() -> frozenset[int]:
    """Unicode's Default_Ignorable_Code_Point property (read by the ``regex`` package, which carries the
    Unicode database's derived properties): what renderers draw as nothing unless they support it, from
    soft hyphens and variation selectors to Hangul fillers and U+17B4 (a Khmer vowel sign, category Mn)."""
    import regex

    pattern = regex.compile(r"\p{Default_Ignorable_Code_Point}")
    return frozenset(p for block in (range(0x80, 0x20000), range(0xE0000, 0xE1000)) for p in block
                     if pattern.match(chr(p)))


# Bidi controls are format characters that do change what is shown: an override reverses the text after it
# ("\u202e12" shows 21). They are kept, so that a parser that meets one reads nothing rather than the digits.
_BIDI = frozenset([0x200E, 0x200F, 0x061C, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])


# Of those, the ones that reorder whole runs (embeddings, overrides, isolates): with one, the characters are not
# shown in the order they are stored, so a completion holding one has no text a reader reads in order.
REORDERING = re.compile("[\u202a-\u202e\u2066-\u2069]")


@lru_cache(maxsize=1)
def overlay_pattern() -> re.Pattern[str]:
    """A character followed by combining marks of the Overlay class (canonical combining class 1: U+0336 long
    stroke, U+0338 solidus, ...) or enclosing ones (category Me: U+20E0 the prohibition circle, U+20DD a circle):
    a letter struck through or drawn inside a sign, which a reader reads as marked, not as the letter."""
    marks = "".join(re.escape(chr(p)) for p in range(0x300, 0x20000)
                    if unicodedata.combining(chr(p)) == 1 or unicodedata.category(chr(p)) == "Me")
    return re.compile(f"[^{marks}][{marks}]+")


@lru_cache(maxsize=1)
def _scripts() -> dict[int, str]:
    """Superscript and subscript characters as ``^`` / ``_`` and what they raise or lower (NFKC alone would turn
    ``2⁵`` into ``25``)."""
    table = {}
    for point in range(0x80, 0x20000):
        tag = unicodedata.decomposition(chr(point)).split(" ", 1)[0]
        if tag in ("<super>", "<sub>"):
            table[point] = ("^" if tag == "<super>" else "_") + unicodedata.normalize("NFKC", chr(point))
    return table


@lru_cache(maxsize=1)
def _ambiguous_digits() -> frozenset[str]:
    """Digits that look like a *different* ASCII digit (Bengali ``৪`` is 4 and looks like 8): they match nothing."""
    from disarm import normalize_confusables

    found = set()
    for point in range(0x80, 0x20000):
        char = chr(point)
        if unicodedata.category(char) == "Nd":
            shape = normalize_confusables(char, target_script="latin", digit_policy="tr39")
            if len(shape) == 1 and shape.isdigit() and shape.isascii() and int(shape) != unicodedata.digit(char):
                found.add(char)
    return frozenset(found)


def is_invisible(char: str) -> bool:
    """Whether ``char`` renders as nothing and changes nothing around it: a format character (zero-width space
    and joiners, soft hyphen, tag characters, ...) or a default-ignorable code point (variation selectors,
    fillers, U+17B4), other than a bidi control; the braille blank."""
    point = ord(char)
    if point in _BIDI:
        return False
    return unicodedata.category(char) == "Cf" or point in _BLANK or (point > 0x7F and point in _ignorable())


@lru_cache(maxsize=1)
def invisible_pattern() -> re.Pattern[str]:
    """One character class of every invisible character (built on first use from the Unicode database of
    this Python: format characters live in the BMP, the supplementary multilingual plane and plane 14)."""
    points = [p for block in (range(0x80, 0x20000), range(0xE0000, 0xE1000)) for p in block if is_invisible(chr(p))]
    return re.compile("[" + "".join(re.escape(chr(p)) for p in points) + "]")


def strip_invisible(text: str) -> str:
    """``text`` without the characters that render as nothing (see :func:`is_invisible`)."""
    if text.isascii():
        return text
    return invisible_pattern().sub("", text)


def fold(text: str) -> str:
    """``text`` as it looks: invisible characters removed, NFKC, then every confusable character replaced by
    its TR39 prototype in Latin (letters, punctuation), digits of any script by their value. Apply it to both
    sides of a comparison of labels, keywords or short answers; never to LaTeX source wholesale."""
    text = strip_invisible(text)
    if text.isascii():
        return text
    text = text.translate(_scripts())  # x² is x^2 to a reader, not x2
    text = unicodedata.normalize("NFKC", text)
    ambiguous = _ambiguous_digits()
    text = "".join(
        ("\ufffd" if ch in ambiguous else str(unicodedata.digit(ch))) if unicodedata.category(ch) == "Nd" else ch
        for ch in text
    )
    return _confusables(text)


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def prototype(text: str) -> str:
    """``text``'s TR39 prototype without NFKC first: what :func:`fold` gives for characters NFKC would take apart
    before the table sees them (a spacing cedilla ``¸`` is a comma to TR39; NFKC makes it a space and a mark)."""
    return text if text.isascii() else _confusables(text)


def unpaired_case(text: str) -> str:
    """The first letter of ``text`` that has a case but no other case to tell it by (a small capital ``ᴛ`` is
    lower case to Unicode and has no capital; a modifier letter ``ᵃ``): its case is not what a reader sees, so a
    check of letter case cannot pass it. ``""`` when there is none."""
    if text.isascii():
        return ""
    return next((c for c in text if (c.islower() and c.upper() == c) or (c.isupper() and c.lower() == c)), "")


@lru_cache(maxsize=4096)
def _confusables(text: str) -> str:
    """Each run of non-ASCII characters replaced by its prototype; ASCII is never touched (TR39 would turn a
    backtick into an apostrophe and a double quote into two), and a double-quote look-alike becomes ``"``."""
    from disarm import normalize_confusables  # a compiled table: imported on the first non-ASCII text

    def prototype(run: re.Match[str]) -> str:
        folded = normalize_confusables(run.group(0), target_script="latin", digit_policy="numeric")
        return folded.replace("''", '"')

    return strip_invisible(_NON_ASCII.sub(prototype, text))
