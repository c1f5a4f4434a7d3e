"""Markup that dresses an answer (shown) or hides it (not shown), read as a reader sees it.

``\\boxed{\\textbf{9}}`` and ``\\boxed{\\color{blue}{9}}`` show 9; ``\\boxed{\\phantom{17}}`` and
``{\\color{white} 17}`` show nothing, so they answer nothing: grading the hidden 17 would pay a
completion for an answer no reader can see. A label inside the answer (``\\text{Final: } 9``)
is dressing too.
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.reading.boxes import balanced_group

# \cmd{X} shows X as it is.
_DRESS = frozenset({"textbf", "mathbf", "boldsymbol", "bm", "pmb", "underline", "emph", "textit", "textsl",
                    "mathit", "textup", "textmd", "mathnormal", "bbox", "fcolorbox", "colorbox", "textcolor",
                    "color", "cancel"})
# \cmd{X} shows nothing.
_HIDE = frozenset({"phantom", "hphantom", "vphantom"})
# Colours on the page's own background.
_INVISIBLE = frozenset({"white", "transparent", "none", "bg", "background"})
_COMMAND = re.compile(r"\\([A-Za-z]+)\s*")
_LABEL = re.compile(
    r"\\(?:text|textbf|mathrm|mbox)\s*\{\s*(?:the\s+)?(?:final\s+answer|final|answer|result|ans)\s*(?:is)?\s*[:=]?\s*\}"
    r"\s*[:=]?\s*",
    re.IGNORECASE,
)
_MAX_ROUNDS = 64


def shown(text: str) -> str:
    """``text`` with dressing removed and hidden parts dropped: what a reader sees."""
    text = _LABEL.sub("", text)
    for _ in range(_MAX_ROUNDS):
        rewritten = _one_round(text)
        if rewritten == text:
            return text
        text = rewritten
    return ""  # more nesting than any honest answer has: nothing we can vouch is shown


def _one_round(text: str) -> str:
    out: list[str] = []
    cursor = 0
    for command in _COMMAND.finditer(text):
        if command.start() < cursor:
            continue
        name = command.group(1)
        if name not in _DRESS and name not in _HIDE:
            continue
        out.append(text[cursor : command.start()])
        position = command.end()
        if name in ("color", "textcolor", "colorbox", "fcolorbox"):
            colour, position = _group(text, position)
            if name == "fcolorbox":
                _, position = _group(text, position)  # the frame colour, then the background
            invisible = colour is not None and colour.strip().lower() in _INVISIBLE
            if name == "color" and not text[position:].lstrip().startswith("{"):
                # \color{c} colours the rest of its group: "{\color{white} 17}".
                if invisible:
                    return "".join(out)  # the rest is hidden (its closing braces go with it)
                cursor = position
                break
            content, after = _group(text, position)
            hidden = invisible and name != "fcolorbox" and name != "colorbox"
            out.append("" if hidden or content is None else content)
            cursor = after
            continue
        content, after = _group(text, position)
        if content is None:  # "\textbf 9": left as written
            cursor = command.start()
            continue
        out.append("" if name in _HIDE else content)
        cursor = after
    out.append(text[cursor:])
    return "".join(out)


def _group(text: str, start: int) -> tuple[str | None, int]:
    """The ``{…}`` group at ``start`` (spaces skipped): its content and the index after it."""
    while start < len(text) and text[start] == " ":
        start += 1
    found = balanced_group(text, start)
    return (None, start) if found is None else found
