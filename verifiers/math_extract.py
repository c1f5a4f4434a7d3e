"""Find the final answer in a completion: pure string work, no sympy.

Splitting extraction from parsing (as Math-Verify does) keeps each testable alone and
means we only ever hand the short answer span to the LaTeX parser, never a whole
solution, so a number cannot be picked out of some unrelated formula.

Forms, strongest first: ``<answer>…</answer>``, the last ``\\boxed{}``/``\\fbox{}``,
GSM8K's ``#### N``, "final answer is …"/"the answer is …"/"Answer: …" (the last one
wins), and, when enabled, the last number in the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
BOX_COMMAND = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])\s*")
GSM8K_MARK = re.compile(r"####\s*([^\n]+)")
PHRASE = re.compile(
    r"(?:final\s+answer\s*(?:is|:)|the\s+answer\s+is|\banswer\s*:|\bAnswer\s*:)\s*:?\s*",
    re.IGNORECASE,
)
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?|-?\.\d+")
MATH_DELIMITED = re.compile(r"^\s*(\$\$?|\\\(|\\\[)(.*?)(\$\$?|\\\)|\\\])", re.DOTALL)


@dataclass(frozen=True)
class Extraction:
    text: str  # the answer span, delimiters removed
    method: str  # which form found it: answer_tag, boxed, gsm8k, phrase, last_number, whole


def balanced_group(text: str, start: int) -> tuple[str, int] | None:
    """The brace group opening at ``text[start] == '{'``: its content and the index after it."""
    if start >= len(text) or text[start] != "{":
        return None
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == "\\":  # skip escaped braces like \{ and \}
            continue
        if ch == "{" and (i == 0 or text[i - 1] != "\\"):
            depth += 1
        elif ch == "}" and text[i - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i], i + 1
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
    return line.strip().rstrip(".;,!")


def extract_answer(text: str, last_number: bool = True) -> Extraction | None:
    """The final answer span of a completion, or None when there is none."""
    tags = ANSWER_TAG.findall(text)
    if tags:
        inner = tags[-1]
        nested = extract_answer(inner, last_number=False)
        if nested is not None and nested.method in ("boxed", "phrase"):
            return Extraction(nested.text, "answer_tag")
        return Extraction(strip_math_delimiters(inner), "answer_tag")
    boxed = last_boxed(text)
    if boxed is not None:
        return Extraction(boxed.strip(), "boxed")
    marks = GSM8K_MARK.findall(text)
    if marks:
        return Extraction(marks[-1].strip(), "gsm8k")
    phrases = list(PHRASE.finditer(text))
    if phrases:
        span = _phrase_span(text, phrases[-1].end())
        if span.strip():
            return Extraction(strip_math_delimiters(span), "phrase")
    if last_number:
        numbers = NUMBER.findall(text)
        if numbers:
            return Extraction(numbers[-1].strip(), "last_number")
    return None


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
