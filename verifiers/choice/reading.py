"""Which options one statement of the final answer names: pure string work on a short span.

A statement names an option by its label, dressed or not (``B``, ``(B)``, ``B)``, ``B.``, ``**B**``,
``[B]``, "option B", ``\\text{(B)}``), by a label followed by that option's text (``(B) Paris``), or
by the exact text of one option (``Paris``); a label followed by another option's text names both.
Every other standalone label in it is named too, so "A or B", "A, B, C, D" and "B (or maybe C)"
name several options (a hedge); a capital letter that is not a label ("E" among four options) is
named as an outside letter (a wrong answer). A label after a negation ("not B", "B, not C",
"neither A nor B", "anything except D") is denied, not named.

The row's options decide what else a statement names, not the words around them: the whole text of
another option anywhere in it ("B, but 42 is defensible", "B (or 42)" with 42 option C), or, right
after a label, another option's text whole or cut short ("B — the one about the moon" for D's "The
one about the moon landing"), names that option too. A statement is read as it looks
(:func:`~rewardsmith.verifiers.choice.row.looks`): a Cyrillic ``В``, a fullwidth ``Ｂ``, a mathematical
``𝐁``, a circled ``Ⓑ`` or a ``B`` with a combining mark is the label ``B`` (an HTML entity ``&#66;`` is
already ``B`` in the visible text), so a second label that only looks different is a second label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rewardsmith.verifiers.choice.row import Options, looks, seen, squash
from rewardsmith.verifiers.reading.statements import plain

_HEAD = re.compile(
    r"^(?:(?:the\s+)?(?:correct\s+|right\s+|best\s+)?(?:option|choice|answer|letter)\s*[:#]?\s*)?"
    r"([(\[]?)\s*([A-Za-z]|\d{1,2})\s*([)\]]?)(?=$|[\s:,;)\-–—]|\.(?!\w))",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"(?<![\w'’&./-])([(\[]?)([A-Za-z]|\d{1,2})([)\]]?)(?![\w'’&/-]|\.\w)")
_DENIED = re.compile(
    r"(?:\b(?:not|never|neither|nor|except|excluding|rather\s+than|instead\s+of|other\s+than|"
    r"but\s+not)|n't)(?:\s+(?:option|choice|answer|be))?[\s*_(\[\"']*$",
    re.IGNORECASE,
)
_SEPARATED = re.compile(r"\s*(?:[:)\]–—]|-(?!\s*[\d{(\\])|\.(?!\w))")
_MATH_BEFORE = re.compile(r"(?:\\[A-Za-z]+|[+\-*/^=<>±])\s*$")
_SEPARATORS = " .:)-–—"


@dataclass(frozen=True)
class Named:
    """The options one statement names (indices), the capital letters it names that are no option's
    label, and the labels it denies."""

    indices: frozenset[int] = frozenset()
    outside: frozenset[str] = frozenset()
    denied: frozenset[str] = frozenset()

    def __or__(self, other: Named) -> Named:
        return Named(self.indices | other.indices, self.outside | other.outside, self.denied | other.denied)

    @property
    def count(self) -> int:
        return len(self.indices) + len(self.outside)


def read_statement(span: str, options: Options, accept_text: bool = True) -> Named:
    """The options ``span`` names (see the module docstring)."""
    options = seen(options)
    text = looks(plain(span))
    if not text:
        return Named()
    if accept_text:
        by_text = options.indices_of_text(text)
        if by_text:
            return Named(frozenset(by_text))
    named = _by_labels(text, options, accept_text)
    return named | _texts(text, options, named) if accept_text else named


# The documented shapes of one option (a closed grammar: a statement in no shape names no single option):
# an optional "option"/"the correct answer is" intro, a label dressed or not, then nothing, its own option's
# text (whole or cut short at a word), or "is correct"; or one option's whole text.
_INTRO = r"(?:(?:the\s+)?(?:correct\s+|right\s+|best\s+)?(?:option|choice|answer|letter)\s*(?:is\s+)?[:#]?\s*)?"
_VERDICT = r"(?:\s+is\s+(?:the\s+)?(?:correct|right)(?:\s+(?:answer|option|choice))?)?"
_ONE_OPTION = re.compile(
    rf"{_INTRO}[(\[]?\s*(\w{{1,2}})\s*[)\]]?(?:(?:\s*[:.)\-–—,]\s*|\s+)(.+?))??{_VERDICT}\s*[.!]?",
    re.IGNORECASE | re.DOTALL,
)


def in_shape(span: str, options: Options, accept_text: bool = True) -> bool:
    """Whether ``span`` states one option in a documented shape (``B``, ``(B)``, ``Option B``, ``B) Paris``
    with B's own text, ``B is correct``, or, with ``accept_text``, ``Paris``): the value grammar every
    statement of a ``choice`` answer must fit, whatever else :func:`read_statement` finds in it. Without
    ``accept_text`` option texts are not read, so what follows a label is taken as its text, unchecked."""
    options = seen(options)
    text = looks(plain(span))
    if accept_text and len(options.indices_of_text(text)) == 1:
        return True
    shaped = _ONE_OPTION.fullmatch(text)
    index = options.index_of_label(shaped.group(1)) if shaped else None
    if shaped is None or index is None:
        return False
    rest, own = squash(shaped.group(2) or ""), squash(options.texts[index])
    return not rest or not accept_text or rest == own or own.startswith(rest + " ")


_LAST_LABEL = re.compile(r"(?<![A-Za-z0-9.,])[(\[]?([A-Z]|[0-9]{1,2})[)\]]?[\s.!?,;:。！？]*$")


def said_in_working(sentence: str, options: Options, accept_text: bool = True) -> Named:
    """The option a sentence of the working states: by ending on its label, in any words and any language
    ("So the result is C.", "La respuesta es **C**.", "答案是Ｃ。", "My gut says 3." where 3 is a label), or by
    being, whole, a statement in a documented shape of one option ("C is correct.", "Jupiter."). A reader takes
    either as naming it. Only a capital or a number that is one of the row's labels counts (a sentence ending
    "... a." is no statement)."""
    if in_shape(sentence, options, accept_text):
        return read_statement(sentence, options, accept_text)
    last = _LAST_LABEL.search(looks(sentence))
    if not last or last.group(1) not in seen(options).labels:
        return Named()
    return _as_named(last.group(1), options)


def mentioned_in_working(sentence: str, options: Options, accept_text: bool = True) -> Named:
    """Every option a sentence of the working names, in any words: what :func:`said_in_working` reads, and every
    label standing alone in it, denied or not ("I'd pick C, honestly.", "C looks right to me.", "C is wrong.").
    Whether a sentence endorses or rejects an option is a judgement of its words; the reader does not make it:
    an answer region that names two options names two options."""
    found = said_in_working(sentence, options, accept_text)
    labels = _tokens(looks(plain(sentence)), seen(options), prose=True)
    for label in labels.denied:
        labels = labels | _as_named(label, seen(options))
    return Named(found.indices | labels.indices, found.outside)  # a capital that is no label is prose ("I")


def _by_labels(text: str, options: Options, accept_text: bool) -> Named:
    """The options ``text`` names by label: a head label (with its own text, or another's after it), then every
    standalone label."""
    head = _HEAD.match(text)
    if head is not None and not _article(
        text, head.start(2), head.end(), bool(head.group(1) or head.group(3)), options
    ):
        label = _label(head, options, whole=head.end() == len(text.rstrip(_SEPARATORS)))
        if label is not None:
            rest = text[head.end() :].strip(_SEPARATORS)
            named = _as_named(label, options)
            if not rest or (label in options.labels and _restates(rest, options.texts[options.labels.index(label)])):
                return named
            if label.isdigit() and not (head.group(1) or head.group(3)) and not _SEPARATED.match(text, head.end(2)):
                return _tokens(text, options)  # "2 thousand", "2 apples": a quantity, not the label 2
            # "(B) Paris" with Paris option A names both; so does "B — the one about the moon", cut from D's text
            other = Named(frozenset(_restated(rest, options))) if accept_text else Named()
            return named | other | _tokens(rest, options, bare_digits=True)
    return _tokens(text, options)


def _label(head: re.Match[str], options: Options, whole: bool) -> str | None:
    """The label a head match names: a label as written, a lowercase letter only when dressed or alone."""
    opened, label, closed = head.group(1), head.group(2), head.group(3)
    if label in options.labels:
        return label
    if label.isdigit():
        return None if options.letters else label
    if label.isupper() or opened or closed or whole:
        return label.upper()
    return None


def _restates(rest: str, own: str) -> bool:
    """Whether what follows a label is that option's text, whole or cut short ("C: vitamin D" for
    "Vitamin D deficiency"), and nothing else."""
    key = squash(rest)
    return len(key) >= 3 and _within(key, squash(own))


def _restated(rest: str, options: Options) -> list[int]:
    """The options whose text ``rest`` restates, whole or cut short."""
    return [i for i, own in enumerate(options.texts) if _restates(rest, own)]


def _texts(text: str, options: Options, named: Named) -> Named:
    """The other options whose whole text ``text`` states, besides the options it names ("B, but 42 is
    defensible" with 42 option C names C): outside the named options' own texts, word by word. The row's
    options decide, not the words around them: a statement that names two options' texts names two."""
    rest = squash(text)
    for i in sorted(named.indices, key=lambda i: -len(options.texts[i])):
        rest = _without(rest, squash(options.texts[i]))
    found = [i for i, own in enumerate(options.texts) if i not in named.indices and _within(squash(own), rest)]
    return Named(frozenset(found))


def _at(key: str, text: str) -> list[int]:
    """Where ``key`` stands in ``text`` as words of its own (no word character touching it on either side)."""
    found, start = [], text.find(key) if key else -1
    while start >= 0:
        end = start + len(key)
        if not _word_char(text, start - 1) and not _word_char(text, end):
            found.append(start)
        start = text.find(key, start + 1)
    return found


def _word_char(text: str, i: int) -> bool:
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")


def _within(key: str, text: str) -> bool:
    return bool(_at(key, text))


def _without(text: str, key: str) -> str:
    for start in reversed(_at(key, text)):
        text = text[:start] + " " + text[start + len(key) :]
    return text


def _as_named(label: str, options: Options) -> Named:
    index = options.index_of_label(label)
    return Named(frozenset({index})) if index is not None else Named(outside=frozenset({label}))


def _article(text: str, start: int, end: int, dressed: bool, options: Options, prose: bool = False) -> bool:
    """Whether an undressed ``A`` or ``I`` before a lowercase word is the article or the pronoun ("I think
    B"). Only a letter that is no option's label is read so: where ``A`` is a label, "A or B" and
    "A maybe B" must name it, so it counts (a reading that can only add a hedge, never pay one)."""
    letter = text[start : start + 1]
    return (
        letter in ("A", "I")
        and (prose or letter not in options.labels)
        and not dressed
        and bool(re.match(r"\s+[a-z]", text[end:]))
    )


def _tokens(text: str, options: Options, bare_digits: bool = False, prose: bool = False) -> Named:
    """Every standalone label in ``text`` (a capital that is none is an outside letter; a lowercase letter
    counts only where its capital is a label), named or denied. ``bare_digits``: ``text`` follows a label
    ("2) or 1"), where a bare digit that is a digit label is that label too, not a number in prose. ``prose``:
    ``text`` is working, not a statement: a lowercase letter counts only dressed ("(b)", not the ``d`` of
    "I'd"), and an undressed ``A`` or ``I`` before a lowercase word is the article or the pronoun even where
    it is a label ("A planet's heat ...")."""
    named: list[str] = []
    denied: list[str] = []
    for token in _TOKEN.finditer(text):
        opened, label, closed = token.groups()
        if label.isdigit() and (options.letters or not (opened or closed or bare_digits)):
            continue  # a number in prose, not a label: only "(2)", "2)", "[2]" name a digit label inside text
        if label.isdigit() and _MATH_BEFORE.search(text, 0, token.start()):
            continue  # "\\pm (2)", "x + (2)": a term of a formula
        if _article(text, token.start(2), token.end(), bool(opened or closed), options, prose):
            continue
        if prose and label.islower() and not (opened or closed):
            continue
        if label.islower():  # "b or c": a lowercase label, where it is one ("a" only dressed: "(a)")
            if label.upper() not in options.labels or (label in "ai" and not (opened or closed)):
                continue
            label = label.upper()
        (denied if _DENIED.search(text[max(0, token.start() - 30) : token.start()]) else named).append(label)
    found = Named(denied=frozenset(denied))
    for label in named:
        found = found | _as_named(label, options)
    return found
