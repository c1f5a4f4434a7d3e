"""Which reasoning-gym scorers are safe to pay at face value, and the stricter check for those that are not.

From the survey (:mod:`.survey`, table in docs/verifiers/reasoning_gym.md): every dataset below pays
at least one attack (the gold with junk after it, the gold repeated, an empty-looking answer, the answer
of another puzzle) at full credit. Under the default ``unsafe: exact`` an answer to one of them counts
only when it also equals the row's gold (whitespace collapsed, case ignored), or for ``puzzle24`` when its
numbers are the puzzle's own; ``refuse`` makes such rows ``invalid_input``; ``trust`` pays the scorer.

Partial credit (0.01 for any answer, 0.05 for a parseable grid, substring ratios) is a separate matter:
``partial: false`` (the default) pays only a full score.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

# dataset -> what its scorer pays that it should not (measured with reasoning-gym 0.1.25).
UNSAFE: dict[str, str] = {
    "fraction_simplification": "reads the first fraction anywhere: the gold followed by junk, or repeated, pays 1.0",
    "game_of_life_halting": "compares bool(answer) with bool(gold): any non-empty answer pays 1.0 ('False' is true)",
    "gsm_symbolic": "reads a number out of the text: the gold followed by junk, or repeated, pays 1.0",
    "kakurasu": "reads the first grid: the gold followed by junk pays 1.0",
    "knights_knaves": "finds the assignments in any text: the gold followed by junk, or repeated, pays 1.0",
    "letter_jumble": "compares word by word up to the gold's length: the gold with junk or repeated pays 1.0",
    "polynomial_equations": "matches numbers greedily: the gold repeated pays 1.0",
    "puzzle24": "checks only that the expression makes 24 from four numbers in range: another puzzle's answer pays 1.0",
    "sokoban": "ignores what is not a move: the gold followed by junk, or repeated, pays 1.0",
    "spell_backward": "pays a substring match: the gold followed by junk, or repeated, pays 1.0",
    "survo": "reads the first grid: the gold followed by junk pays 1.0",
    "time_intervals": "reads the first token: the gold followed by junk, or repeated, pays 1.0",
}

# A score this close to 1.0 is full: some scorers sum fractions (letter_jumble pays 0.9999999999999999).
FULL = 1.0 - 1e-9

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


def restore(dataset: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata as the generator made it, where JSON changed a type the scorer compares."""
    fields = TUPLE_FIELDS.get(dataset, ())
    return {k: _tuples(v) if k in fields else v for k, v in metadata.items()}


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value
