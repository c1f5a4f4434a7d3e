"""The structure a reader sees on a page, as CommonMark lays it out: bullet items, emphasis, thematic breaks.

Instructions ask for structure ("exactly 3 bullet points", "highlight 2 sections", "paragraphs separated by
the divider ***"), and a reader sees the rendered structure, not characters at the start of a line. So these
are read from the parse of the page (:func:`~rewardsmith.verifiers.reading.document.read_page`'s text), never
from patterns: ``-`` at the start of a code line, of an escaped ``\\-`` or of a line inside an HTML block is
text; ``---`` and ``* * *`` are rules, not bullets; ``+ item`` is a bullet; ``_part_`` is emphasis and
``*part*`` in backticks is code; ``\\*part\\*`` is two literal asterisks.
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.reading.markdown import block_ranges, code_ranges, parsed, read_markdown
from rewardsmith.verifiers.reading.unicode import strip_invisible

__all__ = ["bullet_items", "dividers", "emphasized", "thematic_breaks"]

_EMPHASIS_OPEN = frozenset({"em_open", "strong_open"})
_EMPHASIS_CLOSE = frozenset({"em_close", "strong_close"})


def bullet_items(page: str) -> int:
    """The items of every bullet list (``-``, ``*``, ``+``), nested ones included; numbered items are not
    bullets."""
    kinds: list[str] = []
    count = 0
    for token in parsed(page)[1]:
        if token.type in ("bullet_list_open", "ordered_list_open"):
            kinds.append(token.type)
        elif token.type in ("bullet_list_close", "ordered_list_close") and kinds:
            kinds.pop()
        elif token.type == "list_item_open" and kinds and kinds[-1] == "bullet_list_open":
            count += 1
    return count


def emphasized(page: str) -> int:
    """The emphasised spans (``*x*``, ``_x_``, ``**x**``, ``<em>`` is HTML and not counted) with text a reader
    sees; one inside another is part of it (``***x***`` is one span)."""
    count = 0
    for token in parsed(page)[1]:
        if token.type != "inline" or not token.children:
            continue
        depth, text = 0, ""
        for child in token.children:
            if child.type in _EMPHASIS_OPEN:
                depth, text = depth + 1, text if depth else ""
            elif child.type in _EMPHASIS_CLOSE and depth:
                depth -= 1
                count += depth == 0 and bool(strip_invisible(text).strip())  # "*&#8203;*" highlights nothing
            elif depth:
                text += child.content
    return count


def thematic_breaks(page: str) -> list[tuple[int, int]]:
    """Where the page's thematic breaks (``***``, ``---``, ``* * *``, ``___``) lie, each its whole line."""
    return block_ranges(page, "hr")


_STARS = re.compile(r"\*\*\*")


def dividers(page: str) -> list[tuple[int, int]]:
    """Where a reader sees the divider ``***`` between paragraphs: a thematic break, or three asterisks shown as
    characters (``end of a stanza ***``); never asterisks that render as emphasis (``***bold***``) or sit in
    code. In order, not overlapping."""
    found = thematic_breaks(page)
    if "***" in page:
        covered = [*read_markdown(page).styles, *code_ranges(page)]
        found += [m.span() for m in _STARS.finditer(page)
                  if not any(a < m.end() and m.start() < b for a, b in covered)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
