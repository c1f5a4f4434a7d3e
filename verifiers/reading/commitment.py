"""Whether a statement found in the answer region is a commitment: one definition for every family.

A statement of the answer (a box, an answer tag, "The answer is X") counts only where the completion
commits to it. These checks can only take a statement *away* (a denial before it, a question or a
retraction right after it); they never make one. The word lists here are English and are a floor, not the
design: what a list misses is still read as a statement, and the families' hedge rules (every statement
counts; another value anywhere in the region is a hedge) are what a policy meets first.

The lists were two sets of constants (the math reader's and the short-answer reader's) with different
windows; they are the union of both now, so each family is at least as strict as either was.
"""

from __future__ import annotations

import re

NEGATION_WINDOW = 40  # characters before a value-first statement searched for a denial
AFTER_WINDOW = 160  # characters after a statement searched for a question mark or a retraction

# "not \boxed{B}", "it is definitely not 12", "rather than $5$", "the answer isn't (B)", "no 7".
_DENIED_BEFORE = re.compile(
    r"(?:\b(?:not|never|cannot|rather\s+than|instead\s+of|other\s+than|except|nor)|\bno(?=\s)|n't)"
    r"(?:\s+(?:be|equal|equals|been|have\s+been))?[\s*_$(\[]*$",
    re.IGNORECASE,
)
# A phrase's own value that opens with a denial: "The answer is not B", "Answer: never 5".
_DENIED_START = re.compile(
    r"^\s*(?:(?:definitely|certainly|clearly|surely|obviously|probably)\s+)?"
    r"(?:not|never|neither|isn't|is\s+not|cannot\s+be|can't\s+be)\b",
    re.IGNORECASE,
)
_ASKED_AFTER = re.compile(r"[^\n.!?]{0,30}?\?")
_RETRACTION = (
    r"(?:wrong|incorrect|not\s+(?:right|correct|it|the\s+(?:final\s+|right\s+|correct\s+)?answer)"
    r"|a\s+mistake|an\s+error|false|impossible|invalid)"
)
# "\boxed{5}, but that is wrong", "B. No wait, this is incorrect", "$4$ is clearly wrong".
_RETRACTED_AFTER = re.compile(
    r"[\s$)}*_]*(?:(?:is|was)\s+(?:clearly\s+|definitely\s+|actually\s+|obviously\s+)?" + _RETRACTION
    + r"|[^\n.?!]{0,40}?[.?!,;:]?\s*(?:but\s+|however,?\s+|no[,.!]?\s+|wait[,.!]?\s+|oops[,.!]?\s+|actually,?\s+)?"
    r"(?:that|this|it)(?:'s|\s+is|\s+was|\s+would\s+be)\s+(?:clearly\s+|definitely\s+|actually\s+|obviously\s+)?"
    + _RETRACTION + r")\b",
    re.IGNORECASE,
)


def denied_before(text: str, start: int) -> bool:
    """Whether a denial ends right before a statement that opens with its value (a box, a bare label)."""
    return bool(_DENIED_BEFORE.search(text[max(0, start - NEGATION_WINDOW) : start]))


def denied_start(span: str) -> bool:
    """Whether a phrase's value opens with a denial ("The answer is not B")."""
    return bool(_DENIED_START.match(span))


def withdrawn_after(text: str, end: int) -> bool:
    """Whether the statement ending at ``end`` is asked ("\\boxed{9}?") or taken back right after it."""
    after = text[end : end + AFTER_WINDOW]
    return bool(_ASKED_AFTER.match(after) or _RETRACTED_AFTER.match(after))


def retraction_in(span: str) -> bool:
    """Whether a phrase's own sentence takes its value back ("The answer is B, but that is wrong")."""
    return bool(re.search(r"\b(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:clearly\s+|definitely\s+|actually\s+"
                          r"|probably\s+)?" + _RETRACTION + r"\b", span, re.IGNORECASE))
