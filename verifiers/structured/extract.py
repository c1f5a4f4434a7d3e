"""Which text of a completion is its structured answer: all of it, or its fenced block.

Never "some JSON found somewhere in the prose": a reader that searches lets a policy put several
candidates in one completion and be paid for whichever the search finds. The answer is either the
whole answer region (``whole``: the completion without its reasoning blocks, a document read as
data, where Markdown means nothing) or a fenced code block (``fenced``) as the CommonMark parser finds it
(:func:`~rewardsmith.verifiers.reading.code_blocks.code_blocks`: a reader sees a code block, and the
document is its content, verbatim; a fence inside an HTML comment is no block). Every other document
the region shows is a second answer unless it is the same value: another block of the format
(:attr:`Region.others`, compared by the grader once read), a JSON object or array anywhere in the
text outside the blocks (:func:`values_outside`, hidden text included: hiding a second document does
not make it less of one), and any block marked as another language (code beside the answer is a
second answer in another notation; it cannot be compared, so it is a hedge).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rewardsmith.verifiers.core import short
from rewardsmith.verifiers.reading.code_blocks import code_blocks, line_feeds

EXTRACTS = ("whole", "fenced")
_BRACKET = re.compile(r"[\[{]")
_ATTEMPTS = 64  # brackets outside the block tried as the start of a JSON value
# The info strings a block of each format may carry (empty: a bare fence, or an indented block).
LANGUAGES = {"json": ("", "json", "jsonc"), "yaml": ("", "yaml", "yml"), "toml": ("", "toml")}


@dataclass(frozen=True)
class Region:
    """The answer's text, or why there is none (``problem``; ``hedge`` when there are several).
    ``others``: the other blocks of the format, each to read as the same value; ``outside``: the rest
    of the region (the prose), where no other JSON value may stand."""

    text: str | None
    problem: str = ""
    hedge: bool = False
    others: tuple[str, ...] = ()
    outside: str = ""


def answer_text(region: str, extract: str, fmt: str) -> Region:
    """The answer text of a completion's answer region (:func:`~rewardsmith.verifiers.reading.source_region`:
    the source without its reasoning blocks) under ``extract`` (``whole`` or ``fenced``) for format ``fmt``."""
    if not region.strip():
        return Region(None, "nothing outside the reasoning blocks" if region else "empty answer")
    if extract == "whole":
        text = region.strip(" \t\r\n")
        return Region(text) if text else Region(None, "empty answer")
    region = line_feeds(region)  # the offsets of the blocks are into the text as CommonMark reads it
    blocks = code_blocks(region)
    if any(not block.closed for block in blocks):
        return Region(None, "a fenced code block is never closed")
    fenced = [block for block in blocks if block.fenced]
    if not fenced:
        return Region(None, "no fenced code block")
    ours = [block for block in blocks if block.info.lower() in LANGUAGES[fmt]]
    foreign = [block for block in fenced if block not in ours]
    if not any(block.fenced for block in ours):
        return Region(None, f"the fenced block is marked {fenced[0].info!r}, not {fmt}")
    if foreign:
        return Region(
            None,
            f"{len(blocks)} fenced code blocks, one marked {foreign[0].info!r}: one answer, one notation",
            hedge=True,
        )
    first = next(block for block in ours if block.fenced)
    text = first.content.strip(" \t\r\n")
    if not text:
        return Region(None, "empty fenced block")
    outside, cursor = [], 0
    for block in ours:
        outside.append(region[cursor : block.start])
        cursor = block.end
    outside.append(region[cursor:])
    others = tuple(block.content.strip(" \t\r\n") for block in ours if block is not first)
    return Region(text, others=others, outside="\n".join(outside))


def values_outside(prose: str) -> list[tuple[Any, str]] | str:
    """Every non-empty JSON object or array written in ``prose`` (numbers exact), each with its text
    shown short, or a problem: more than :data:`_ATTEMPTS` brackets, refused unread (each try is
    linear). Only containers count: a number or a word in a sentence cannot be told from narration.
    A value found is skipped over (its inner brackets are part of it)."""
    decoder = json.JSONDecoder(parse_float=Decimal)
    starts = [m.start() for m in _BRACKET.finditer(prose)]
    if len(starts) > _ATTEMPTS:
        return f"more than {_ATTEMPTS} brackets (not checked)"
    found: list[tuple[Any, str]] = []
    end = 0
    for start in starts:
        if start < end:
            continue
        try:
            value, stop = decoder.raw_decode(prose, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict | list) and value:
            found.append((value, short(prose[start:stop], 80)))
            end = stop
    return found
