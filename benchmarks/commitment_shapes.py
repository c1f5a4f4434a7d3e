"""What real completions put around their final answer: the data a closed commitment grammar must hold.

Issue 36 asks for a closed grammar of the committed answer: before the final statement, in its sentence,
only a lead-in from a documented list; after it, only closing punctuation, marks or documented closing
sentences. This measures, on real solutions (MATH-500's and GSM8K's own, ProcessBench's completions by a
dozen models), how often the last statement (``####`` or the last box) fits:

* **lead-in**: the words (outside math) between the sentence start and the statement, against a small
  lead-in list alone, and against that list plus the prompt's own words;
* **tail**: what follows the statement to the end of the answer region, after closing marks, grouped by
  shape (numbers as ``N``).

    python benchmarks/commitment_shapes.py [--data ../shared/data] [--show 25]

No grading: it reads the answer region (verifiers/reading) and the statement shapes only.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from math_accuracy import DEFAULT_DATA, _jsonl, gsm8k_rows, math500_rows, processbench_rows  # noqa: E402

from rewardsmith.verifiers.math.extract import GSM8K_MARK, boxes  # noqa: E402
from rewardsmith.verifiers.math.units import words  # noqa: E402
from rewardsmith.verifiers.reading import answer_region  # noqa: E402

# A deliberately small lead-in list: connectives, "the (final) answer is", and copulas/derivation verbs.
LEAD_IN = words(
    "therefore thus so hence finally overall altogether consequently in conclusion total all the a an our my "
    "final answer answers correct is are was were be will equal equals to of value values result solution "
    "solutions there we get find found have has obtain obtained gives give yields which this that it its and as"
)
_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
_SENTENCE_BREAK = re.compile(r"\n|[.!?](?=\s)")
_CLOSING_MARKS = re.compile(r"^[\s$.,;:!\\\])}*_`]+")


def last_statement(region: str) -> tuple[int, int] | None:
    """Where the last ``####`` mark or box is, or None."""
    marks = list(GSM8K_MARK.finditer(region))
    if marks:
        return marks[-1].start(), marks[-1].end()
    found = boxes(region)
    return (found[-1][0], found[-1][1]) if found else None


def lead_in_words(region: str, start: int) -> set[str]:
    """The words outside math between the statement's sentence start and the statement."""
    before = _MATH.sub(" ", region[:start])
    cut = max((m.end() for m in _SENTENCE_BREAK.finditer(before)), default=0)
    return {w.lower() for w in _WORD.findall(before[cut:])}


def tail_shape(region: str, end: int) -> str:
    """What follows the statement, closing marks dropped, numbers as N; empty when nothing does."""
    tail = _CLOSING_MARKS.sub("", region[end:].strip()).strip()
    return re.sub(r"\d+", "N", tail[:60])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared benchmark data folder")
    parser.add_argument("--show", type=int, default=25, help="list this many of the commonest words and tails")
    args = parser.parse_args()
    if not (args.data / "math" / "math500_test.jsonl").exists():
        sys.exit(f"no benchmark data under {args.data} (expected math/math500_test.jsonl)")
    rows = (math500_rows(_jsonl(args.data / "math" / "math500_test.jsonl")) + gsm8k_rows(args.data)
            + processbench_rows(args.data))
    counts: Counter[tuple[str, str]] = Counter()
    outside: Counter[str] = Counter()
    tails: Counter[str] = Counter()
    for row in rows:
        region = answer_region(row.completion).text
        where = last_statement(region)
        if where is None:
            counts[(row.source, "no statement")] += 1
            continue
        words = lead_in_words(region, where[0])
        prompt = {w.lower() for w in _WORD.findall(row.prompt)}
        counts[(row.source, "statements")] += 1
        counts[(row.source, "lead-in in the list")] += not (words - LEAD_IN)
        counts[(row.source, "lead-in in the list or the prompt")] += not (words - LEAD_IN - prompt)
        outside.update(words - LEAD_IN - prompt)
        shape = tail_shape(region, where[1])
        counts[(row.source, "nothing after it")] += not shape
        if shape:
            tails[shape] += 1
    print(f"{'source':<14}{'rows':>6}{'statement':>11}{'lead-in: list':>15}{'list+prompt':>13}{'nothing after':>15}")
    for source in dict.fromkeys(row.source for row in rows):
        n = sum(1 for row in rows if row.source == source)
        c = {key: value for (s, key), value in counts.items() if s == source}
        print(f"{source:<14}{n:>6}{c.get('statements', 0):>11}{c.get('lead-in in the list', 0):>15}"
              f"{c.get('lead-in in the list or the prompt', 0):>13}{c.get('nothing after it', 0):>15}")
    print(f"\n{len(outside)} distinct lead-in words in neither the list nor the prompt; the commonest:")
    print("  " + ", ".join(f"{w} ({n})" for w, n in outside.most_common(args.show)))
    print(f"\n{len(tails)} distinct tails after the last statement; the commonest:")
    for shape, n in tails.most_common(args.show):
        print(f"  {n:>4}  {shape!r}")


if __name__ == "__main__":
    main()
