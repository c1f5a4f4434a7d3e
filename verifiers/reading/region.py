"""Where the answer may be: the completion without its reasoning, one rule for every family.

Whether a completion *starts* inside a reasoning block is decided by the prompt, not by the completion:
R1-style chat templates end the prompt with ``<think>``, so the completion opens mid-block and closes it
with ``</think>``. Trainers often pass prompts as messages, so the reward cannot see the template; the spec
says it (``prompt_opens_think``). Guessing it from the completion would let a policy hide a hedge: with the
guess, ``The answer is 7. </think> The answer is 5.`` reads as 5; without it, as 7 and 5, a hedge.

* ``prompt_opens_think`` off (the default): a ``</think>`` with no ``<think>`` before it closes nothing and
  hides nothing; the tag itself is dropped and the text before it stays in the answer region.
* ``prompt_opens_think`` on: everything up to the first ``</think>`` is reasoning; a completion that never
  closes it states nothing.

Then, either way, a ``<think>…</think>`` block the completion opens *before any answer text* is reasoning,
and such a block it never closes hides everything after it: reasoning that never ends is not an answer.
Reasoning comes first: a ``<think>`` opened after answer text hides nothing (its tags are dropped and its
text is read), so a retraction or a second value written into a late block is seen, as a reader sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from rewardsmith.verifiers.core import Verdict
from rewardsmith.verifiers.reading.html import unreadable_tag
from rewardsmith.verifiers.reading.visible import visible

THINK_TAG = re.compile(r"<(/?)think\s*>", re.IGNORECASE)

# The spec option every family that reads an answer declares, documented once.
PROMPT_OPENS_THINK_DOC = (
    "the chat template ends the prompt with <think> (R1-style): the completion starts inside a reasoning block, "
    "and everything up to its first </think> is reasoning"
)
# What the feedback says when a stray close was read as text: the spec may be missing the option.
STRAY_CLOSE_HINT = (
    "the completion closes a reasoning block it never opened (</think>), so the text before it was read as "
    "part of the answer; if the chat template opens the block in the prompt, set prompt_opens_think: true"
)


@dataclass(frozen=True)
class Region:
    """The answer region (empty when the completion is all reasoning), and whether a stray ``</think>`` was
    read as text: the one case where a spec without ``prompt_opens_think`` may be reading it wrong."""

    text: str
    stray_close: bool = False
    unreadable: str = ""  # why nothing in the completion reads as written (a redefinition, HTML outside the grammar)


def hinted(verdict: Verdict, region: Region) -> Verdict:
    """``verdict`` noting a stray ``</think>`` (``details.stray_think_close``) and, when it did not pay,
    naming the option in its feedback: the one thing a user who forgot it needs to read."""
    if region.unreadable and not verdict.correct:
        feedback = f"{verdict.feedback}; {region.unreadable}" if verdict.feedback else region.unreadable
        verdict = replace(verdict, feedback=feedback)
    if not region.stray_close:
        return verdict
    feedback = verdict.feedback
    if not verdict.correct:
        feedback = f"{feedback}; {STRAY_CLOSE_HINT}" if feedback else STRAY_CLOSE_HINT
    return replace(verdict, feedback=feedback, details={**verdict.details, "stray_think_close": True})


def answer_region(completion: str, prompt_opens_think: bool = False, keep_style: bool = False) -> Region:
    """What a reader sees of the completion (:func:`visible`: a tag inside a comment is no tag), without its
    reasoning blocks (module docstring); empty, saying why in ``unreadable``, when nothing in it reads as
    written (a redefinition, a bidi override, HTML outside :mod:`~rewardsmith.verifiers.reading.html`'s
    grammar). A removed block leaves a space, so the words on either side of it never join. ``keep_style``
    keeps emphasis markers as characters, for a family whose answer is data a third party reads raw
    (``3*4*5`` is an expression, not an italic 4)."""
    seen = visible(completion, keep_style=keep_style)
    if not seen.readable:
        return Region("", unreadable=f"the completion {_redefines(seen.redefines)}: nothing in it reads as written")
    styled = unreadable_tag(completion)
    if styled:
        return Region("", unreadable=f"the completion holds HTML outside the readable set ({styled[:60]}): "
                      "its styles or elements can hide or show any text, so nothing in it reads as written")
    tags = [(m.start(), m.end(), bool(m.group(1))) for m in THINK_TAG.finditer(seen.text)]
    return _cut(seen.text, tags, prompt_opens_think)


def _redefines(names: tuple[str, ...]) -> str:
    named = [n for n in names if not n.startswith("(")]
    return f"redefines {', '.join(named[:3])}" if named else (names[0].strip("()") if names else "is unreadable")


def source_region(completion: str, prompt_opens_think: bool = False) -> Region:
    """The same region, as the completion's *source* text: for the families whose answer is markup a reader
    sees as code (a JSON document or a tool call in a fenced block), which must reach their parser as
    written. Only the reasoning blocks are cut, at the tags a reader sees (not one inside a comment or code)."""
    seen = visible(completion)
    tags = []
    for m in THINK_TAG.finditer(seen.text):
        start = seen.source_offset(m.start())
        end = seen.source_offset(m.end() - 1) + 1
        if THINK_TAG.fullmatch(completion, start, end):  # the tag as written, not one an entity spelled out
            tags.append((start, end, bool(m.group(1))))
    return _cut(completion, tags, prompt_opens_think)


def _cut(text: str, tags: list[tuple[int, int, bool]], prompt_opens_think: bool) -> Region:
    """``text`` without the reasoning blocks its ``tags`` (start, end, closing) delimit: reasoning comes first,
    so only a block opened before any answer text is one; a ``<think>`` after answer text hides nothing (its
    tags go, its text is read as the answer region's: a second value there is a hedge)."""
    cursor, stray = 0, False
    if prompt_opens_think:
        first_close = next((tag for tag in tags if tag[2]), None)
        if first_close is None:
            return Region("")
        cursor = first_close[1]
        tags = [tag for tag in tags if tag[0] >= cursor]
    kept: list[str] = []
    inside = late = False  # late: a <think> opened after answer text, read as text
    for start, end, closing in tags:
        if not closing and not inside and not late:
            kept.append(text[cursor:start])
            cursor = end
            if "".join(kept).strip():
                late = True
            else:
                inside = True
        elif closing and inside:
            inside, cursor = False, end
        elif closing or late:  # a tag that opens or closes nothing: it goes, the text before it stays
            kept.append(text[cursor:start])
            cursor, stray = end, stray or (closing and not late)
    if not inside:
        kept.append(text[cursor:])
    return Region(" ".join(kept), stray)
