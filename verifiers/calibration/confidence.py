"""Stated confidence in a completion: ``<confidence>0.8</confidence>``, "Confidence: 80%",
"I am 80% confident".

Calibration rewards (RLCR) and calibration reports need the probability a model says
it has of being right. Pure functions, no heavy imports: the ``brier`` verifier runs
them in trainer workers.

Rules:

* Patterns are tried in order (strongest first); the first pattern that matches
  anywhere decides, and within it the **last** match wins (a model that revises its
  confidence meant the last one).
* A pattern is a regular expression (matched case-insensitively) with a group named
  ``value`` (or, failing that, its first group) holding the number.
* A value with ``%`` (inside the group, or right after it), or the word ``percent``
  after it, is a percentage and is divided by 100: ``80%`` → 0.8.
* A value outside [0, 1] after that (``Confidence: 80`` without ``%``, ``150%``, ``-0.2``)
  or one that is not a number (``<confidence>high</confidence>``) is rejected: the
  result is ``None``, and a weaker pattern is *not* tried instead, because the model did
  state a confidence, just not a usable one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"

DEFAULT_PATTERNS: tuple[str, ...] = (
    # <confidence>0.8</confidence>, <confidence> 80% </confidence>; any content, judged when parsed.
    r"<confidence>\s*(?P<value>[^<]*?)\s*</confidence>",
    # Confidence: 80%, confidence = 0.8, **Confidence:** 0.8, confidence level: 0.9, my confidence is 0.7
    rf"\bconfidence(?:\s+(?:level|score))?(?:\s*\**\s*[:=]|\s+(?:is|of))\s*\**\s*(?P<value>{_NUM}(?:\s*(?:%|percent\b))?)",
    # I am 80% confident, I'm 90 percent sure, 75% certain (the subject is part of the statement: stripped with it)
    rf"(?:\b(?:I\s+am|I['’]m|I\s+feel|we\s+are)\s+)?(?<![\w.])(?P<value>{_NUM}\s*(?:%|percent))\s+"
    r"(?:confident|sure|certain)\b",
)

_VALUE = re.compile(rf"^\s*(?P<num>{_NUM})\s*(?P<pct>%|percent)?\s*$", re.IGNORECASE)
_PERCENT_AFTER = re.compile(r"\s*(?:%|percent\b)", re.IGNORECASE)


@dataclass(frozen=True)
class ConfidenceMatch:
    """What was found: the raw text, its value in [0, 1] or None, and why it was rejected."""

    text: str
    value: float | None
    reason: str = ""


def compile_patterns(patterns: Iterable[str] | None = None) -> tuple[re.Pattern[str], ...]:
    """Compile once at build time, so a bad pattern fails with the spec, not mid-training."""
    if isinstance(patterns, str):
        raise ValueError("'patterns' must be a list of regular expressions, not a single string")
    sources = DEFAULT_PATTERNS if patterns is None else tuple(patterns)
    if not sources:
        raise ValueError("'patterns' must hold at least one regular expression")
    compiled = []
    for source in sources:
        try:
            pattern = re.compile(source, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"confidence pattern {source!r} is not a valid regular expression: {exc}") from exc
        if pattern.groups == 0:
            raise ValueError(f"confidence pattern {source!r} needs a group (ideally named 'value') for the number")
        compiled.append(pattern)
    return tuple(compiled)


def _parse(text: str, percent: bool = False) -> tuple[float | None, str]:
    found = _VALUE.match(text)
    if found is None:
        return None, f"confidence {text.strip()[:40]!r} is not a number"
    value = float(found["num"])
    if percent or found["pct"]:
        value /= 100.0
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return None, f"confidence {text.strip()[:40]!r} is outside [0, 1]"
    return value, ""


def find_confidence(text: str, patterns: Sequence[re.Pattern[str]] | None = None) -> ConfidenceMatch | None:
    """The confidence stated in ``text`` (see the module rules), or None when none is stated."""
    for pattern in patterns if patterns is not None else _DEFAULT_COMPILED:
        last = None
        for last in pattern.finditer(text):  # noqa: B007 - the last match is the one we want
            pass
        if last is None:
            continue
        group = "value" if "value" in pattern.groupindex else 1
        raw = last.group(group)
        if raw is None:
            return ConfidenceMatch("", None, "confidence pattern matched without a value")
        percent = bool(_PERCENT_AFTER.match(text, last.end(group)))
        value, reason = _parse(raw, percent)
        return ConfidenceMatch(raw.strip(), value, reason)
    return None


def extract_confidence(text: str, patterns: Sequence[re.Pattern[str]] | None = None) -> float | None:
    """The stated confidence in [0, 1], or None (none stated, or not usable)."""
    found = find_confidence(text, patterns)
    return found.value if found is not None else None


def strip_confidence(text: str, patterns: Sequence[re.Pattern[str]] | None = None) -> str:
    """``text`` without its confidence statements, so an answer grader's last-number
    fallback cannot read "Confidence: 80%" as the answer 80% (or 0.8)."""
    for pattern in patterns if patterns is not None else _DEFAULT_COMPILED:
        text = pattern.sub(" ", text)
    return text


def coerce_confidence(value: object) -> ConfidenceMatch | None:
    """A dataset field as a confidence: a number in [0, 1] or a string such as ``"80%"``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ConfidenceMatch(str(value), None, "confidence must be a number, not a bool")
    if isinstance(value, int | float):
        number = float(value)
        if not math.isfinite(number) or not 0.0 <= number <= 1.0:
            return ConfidenceMatch(repr(value), None, f"confidence {value!r} is outside [0, 1]")
        return ConfidenceMatch(repr(value), number)
    if isinstance(value, str):
        parsed, reason = _parse(value)
        return ConfidenceMatch(value.strip(), parsed, reason)
    return ConfidenceMatch(repr(value)[:40], None, f"confidence must be a number, got {type(value).__name__}")


_DEFAULT_COMPILED = compile_patterns()
