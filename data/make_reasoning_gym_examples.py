"""Write data/reasoning_gym_examples.jsonl: rows made by reasoning-gym's generators, with right and wrong completions.

Each row is what :func:`rewardsmith.verifiers.reasoning_gym.rows.make_rows` makes (``prompt``,
``answer``, ``metadata``) plus ``completion``, ``reference`` (a right completion, for ``rewardsmith
audit``) and ``expect`` (``right``, ``wrong`` or ``no_answer``: what the default ``reasoning_gym``
reward says). The completions: the gold in the answer tag; a wrong answer; the gold only inside
``<think>``; a hedge across two answer tags; and, for datasets whose own scorer pays it in full, a
cheat (the gold with junk after it, any text for ``game_of_life_halting``, another puzzle's 24 for
``puzzle24``). Tests check every row gets the verdict its ``expect`` says.

Run ``python data/make_reasoning_gym_examples.py`` to regenerate (needs reasoning-gym; deterministic).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASETS = ("chain_sum", "spell_backward", "maze", "rotate_matrix", "game_of_life_halting", "puzzle24", "arc_agi")


def completions(name: str, row: dict, other: dict) -> list[tuple[str, str]]:
    """(expect, completion) pairs for one generated row (``other``: another row of the same dataset)."""
    gold = row["answer"]
    wrong = other["answer"] if other["answer"] != gold else "x"
    right = f"<think>Let me work it out.</think>\n<answer>{gold}</answer>"
    out = [
        ("right", right),
        (
            "wrong",
            f"<think>Let me work it out.</think>\n<answer>{wrong}</answer>",
        ),
        ("no_answer", f"<think>It is {gold}.</think>"),
        ("wrong", f"<answer>{gold}</answer>\n<answer>{other['answer']}</answer>"),
    ]
    if name == "spell_backward":
        out.append(("wrong", f"<answer>{gold} or maybe the reverse</answer>"))
    if name == "game_of_life_halting":
        out.append(("wrong", "<answer>banana</answer>"))
    if name == "puzzle24":
        out.append(("wrong", f"<answer>{other['answer']}</answer>"))
    return out


def main() -> None:
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    lines = []
    for name in DATASETS:
        first, second = make_rows(name, size=2, seed=7)
        for n, (expect, completion) in enumerate(completions(name, first, second)):
            row = {
                "id": f"{name}-{n}",
                **first,
                "completion": completion,
                "expect": expect,
                "reference": f"<answer>{first['answer']}</answer>",
            }
            lines.append(json.dumps(row, ensure_ascii=False))
    (HERE / "reasoning_gym_examples.jsonl").write_text("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} rows")


if __name__ == "__main__":
    main()
