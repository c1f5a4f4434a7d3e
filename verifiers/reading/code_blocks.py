"""The code blocks a reader sees, found by the CommonMark parser (markdown-it-py), not by patterns.

A reader sees a code block as a box holding its content verbatim: the content is the document (the
``json`` family's fenced answer), and :func:`~rewardsmith.verifiers.reading.visible` hides it from
prose readers because code is not a stated answer. Only what the parser takes for a block is one: a
fence inside an HTML comment or an HTML block renders as no block, a fence in a list item or a
quote is one (its content without the container's indentation).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_LINE_END = re.compile(r"\r\n?")


@dataclass(frozen=True)
class CodeBlock:
    """One code block: its info string's first word (``json`` in ```` ```json ````; empty for a bare
    fence or an indented block), its content, the source range of its lines (fences included), whether
    it is fenced, and whether its fence is closed (CommonMark runs an unclosed fence to the end)."""

    info: str
    content: str
    start: int
    end: int
    fenced: bool
    closed: bool


def code_blocks(text: str) -> list[CodeBlock]:
    """Every fenced and indented code block of ``text``, in order. Offsets are into ``text`` with its
    line ends as CommonMark reads them (:func:`line_feeds`): pass text that has them."""
    text = line_feeds(text)
    if "```" not in text and "~~~" not in text and "    " not in text and "\t" not in text:
        return []
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    blocks = []
    for token in _parser().parse(text):
        if token.type not in ("fence", "code_block") or token.map is None:
            continue
        first, last = token.map
        fenced = token.type == "fence"
        closed = not fenced or (last - 1 > first and _closes(lines[last - 1], token.markup))
        info = token.info.split()[0] if token.info.strip() else ""
        blocks.append(CodeBlock(info, token.content, starts[first], min(starts[last], len(text)), fenced, closed))
    return blocks


def line_feeds(text: str) -> str:
    """``text`` with each line end (CRLF, a lone CR) as one line feed, as CommonMark reads it."""
    return _LINE_END.sub("\n", text) if "\r" in text else text


def _closes(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence`` (after any container marker: the same
    character, at least as many, nothing else)."""
    stripped = line.rstrip(" \t")
    run = len(stripped) - len(stripped.rstrip(fence[0]))
    return run >= len(fence) and stripped[: len(stripped) - run].rstrip(" \t>").strip() == ""


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable("inline")  # blocks only: inline parsing, the costly part, finds none
