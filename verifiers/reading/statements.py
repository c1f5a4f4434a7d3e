"""The short answer a completion commits to, read from the places a spec names: pure string work.

Shared by the families that compare a short answer with a gold (``choice``, ``qa``): each reads
*where* the answer is stated here and decides itself what a statement means (a letter, a text).
Never "any span of the completion that matches": an answer counts only where the completion
states it as its answer.

**Where.** Only the answer region is read (:func:`~rewardsmith.verifiers.reading.answer_region`): what a
reader of the rendered text sees (not code, comments, crossed-out and white text, phantoms, link
targets, ...; a completion that redefines commands states nothing), without its reasoning blocks.

**Which form** (:data:`FORMS`; a spec's ``answer_from`` lists those it reads, strongest first):

* ``answer_tag``: the first sentence of each closed ``<answer>…</answer>`` (the rest of the tag
  is read for offers, below); a box or an answer phrase inside a tag is read instead
  (``<answer>The answer is B.</answer>``).
* ``boxed``: the content of each outermost box (:mod:`~rewardsmith.verifiers.reading.boxes`).
* ``phrase``: the sentence after "The (final/correct) answer is", "Final answer:", "Answer:" (at
  the start of a line or sentence), "The correct option/choice is".
* ``bare``: the whole completion, only when it is one short line (at most :data:`BARE_WORDS`
  words) and no other form listed is present: a completion that is only ``B`` or ``Paris``.

**Every statement counts.** The strongest form present names the answer's form; :class:`FinalAnswer`
holds *every* committed statement of every listed form, wherever it is in the answer region (so a hedge,
``\\boxed{A} … \\boxed{B}`` or "The answer is A." before ``<answer>B</answer>``, is visible to the
family: working belongs in the reasoning block, which is not the answer region), plus what a cue right
after a statement offers in its place ("\\boxed{B}, or maybe C", "B. Also, x = C works.", a lone
"B\\nC"; :func:`offers`). A statement that is denied
("not \\boxed{B}", "The answer is not B"), asked ("The answer is B?"), taken back ("\\boxed{B},
but that is wrong") or doubted ("Answer: maybe B", "it might be B") is not one.
More than :data:`MAX_STATEMENTS` statements is an overflow: the families score it 0 unread.

Linear in the completion's length: braces are matched in one pass, phrases read a bounded window.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from rewardsmith.verifiers.reading.answer_tags import ANSWER_TAG, answer_tags
from rewardsmith.verifiers.reading.boxes import BOX_COMMAND, boxes
from rewardsmith.verifiers.reading.commitment import denied_before, denied_start, retraction_in, withdrawn_after
from rewardsmith.verifiers.reading.frame import TAG, unframed
from rewardsmith.verifiers.reading.region import Region, answer_region

Form = Literal["answer_tag", "boxed", "phrase", "bare"]
FORMS: tuple[Form, ...] = ("answer_tag", "boxed", "phrase", "bare")
MAX_STATEMENTS = 16
BARE_WORDS = 12  # a bare completion longer than this is prose, not an answer
_WINDOW = 400  # characters after a phrase that may hold its answer
_OFFER_WINDOW = 120  # characters after a statement where an offered alternative is looked for

_PHRASE = re.compile(
    r"(?:\bfinal\s+answer[*_\s]{0,6}(?:is\b|:)"
    r"|\bthe\s+(?:final\s+|correct\s+|right\s+|best\s+)?(?:answer|option|choice)\s+(?:is|would\s+be|must\s+be)\b"
    r"|\bmy\s+(?:final\s+)?answer\s+is\b|(?:^|(?<=[.!?]\s)|\bmy\s+(?:final\s+)?)[ \t>#*_]*answer[*_ \t]{0,6}:)",
    re.IGNORECASE | re.MULTILINE,
)
# A sentence ends at a line end, or at . ! ? followed by a space or the end; a full stop does not
# end one after a common abbreviation ("St. Louis", "Dr. Who"), inside one ("U.S. Army") or after
# a name's initial ("John F. Kennedy"). A lone capital after anything else ends it: "The answer is
# B. A is wrong." states B.
_SENTENCE_END = re.compile(r"\n|[!?](?=\s|$|<)|\.(?=\s|$|<)")  # "5.</p>": a tag after the stop
_LONE_CAPITAL = re.compile(r"(?:^|[\s:(])[A-Z]$")
_NAME_GOES_ON = re.compile(r"\s+(?:[A-Z]\.|[A-Z][a-z]+\s+[A-Z][a-z]+)")
_NOT_AN_END = re.compile(
    r"(?:\b(?:St|Dr|Mr|Mrs|Ms|Jr|Sr|Mt|vs|etc|Inc|Ltd|Co)|\.[A-Z]|\b(?!(?:Option|Choice|Answer|Letter|Is|So)\b)[A-Z][a-z]+\s+[A-Z]|\b[A-Z]\.\s+[A-Z])$"
)
# A reason or aside after the answer is not part of it: "B, because ...", "Paris (since ...)".
_REASON = re.compile(
    r"[,;]?\s+(?:because|since|as\s+(?:it|this|the)|which\s+(?:is|was)|given\s+that|due\s+to)\b"
    r"|\s*\((?:because|since|as)\b",
    re.IGNORECASE,
)
# Words that make a stated answer a guess, an example or a condition, not a commitment.
# (Where "maybe" follows a value it offers another one, "B (or maybe C)": a hedge the families see.)
_DOUBT = re.compile(
    r"^\s*(?:maybe|perhaps|possibly|probably)\b|\b(?:not\s+(?:sure|certain)|unsure|uncertain|no\s+idea|might|could"
    r"|guess|if|whether|suppose|assuming|example|instance|e\.g|anything)\b",
    re.IGNORECASE,
)
_BARE_DOUBT = re.compile(r"\b(?:maybe|perhaps|possibly|probably|either)\b", re.IGNORECASE)
# A cue right after a statement that offers another answer in its place.
_OFFER = re.compile(
    r"\b(?:or(?:\s+(?:maybe|perhaps|possibly|else|rather|also|even))?|maybe|perhaps|possibly|alternatively|otherwise"
    r"|actually|on\s+second\s+thought|(?:it\s+)?(?:could|might|may)\s+(?:also\s+)?be)\b[\s,:]*",
    re.IGNORECASE,
)
# A second answer written right after the first as a token of its own: "B\nC", "B... C", "B – D", "B/C".
_TRAILING_TOKEN = re.compile(
    r"[\s$}*_]*(?:</answer\s*>)?[\s.…,;:!?/|&+=>~–—-]+[(\[]?([A-Za-z0-9]{1,2})[)\]]?[\s*_]*(?:[.!?,;)]|</answer|$)",
    re.IGNORECASE,
)
# What introduces an offered value: "or maybe the right value is 3", "actually, the answer is C".
_RESTATED = re.compile(
    r"^\s*(?:the\s+)?(?:right|correct|real|actual|true|final)?\s*(?:value|answer|option|choice|result)\s+"
    r"(?:is|would\s+be|should\s+be)\s*:?\s*|^\s*(?:it\s+is|it's)\s+",
    re.IGNORECASE,
)
# "Also, x = C works.", "C also works", "C is also correct": a value praised beside the answer.
_ALSO = re.compile(
    r"\balso\b[,:]?\s+(?:[a-z]\s*=\s*)?([^\s.,][^\n.]{0,40}?)\s+(?:works|fits|holds|is\s+(?:correct|valid|right|possible))\b"
    r"|(?:^|[.,;]\s+)(?:[a-z]\s*=\s*)?([^\s.,][^\n.,]{0,40}?)\s+(?:also\s+works|is\s+also\s+(?:correct|valid|right|possible))\b",
    re.IGNORECASE,
)
_COLOR = re.compile(r"\\(?:text)?color\s*\{[^{}]*\}")  # a visible colour (white text is removed as hidden)
_TAGS = re.compile(TAG)
_DRESS = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|emph)\s*\{([^{}]*)\}")


@dataclass(frozen=True)
class Statement:
    """One place the completion states its answer: the text, its form, and where it starts."""

    text: str
    form: str  # a form of FORMS, or "offer" (what a cue after a statement proposes instead)
    start: int


@dataclass(frozen=True)
class FinalAnswer:
    """Every statement of the final answer, in order; ``form`` is the deciding one."""

    statements: tuple[Statement, ...]
    form: str
    unframed: str = ""  # why the last statement is no commitment by the frame's grammar (reading.frame)

    @property
    def texts(self) -> list[str]:
        return [s.text for s in self.statements]

    @property
    def overflow(self) -> bool:
        return len(self.statements) > MAX_STATEMENTS


def visible_region(text: str | Region, prompt_opens_think: bool = False) -> str:
    """The answer region of a completion (a :class:`Region` already read is taken as it is)."""
    return text.text if isinstance(text, Region) else answer_region(text, prompt_opens_think).text


def sentence(window: str) -> str:
    """The first sentence of ``window`` (up to a line end or a full stop)."""
    for end in _SENTENCE_END.finditer(window):
        if end.group(0) != ".":
            return window[: end.start()]
        if _NOT_AN_END.search(window, max(0, end.start() - 20), end.start()):
            continue
        if _LONE_CAPITAL.search(window, max(0, end.start() - 2), end.start()) and _NAME_GOES_ON.match(
            window, end.end()
        ):
            continue  # "F. Scott Fitzgerald", "J. K. Rowling": an initial opening a name
        return window[: end.start()]
    return window


def plain(span: str) -> str:
    """A span without its dress: ``\\text{…}`` and friends opened, ``$``, markdown emphasis and quotes
    around it, and trailing sentence punctuation dropped."""
    span = _TAGS.sub("", _COLOR.sub("", span))  # a tag renders as nothing ("<strong>5</strong>" in an HTML block)
    for _ in range(3):  # nested dress, bounded
        opened = _DRESS.sub(r"\1", span)
        if opened == span:
            break
        span = opened
    previous = None
    while span != previous:
        previous = span
        span = span.strip().strip("*_`$\"'“”‘’").rstrip(".,;:!").strip()
        grouped = re.fullmatch(r"\{([^{}]*)\}", span)  # a brace group around the whole answer
        span = grouped.group(1) if grouped else span
    return span


# Between a phrase and its value: spaces, a colon, emphasis, and line breaks into a block a reader reads as the
# value ("The answer is:\n\n- Iron", "> Iron", a table's cells).
_PHRASE_GAP = re.compile(r"[ \t*_:]*(?:\r?\n[ \t]*(?:(?:[-+*>#|]|\d+[.)])[ \t|]*)?[ \t*_:]*)*")


def _phrase_span(text: str, end: int) -> tuple[str, int]:
    window = text[end : end + _WINDOW]
    lead = _PHRASE_GAP.match(window).end()
    said = sentence(window[lead:])
    reason = _REASON.search(said)
    if reason:
        said = said[: reason.start()]
    return said, end + lead + len(said)


def _committed(text: str, start: int, end: int, span: str, value_first: bool) -> bool:
    """Not denied (before a value-first statement, or at the head of a phrase's span), not doubted, not asked,
    not taken back (:mod:`~rewardsmith.verifiers.reading.commitment`)."""
    if value_first and denied_before(text, start):
        return False
    if denied_start(span) or _DOUBT.search(span) or retraction_in(span):
        return False
    return not withdrawn_after(text, end)


def offers(text: str, end: int) -> list[str]:
    """What cues after a statement (ending at ``end``, up to the end of the next sentence) offer in its
    place: "\\boxed{B}, or maybe C", "\\boxed{B} \\text{(or C)}", "B. But it could also be C.", "B. Also, x = C
    works." each offer ``C``."""
    window = text[end : end + _OFFER_WINDOW]
    window = window.split("\n\n")[0]
    found = []
    for cue in _OFFER.finditer(window):
        rest = window[cue.end() :]
        if BOX_COMMAND.match(rest) or ANSWER_TAG.match(rest):
            continue  # another box or tag is a statement of its own
        offered = plain(_RESTATED.sub("", re.split(r"[)}]", sentence(rest))[0]))
        if offered:
            found.append(offered)
    found += [value for m in _ALSO.finditer(window) if (value := plain(m.group(1) or m.group(2) or ""))]
    tail = _TRAILING_TOKEN.match(text, end, end + _OFFER_WINDOW)
    if tail:
        found.append(tail.group(1))
    return found


def _found(text: str, forms: set[str]) -> list[tuple[str, Statement, int]]:
    """(form, statement, end) for every committed statement of the forms in ``text``, in order."""
    out: list[tuple[str, Statement, int]] = []
    if "boxed" in forms:
        found_boxes = boxes(text)
        if len(found_boxes) > 4 * MAX_STATEMENTS:  # spam: an overflow, whatever the boxes say
            out.extend(
                ("boxed", Statement(f"\0{i}", "boxed", found_boxes[-1][0]), found_boxes[-1][1])
                for i in range(MAX_STATEMENTS + 1)
            )
        for start, end, content in found_boxes[: 4 * MAX_STATEMENTS]:
            if content.strip() and _committed(text, start, end, content, value_first=True):
                out.append(("boxed", Statement(content.strip(), "boxed", start), end))
    if "phrase" in forms:
        for n, match in enumerate(_PHRASE.finditer(text)):
            if n > 4 * MAX_STATEMENTS:
                out.extend(
                    ("phrase", Statement(f"\0{i}", "phrase", len(text)), len(text)) for i in range(MAX_STATEMENTS + 1)
                )
                break
            said, end = _phrase_span(text, match.end())
            if BOX_COMMAND.search(said):
                continue  # "The answer is \boxed{B}": the box counts (or is unclosed: nothing is stated)
            if _PHRASE.match(said.strip(" \t*_")):
                continue  # "Final Answer: The final answer is B": the inner phrase states it
            if said.strip() and _committed(text, match.start(), end, said, value_first=False):
                out.append(("phrase", Statement(said.strip(), "phrase", match.start()), end))
    return sorted(out, key=lambda item: item[1].start)


def final_answer(
    text: str | Region, forms: Sequence[str] = FORMS, prompt_opens_think: bool = False
) -> FinalAnswer | None:
    """Every statement of the final answer ``text`` commits to, read from ``forms`` (strongest
    first, as the spec lists them), with what a cue right after each offers in its place; None
    when it states none. A family that reports on the region itself reads it first and passes it."""
    region = visible_region(text, prompt_opens_think)
    order = [f for f in dict.fromkeys(forms) if f in FORMS]
    tags = answer_tags(region) if "answer_tag" in order else []
    found: list[tuple[str, Statement, int]] = []
    inner_forms = {f for f in order if f in ("boxed", "phrase")}
    if len(tags) > 4 * MAX_STATEMENTS:  # spam: an overflow, whatever the tags say
        found += [
            ("answer_tag", Statement(f"\0{i}", "answer_tag", tags[0][0]), tags[0][1]) for i in range(MAX_STATEMENTS + 1)
        ]
    for start, end in tags[: 4 * MAX_STATEMENTS]:
        inner = region[start:end]
        nested = _found(inner, inner_forms)
        if nested:
            found += [("answer_tag", Statement(s.text, "answer_tag", start + s.start), start + e) for _, s, e in nested]
        elif inner.strip():
            # The tag's first sentence is its answer ("<answer>B\nBecause A is wrong…</answer>" states B);
            # what follows it in the tag is read for offers ("<answer>B, or maybe C</answer>").
            said, said_end = _phrase_span(inner, 0)
            if said.strip() and _committed(region, region.rfind("<", 0, start), start + said_end, said, True):
                found.append(("answer_tag", Statement(said.strip(), "answer_tag", start), start + said_end))
    pieces, cursor = [], 0
    for start, end in tags:  # the tags' contents blanked: what is stated outside them
        pieces += [region[cursor:start], " " * (end - start)]
        cursor = end
    found += _found("".join([*pieces, region[cursor:]]), inner_forms)
    answer = _decide(region, found, order)
    if answer is None and "bare" in order:
        bare = region.strip()
        if _bare(bare):
            return FinalAnswer((Statement(bare, "bare", region.find(bare)),), "bare")
    return answer


_NOT_BARE = re.compile(
    r"\b(?:not|never|no|nor|neither|cannot|unless|wrong|incorrect|false)\b|n't|\?|\\boxed|\\fbox"
    r"|<\s*/?\s*answer|\banswer\b",
    re.IGNORECASE,
)


def _bare(text: str) -> bool:
    """Whether a completion is only an answer: one short line, no negation, question, doubt, or a
    form's cue (a completion that tried a form and failed is not read whole)."""
    return (
        bool(text)
        and "\n" not in text
        and len(text.split()) <= BARE_WORDS
        and not _NOT_BARE.search(text)
        and not _DOUBT.search(text)
        and not _BARE_DOUBT.search(text)
    )


def _decide(region: str, found: list[tuple[str, Statement, int]], order: Iterable[str]) -> FinalAnswer | None:
    """The statements of the strongest form present, those of weaker forms after its first, and the offers."""
    present = {form for form, _, _ in found}
    deciding = next((f for f in order if f in present), None)
    if deciding is None:
        return None
    kept = sorted(((s, e) for _, s, e in found), key=lambda k: k[0].start)  # every committed statement counts
    statements = [s for s, _ in kept]
    if len(statements) > MAX_STATEMENTS:
        return FinalAnswer(tuple(statements[: MAX_STATEMENTS + 1]), deciding)  # an overflow, read no further
    last, last_end = kept[-1]
    earlier = [(s.start, e) for s, e in kept[:-1]]
    statements += [Statement(offered, "offer", e) for _, e in kept for offered in offers(region, e)]
    return FinalAnswer(tuple(statements), deciding, unframed(region, last.start, last_end, earlier))
