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


# Commands that only style what they wrap: a box inside one is still the statement a reader sees. Any other
# command around a box (``\\overset{\\text{no: }19}{\\boxed{18}}``, ``\\underbrace``, ``\\frac``, a script) puts it
# in a formula or under an annotation: it is part of something else, not stated on its own.
STYLING = frozenset({
    "text", "textbf", "textit", "textrm", "textsf", "texttt", "textnormal", "textup", "emph", "mathbf", "mathrm",
    "mathit", "mathsf", "mathtt", "mathnormal", "boldsymbol", "bm", "mbox", "hbox", "underline", "textcolor",
    "color", "colorbox", "boxed", "fbox", "framebox", "displaystyle", "textstyle",
})
_COMMAND_BEFORE = re.compile(r"\\([A-Za-z]+)\*?\s*$|([_^])\s*$")


def wrapper(text: str, start: int, pairs: dict[int, int] | None = None) -> str:
    """The first command (or script mark ``_``/``^``) around the box at ``start`` that does more than style it
    (:data:`STYLING`), or ``""``: the box then stands inside a formula or under an annotation."""
    pairs = brace_pairs(text) if pairs is None else pairs
    opens = {close: open_ for open_, close in pairs.items()}
    for open_, close in sorted(pairs.items(), reverse=True):
        if not open_ < start < close:
            continue
        head = open_
        while True:  # back over the command's earlier arguments: "\\overset{19}{" is \\overset's
            before = text[:head].rstrip()
            if before.endswith("}") and len(before) - 1 in opens:
                head = opens[len(before) - 1]
            elif before.endswith("]") and "[" in before:
                head = before.rfind("[")
            else:
                break
        command = _COMMAND_BEFORE.search(text[max(0, head - 40) : head])
        if command and (command.group(2) or command.group(1) not in STYLING):
            return command.group(2) or "\\" + command.group(1)
    return ""


# Inside a formula, what may stand right before a box (a relation it is the value of, once spacing, text, a currency
# sign and alignment are skipped) and right after it (no operator, script, factorial or digit): the rest of the
# formula would change the value a reader sees ("$-\\boxed{18}$", "$2\\times\\boxed{18}$", "$\\boxed{18}^2$").
_FILLER = (r"\\(?:text|mbox|mathrm|textbf)\s*\{[^{}]*\}(?:\^\s*\{?[23]\}?)?"
           r"|\\(?:displaystyle|textstyle|quad|qquad|[,;:! ])|\^\s*\{?\\circ\}?|\\\$|\\\\|\\end\s*\{[A-Za-z*]+\}|[\s&]")
_HEAD = re.compile(rf"(?:{_FILLER})*$")
_TAIL = re.compile(rf"(?:{_FILLER})*")
_OPEN = re.compile(r"(?:=|\\equiv|\\approx|:|\\Rightarrow|\\implies|\\to|\\in|\\therefore|\$|\\\(|\\\[|\{)$")
_OPERATOR = re.compile(r"[+\-*/^!_'0-9(]|\\(?:times|cdot|div|pm|mp|frac|dfrac|sqrt|over|ast)(?![A-Za-z])")
_GLUED = re.compile(r"[\w+\-*/^!)\]|]$")


def in_formula(text: str, start: int, end: int, formulas: list[tuple[int, int]]) -> str:
    """What, around the box at ``text[start:end]``, makes it part of a formula (``""`` when nothing does): a
    character glued before it (``1\\boxed{8}``, ``-\\boxed{18}``), or, inside a math segment (``formulas``: their
    spans), anything right before it but a relation or the segment's opening (``x = \\boxed{5}``,
    ``$\\boxed{5}``), or an operator, a script, a factorial or a digit right after it."""
    if _GLUED.search(text[max(0, start - 1) : start]):
        return text[start - 1]
    if not any(a <= start and end <= b for a, b in formulas):
        return ""
    head = text[max(0, start - 200) : start]
    head = head[: _HEAD.search(head).start()]
    if head and not _OPEN.search(head):
        return head[-12:]
    after = _TAIL.match(text, end).end()
    operator = _OPERATOR.match(text, after)
    return operator.group(0) if operator else ""


def last_boxed(text: str) -> str | None:
    """Content of the last box, or None."""
    found = boxes(text)
    return found[-1][2] if found else None
