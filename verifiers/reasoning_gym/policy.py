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

import ast
import json
import re
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
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
    if _same_text(answer, gold) or _same_number(answer, gold) or _same_literal(answer, gold):
        return None
    return "the answer is not exactly the gold (the scorer is lenient)"


_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?(?:/\d+)?")


_COMMA = re.compile(r"\s*,\s*")


def _same_text(answer: str, gold: str) -> bool:
    """Whether both say the same, whitespace (runs of it, and around commas) and case aside."""
    return _COMMA.sub(", ", squash(answer, fold=True)) == _COMMA.sub(", ", squash(gold, fold=True))


def _same_literal(answer: str, gold: str) -> bool:
    """Whether both are the same JSON document or Python literal (``[[0,1]]`` for ``[[0, 1]]``, ``["a"]``
    for ``['a']``), when the gold is one: compared as written back, so ``true`` is not 1, nor 1.0 1."""
    if len(answer) > 100_000 or not gold.strip().startswith(("[", "{", "(")):
        return False
    try:
        return _canonical(_literal(answer)) == _canonical(_literal(gold))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False


def _literal(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text.strip())


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _same_number(answer: str, gold: str) -> bool:
    """Whether both are one plain number (integer, decimal or a/b) of the same value: ``28080.0`` for
    ``28080``. The gold decides: only a gold that is a number admits another spelling of it."""
    a, g = answer.strip(), gold.strip()
    if not (_NUMBER.fullmatch(a) and _NUMBER.fullmatch(g)) or len(a) > 100 or len(g) > 100:
        return False
    try:
        return Fraction(a) == Fraction(g)
    except (ValueError, ZeroDivisionError):
        return False


# What an answer to these tasks is, by their own statement ("an arithmetic expression ... using the
# operators +, -, *, /"): whole numbers, those four operators, parentheses and spaces. Read before
# any scorer: a float literal (164e0, which the scorer's number count does not see) or a function is
# not such an answer.
_ARITHMETIC = re.compile(r"[0-9+\-*/() \t]+")
ANSWER_GRAMMARS: dict[str, str] = {
    "puzzle24": "arithmetic",
    "countdown": "arithmetic",
}


def grammar_problem(dataset: str, answer: str) -> str | None:
    """Why ``answer`` is not in the grammar of ``dataset``'s answers, or None (also for datasets with none)."""
    if ANSWER_GRAMMARS.get(dataset) != "arithmetic":
        return None
    if _ARITHMETIC.fullmatch(answer) and "**" not in answer and "//" not in answer:
        return None
    return "the answer is not an arithmetic expression of whole numbers with + - * / and parentheses"


def tuple_paths(dataset: str) -> tuple[str, ...]:
    """Where in an entry the dataset's scorer compares tuples that JSON turned into lists (the sandboxed
    scorer turns them back: the entry crosses to it as JSON)."""
    return tuple(f"metadata.{field}" for field in TUPLE_FIELDS.get(dataset, ()))
