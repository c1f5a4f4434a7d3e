"""What Markdown hides, read by markdown-it-py (CommonMark, with ``~~strikethrough~~``), not by patterns.

A reader of the rendered completion does not take as stated: code (fenced and indented blocks, code spans:
code is not an answer), HTML comments, crossed-out text (``~~x~~``, ``<del>``, ``<s>``, ``<strike>``), HTML
that does not render (``<script>``, ``<style>``, ``<template>``, elements with ``hidden`` or a style that
hides them: ``display:none``, ``visibility:hidden``, white or transparent colour, zero opacity or size), a
link's target (its text is shown), an image (its alt text shows only where the image fails to load). An
HTML entity is read as the character it renders (``&#66;`` is ``B``). Other HTML tags (``<think>``,
``<answer>``) stay in the source for the later layers.

Math is masked before parsing (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``), as Markdown renderers with
math do: Markdown never reads inside it, and LaTeX escapes there stay LaTeX.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from html.parser import HTMLParser
from typing import Any

_MATH_MARK = re.compile(r"\\[$\\]|\$\$|\$|\\[()\[\]]|\n")
_CLOSES = {"$$": "$$", "$": "$", "\\(": "\\)", "\\[": "\\]"}
# Where Markdown may hide or re-spell something (code, ~~, a comment, an element that hides, an entity, a link's
# target or reference, an indented block): the parser runs only on a completion that has one; it decides.
TRIGGER = re.compile(
    r"`|~|<!--|<(?:del|s|strike|script|style|template|noscript|details)\b|<[A-Za-z][^<>]*\b(?:hidden|style)\b"
    r"|&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);|\]\s*[(\[:]|^(?: {4}|\t)"
    r"|\*\S|\S\*|(?<![A-Za-z0-9])_\S|\S_(?![A-Za-z0-9])|<(?:b|strong|em|i|u|mark)>",
    re.IGNORECASE | re.MULTILINE,
)
_HIDING_ELEMENTS = frozenset({"del", "s", "strike", "script", "style", "template", "noscript"})
# Emphasis, as Markdown delimiters or HTML tags, renders as a style: its markers are no characters of the text.
_EMPHASIS = frozenset({"em_open", "em_close", "strong_open", "strong_close"})
_STYLE_TAGS = frozenset({"b", "strong", "em", "i", "u", "mark"})
# Of those, the formatting elements an HTML parser reopens in every later block until their close tag.
_CARRIED = frozenset({"s", "strike"})
_HIDING_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|(?<![-\w])color\s*:\s*(?:white|transparent|#fff(?:fff)?\b)"
    r"|opacity\s*:\s*0*(?:\.0*)?\s*(?:;|$)|font-size\s*:\s*0*(?:\.0*)?(?:px|em|rem|pt|%)?\s*(?:;|$)",
    re.IGNORECASE,
)
_REFERENCE = re.compile(r"^[ >]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?\[[^\]]+\]:")
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "wbr", "area", "base", "col", "embed", "source"})


@dataclass
class MarkdownReading:
    """Source ranges a reader does not see, and ranges that render as other text (an entity)."""

    hidden: list[tuple[int, int]] = field(default_factory=list)
    replaced: list[tuple[int, int, str]] = field(default_factory=list)
    # unclosed <s>/<strike>: name, paragraph end, how many are open there (<s><s> needs two closes)
    carried: list[tuple[str, int, int]] = field(default_factory=list)
    styles: list[tuple[int, int]] = field(default_factory=list)  # emphasis markers: a style, not characters


def math_spans(text: str) -> list[tuple[int, int]]:
    """Where math segments lie (delimiters included): Markdown does not read inside them. One pass over the
    delimiters; inline ``$…$`` does not cross a line, opens before a non-space and closes after one, not before a
    digit (Pandoc's rule), and an opener never closed opens nothing."""
    spans: list[tuple[int, int]] = []
    opened: tuple[str, int] | None = None
    for mark in _MATH_MARK.finditer(text):
        token = mark.group(0)
        if token in ("\\$", "\\\\"):
            continue  # an escaped dollar is currency; an escaped backslash escapes nothing after it
        if opened is None:
            if token in _CLOSES and not (token == "$" and text[mark.end() : mark.end() + 1].isspace()):
                opened = (token, mark.start())
        elif token == _CLOSES[opened[0]]:
            if token == "$" and (text[mark.start() - 1].isspace() or text[mark.end() : mark.end() + 1].isdigit()):
                continue  # Pandoc's rule: "$5 and $6" closes nothing (a space before, a digit after)
            spans.append((opened[1], mark.end()))
            opened = None
        elif token == "\n" and opened[0] == "$":
            opened = None
    return spans


def parsed(source: str) -> tuple[str, list[Any]]:
    """``source`` with its math masked (each character an ``x``, line breaks kept: same offsets) and
    CommonMark's tokens of it, each inline token's children carrying their source span (``meta["span"]``,
    offsets into the block's content)."""
    masked = list(source)
    for start, end in math_spans(source):
        for i in range(start, end):
            if masked[i] != "\n":
                masked[i] = "x"
    text = "".join(masked)
    return text, _parser().parse(text)


# Where Markdown may hold code: a backtick, a tilde fence, or an indented line (CommonMark's code block).
_CODE = re.compile(r"`|~~~|^(?: {4}|\t)", re.MULTILINE)


def code_ranges(source: str) -> list[tuple[int, int]]:
    """Source ranges of code as CommonMark reads it (fenced and indented blocks with their fence lines, code
    spans with their backticks), found the way :func:`~rewardsmith.verifiers.reading.markdown.read_markdown`
    finds them (math masked first)."""
    if not _CODE.search(source):
        return []
    text, tokens = parsed(source)
    line_starts = [0, *(m.end() for m in re.finditer("\n", text))]
    lines = text.split("\n")
    ranges: list[tuple[int, int]] = []
    for token in tokens:
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


def block_ranges(source: str, kind: str) -> list[tuple[int, int]]:
    """Source ranges of CommonMark's blocks of one token type (``html_block``, ``hr``, ...), whole lines each."""
    text, tokens = parsed(source)
    line_starts = [0, *(m.end() for m in re.finditer("\n", text)), len(text)]
    return [(line_starts[t.map[0]], line_starts[min(t.map[1], len(line_starts) - 1)]) for t in tokens
            if t.type == kind and t.map is not None]


def html_blocks(source: str) -> list[tuple[int, int]]:
    """Source ranges of CommonMark's HTML blocks (a line starting with a block tag, up to a blank line): Markdown
    is not read inside one."""
    return block_ranges(source, "html_block") if "<" in source else []


def read_markdown(text: str) -> MarkdownReading:
    """Where the Markdown of ``text`` hides source, and where an entity renders as another character."""
    out = MarkdownReading()
    if not TRIGGER.search(text):
        return out
    source, tokens = parsed(text)
    line_starts = [0, *(m.end() for m in re.finditer("\n", source))]
    lines = source.split("\n")
    shown_lines: set[int] = set()
    for token in tokens:
        if token.map is None:
            continue
        first, last = token.map
        if token.type in ("fence", "code_block", "html_block", "inline", "hr"):
            shown_lines.update(range(first, last))
        if token.type in ("fence", "code_block"):
            out.hidden.append((line_starts[first], line_starts[last] if last < len(line_starts) else len(source)))
        elif token.type == "html_block":
            place = _placer(token.content, lines, line_starts, first)
            out.hidden += [(place(a), place(b)) for a, b in _html_hidden(token.content)]
        elif token.type == "inline" and token.children:
            place = _placer(token.content, lines, line_starts, first)
            _inline(token.children, place, len(token.content), out)
            out.hidden += [(place(a), place(b)) for a, b in single_tilde_strikes(token.content)]
    out.hidden += _collapsed(source, out.hidden)
    out.hidden += _carried(source, out)
    # A comment never closed: a browser shows nothing after it (CommonMark would print it; the stricter reading).
    opened = source.rfind("<!--")
    if opened >= 0 and source.find("-->", opened + 4) < 0 and not any(a <= opened < b for a, b in out.hidden):
        out.hidden.append((opened, len(source)))
    # A link reference definition ("[r]: http://...") renders as nothing and has no token of its own.
    for row, line in enumerate(lines):
        if row not in shown_lines and _REFERENCE.match(line):
            out.hidden.append((line_starts[row], line_starts[row] + len(line)))
    return out


# GitHub's Markdown strikes ~text~ as it strikes ~~text~~ (CommonMark's extension reads only the double run):
# an opening single tilde before a non-space, a closing one after a non-space, neither beside another tilde.
_SINGLE_TILDE = re.compile(r"(?<!~)~(?=[^\s~])(?:[^~]|~~+)*?(?<=[^\s~])~(?!~)")


def single_tilde_strikes(content: str) -> list[tuple[int, int]]:
    """Where a paragraph's ``~text~`` lies: struck on GitHub, so not text every renderer surely shows (an answer
    there is not read)."""
    return [m.span() for m in _SINGLE_TILDE.finditer(content)]


_DETAILS = re.compile(r"<(/?)details\b([^<>]*)>", re.IGNORECASE)


def _collapsed(source: str, hidden: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each collapsed ``<details>`` element across blocks (Markdown inside it, after a blank line, is its own
    block): from its tag to its matching close, or to the end when it never closes. One not in ``open`` state
    shows a reader only its summary until they click; hidden text never pays, so it is read as hidden."""
    found, depth, start = [], 0, 0
    other = [(a, b) for a, b in hidden if not _DETAILS.match(source, a)]  # code, comments: not these elements
    for tag in _DETAILS.finditer(source):
        if any(a <= tag.start() < b for a, b in other):
            continue  # in code or a comment: text, not a tag
        if not tag.group(1):
            read = _tag(tag.group(0))
            if depth == 0 and read is not None and not read[2]:
                continue  # shown open (an attribute named open, as an HTML parser reads it): its content is read
            depth, start = depth + 1, start if depth else tag.start()
        elif depth:
            depth -= 1
            if depth == 0:
                found.append((start, tag.end()))
    if depth:
        found.append((start, len(source)))
    return found


def _carried(source: str, out: MarkdownReading) -> list[tuple[int, int]]:
    """What an unclosed ``<s>``/``<strike>`` strikes after its paragraph: a browser reopens it in each later
    block up to the close tag that closes it (one not in code or a comment; ``<s><s>`` needs two), or to the
    end."""
    found = []
    for name, paragraph_end, depth in out.carried:
        for tag in re.finditer(rf"<(/?){name}\s*>", source[paragraph_end:], re.IGNORECASE):
            at = paragraph_end + tag.start()
            if any(a <= at < b for a, b in out.hidden):
                continue
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                found.append((paragraph_end, paragraph_end + tag.end()))
                break
        else:
            found.append((paragraph_end, len(source)))
    return found


def _placer(content: str, lines: list[str], line_starts: list[int], first: int) -> Any:
    """A map from offsets in a block's content to offsets in the source: each content line is the tail of its
    source line (container markers and indentation stripped)."""
    starts, cursor = [], 0
    for k, piece in enumerate(content.split("\n")):
        row = first + k
        if row < len(lines):
            found = lines[row].rfind(piece) if piece else len(lines[row])
            starts.append((cursor, line_starts[row] + max(found, 0)))
        cursor += len(piece) + 1

    def place(offset: int) -> int:
        base = starts[0] if starts else (0, line_starts[min(first, len(line_starts) - 1)])
        for entry in starts:
            if entry[0] > offset:
                break
            base = entry
        return base[1] + offset - base[0]

    return place


def _inline(children: list[Any], place: Any, length: int, out: MarkdownReading) -> None:
    struck: list[int] = []
    elements: list[tuple[str, int]] = []
    for child in children:
        span = child.meta.get("span")
        if span is None:
            continue
        start, end = place(span[0]), place(span[1])
        kind = child.type
        if kind in ("code_inline", "image"):
            out.hidden.append((start, end))
        elif kind == "s_open":
            struck.append(start)
        elif kind == "s_close" and struck:
            out.hidden.append((struck.pop(), end))
        elif kind == "link_open" and "label_end" in child.meta:
            out.hidden += [(start, start + 1), (place(child.meta["label_end"]), end)]
        elif kind in _EMPHASIS or (kind == "text" and not child.content):
            out.styles.append((start, end))  # an emphasis delimiter: shown as the style, not a character
        elif kind == "text_special" and child.info == "entity":
            out.replaced.append((start, end, child.content))
        elif kind == "html_inline":
            raw = child.content
            if raw.startswith("<!--"):
                out.hidden.append((start, end))
                continue
            tag = _tag(raw)
            if tag is None:
                continue
            name, closing, hides = tag
            if name in _STYLE_TAGS:
                out.styles.append((start, end))  # <b>, <em>, ...: a style, not a character
                continue
            if not closing and (hides or any(n for n, _ in elements)) and name not in _VOID:
                elements.append((name if hides or elements else "", start))
            elif closing and elements and elements[-1][0] in (name, ""):
                opened_name, opened = elements.pop()
                if opened_name == name and not any(n == name for n, _ in elements):
                    out.hidden.append((opened, end))
    if elements:  # an element that hides and never closes hides the rest of its paragraph
        out.hidden.append((elements[0][1], place(length)))
        name = elements[0][0]
        if name in _CARRIED:  # ... and a browser reopens a formatting element in the blocks after it
            out.carried.append((name, place(length), sum(n == name for n, _ in elements)))


class _OneTag(HTMLParser):
    """Reads one HTML tag: its name, whether it closes, whether the element hides its content, and the names of
    its attributes."""

    def read(self, raw: str) -> tuple[str, bool, bool] | None:
        self.reset()
        self.found: tuple[str, bool, bool] | None = None
        self.attributes: tuple[str, ...] = ()
        self.feed(raw)
        return self.found

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.found is None:
            self.attributes = tuple(name for name, _ in attrs)
        self.found = self.found or (tag, False, _hides(tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        self.found = self.found or (tag, True, tag in _HIDING_ELEMENTS)


_ONE_TAG = _OneTag()


def start_tag(raw: str) -> tuple[str, tuple[str, ...]] | None:
    """An HTML start tag's name and attribute names, as an HTML parser reads them; None for anything else."""
    found = _ONE_TAG.read(raw)
    return (found[0], _ONE_TAG.attributes) if found is not None and not found[1] else None


def _tag(raw: str) -> tuple[str, bool, bool] | None:
    """A single HTML tag's name, whether it closes, and whether the element hides its content."""
    return _ONE_TAG.read(raw)


def _hides(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    values = dict(attrs)
    if tag == "details":  # collapsed unless it says open: a reader sees only its summary, if they never click
        return "open" not in values
    return tag in _HIDING_ELEMENTS or "hidden" in values or bool(_HIDING_STYLE.search(values.get("style") or ""))


def _html_hidden(content: str) -> list[tuple[int, int]]:
    """Comments and hiding elements of an HTML block, as offsets into it."""
    line_starts = [0, *(m.end() for m in re.finditer("\n", content))]
    hidden: list[tuple[int, int]] = []
    open_at: list[tuple[str, int]] = []

    class _Block(HTMLParser):
        def _at(self) -> int:
            line, col = self.getpos()
            return line_starts[line - 1] + col

        def handle_comment(self, data: str) -> None:
            start = self._at()
            hidden.append((start, start + len(data) + 7))

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag not in _VOID and (open_at or _hides(tag, attrs)):
                open_at.append((tag, self._at()))

        def handle_endtag(self, tag: str) -> None:
            if open_at and open_at[-1][0] == tag:
                _, start = open_at.pop()
                if not open_at:
                    end = content.find(">", self._at())
                    hidden.append((start, len(content) if end < 0 else end + 1))

    parser = _Block(convert_charrefs=True)
    parser.feed(content)
    parser.close()
    if open_at:
        hidden.append((open_at[0][1], len(content)))
    return hidden


@lru_cache(maxsize=1)
def _parser() -> Any:
    """CommonMark with strikethrough, its inline rules wrapped to record where each token's source lies."""
    from markdown_it import MarkdownIt
    from markdown_it.helpers import parseLinkLabel

    md = MarkdownIt("commonmark").enable("strikethrough").disable("text_join")  # keep entities as tokens
    md.disable("fragments_join")  # keep each emptied emphasis delimiter as a token of its own, with its span
    for name in ("backticks", "strikethrough", "emphasis", "link", "image", "entity", "html_inline"):
        original = next(r.fn for r in md.inline.ruler.__rules__ if r.name == name)
        md.inline.ruler.at(name, _recording(original, parseLinkLabel if name == "link" else None))
    return md


def _recording(fn: Any, link_label: Any) -> Any:
    def rule(state: Any, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        ok = fn(state, silent)
        if ok and not silent:
            cursor = start
            for token in state.tokens[count:]:
                if "span" in token.meta or (token.type == "text" and token.content not in ("~", "~~", "*", "_")):
                    continue
                if token.type == "text":  # a strikethrough or emphasis delimiter: the next run of its length
                    token.meta["span"] = (cursor, cursor + len(token.content))
                    cursor += len(token.content)
                    continue
                token.meta["span"] = (start, state.pos)
                if link_label is not None and token.type == "link_open":
                    pos = state.pos
                    token.meta["label_end"] = link_label(state, start)
                    state.pos = pos
        return ok

    return rule
