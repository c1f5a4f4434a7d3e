"""Which reasoning-gym scorers are safe to pay at face value, and the stricter check for those that are not.

From the survey (:mod:`.survey`: ``survey.json``, rerun in CI; table in docs/verifiers/reasoning_gym.md):
every dataset of :data:`UNSAFE` is one whose own scorer paid at least one cheat in full (the gold with
junk after it, the gold repeated, an empty answer, another puzzle's answer, a JSON key given two values).
Under the default ``unsafe: exact`` an answer to one of them counts only when it also equals the row's
gold (whitespace collapsed, case ignored), or for ``puzzle24`` when its numbers are the puzzle's own;
``refuse`` makes such rows ``invalid_input``; ``trust`` pays the scorer.

Partial credit (0.01 for any answer, 0.05 for a parseable grid, substring ratios) is a separate matter:
``partial: false`` (the default) pays only a full score.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from rewardsmith.verifiers.reasoning_gym.survey import CHEAT_WORDS, load, pays_cheats


def _unsafe() -> dict[str, str]:
    """dataset -> what its scorer pays that it should not, as the survey measured it."""
    found = {}
    for name, row in load().items():
        cheats = pays_cheats(row)
        if cheats:
            found[name] = "its own scorer pays 1.0 for " + ", ".join(CHEAT_WORDS[c] for c in cheats)
    return found


UNSAFE: dict[str, str] = _unsafe()

# Metadata that reasoning-gym keeps as tuples and compares by ==: JSON turns them into lists.
TUPLE_FIELDS: dict[str, tuple[str, ...]] = {"arc_agi": ("input", "output"), "rearc": ("input", "output")}


def squash(text: str, fold: bool = False) -> str:
    """Whitespace collapsed to single spaces, ends stripped; with ``fold``, case folded too."""
    text = " ".join(text.split())
    return text.casefold() if fold else text


def stricter_check(dataset: str, answer: str, gold: Any, metadata: Mapping[str, Any]) -> str | None:
    """Why an answer the scorer paid in full does not count for an unsafe dataset, or None when it does."""
    if dataset == "puzzle24":
        used = Counter(int(n) for n in re.findall(r"\d+", answer))
        wanted = Counter(int(n) for n in metadata.get("numbers", ()))
        return None if used == wanted else "the expression does not use exactly the puzzle's numbers"
    if not isinstance(gold, str) or not gold.strip():
        return "the row has no gold answer to hold an unsafe scorer's verdict against"
    return (
        None
        if squash(answer, fold=True) == squash(gold, fold=True)
        else "the answer is not exactly the gold (the scorer is lenient)"
    )


def tuple_paths(dataset: str) -> tuple[str, ...]:
    """Where in an entry the dataset's scorer compares tuples that JSON turned into lists (the sandboxed
    scorer turns them back: the entry crosses to it as JSON)."""
    return tuple(f"metadata.{field}" for field in TUPLE_FIELDS.get(dataset, ()))
