"""A completion read as a page: everything its reader sees, code included, HTML rendered.

:func:`~rewardsmith.verifiers.reading.visible` leaves code out, because code is not a stated answer. A family
that judges the response as a whole (instruction following: "no commas", "at most 100 words", "do not say
X") judges the code too: a reader sees it, and a comma or a forbidden word in a code block is on the page.
:func:`read_page` is the same reading with code and style markup kept as written (fences, backticks and
emphasis markers included: "highlight three sections" is about the markers), except code that is itself
hidden (a code span inside ``~~…~~`` or an HTML comment stays hidden), and with HTML rendered as a browser
renders it: a tag is no text (its attributes, a ``title`` tooltip included, are not on the page; ``lo<span>st``
is "lost"), a block element's tag breaks the line, a comment within a line is nothing. HTML outside the
closed grammar of :mod:`~rewardsmith.verifiers.reading.html` (a ``style``, a ``class``, an element that
hides or replaces its content) leaves nothing readable, as it does for an answer: a style can show any text
in any case, or none. IFEval's title notation ``<<title>>`` is text, as the instruction defines it (a
browser would take ``<title>`` for a tag). Math is rendered to the characters it shows (pylatexenc's
``latex2text``): ``$b{}a{}d$`` shows "bad", ``$3\\times4$`` shows "3×4" (no word "times"), ``$10\\,000$`` no
comma, ``$\\Rightarrow$`` no capital. Everything else is decided by the same parsers, in the same way
(docs/reading.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rewardsmith.verifiers.reading.html import BREAKING, Tag, html_tags
from rewardsmith.verifiers.reading.markdown import code_ranges, html_blocks, math_spans
from rewardsmith.verifiers.reading.visible import visible

__all__ = ["Page", "code_ranges", "read_page", "shown"]


@dataclass(frozen=True)
class Page:
    """What a reader sees of a response as a page; ``unreadable`` says why nothing in it reads as written
    (then ``text`` is empty)."""

    text: str
    unreadable: str = ""


def read_page(source: str) -> Page:
    """``source`` as its reader sees it on a page (module docstring)."""
    seen = visible(source, keep_code=True, keep_style=True, page=True)
    if not seen.readable:
        named = [n for n in seen.redefines if not n.startswith("(")]
        why = f"redefines {', '.join(named[:3])}" if named else seen.redefines[0].strip("()")
        return Page("", f"the response {why}: it does not read as written")
    outside = next((t for t in _tags(source) if not t.readable), None)
    if outside is not None:
        return Page("", f"the response holds HTML outside the readable set ({source[outside.start:outside.end][:60]}):"
                        " its styles or elements can show any text, or none")
    text = _math_shown(seen.text)
    return Page(_rendered(text, _tags(text), html_blocks(text)))


def shown(source: str) -> str | None:
    """:func:`read_page`'s text, or ``None`` when nothing in ``source`` reads as written."""
    page = read_page(source)
    return None if page.unreadable else page.text


def _tags(text: str) -> list[Tag]:
    """The HTML tags of ``text``, leaving out the title notation's (``<<A Title>>``)."""
    return [t for t in html_tags(text) if not (text[t.start - 1 : t.start] == "<" and text[t.end : t.end + 1] == ">")]


def _rendered(text: str, tags: list[Tag], blocks: list[tuple[int, int]]) -> str:
    """``text`` with each tag as a browser shows it (a line break for a block element's, nothing otherwise), and
    the line breaks of an HTML block as the white space they are there (Markdown is not read inside one: its
    ``- item`` lines are one line of text)."""
    out, cursor = [], 0
    for start, end, replacement in [*((t.start, t.end, "\n" if t.name in BREAKING else "") for t in tags),
                                     (len(text), len(text), "")]:
        piece = text[cursor:start]
        if any(a < start and cursor < b for a, b in blocks):
            piece = "".join(" " if ch == "\n" and _inside(blocks, cursor + i) else ch for i, ch in enumerate(piece))
        out += [piece, replacement]
        cursor = end
    return "".join(out)


def _inside(blocks: list[tuple[int, int]], at: int) -> bool:
    return any(a <= at < b - 1 for a, b in blocks)  # the block's last line break ends it


@lru_cache(maxsize=1)
def _latex_to_text() -> Any:
    """pylatexenc's renderer of LaTeX as text, built once (imported on the first page holding math)."""
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text")


def _math_shown(text: str) -> str:
    """``text`` with each math segment (not in code) as the characters it renders."""
    if "$" not in text and "\\(" not in text and "\\[" not in text:
        return text
    code = code_ranges(text)
    spans = [(a, b) for a, b in math_spans(text) if not any(c <= a < d for c, d in code)]
    if not spans:
        return text
    to_text = _latex_to_text()
    out, cursor = [], 0
    for start, end in spans:
        width = 2 if text[start : start + 2] in ("$$", "\\(", "\\[") else 1
        try:
            shown = to_text.latex_to_text(text[start + width : end - width])
        except Exception:  # what the tokenizer cannot read stays as written
            shown = text[start:end]
        out += [text[cursor:start], shown]
        cursor = end
    out.append(text[cursor:])
    return "".join(out)
