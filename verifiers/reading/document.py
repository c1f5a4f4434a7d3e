"""A completion read as a document: everything its reader sees, code included.

:func:`~rewardsmith.verifiers.reading.visible` leaves code out, because code is not a stated answer. A family
that judges the response as a whole (instruction following: "no commas", "at most 100 words", "do not say
X") judges the code too: a reader sees it, and a comma or a forbidden word in a code block is on the page.
:func:`shown` is the same reading with code kept as written (fences and backticks included), except code that
is itself hidden (a code span inside ``~~…~~`` or an HTML comment stays hidden). Everything else is decided by
the same parsers, in the same way (docs/reading.md).
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.reading.latex import read_latex
from rewardsmith.verifiers.reading.markdown import _parser, _placer, math_spans, read_markdown
from rewardsmith.verifiers.reading.unicode import invisible_pattern
from rewardsmith.verifiers.reading.visible import _blank, _inside, _union, visible

# Where Markdown may hold code: a backtick, a tilde fence, or an indented line (CommonMark's code block).
_CODE = re.compile(r"`|~~~|^(?: {4}|\t)", re.MULTILINE)


def code_ranges(source: str) -> list[tuple[int, int]]:
    """Source ranges of code as CommonMark reads it (fenced and indented blocks with their fence lines, code
    spans with their backticks), found the way :func:`~rewardsmith.verifiers.reading.markdown.read_markdown`
    finds them (math masked first)."""
    if not _CODE.search(source):
        return []
    masked = list(source)
    for start, end in math_spans(source):
        for i in range(start, end):
            if masked[i] != "\n":
                masked[i] = "x"
    text = "".join(masked)
    line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
    lines = text.split("\n")
    ranges: list[tuple[int, int]] = []
    for token in _parser().parse(text):
        if token.map is None:
            continue
        first, last = token.map
        if token.type in ("fence", "code_block"):
            ranges.append((line_starts[first], line_starts[last] if last < len(line_starts) else len(text)))
        elif token.type == "inline" and token.children:
            place = _placer(token.content, lines, line_starts, first)
            ranges += [(place(c.meta["span"][0]), place(c.meta["span"][1])) for c in token.children
                       if c.type == "code_inline" and "span" in c.meta]
    return ranges


def shown(source: str) -> str | None:
    """What a reader sees of ``source`` as a document: :func:`visible`'s text with code kept as written;
    ``None`` when the completion redefines commands or a parser cannot read it (nothing in it can be read as
    written)."""
    code = code_ranges(source)
    if not code:
        seen = visible(source)
        return seen.text if seen.readable else None
    try:
        markdown = read_markdown(source)
        latex = read_latex(_blank(source, markdown.hidden))  # LaTeX is not read inside code either
    except Exception:  # a parser failing on what a completion wrote: nothing in it can be vouched for
        return None
    if latex.redefines:
        return None
    kept = set(code)
    hidden = _union([*(r for r in markdown.hidden if r not in kept), *latex.hidden])
    edits = [(s, e, "\n" if "\n" in source[s:e] else " ") for s, e in hidden]
    covered = list(edits)
    edits += [(s, e, r) for s, e, r in markdown.replaced if not _inside(covered, s)]
    if not source.isascii():
        blanks = invisible_pattern().finditer(source)
        edits += [(m.start(), m.end(), "") for m in blanks if not _inside(covered, m.start())]
    out, cursor = [], 0
    for start, end, replacement in sorted(edits):
        if start >= cursor:
            out += [source[cursor:start], replacement]
            cursor = end
    out.append(source[cursor:])
    return "".join(out)
