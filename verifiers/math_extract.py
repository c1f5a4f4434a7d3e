"""Find the final answer in a completion: pure string work, no sympy.

Splitting extraction from parsing (as Math-Verify does) keeps each testable alone and
means we only ever hand the short answer span to the LaTeX parser, never a whole
solution, so a number cannot be picked out of some unrelated formula.

Forms, strongest first: ``<answer>…</answer>``, the last ``\\boxed{}``/``\\fbox{}``,
GSM8K's ``#### N``, "final answer is …"/"the answer is …"/"Answer: …" (the last one
wins; markdown emphasis such as ``**Final Answer:**`` allowed), and, when enabled, the
last number in the text, provided it stands alone: the 5 of ``$r = \\sqrt{5}$`` is not an
answer. A trailing "!" right after a digit stays: it is a factorial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
BOX_COMMAND = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*")
GSM8K_MARK = re.compile(r"####\s*([^\n]+)")
# Markdown emphasis may wrap the phrase: "**Final Answer:** 5", "**Answer**: 5".
PHRASE = re.compile(
    r"(?:final\s+answer[*_\s]*(?:is|:)|the\s+answer\s+is|\banswer[*_\s]*:)[*_\s:]*",
    re.IGNORECASE,
)
# Thousands groups only as groups of three ("1,000"), so "5, so" ends at the 5; a LaTeX
# fraction is one number ("$-\\frac{24}{25}$." ends with -24/25, not with 25).
NUMBER = re.compile(
    r"-?\\[dt]?frac\s*\{\s*\d+\s*\}\s*\{\s*\d+\s*\}"
    r"|-?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:\s*/\s*\d+)?|-?\.\d+"
)
# An escaped dollar ("$\\$36$") is currency inside the math, not its closing delimiter.
MATH_DELIMITED = re.compile(r"^\s*(\$\$?|\\\(|\\\[)(.*?)((?<!\\)\$\$?|\\\)|\\\])", re.DOTALL)


@dataclass(frozen=True)
class Extraction:
    text: str  # the answer span, delimiters removed
    method: str  # which form found it: answer_tag, boxed, gsm8k, phrase, last_number, whole


def balanced_group(text: str, start: int) -> tuple[str, int] | None:
    """The brace group opening at ``text[start] == '{'``: its content and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch == "\\":  # an escape: \{ and \} are literal braces, \\ a line break before a real one
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
        i += 1
    return None


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{…}`` or ``\\fbox{…}`` (also the brace-less ``\\boxed 5``)."""
    found = None
    for match in BOX_COMMAND.finditer(text):
        group = balanced_group(text, match.end())
        if group is not None:
            found = group[0]
        elif match.group(0)[-1].isspace():  # "\boxed 5": the token after the space
            bare = re.match(r"[^\s$]+", text[match.end():])
            if bare:
                found = bare.group(0)
    return found


def strip_math_delimiters(span: str) -> str:
    span = span.strip()
    match = MATH_DELIMITED.match(span)
    if match:
        return match.group(2).strip()
    return span.strip("$ ").strip()


def _phrase_span(text: str, start: int) -> str:
    rest = text[start:]
    math = MATH_DELIMITED.match(rest)
    if math:
        return math.group(2)
    boxed = last_boxed(rest.split("\n", 1)[0])
    if boxed is not None:
        return boxed
    line = rest.split("\n", 1)[0]
    # End at a sentence end (". " or a final "."), not at a decimal point.
    line = re.split(r"\.(?=\s|$)", line, maxsplit=1)[0]
    return _trim(line)


def _trim(span: str) -> str:
    """Drop sentence punctuation and markdown emphasis around a span ("**5**.", "5;").

    A "!" right after a digit, ")" or "}" stays: in a math answer it is a factorial (``1/2004!``).
    """
    previous = None
    while span != previous:
        previous = span
        span = span.strip().strip("*").rstrip(".;,")
        if span.endswith("!") and (len(span) < 2 or span[-2] not in "0123456789)}!"):
            span = span[:-1]
    return span


def extract_answer(text: str, last_number: bool = True) -> Extraction | None:
    """The final answer span of a completion, or None when there is none."""
    tags = ANSWER_TAG.findall(text)
    if tags:
        inner = tags[-1]
        nested = extract_answer(inner, last_number=False)
        if nested is not None and nested.method in ("boxed", "gsm8k", "phrase"):
            return Extraction(nested.text, "answer_tag")
        return Extraction(strip_math_delimiters(_trim(inner)), "answer_tag")
    boxed = last_boxed(text)
    if boxed is not None:
        return Extraction(boxed.strip(), "boxed")
    marks = GSM8K_MARK.findall(text)
    if marks:
        return Extraction(strip_math_delimiters(_trim(marks[-1])), "gsm8k")
    phrases = list(PHRASE.finditer(text))
    if phrases:
        span = _phrase_span(text, phrases[-1].end())
        if span.strip():
            return Extraction(strip_math_delimiters(span), "phrase")
    if last_number:
        numbers = list(NUMBER.finditer(text))
        if numbers and _stands_alone(text, numbers[-1]):
            return Extraction(numbers[-1].group(0).strip(), "last_number")
    return None


def _stands_alone(text: str, number: re.Match[str]) -> bool:
    """Whether the last number is a value of its own, not a piece of a formula.

    In ``$r = \\sqrt{5}$``, ``12\\pi``, ``x^2 + x + 1``, ``(-1, 6)`` or ``3 \\pmod 9`` the last
    number is not the answer, and grading it would call ``5`` right for ``\\sqrt{5}``: no
    answer is better than that. ``= 16``, ``is 5``, ``$18``, ``**5**``, ``\\(40\\)``,
    ``40 \\text{ inches}`` and ``\\textbf{5}`` stand alone.
    """
    start, end = number.span()
    if number.group(0).startswith("-") and start > 0 and (text[start - 1].isalnum() or text[start - 1] in ")}"):
        return False  # "3x-6": a binary minus, the number is a term
    before, after = text[:start].rstrip(" *"), text[end:]
    wrapper = _TEXT_WRAPPER.search(before)
    if wrapper and after.startswith("}"):  # \textbf{5}: emphasis, not a formula
        before, after = before[: wrapper.start()].rstrip(" *"), after[1:]
    if before.endswith(("{", "^", "_", "+", "-", "/", ",")) or re.search(r"\\[A-Za-z]+$", before):
        return False  # after an operator or a command: "+ 1", "\\sqrt{5", "\\cdot 3", "\\pmod 9"
    if re.match(r"\^\s*\{?\s*\\circ", after):
        return True  # degrees: "= 120^\\circ."
    if after[:1].isalpha() or after[:1] in ("}", "^", "_", "("):
        return False  # glued to what follows: "5x", "2}", "3^"
    after = after.lstrip(" *")
    if after.startswith("\\") and not _ENDS_A_VALUE.match(after):
        return False  # "12\\pi", "11 \\sqrt{5}", "3 \\cdot x"
    return not after[:1] or after[:1] not in "}^_+-*/=×·"


_TEXT_WRAPPER = re.compile(r"\\(?:text|textbf|mathbf|mathrm|mbox)\s*\{$")
# What may follow a value: a unit in \text, the end of the math, spacing, a percent sign.
_ENDS_A_VALUE = re.compile(r"\\(?:text|textbf|mathrm|mbox|quad|qquad|[\])$%,;:! ]|\\)")


def extract_gold(gold: str) -> str:
    """A gold answer as datasets write it: bare (``1/3``), in ``$…$``, boxed, or ``#### 18``."""
    text = str(gold).strip()
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed.strip()
    marks = GSM8K_MARK.findall(text)
    if marks:
        return marks[-1].strip()
    return strip_math_delimiters(text)
