"""Where a completion boxes its answer: every outermost ``\\boxed{…}``, ``\\fbox{…}`` or ``\\framebox{…}``
(and the brace-less ``\\boxed 5``), braces matched in one pass.

One definition for every family that reads boxes (math, choice, qa, reasoning_gym): a box one family sees
and another misses would let a hedge through one of them.
"""

from __future__ import annotations

import re

BOX_COMMAND = re.compile(r"\\(?:boxed|fbox|framebox)(?![A-Za-z])\s*")
_BRACE_TOKEN = re.compile(r"\\.|[{}]", re.DOTALL)


def brace_pairs(text: str) -> dict[int, int]:
    """Index of each ``{`` that is closed → index of its ``}``, in one pass.

    ``\\{`` and ``\\}`` are literal braces; ``\\\\`` is a line break, so a brace after it is real.
    """
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for token in _BRACE_TOKEN.finditer(text):
        if token.group(0) == "{":
            stack.append(token.start())
        elif token.group(0) == "}" and stack:
            pairs[stack.pop()] = token.start()
    return pairs


def balanced_group(text: str, start: int) -> tuple[str, int] | None:
    """The brace group opening at ``text[start] == '{'``: its content and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    end = brace_pairs(text[start:]).get(0)
    return None if end is None else (text[start + 1 : start + end], start + end + 1)


def boxes(text: str, pairs: dict[int, int] | None = None) -> list[tuple[int, int, str]]:
    """Every outermost ``\\boxed{…}``/``\\fbox{…}`` (also the brace-less ``\\boxed 5``): start, end, content."""
    pairs = brace_pairs(text) if pairs is None else pairs
    found: list[tuple[int, int, str]] = []
    inside_until = -1
    for match in BOX_COMMAND.finditer(text):
        if match.start() < inside_until:
            continue  # a box inside a box is part of the outer answer
        brace = match.end()
        if brace < len(text) and text[brace] == "{":
            close = pairs.get(brace)
            if close is None:
                continue
            found.append((match.start(), close + 1, text[brace + 1 : close]))
            inside_until = close + 1
        elif match.group(0)[-1].isspace():  # "\boxed 5": the token after the space
            bare = re.match(r"[^\s$]+", text[match.end() : match.end() + 200])
            if bare:
                found.append((match.start(), match.end() + bare.end(), bare.group(0)))
    return found


def last_boxed(text: str) -> str | None:
    """Content of the last box, or None."""
    found = boxes(text)
    return found[-1][2] if found else None
