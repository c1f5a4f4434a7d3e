"""Probe reasoning-gym's own scorers with the answers a policy would try: what does each dataset pay?

reasoning-gym ships one ``score_answer`` per dataset, and several pay partial credit for any
non-empty answer or accept the gold inside a longer string. :func:`probe` generates a few entries
of one dataset and scores, with the dataset's own scorer (no rewardsmith reading in between), the
gold and each attack of :data:`ATTACKS`; ``benchmarks/reasoning_gym_scorers.py`` runs it over every
dataset and prints the table in docs/verifiers/reasoning_gym.md, from which :mod:`.policy` was written.
A pure, picklable function, so it runs in the killable workers of :mod:`rewardsmith.verifiers.pool`.
"""

from __future__ import annotations

import json
from typing import Any

from rewardsmith.verifiers.reasoning_gym.policy import FULL

# What each attack answers, built from the entry's gold, another entry's gold (a wrong answer) and the question.
ATTACKS: tuple[str, ...] = ("empty", "wrong", "list", "gold+junk", "junk+gold", "echo", "long", "upper", "spaced")
# The attacks that must never pay: the last two are spellings of the gold (a scorer may accept them).
CHEATS: tuple[str, ...] = ATTACKS[:7]
# Needs a config (its sub-datasets): not probed on its own; its rows carry their sub-dataset's name.
SKIPPED: tuple[str, ...] = ("composite",)


def pays_cheats(row: dict[str, Any]) -> list[str]:
    """The cheats a probed dataset's scorer pays in full."""
    return [kind for kind in CHEATS if row.get(kind, 0.0) >= FULL]


_JUNK = " and also several other things that might be right"


def attack(kind: str, gold: str, wrong: str, question: str) -> str:
    """The answer an attack of ``kind`` gives for an entry whose gold is ``gold``."""
    if kind == "empty":
        return ""
    if kind == "wrong":
        return wrong
    if kind == "list":
        return f"{wrong}, {gold}, {wrong}"
    if kind == "gold+junk":
        return gold + _JUNK
    if kind == "junk+gold":
        return f"not {wrong} but rather {gold}"
    if kind == "echo":
        return question
    if kind == "long":
        return " ".join([gold] * 200)
    if kind == "upper":
        return gold.upper() if gold.upper() != gold else gold.lower()
    if kind == "spaced":
        return f"  {gold} \n"
    raise ValueError(f"unknown attack {kind!r}")


def probe(name: str, size: int = 3, seed: int = 0) -> dict[str, Any]:
    """``{"dataset", "gold", "json", <attack>: best score over the entries, ...}`` for one dataset."""
    import reasoning_gym

    data = reasoning_gym.create_dataset(name, size=size, seed=seed)
    entries = [data[i] for i in range(size)]
    golds = [_text(e["answer"]) for e in entries]
    row: dict[str, Any] = {"dataset": name, "gold": 1.0, "json": "ok"}
    for i, entry in enumerate(entries):
        gold = golds[i]
        wrong = next((g for g in golds if g != gold), "1" if gold != "1" else "2")
        row["gold"] = min(row["gold"], _score(data, gold, entry))
        try:
            again = json.loads(json.dumps(entry))
            if _score(data, gold, again) != _score(data, gold, entry):
                row["json"] = "scores differ"
        except (TypeError, ValueError) as exc:
            row["json"] = f"not JSON: {type(exc).__name__}"
        for kind in ATTACKS:
            row[kind] = max(row.get(kind, 0.0), _score(data, attack(kind, gold, wrong, entry["question"]), entry))
    return row


def _text(answer: Any) -> str:
    return answer if isinstance(answer, str) else json.dumps(answer) if answer is not None else ""


def _score(data: Any, answer: str, entry: dict[str, Any]) -> float:
    try:
        return float(data.score_answer(answer, entry))
    except Exception:  # a scorer that raises pays nothing
        return 0.0
