"""Write data/arithmetic_train.jsonl and data/arithmetic_heldout.jsonl: GRPO prompts.

Two-number additions, "What is a + b? Give only the final number in \\boxed{}.", with a and b
drawn from 2-30, as chat messages (one user turn) with the sum in ``answer``. The held-out file
holds 60 pairs that never appear in the training file (a + b and b + a count as one pair), so
held-out accuracy measures arithmetic learned, not pairs remembered. The GRPO examples, the
learning benchmark and its TRL reference read these files; ``math`` is the reward.

Run ``python data/make_arithmetic.py`` to regenerate (the output is deterministic).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = "What is {a} + {b}? Give only the final number in \\boxed{{}}."
LOW, HIGH = 2, 30
HELDOUT = 60


def rows(seed: int = 0) -> tuple[list[dict], list[dict]]:
    pairs = [(a, b) for a in range(LOW, HIGH + 1) for b in range(a, HIGH + 1)]
    random.Random(seed).shuffle(pairs)
    heldout, train = pairs[:HELDOUT], pairs[HELDOUT:]

    def row(a: int, b: int, flip: bool) -> dict:
        a, b = (b, a) if flip else (a, b)
        return {"prompt": [{"role": "user", "content": TEMPLATE.format(a=a, b=b)}], "answer": str(a + b)}

    rng = random.Random(seed + 1)
    return [row(a, b, rng.random() < 0.5) for a, b in train], [row(a, b, rng.random() < 0.5) for a, b in heldout]


def main() -> None:
    train, heldout = rows()
    for name, items in (("arithmetic_train.jsonl", train), ("arithmetic_heldout.jsonl", heldout)):
        (HERE / name).write_text("".join(json.dumps(r) + "\n" for r in items))
        print(f"wrote {len(items)} rows to data/{name}")


if __name__ == "__main__":
    main()
