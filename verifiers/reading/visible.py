"""The visible source of a completion: what its reader sees, as source text, with a map back to the original.

Markdown decides first (code, comments, crossed-out text, link targets, images), then LaTeX reads what is
left (comments, ``\\iffalse``, phantoms, white text, crossed-out commands, redefinitions), then characters
that render as nothing are dropped. Each hidden range becomes one space (a line break where it held one), so
the words on either side stay apart; an entity becomes the character it renders; everything else is the
source, verbatim.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from rewardsmith.verifiers.reading.latex import read_latex
from rewardsmith.verifiers.reading.markdown import code_ranges, read_markdown
from rewardsmith.verifiers.reading.unicode import REORDERING, invisible_pattern, overlay_pattern

# Characters a renderer consumes as markup: a combining mark after one attaches to whatever glyph the renderer
# draws there (the last of a formula after its closing $), so what it marks cannot be read from the source.
_MARKUP = frozenset("$*_`~<>\\{}[]()|#")
_MARK_ON_MARKUP = "(puts a strike or an enclosing mark on markup, which marks whatever the renderer draws there)"


@dataclass(frozen=True)
class Visible:
    """What a reader sees of ``source``.

    ``text`` is the visible source (LaTeX and Markdown kept as written); ``pieces`` maps it back: each
    ``(text_start, source_start, length)`` is a run copied verbatim. ``redefines`` names the commands the
    completion defines or redefines (or says that a parser could not read it): such a completion has no
    readable answer (``readable`` is False).
    """

    source: str
    text: str
    pieces: tuple[tuple[int, int, int], ...]
    redefines: tuple[str, ...] = ()

    @property
    def readable(self) -> bool:
        return not self.redefines

    def source_offset(self, offset: int) -> int:
        """Where ``text[offset]`` came from in ``source`` (for a character a hidden range or an entity became:
        the start of that range)."""
        i = bisect.bisect_right(self.pieces, (offset, float("inf"), 0)) - 1
        if i < 0:
            return 0
        start, source_start, length = self.pieces[i]
        return source_start + min(offset - start, length)


def visible(source: str, keep_code: bool = False, keep_style: bool = False, page: bool = False) -> Visible:
    """``source`` as its reader sees it (see the module and docs/reading.md): code is not text a reader reads
    as stated, and emphasis markers (``**``, ``_``, ``<b>``) are a style, not characters; both go. A family that
    judges the response as a page keeps code (a comma in it is on the page; code that is itself hidden, in a
    comment or struck, stays hidden) and style (a highlight is an instruction); one that asks whether some
    markup is shown as written keeps style (bold text is shown). ``page``: a comment within a line renders as
    nothing, as a browser renders it (``l<!---->ost`` is "lost"), where an answer's reading keeps the words on
    either side apart."""
    try:
        markdown = read_markdown(source)
        hidden = markdown.hidden
        if keep_code:
            code = set(code_ranges(source))
            hidden = [r for r in hidden if r not in code]
        latex = read_latex(blank(source, hidden))  # LaTeX is not read inside code either
    except Exception:  # a parser failing on what a completion wrote: nothing in it can be vouched for
        return Visible(source, "", (), ("(unreadable markup)",))
    edits = [(s, e, _rendered(source[s:e], page)) for s, e in _union([*hidden, *latex.hidden])]
    covered = list(edits)
    edits += [(s, e, r) for s, e, r in markdown.replaced if not _inside(covered, s)]
    if not keep_style:
        edits += [(s, e, "") for s, e in markdown.styles if not _inside(covered, s)]
    if not source.isascii():
        if REORDERING.search(source):  # shown in another order than stored: nothing reads as written
            return Visible(source, "", (), ("(a bidirectional override: shown in another order than written)",))
        struck = [m for m in overlay_pattern().finditer(source) if not _inside(covered, m.start())]
        if any(source[m.start()] in _MARKUP for m in struck):  # a mark on $ or ** lands where the renderer puts it
            return Visible(source, "", (), (_MARK_ON_MARKUP,))
        edits += [(m.start(), m.end(), " ") for m in struck]  # B\u0336: a letter struck through, like \cancel
        blanks = invisible_pattern().finditer(source)
        edits += [(m.start(), m.end(), "") for m in blanks if not _inside(covered, m.start())]
    text, pieces, cursor = [], [], 0
    length = 0
    for start, end, replacement in sorted(edits):
        if start < cursor:
            continue
        if start > cursor:
            pieces.append((length, cursor, start - cursor))
            text.append(source[cursor:start])
            length += start - cursor
        text.append(replacement)
        length += len(replacement)
        cursor = end
    if cursor < len(source):
        pieces.append((length, cursor, len(source) - cursor))
        text.append(source[cursor:])
    return Visible(source, "".join(text), tuple(pieces), tuple(dict.fromkeys(latex.redefines)))


def _rendered(hidden: str, page: bool) -> str:
    """What a hidden range becomes: a line break where it held one, else one space; on a page, nothing for a
    comment within a line."""
    if "\n" in hidden:
        return "\n"
    return "" if page and hidden.startswith("<!--") and hidden.endswith("-->") else " "


def readable_text(source: str, keep_style: bool = False) -> str:
    """The visible text of ``source``, or ``""`` when it redefines commands: then nothing in it can be read as
    written (the families score that ``no_answer``). ``keep_style``: see :func:`visible`."""
    seen = visible(source, keep_style=keep_style)
    return seen.text if seen.readable else ""


def blank(text: str, ranges: list[tuple[int, int]]) -> str:
    """``text`` with ``ranges`` overwritten by spaces (line breaks kept): same length, nothing to read there."""
    if not ranges:
        return text
    chars = list(text)
    for start, end in ranges:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _union(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _inside(ranges: list[tuple[int, int, str]], at: int) -> bool:
    i = bisect.bisect_right(ranges, (at, float("inf"), "")) - 1
    return i >= 0 and ranges[i][0] <= at < ranges[i][1]
