"""The ``format`` verifier: are the reasoning and the answer in the expected tags?

Fields read: none (only the completion; chat completions use the last assistant turn).

Options:

``tags`` (default ``["think", "answer"]``): tag names, in the order they must appear.
    Tags match exactly and case-sensitively (``<think>`` and ``</think>``, no attributes).
``mode``:
    ``"strict"`` (default): the whole completion is ``<think>…</think><answer>…</answer>``:
    each tag pair exactly once, in order, with only whitespace before, between and after
    the pairs (the DeepSeek-R1 style GRPO format reward).
    ``"soft"``: each open and close tag exactly once, in order; any text around them.
``partial`` (default ``false``): shaping credit in the style of the common ``count_xml``
    reward. A completion that passes ``mode`` scores 1.0. Otherwise every open or close
    tag that occurs exactly once earns ``1 / (2 · len(tags))`` (0.25 each for the default
    two tags), capped at ``1 − 1 / (2 · len(tags))`` so that only a right format earns full
    credit: e.g. all four tags once but in the wrong order scores 0.75, a missing
    ``</answer>`` scores 0.75, no tags at all scores 0.0. ``correct`` still says whether
    the format passed.
``allow_empty`` (default ``true``): whether a pair may enclose only whitespace.
``prefix`` (default ``""``): text put before the completion before checking, for chat
    templates that open the reasoning block in the prompt (set it to ``"<think>"``).

Without ``partial`` the score is 1.0 or 0.0. The status is ``ok`` whenever there is a
completion to check; ``feedback`` lists what is wrong (missing, duplicated or misordered
tags, text outside the tags, empty tags) and ``details`` holds the tag counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Literal

from rewardsmith.verifiers.core import Sample, Verdict, Verifier, read_completion
from rewardsmith.verifiers.options import NonEmpty, Pattern, Unique, declare, option
from rewardsmith.verifiers.registry import register

MODES = ("strict", "soft")  # the `mode` choices (the option declares them as a Literal)
_TAG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*")
_SHOWN = 40  # characters of stray text quoted in feedback


def tag_markers(tags: Sequence[str]) -> list[str]:
    """The open and close markers in the order they must appear."""
    return [marker for tag in tags for marker in (f"<{tag}>", f"</{tag}>")]


def _quote(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "…")


def format_problems(text: str, tags: Sequence[str], strict: bool, allow_empty: bool = True) -> list[str]:
    """Everything wrong with the tag layout of ``text``; empty when the format is right."""
    markers = tag_markers(tags)
    problems = []
    for marker in markers:
        count = text.count(marker)
        if count == 0:
            problems.append(f"missing {marker}")
        elif count > 1:
            problems.append(f"{marker} appears {count} times (expected once)")
    if problems:
        return problems  # positions are ambiguous until every marker occurs once
    starts = [text.index(marker) for marker in markers]
    for i in range(len(markers) - 1):
        if starts[i] > starts[i + 1]:
            problems.append(f"wrong order: {markers[i + 1]} comes before {markers[i]}")
    if problems:
        return problems
    ends = [start + len(marker) for start, marker in zip(starts, markers, strict=True)]
    if not allow_empty:
        for k, tag in enumerate(tags):
            if not text[ends[2 * k] : starts[2 * k + 1]].strip():
                problems.append(f"empty <{tag}></{tag}>")
    if strict:
        outside = [("before", markers[0], text[: starts[0]])]
        for k in range(1, len(tags)):
            between = f"{markers[2 * k - 1]} and {markers[2 * k]}"
            outside.append(("between", between, text[ends[2 * k - 1] : starts[2 * k]]))
        outside.append(("after", markers[-1], text[ends[-1] :]))
        for where, anchor, stray in outside:
            if stray.strip():
                problems.append(f"text outside the tags {where} {anchor}: {_quote(stray)}")
    return problems


def partial_credit(text: str, tags: Sequence[str], passed: bool) -> float:
    """1.0 for a right format, else 1/(2n) per marker seen exactly once, below 1.0."""
    if passed:
        return 1.0
    markers = tag_markers(tags)
    step = 1.0 / len(markers)
    once = sum(1 for marker in markers if text.count(marker) == 1)
    return min(once * step, 1.0 - step)


TagName = Annotated[str, Pattern(_TAG_NAME.pattern, "a tag name (letters, digits, _ . : -)")]


@register("format")
@declare
class FormatVerifier(Verifier):
    """Tag-format reward for reasoning models: the reasoning and the answer in their tags, in order.

    1.0 when the format is right, else 0.0 (or, with ``partial``, shaping credit below 1.0);
    ``feedback`` lists what is wrong. The module docstring details each mode.
    """

    name = "format"

    tags: Annotated[tuple[TagName, ...], NonEmpty(), Unique()] = option(
        ("think", "answer"), "tag names, in the order they must appear (exact, case-sensitive)")
    mode: Literal["strict", "soft"] = option("strict", "strict: only the tag pairs and whitespace; soft: any text "
                                                       "around them")
    partial: bool = option(False, "shaping credit of 1/(2·len(tags)) per tag seen exactly once, below 1.0")
    allow_empty: bool = option(True, "whether a tag pair may enclose only whitespace")
    prefix: str = option("", "text put before the completion (\"<think>\" when the chat template opens it)")

    def _verify(self, sample: Sample) -> Verdict:
        text = read_completion(sample)
        if isinstance(text, Verdict):
            return text
        text = self.prefix + text
        problems = format_problems(text, self.tags, self.mode == "strict", self.allow_empty)
        passed = not problems
        score = partial_credit(text, self.tags, passed) if self.partial else float(passed)
        details = {
            "mode": self.mode,
            "counts": {marker: text.count(marker) for marker in tag_markers(self.tags)},
            "problems": problems,
        }
        return Verdict(score=score, correct=passed, status="ok", feedback="; ".join(problems), details=details)
