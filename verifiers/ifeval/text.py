"""Counting words, sentences and capitalised words the way IFEval counts them, with the standard library.

IFEval's reference (lm-eval's ``tasks/ifeval``) counts words with nltk's ``RegexpTokenizer(r"\\w+")``
(reproduced exactly: ``\\w+`` runs), sentences with nltk's pretrained English Punkt model and capital
words with nltk's ``word_tokenize`` (Punkt, then the Treebank tokenizer). Punkt's trained model is
data nltk downloads at run time (it is not on PyPI), so we write our own splitter: the Punkt rules
(a break after ``.``, ``?`` or ``!`` followed by white space, not after an abbreviation, an initial
or an ordinal that the next word continues, an ellipsis only before a capital) with a fixed list of
common English abbreviations in place of the learned one. ``docs/verifiers/ifeval.md`` lists where
this can differ from the trained model. Everything here is linear in the text's length.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"\S+")

# Abbreviations Punkt's English model knows as such (lower case, without their final period): a
# period after one of these ends no sentence unless the next word is a capitalised common word.
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st mt ft vs etc e.g i.e cf al approx dept est fig inc ltd co corp no vol pp "
    "jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k u.n a.m p.m gen col lt sgt capt rep sen gov "
    "rev hon ave blvd rd".split()
)
# Words that, capitalised after an abbreviation, still start a new sentence (Punkt's orthographic
# evidence: words seen in lower case mid-sentence). A short list of the commonest sentence starters.
_STARTERS = frozenset(
    "the a an this that these those it he she we they i you there here but and so if when while however "
    "in on at for to as his her its our their my your what why how".split()
)
_OPENERS = "\"'([{“‘*"
_CLOSERS = "\"')]}”’*"


def count_words(text: str) -> int:
    """Runs of word characters: IFEval's ``length_constraints:number_words`` count."""
    return sum(1 for _ in _WORD.finditer(text))


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def _ends_sentence(token: str, nxt: str | None) -> bool:
    """Whether ``token`` (a white-space separated token) closes a sentence, given the next token."""
    core = token.rstrip(_CLOSERS)
    if not core or core[-1] not in ".?!":
        return False
    if core[-1] in "?!":
        return True
    if nxt is None:
        return True
    head = nxt.lstrip(_OPENERS)
    upper = bool(head) and head[0].isupper()
    lower = bool(head) and head[0].islower()
    if core.endswith(".."):  # an ellipsis ends a sentence only before a capital
        return upper
    stem = core[:-1].lstrip(_OPENERS).lower()
    if stem in ABBREVIATIONS or stem.rsplit("-", 1)[-1] in ABBREVIATIONS:
        return upper and head.lower().strip(".,;:!?") in _STARTERS
    if len(stem) == 1 and stem.isalpha():  # an initial: "J. Smith"
        return not upper and not lower
    if stem.replace(",", "").replace(".", "").isdigit():  # an ordinal or a list number: "1. the" continues
        return not lower
    return True


def count_sentences(text: str) -> int:
    """Sentences as Punkt counts them: breaks after sentence-final punctuation only (a line break
    alone ends no sentence), and the text after the last break is one more when it is not empty."""
    tokens = _TOKEN.findall(text)
    if not tokens:
        return 0
    count = 0
    for i, token in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if _ends_sentence(token, nxt):
            count += 1
    last = tokens[-1].rstrip(_CLOSERS)
    if not last or last[-1] not in ".?!":
        count += 1
    return count


_CONTRACTION = re.compile(r"(?i)(?<=\w)(n't|'s|'m|'d|'ll|'re|'ve)$")
_SPLIT_PUNCT = re.compile(r"[,;:@#$%&?!()\[\]{}<>\"“”`]|\.\.\.|--")


def capital_words(text: str) -> int:
    """Tokens in all capitals as nltk's ``word_tokenize`` would give them: punctuation split off,
    contractions split (``DON'T`` is ``DO`` and ``N'T``), hyphenated words and ``U.S.`` kept whole."""
    count = 0
    for chunk in _TOKEN.findall(text):
        for piece in _SPLIT_PUNCT.split(chunk):
            if not piece:
                continue
            match = _CONTRACTION.search(piece)
            parts = (piece[: match.start()], match.group(0)) if match else (piece,)
            count += sum(1 for part in parts if part.isupper())
    return count
