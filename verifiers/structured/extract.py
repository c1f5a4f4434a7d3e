"""Which text of a completion is its structured answer: all of it, or its one fenced block.

Never "some JSON found somewhere in the prose": a reader that searches lets a policy put several
candidates in one completion and be paid for whichever the search finds. The answer is either the
whole completion (``whole``, after a leading reasoning block) or exactly one fenced code block
(``fenced``): two fenced blocks are two answers, a hedge, whatever their languages, and so is a JSON
object or array written in the prose around the one block (:func:`value_outside`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from rewardsmith.verifiers.core import short
from rewardsmith.verifiers.reasoning import after_reasoning

EXTRACTS = ("whole", "fenced")
# A CommonMark fence: up to three spaces, three or more backticks or tildes, an info string.
_OPENER = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`\n]*$")
# The info strings a block of each format may carry (empty: a bare fence).
_BRACKET = re.compile(r"[\[{]")
_ATTEMPTS = 64  # brackets outside the block tried as the start of a JSON value
LANGUAGES = {"json": ("", "json", "jsonc"), "yaml": ("", "yaml", "yml"), "toml": ("", "toml")}


@dataclass(frozen=True)
class Region:
    """The answer's text, or why there is none (``problem``); ``hedge`` when there are several."""

    text: str | None
    problem: str = ""
    hedge: bool = False


def answer_text(completion: str, extract: str, fmt: str) -> Region:
    """The answer text of ``completion`` under ``extract`` (``whole`` or ``fenced``) for format ``fmt``."""
    region = after_reasoning(completion)
    if region is None:
        return Region(None, "the completion opens a <think> block and never closes it")
    if extract == "whole":
        text = region.strip(" \t\r\n")
        return Region(text) if text else Region(None, "empty answer")
    blocks = fenced_blocks(region)
    if isinstance(blocks, str):
        return Region(None, blocks)
    if not blocks:
        return Region(None, "no fenced code block")
    if len(blocks) > 1:
        return Region(None, f"{len(blocks)} fenced code blocks: one answer, one block", hedge=True)
    language, body, outside = blocks[0]
    if language.lower() not in LANGUAGES[fmt]:
        return Region(None, f"the fenced block is marked {language!r}, not {fmt}")
    stray = value_outside(outside)
    if stray:
        return Region(None, f"another value outside the fenced block: {stray}", hedge=True)
    text = body.strip(" \t\r\n")
    return Region(text) if text else Region(None, "empty fenced block")


def fenced_blocks(text: str) -> list[tuple[str, str, str]] | str:
    """Every fenced block of ``text`` as (info word, body, the text outside it), or a problem (a fence
    never closed). The text outside is only filled in when there is one block."""
    blocks: list[tuple[str, str, str]] = []
    spans: list[tuple[int, int]] = []
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        opener = _OPENER.match(lines[i])
        if opener is None:
            i += 1
            continue
        fence, language = opener.group(1), opener.group(2)
        closer = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = next((j for j in range(i + 1, len(lines)) if closer.match(lines[j])), None)
        if end is None:
            return "a fenced code block is never closed"
        blocks.append((language, "\n".join(lines[i + 1 : end]), ""))
        spans.append((i, end))
        i = end + 1
    if len(blocks) == 1:
        start, end = spans[0]
        blocks[0] = (*blocks[0][:2], "\n".join(lines[:start] + lines[end + 1 :]))
    return blocks


def value_outside(prose: str) -> str:
    """A JSON object or array written in the prose around the fenced block (shown short), or "".

    The block is the answer; prose around it may explain, but an object or array there is a second
    candidate, a hedge (``Or, if that is wrong: {...}``). Only containers count: a number or a word in
    a sentence cannot be told from narration. At most :data:`_ATTEMPTS` brackets are tried (each try
    is linear); prose with more is refused unread.
    """
    decoder = json.JSONDecoder()
    starts = [m.start() for m in _BRACKET.finditer(prose)]
    if len(starts) > _ATTEMPTS:
        return f"more than {_ATTEMPTS} brackets (not checked)"
    for start in starts:
        try:
            value, end = decoder.raw_decode(prose, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict | list) and value:
            return short(prose[start:end], 80)
    return ""
