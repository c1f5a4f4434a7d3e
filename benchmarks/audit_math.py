"""rewardsmith audit of `math` on MATH-500 golds, beside the same audit of plain math-verify.

Both sides get exactly the same probes (same rows, families, seed) through the same audit; the
reference side is math-verify as its README shows it (``verify(parse(gold), parse(completion))``,
its default timeouts, in the main thread), registered as a verifier here. Prints each family's
hacks (attacks paid) and false negatives (rewrites refused) side by side, the wall time of each
audit and the ratio. The issue's target: the whole audit of `math` runs in minutes on 2 cores.

    python benchmarks/audit_math.py [--data ../shared/data/math/math500_test.jsonl] [--rows N] [--per-row N]
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

from rewardsmith.adapters.audit import audit
from rewardsmith.adapters.scoring.rows import read_rows
from rewardsmith.verifiers import Sample, Verdict, Verifier, register

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "math" / "math500_test.jsonl"


@register("plain_math_verify")
class PlainMathVerify(Verifier):
    """math-verify as its README shows it: 1.0 when verify(parse(gold), parse(completion))."""

    name = "plain_math_verify"

    def _verify(self, sample: Sample) -> Verdict:
        from math_verify import parse, verify

        try:
            ok = bool(verify(parse(str(sample.get("answer"))), parse(sample.completion_text)))
        except Exception:  # what a hand-written reward does with a parser crash
            ok = False
        return Verdict(score=float(ok), correct=ok)


def rows(path: Path, limit: int) -> list:
    out = []
    for row in read_rows(path):
        if row.line > limit:
            break
        if row.data is not None:
            row.data["prompt"] = row.data.pop("problem")
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--per-row", type=int, default=2)
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    data = rows(args.data, args.rows)
    print(f"{len(data)} MATH-500 rows, every family, {args.per_row} probes per family and row, "
          f"{os.cpu_count()} CPUs")
    start = time.perf_counter()
    ours = audit("math", data, per_row=args.per_row)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    plain = audit("plain_math_verify", data, per_row=args.per_row)
    plain_s = time.perf_counter() - start
    print(f"{'family':<20} {'kind':<8} {'cases':>7} {'ours':>7} {'math-verify':>12}")
    for mine, theirs in zip(ours.families, plain.families, strict=True):
        if mine.cases:
            print(f"{mine.name:<20} {mine.kind:<8} {mine.cases:>7} {mine.flagged:>7} {theirs.flagged:>12}")
    print(f"hacks: ours {ours.hacks}, math-verify {plain.hacks}; false negatives: ours {ours.false_negatives}, "
          f"math-verify {plain.false_negatives}; known-correct paid: ours {ours.reference_paid}/{ours.reference_rows},"
          f" math-verify {plain.reference_paid}/{plain.reference_rows}")
    cases = sum(f.cases for f in ours.families) + ours.reference_rows
    print(f"time: ours {ours_s:.1f} s ({cases / ours_s:.0f} probes/s, worker pool start included), "
          f"math-verify {plain_s:.1f} s ({cases / plain_s:.0f} probes/s); ratio {plain_s / ours_s:.2f}x")


if __name__ == "__main__":
    main()
