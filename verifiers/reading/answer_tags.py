"""Where the ``<answer>…</answer>`` tags of a completion enclose text: the strongest statement of a
final answer, read the same way by every family that accepts it (``math``, ``choice``, ``qa``).

Kept apart from the readers that use it, so that sharing it costs a family no import time.
"""

from __future__ import annotations

import re

ANSWER_TAG = re.compile(r"<(/?)answer\s*>", re.IGNORECASE)


def answer_tags(text: str) -> list[tuple[int, int]]:
    """Where the contents of the closed ``<answer>…</answer>`` tags lie, found in one pass; an unclosed
    tag states nothing, and a second opening tag before a close restarts the span — after stating what
    the first one held, if anything: ``<answer>A <answer>B</answer>`` says A and B to a reader."""
    spans, opened = [], None
    for tag in ANSWER_TAG.finditer(text):
        if not tag.group(1):
            if opened is not None and text[opened : tag.start()].strip():
                spans.append((opened, tag.start()))
            opened = tag.end()
        elif opened is not None:
            spans.append((opened, tag.start()))
            opened = None
    return spans
