"""``choice`` against a plain reference letter extraction, on the same generated rows, in one run.

The reference is lm-evaluation-harness' own MMLU-Pro filter: ``RegexFilter`` with the pattern
``answer is \\(?([A-J])\\)?`` and ``take_first``, then exact match with the gold letter (what
``lm_eval --tasks mmlu_pro`` scores a generation with). The rows are our own: four-option questions
(options as a list, gold as an index, MMLU's shape), each answered in the ways a policy writes (and
games) an answer, with the truth of each known by construction:

* right: "The answer is (B).", "The answer is B.", ``\\boxed{B}``, ``<answer>B</answer>``, "Answer: B",
  a bare ``B``, the option's text, a worked solution ending with the answer;
* wrong: another letter; a letter outside the options;
* not an answer: "A or B", every letter, "B (or maybe C)", two boxes, a denial ("The answer is not B."),
  the answer only inside ``<think>``, a retraction, "Is the answer B?".

It prints rows/s of both, and for each kind how often each side pays it, with the truth; every
disagreement is a kind where one side is wrong, and which one follows from the truth.

    python benchmarks/choice_throughput.py [--questions 300]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

LETTERS = "ABCD"

# kind -> (template, paid when right?) ; {g} the gold letter, {x} another, {t} the gold's text
KINDS: dict[str, tuple[str, bool]] = {
    "answer is (G)": ("The answer is ({g}).", True),
    "answer is G": ("The answer is {g}.", True),
    "boxed": ("\\boxed{{{g}}}", True),
    "answer tag": ("<think>Checking each option.</think><answer>{g}</answer>", True),
    "Answer: G": ("Answer: {g}", True),
    "bare letter": ("{g}", True),
    "option text": ("The answer is {t}.", True),
    "worked then answer": (
        "Option {x} fails the second condition, and only one option fits both.\nThe answer is ({g}).",
        True,
    ),
    "another letter": ("The answer is ({x}).", False),
    "outside letter": ("The answer is (E).", False),
    "G or X": ("The answer is ({g}) or ({x}).", False),
    "X or G": ("The answer is {x} or {g}.", False),
    "every letter": ("The answer is (A), (B), (C), (D).", False),
    "G (or maybe X)": ("The answer is {g} (or maybe {x}).", False),
    "two boxes": ("\\boxed{{{x}}} \\boxed{{{g}}}", False),
    "denial": ("The answer is not ({g}).", False),
    "think only": ("<think>The answer is ({g}).</think>", False),
    "retracted": ("The answer is ({g}), but that is wrong.", False),
    "asked": ("So the answer is ({g})? I cannot tell.", False),
}


def rows(questions: int, seed: int = 0) -> list[tuple[str, dict, bool]]:
    rng = random.Random(seed)
    out = []
    for q in range(questions):
        options = [f"option {q}-{k} {rng.choice(['alpha', 'beta', 'gamma', 'delta'])}" for k in range(4)]
        gold = rng.randrange(4)
        other = rng.choice([k for k in range(4) if k != gold])
        for kind, (template, truth) in KINDS.items():
            completion = template.format(g=LETTERS[gold], x=LETTERS[other], t=options[gold])
            out.append((kind, {"completion": completion, "choices": options, "answer": gold}, truth))
    return out


def ours(data: list[tuple[str, dict, bool]]) -> list[bool]:
    from rewardsmith.verifiers import Sample, build

    verifier = build("choice")
    samples = [Sample(prompt="", completion=row["completion"], fields=row) for _, row, _ in data]
    return [v.score == 1.0 for v in verifier.verify_batch(samples)]


def reference(data: list[tuple[str, dict, bool]]) -> list[bool]:
    from lm_eval.filters.extraction import RegexFilter

    extract = RegexFilter(regex_pattern=r"answer is \(?([ABCDEFGHIJ])\)?", group_select=0)
    responses = [[row["completion"]] for _, row, _ in data]
    extracted = extract.apply(responses, [row for _, row, _ in data])
    return [
        found[0].strip().upper() == LETTERS[row["answer"]] for found, (_, row, _) in zip(extracted, data, strict=True)
    ]


def timed(fn, data):
    start = time.perf_counter()
    result = fn(data)
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=300)
    args = parser.parse_args()
    data = rows(args.questions)
    reference(data[:10])  # imports (lm_eval; rewardsmith.verifiers and the choice module) outside the timing
    ours(data[:10])
    mine, t_mine = timed(ours, data)
    theirs, t_theirs = timed(reference, data)
    n = len(data)
    print(f"{n} rows ({args.questions} questions x {len(KINDS)} kinds)")
    print(
        f"rows/s: choice {n / t_mine:,.0f}, lm-eval regex filter {n / t_theirs:,.0f} (ratio {t_mine / t_theirs:.1f}x "
        "slower: it reads every form, every statement and the options)"
    )
    paid_mine, paid_ref, total = Counter(), Counter(), Counter()
    for (kind, _, _), a, b in zip(data, mine, theirs, strict=True):
        total[kind] += 1
        paid_mine[kind] += a
        paid_ref[kind] += b
    agree = sum(a == b for a, b in zip(mine, theirs, strict=True))
    right_mine = sum(a == truth for a, (_, _, truth) in zip(mine, data, strict=True))
    right_ref = sum(b == truth for b, (_, _, truth) in zip(theirs, data, strict=True))
    print(
        f"agreement: {agree}/{n} ({100 * agree / n:.1f}%); right by construction: choice {right_mine}/{n}, "
        f"reference {right_ref}/{n}"
    )
    print(f"{'kind':<20} {'truth':<6} {'choice paid':>11} {'reference paid':>15}  where they differ, who is right")
    for kind, (_, truth) in KINDS.items():
        a, b, t = paid_mine[kind], paid_ref[kind], total[kind]
        note = "" if a == b else ("choice" if (a == t * truth) else "reference" if (b == t * truth) else "neither")
        print(f"{kind:<20} {'pay' if truth else 'none':<6} {a:>7}/{t:<3} {b:>11}/{t:<3}  {note}")


if __name__ == "__main__":
    main()
