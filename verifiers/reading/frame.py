"""The closed frame around the final statement: what may stand before it in its sentence, and after it.

A short answer (an option, a short text, a reasoning-gym answer) counts only as the completion's *final*
statement, framed by a closed grammar (issue 36):

* **before it, in its sentence**: only a lead-in from :data:`CONNECTIVES` (``So,``, ``Therefore,``,
  ``Final Answer:``, ...) and, before a box or an answer tag, an answer phrase (``the final answer is``);
* **after it**: only closing marks (punctuation, emphasis, closing tags, ``$``) and closing sentences from
  :data:`CLOSINGS` (Minerva's "I hope it is correct.").

Anything else makes it no commitment: an attribution ("My classmate says the answer is B"), a condition
("If the question has a typo, ..."; "... (assuming I misread it)"), a relabel ("For part (a), ..."), a reason,
or a second value in any language, markup or container after the answer. The verdict never depends on
recognising the words that do it: they are simply not in the grammar. Working belongs before the final
statement's sentence or in the reasoning block.

The statement's sentence starts after the last ``.``, ``!`` or ``?`` (or ``。！？``) before it, or after a
line ending in one; a line break alone does not end it, nor does a tag (``<br>``) ("Bob thinks the answer is:" on
the line above a box is the box's lead-in). docs/reading.md has the table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from rewardsmith.verifiers.reading.html import TAG

# Connectives a final statement's sentence may open with, lower case, spaces single.
CONNECTIVES: tuple[str, ...] = (
    "so", "thus", "therefore", "hence", "consequently", "accordingly", "as a result", "finally", "overall",
    "in conclusion", "in summary", "in short", "to conclude", "to summarize", "to summarise", "to sum up",
    "all in all", "altogether", "putting it all together", "to restate", "to recap", "in other words",
    "final answer", "answer", "the final answer", "the answer", "my final answer", "my answer", "solution",
    "conclusion",
)
# Sentences that may follow the final statement, lower case, without their closing punctuation.
CLOSINGS: tuple[str, ...] = (
    "i hope it is correct", "i hope this is correct", "i hope it's correct", "i hope this helps", "hope this helps",
)
# An answer phrase, which may stand between the connectives and a box or an answer tag.
_PHRASE = r"(?:(?:the|my)\s+)?(?:final\s+|correct\s+|right\s+)?(?:answer|option|choice)\s+(?:is|would\s+be|must\s+be)"


def _alternatives(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


_LEAD_IN = re.compile(rf"(?:(?:{_alternatives(CONNECTIVES)})\s*[,:;]?\s*)*(?:{_PHRASE}\s*:?\s*)?", re.IGNORECASE)
_CLOSING = re.compile(rf"(?:(?:{_alternatives(CLOSINGS)})\s*[.!]*\s*)*", re.IGNORECASE)
# An HTML tag by CommonMark's grammar (<answer>, </b>, a stray </think>): it renders as nothing. "< C >" is text.
# Marks that render as nothing or only close what the statement opened.
_MARKS = re.compile(
    TAG
    + r"|\\[()\[\]]|\\(?:quad|qquad|,|;|!)|\\(?:blacksquare|square|qed|Box)(?![A-Za-z])|[∎□]"  # delimiters,
    # spacing, and the end-of-proof mark
    r"|^[ \t]*(?:#{1,6}|>|[-+*]|\d+[.)])[ \t]+(?=\S)"  # a heading, quote or list marker opening a line of text
    r"|[*_~$`\"'“”‘’()\[\]{}]",
    re.MULTILINE,
)
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]*_$]*(?=\s|$|<)|[。！？]")


def sentence_start(region: str, start: int) -> int:
    """Where the sentence holding ``region[start]`` opens."""
    ends = list(_SENTENCE_END.finditer(region, 0, start))
    return ends[-1].end() if ends else 0


def lead_in(region: str, start: int, earlier: Sequence[tuple[int, int]] = ()) -> str:
    """What stands before ``start`` in its sentence, as a reader sees it (marks dropped, spaces single),
    without the ``earlier`` statements of the same answer in it ("\\boxed{5} \\boxed{5}" is 5 twice, and
    "Dana claims \\boxed{5} \\boxed{5}" is still Dana's)."""
    opened = sentence_start(region, start)
    head = list(region[opened:start])
    for a, b in earlier:
        for i in range(max(a, opened), min(b, start)):
            head[i - opened] = " "
    return _seen("".join(head))


def working(region: str, stop: int) -> list[str]:
    """The sentences before ``stop`` (the final statement's sentence), as a reader sees them: what a family
    reads for a value stated in the working in words no list holds ("So the result is C.")."""
    sentences, opened = [], 0
    for end in _SENTENCE_END.finditer(region, 0, stop):
        sentences.append(_seen(region[opened : end.end()]))
        opened = end.end()
    sentences.append(_seen(region[opened:stop]))
    return [s for s in sentences if s]


def _seen(text: str) -> str:
    return re.sub(r" (?=[.,;:!?])", "", " ".join(_MARKS.sub(" ", text).split()))


def after(region: str, end: int) -> str:
    """What follows ``end``, as a reader sees it (marks dropped, spaces single)."""
    return _seen(region[end:])


_END = re.compile(r"\\end\s*\{([A-Za-z*]+)\}")


def _closed_environments(region: str, end: int) -> str:
    """``region[end:]`` with each ``\\end{env}`` that closes an environment opened before ``end`` blanked: a
    closing mark. A lone ``\\end{C}`` prints as written, so it stays."""
    opened = set(re.findall(r"\\begin\s*\{([A-Za-z*]+)\}", region[:end]))
    return _END.sub(lambda m: " " * len(m.group(0)) if m.group(1) in opened else m.group(0), region[end:])


def trailing(region: str, end: int) -> str:
    """What follows ``end`` that is not a closing mark or a closing sentence (:data:`CLOSINGS`), as a reader sees
    it; ``""`` when nothing does: the statement ending there is the completion's last. ``\\end{align}`` is a
    closing mark only where it closes an environment the region opened before ``end`` (a lone ``\\end{C}``
    prints as written)."""
    rest = after(_closed_environments(region, end), 0).lstrip(".!,;: ")
    return "" if _CLOSING.fullmatch(rest) else rest


def unframed(region: str, start: int, end: int, earlier: Sequence[tuple[int, int]] = ()) -> str:
    """Why the statement at ``region[start:end]`` is not a commitment by the frame's grammar, or ``""``;
    ``earlier``: where the statements before it lie (those in its sentence are not its lead-in)."""
    before = lead_in(region, start, earlier)
    if not _LEAD_IN.fullmatch(before):
        return f"the final answer is not stated on its own: {_shown(before)!r} stands before it in its sentence"
    rest = trailing(region, end)
    if rest:
        return f"the final answer is not the completion's last statement: {_shown(rest)!r} follows it"
    return ""


def _shown(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# The words that may finish a value statement's own sentence, describing the quantity ("18 square units",
# "\\boxed{5} ways to seat them", "90^\\circ", "\\boxed{3} \\pmod{7}"): words of letters (no digit of another kind:
# "½", "²", "⑲" are numbers), the marks of an angle or a modulus, unit markup, and the numbers and words the caller
# allows (a percent sign reads as the word "percent", a power as "squared" or "cubed"). Nothing else: no symbol
# (a cross, a "no" sign), no formula, no box.
_DESCRIPTION = re.compile(
    r"(?P<word>[^\W\d_]+(?:['’-][^\W\d_]+)*)|(?P<percent>\\%|%)|(?P<power>\^\s*\{?[23]\}?)|\^\s*\\circ|\\circ|°"
    r"|\\(?:text|mbox|mathrm|[pb]?mod)(?![A-Za-z])|[\s,;:/-]+|(?P<number>\d+(?:[.,]\d+)*)"
)


def _described(match: re.Match[str], allowed_number: Callable[[str], bool], allowed_word: Callable[[str], bool],
               after_word: bool) -> bool:
    word, power = match.group("word"), match.group("power")
    if word is not None:
        return word.replace("'", "").replace("’", "").replace("-", "").isalpha() and allowed_word(word)
    if match.group("percent"):
        return allowed_word("percent")
    if power is not None:  # a unit's ("cm^2"), or the value's own ("18^2": the word "squared")
        return after_word or allowed_word("squared" if "2" in power else "cubed")
    return match.group("number") is None or allowed_number(match.group("number"))


def unclosed(region: str, end: int, allowed_number: Callable[[str], bool] = lambda number: False,
             allowed_word: Callable[[str], bool] = lambda word: True) -> str:
    """Why the value statement ending at ``end`` is not the completion's last statement (``""`` when it is), by
    the grammar of what may follow a value (math): the rest of its own sentence may describe the quantity in
    words (:data:`_DESCRIPTION`, with the numbers ``allowed_number`` and the words ``allowed_word`` accept, such
    as the prompt's), and every later sentence must be a closing one (:data:`CLOSINGS`). A later sentence that
    is not ("Actually, it is nineteen.", "Wait, I think she has 6.", a note, a check) is outside the grammar
    whatever it says: the verdict never depends on recognising what it says."""
    region = region[:end] + _closed_environments(region, end)
    stop = _SENTENCE_END.search(region, end)
    own = _seen(region[end : stop.end() if stop else len(region)]).strip(" .!?。！？")
    cursor, after_word = 0, False
    for match in _DESCRIPTION.finditer(own):
        if match.start() != cursor or not _described(match, allowed_number, allowed_word, after_word):
            break
        cursor = match.end()
        after_word = match.group("word") is not None or (after_word and not match.group(0).strip())
    if cursor != len(own):
        return f"the final answer is not stated on its own: {_shown(own)!r} follows it in its sentence"
    rest = trailing(region, stop.end()) if stop else ""
    if rest:
        return f"the final answer is not the completion's last statement: {_shown(rest)!r} follows it"
    return ""
