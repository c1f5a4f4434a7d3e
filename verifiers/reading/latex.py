"""What LaTeX hides, read by pylatexenc's tokenizer and walker (not by patterns over the source).

A reader of rendered LaTeX never sees a ``%`` comment, an ``\\iffalse … \\fi`` block, a phantom
(``\\phantom``, ``\\hphantom``, ``\\vphantom``), white or transparent text (``\\textcolor{white}{…}``,
``\\color{white}`` to the end of its group, ``\\colorbox{white}`` keeps its content), nor takes crossed-out
text (``\\cancel``, ``\\bcancel``, ``\\xcancel``, ``\\sout``, ``\\st``, ``\\xout``) as stated. A completion
that defines or redefines a command (``\\def``, ``\\newcommand``, ``\\let``, ``\\DeclareMathOperator``, a
``\\catcode``, ...) changes how everything after it renders: it has no readable answer, whatever it
redefined (every command the reader meets is one it interprets).

``%`` is a comment inside math and at the start of a line; in prose ("50% of them") Markdown shows it.

The walker costs about 15 ms a kilobyte, so it runs only on completions that hold one of these commands
(:data:`TRIGGER`) or a ``%`` that starts a line or stands in math: the triggers find where to look, the
walker decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from rewardsmith.verifiers.reading.markdown import math_spans

HIDE = frozenset({"phantom", "hphantom", "vphantom"})
CROSS_OUT = frozenset({"cancel", "bcancel", "xcancel", "sout", "st", "xout", "cancelto"})
COLOR = frozenset({"color", "textcolor", "colorbox", "fcolorbox", "pagecolor"})
DEFINE = frozenset({
    "def", "gdef", "edef", "xdef", "let", "futurelet", "newcommand", "renewcommand", "providecommand",
    "DeclareRobustCommand", "DeclareMathOperator", "DeclareTextCommand", "newenvironment", "renewenvironment",
    "catcode", "chardef", "mathchardef", "mathcode", "uccode", "lccode", "csname", "expandafter", "NewDocumentCommand",
    "RenewDocumentCommand", "ProvideDocumentCommand", "DeclareDocumentCommand", "newrobustcmd", "renewrobustcmd",
    "DeclarePairedDelimiter", "scantokens", "newif",
})
# Foreground colours a reader surely sees on a white page (xcolor's base names): text in any other colour (white,
# WhiteSmoke, #fefefe, a model's rgb spec) may be invisible, so it is read as hidden. A closed set, not a list of
# invisible colours: "near white" has no end.
VISIBLE_COLORS = frozenset(
    {"black", "red", "green", "blue", "cyan", "magenta", "brown", "darkgray", "gray", "olive", "orange", "purple",
     "teal", "violet"}
)
# Backgrounds on which default (black) text surely shows: content on any other (black, navy, a model's spec) may
# be invisible, so it is read as hidden. A closed set again.
LIGHT_BACKGROUNDS = frozenset({"white", "yellow", "cyan", "lime", "pink", "lightgray", "orange"})
# Environments a reader surely sees the content of (LaTeX's and amsmath's, as math answers use them). Any other
# (``comment``, one the completion defines, one a package prints nothing for) may show anything or nothing: a
# completion that uses one has no readable answer.
SHOWN_ENVIRONMENTS = frozenset({
    "align", "aligned", "alignat", "alignedat", "array", "bmatrix", "Bmatrix", "cases", "dcases", "rcases",
    "center", "description", "displaymath", "enumerate", "eqnarray", "equation", "flalign", "gather", "gathered",
    "itemize", "math", "matrix", "multline", "pmatrix", "quote", "smallmatrix", "split", "subarray", "subequations",
    "tabular", "vmatrix", "Vmatrix", "verbatim", "CD", "flushleft", "flushright", "quotation", "tabbing", "table",
    "figure", "minipage", "tikzpicture", "proof", "theorem", "lemma", "solution", "document", "xalignat",
    "xxalignat",
})
# TeX's and e-TeX's conditionals (a closed set: \iff, "if and only if", is none of them); each picks what renders.
CONDITIONALS = frozenset({
    "if", "ifcat", "ifnum", "ifdim", "ifodd", "ifvmode", "ifhmode", "ifmmode", "ifinner", "ifvoid", "ifhbox",
    "ifvbox", "ifx", "ifeof", "iftrue", "ifcase", "ifdefined", "ifcsname", "iffontchar", "unless",
})
_NAMES = "|".join(sorted(HIDE | CROSS_OUT | COLOR | DEFINE | CONDITIONALS | {"iffalse"}, key=len, reverse=True))
_SHOWN = "|".join(sorted(SHOWN_ENVIRONMENTS, key=len, reverse=True))
# the walker runs only where one of these stands, or an environment outside the shown set begins
TRIGGER = re.compile(r"\\(?:(?:" + _NAMES.replace("*", r"\*") + r")(?![A-Za-z])"
                     r"|begin\s*\{(?!\s*(?:" + _SHOWN + r")\*?\s*\}))")
_PERCENT = re.compile(r"(?<!\\)%")
_ARGS = {"phantom": 1, "hphantom": 1, "vphantom": 1, "textcolor": 2, "colorbox": 2, "fcolorbox": 3, "cancelto": 2,
         "pagecolor": 1}


@dataclass
class LatexReading:
    """Source ranges a reader does not see, and the commands the text (re)defines."""

    hidden: list[tuple[int, int]] = field(default_factory=list)
    redefines: list[str] = field(default_factory=list)


def read_latex(text: str) -> LatexReading:
    """Where ``text`` (a whole completion, Markdown and LaTeX mixed) hides text in LaTeX, and what it redefines."""
    out = LatexReading()
    if not TRIGGER.search(text) and not _comment_possible(text):
        return out
    from pylatexenc.latexwalker import LatexWalker  # the walker is only paid for where LaTeX may hide text

    # The walker reads every "%" as a comment; Markdown shows one in prose. Walk with the percent signs
    # masked (same length), then decide each one by where it stands.
    masked = re.sub(r"(?<!\\)%", "\x1a", text)
    try:
        nodes, _, _ = LatexWalker(masked, tolerant_parsing=True).get_latex_nodes()
    except Exception:  # pylatexenc raises its own errors on pathological input
        out.redefines.append("(unreadable LaTeX)")
        return out
    _walk(nodes, len(text), out)
    _comments(text, out)
    return out


def _comment_possible(text: str) -> bool:
    """Whether a ``%`` could be a comment: one at the start of a line, or one inside math."""
    percents = [m.start() for m in _PERCENT.finditer(text)]
    if not percents:
        return False
    if any(not text[text.rfind("\n", 0, at) + 1 : at].strip() for at in percents):
        return True
    return any(a < at < b for a, b in math_spans(text) for at in percents)


def _nodes(nodes: Sequence[object] | None) -> list[object]:
    return [n for n in (nodes or []) if n is not None]


def _end(node: object) -> int:
    return node.pos + node.len  # type: ignore[attr-defined]


def _walk(nodes: Sequence[object] | None, group_end: int, out: LatexReading) -> None:
    from pylatexenc.latexwalker import LatexEnvironmentNode, LatexGroupNode, LatexMacroNode, LatexMathNode

    siblings = _nodes(nodes)
    i = 0
    while i < len(siblings):
        node = siblings[i]
        if isinstance(node, LatexMacroNode):
            name = node.macroname
            if name in DEFINE:
                out.redefines.append(_defined(siblings, i))
            elif name in CONDITIONALS:  # a conditional: the completion picks what renders
                out.redefines.append(f"(uses a TeX conditional, \\{name}, that picks what renders)")
            elif name == "iffalse":  # hidden up to the matching \fi of this level, or to the end
                close = next((j for j in range(i + 1, len(siblings)) if _is_macro(siblings[j], "fi")), None)
                out.hidden.append((node.pos, _end(siblings[close]) if close is not None else group_end))
                i = len(siblings) if close is None else close + 1
                continue
            elif name in HIDE or name in CROSS_OUT or name in COLOR:
                args, last = _arguments(node, siblings, i, _ARGS.get(name, 1))
                modelled = any(getattr(a, "delimiters", ("{", "}"))[0] == "[" for a in args)  # \textcolor[gray]{1}
                args = [a for a in args if getattr(a, "delimiters", ("{", "}"))[0] != "["]
                colour = "" if modelled else _text(args[0]).lower() if name in COLOR and args else ""
                if name in ("color", "pagecolor") and colour not in (
                        VISIBLE_COLORS if name == "color" else LIGHT_BACKGROUNDS):
                    out.hidden.append((node.pos, group_end))  # unseen from here to the end of its group
                    return
                unseen = (name == "textcolor" and colour not in VISIBLE_COLORS) or (
                    name in ("colorbox", "fcolorbox") and (_text(args[-2]).lower() if len(args) >= 2 else "")
                    not in LIGHT_BACKGROUNDS) or (name in ("colorbox", "fcolorbox") and modelled)
                if name in HIDE or name in CROSS_OUT or unseen:
                    if not args or len(args) < _ARGS.get(name, 1):  # \cancel B: TeX takes the next token
                        taken = [a for a in _nodes(node.nodeargd.argnlist if node.nodeargd else None) if a is not None]
                        end = _end(node) if len(taken) >= _ARGS.get(name, 1) else _bare_argument_end(siblings, last)
                        out.hidden.append((node.pos, end))
                        i = last + 1
                        continue
                    out.hidden.append((node.pos, _end(args[-1])))
                    i = last + 1
                    continue
            elif node.nodeargd is not None:
                for arg in _nodes(node.nodeargd.argnlist):
                    if hasattr(arg, "nodelist"):
                        _walk(arg.nodelist, _end(arg) - 1, out)
        elif isinstance(node, LatexMathNode):
            _walk(node.nodelist, _end(node) - len(node.delimiters[1]), out)
        elif isinstance(node, LatexGroupNode):
            _walk(node.nodelist, _end(node) - 1, out)
        elif isinstance(node, LatexEnvironmentNode):
            if node.environmentname.rstrip("*") not in SHOWN_ENVIRONMENTS:
                out.redefines.append(f"(uses an environment a reader may not see: {node.environmentname})")
            _walk(node.nodelist, _end(node), out)
        i += 1


def _is_macro(node: object, name: str) -> bool:
    from pylatexenc.latexwalker import LatexMacroNode

    return isinstance(node, LatexMacroNode) and node.macroname == name


def _arguments(node: object, siblings: list[object], i: int, wanted: int) -> tuple[list[object], int]:
    """The argument groups of a macro: those pylatexenc parsed, else the groups right after it (whitespace
    skipped); and the index of the last sibling they take."""
    from pylatexenc.latexwalker import LatexCharsNode, LatexGroupNode

    parsed = [a for a in _nodes(node.nodeargd.argnlist if node.nodeargd else None) if isinstance(a, LatexGroupNode)]
    if parsed:
        return parsed, i
    args, j = [], i
    while len(args) < wanted and j + 1 < len(siblings):
        nxt = siblings[j + 1]
        if isinstance(nxt, LatexCharsNode) and not nxt.chars.strip():
            j += 1
            continue
        if not isinstance(nxt, LatexGroupNode):
            break
        args.append(nxt)
        j += 1
    return args, j


def _bare_argument_end(siblings: list[object], j: int) -> int:
    """Where an argument written without braces ends: TeX takes the next token, one character or one command
    (``\\cancel B``, ``\\phantom\\alpha``), so that is what is hidden; the end of the macro when nothing follows."""
    from pylatexenc.latexwalker import LatexCharsNode

    for nxt in siblings[j + 1 :]:
        if isinstance(nxt, LatexCharsNode):
            text = nxt.chars
            if not text.strip():
                continue
            return nxt.pos + len(text) - len(text.lstrip()) + 1
        return _end(nxt)
    return _end(siblings[j])


def _text(group: object) -> str:
    return "".join(getattr(n, "chars", "") for n in _nodes(getattr(group, "nodelist", None))).strip()


def _defined(siblings: list[object], i: int) -> str:
    """The name a definition defines (``\\def\\boxed``, ``\\newcommand{\\boxed}``), or the definer's own name."""
    from pylatexenc.latexwalker import LatexMacroNode

    node = siblings[i]
    for arg in _nodes(node.nodeargd.argnlist if node.nodeargd else None):
        for inner in _iter(arg):
            if isinstance(inner, LatexMacroNode):
                return "\\" + inner.macroname
    if i + 1 < len(siblings) and isinstance(siblings[i + 1], LatexMacroNode):
        return "\\" + siblings[i + 1].macroname
    return "\\" + node.macroname


def _iter(node: object) -> Iterator[object]:
    yield node
    for child in _nodes(getattr(node, "nodelist", None)):
        yield from _iter(child)


def _comments(text: str, out: LatexReading) -> None:
    """Each unescaped ``%`` inside math (the segments Markdown leaves to math: :func:`math_spans`) hides the
    rest of its line within the math; one that starts a line (after blanks) hides the line."""
    segments = [(a, b - (2 if text[a : a + 2] in ("$$", "\\(", "\\[") else 1)) for a, b in math_spans(text)]
    for match in _PERCENT.finditer(text):
        at = match.start()
        segment = next(((a, b) for a, b in segments if a < at < b), None)
        line_end = text.find("\n", at)
        line_end = len(text) if line_end < 0 else line_end + 1
        if segment is not None:
            out.hidden.append((at, min(line_end, segment[1])))
        elif not text[text.rfind("\n", 0, at) + 1 : at].strip():
            out.hidden.append((at, line_end))
