"""Where a completion's answer starts when it may open with a reasoning block.

Shared by the families that read a whole completion as their answer (``json``): reasoning is not
the answer, so a leading ``<think>…</think>`` block is skipped, and everything up to a ``</think>``
with no ``<think>`` before it is too (the chat template opened the block in the prompt). A block
that opens and never closes leaves no answer at all: a policy must not earn reward by hiding its
output in reasoning that never ends.
"""

from __future__ import annotations

import re

THINK_OPEN = re.compile(r"<think\s*>", re.IGNORECASE)
THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)


def after_reasoning(text: str) -> str | None:
    """The text after a leading reasoning block (``text`` itself when there is none); ``None`` when
    the completion opens a block it never closes.

    Only a block at the start counts (after whitespace): ``<think>`` later in the text is part of the
    answer, so the answer's own characters are never cut out of its middle.
    """
    opened = THINK_OPEN.match(text, len(text) - len(text.lstrip()))
    if opened is not None:
        closed = THINK_CLOSE.search(text, opened.end())
        return None if closed is None else text[closed.end() :]
    closed = THINK_CLOSE.search(text)
    if closed is not None and THINK_OPEN.search(text, 0, closed.start()) is None:
        return text[closed.end() :]  # the template opened the block: everything before its close is reasoning
    return text
