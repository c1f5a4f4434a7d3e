"""MATH-500 × 8 completions: plain math-verify in a loop vs rewardsmith's batch path.

Each problem gets its reference solution plus 7 derived variants (two with wrong
numbers, three reformatted equivalents, the solution unboxed, and a truncated one
with no answer), as a GRPO group would: 8 completions sharing one gold answer.
Both sides grade the same (gold, completion) pairs in the same run; we print
throughput, p50/p99 latency, the ratio, and how often the two verdicts agree.

    python benchmarks/math_throughput.py [--data ../shared/data/math/math500_test.jsonl] [--problems N]

Plain math-verify runs the way its README shows (``verify(parse(gold), parse(pred))``,
its default signal-based timeouts, main thread). Ours runs ``verify_batch`` over
batches of 256 rows (the ``rewardsmith score`` default) on a warm worker pool; pool
start-up is reported separately.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import statistics
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "math" / "math500_test.jsonl"


def perturb(answer: str, shift: int) -> str:
    """A wrong answer: bump the first integer, or append ``+shift`` when there is none."""
    match = re.search(r"\d+", answer)
    if match is None:
        return f"{answer}+{shift}"
    return answer[: match.start()] + str(int(match.group(0)) + shift) + answer[match.end():]


def replace_last_boxed(solution: str, replacement: str) -> str:
    from rewardsmith.verifiers.reading.boxes import BOX_COMMAND, balanced_group

    spans = [(m.start(), balanced_group(solution, m.end())) for m in BOX_COMMAND.finditer(solution)]
    spans = [(start, group) for start, group in spans if group is not None]
    if not spans:
        return solution + "\n" + replacement
    start, (_, end) = spans[-1]
    return solution[:start] + replacement + solution[end:]


VARIANTS = ("reference", "wrong +1", "wrong +7", "final answer is", "answer tag", "boxed, dfrac",
            "unboxed", "truncated")


def variants(solution: str, answer: str) -> list[str]:
    """One completion per name in VARIANTS, in that order (the wrong ones must never pass)."""
    return [
        solution,
        replace_last_boxed(solution, f"\\boxed{{{perturb(answer, 1)}}}"),
        replace_last_boxed(solution, f"\\boxed{{{perturb(answer, 7)}}}"),
        f"Working omitted. The final answer is ${answer}$.",
        f"<think>{solution[:200]}</think>\n<answer>{answer}</answer>",
        f"Answer: \\boxed{{ {answer.replace(chr(92) + 'frac', chr(92) + 'dfrac')} }}",
        replace_last_boxed(solution, answer),
        solution[: len(solution) // 3],
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_plain(pairs: list[tuple[str, str]]) -> tuple[list[bool], list[float], float]:
    from math_verify import parse, verify

    results, latencies = [], []
    start = time.perf_counter()
    for gold, completion in pairs:
        t = time.perf_counter()
        results.append(bool(verify(parse(f"${gold}$"), parse(completion))))
        latencies.append(time.perf_counter() - t)
    return results, latencies, time.perf_counter() - start


def run_ours(
    pairs: list[tuple[str, str]], workers: int | None, batch: int
) -> tuple[list[bool], list[float], float, float]:
    from rewardsmith.verifiers import Sample, build
    from rewardsmith.verifiers.pool import shared_pool

    verifier = build({"type": "math", "workers": workers})
    t = time.perf_counter()
    shared_pool(workers).start()
    verifier.verify_batch([Sample(completion="\\boxed{1}", fields={"answer": "1"})])  # imports in the workers
    startup = time.perf_counter() - t
    samples = [Sample(completion=c, fields={"answer": g}) for g, c in pairs]
    verdicts = []
    start = time.perf_counter()
    for i in range(0, len(samples), batch):
        verdicts.extend(verifier.verify_batch(samples[i : i + batch]))
    total = time.perf_counter() - start
    return [bool(v.correct) for v in verdicts], [v.elapsed_s for v in verdicts], total, startup


def single_call_latencies(pairs: list[tuple[str, str]], workers: int | None, n: int = 300) -> list[float]:
    """Round trip of one ``verify()`` through the pool (IPC included), as a server would see it."""
    from rewardsmith.verifiers import Sample, build

    verifier = build({"type": "math", "workers": workers})
    out = []
    for gold, completion in pairs[:: max(1, len(pairs) // n)][:n]:
        t = time.perf_counter()
        verifier.verify(Sample(completion=completion, fields={"answer": gold}))
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--problems", type=int, default=None, help="use only the first N problems")
    parser.add_argument("--workers", type=int, default=None, help="pool size (default: all cores)")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not args.data.exists():
        raise SystemExit(f"MATH-500 not found at {args.data}; pass --data")
    logging.getLogger("math_verify").setLevel(logging.ERROR)  # its timeout warnings are noise here

    problems = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    problems = problems[: args.problems] if args.problems else problems
    pairs = [(p["answer"], c) for p in problems for c in variants(p["solution"], p["answer"])]
    print(f"{len(problems)} problems x 8 completions = {len(pairs)} pairs, {os.cpu_count()} cores")

    plain, plain_lat, plain_s = run_plain(pairs)
    ours, ours_lat, ours_s, startup = run_ours(pairs, args.workers, args.batch)
    single = single_call_latencies(pairs, args.workers)
    agree = sum(a == b for a, b in zip(plain, ours, strict=True))
    figures = {
        "pairs": len(pairs),
        "plain_per_s": len(pairs) / plain_s,
        "ours_per_s": len(pairs) / ours_s,
        "ratio": plain_s / ours_s,
        "plain_p50_ms": 1000 * percentile(plain_lat, 0.5),
        "plain_p99_ms": 1000 * percentile(plain_lat, 0.99),
        "ours_p50_ms": 1000 * percentile(ours_lat, 0.5),
        "ours_p99_ms": 1000 * percentile(ours_lat, 0.99),
        "ours_pool_startup_s": startup,
        "single_call_p50_ms": 1000 * percentile(single, 0.5),
        "single_call_p99_ms": 1000 * percentile(single, 0.99),
        "agreement": agree / len(pairs),
        "correct_plain": sum(plain),
        "correct_ours": sum(ours),
    }
    print(f"{'':28}{'plain math-verify':>20}{'rewardsmith batch':>20}")
    print(f"{'throughput (pairs/s)':28}{figures['plain_per_s']:>20.1f}{figures['ours_per_s']:>20.1f}")
    print(f"{'p50 latency per pair (ms)':28}{figures['plain_p50_ms']:>20.2f}{figures['ours_p50_ms']:>20.2f}")
    print(f"{'p99 latency per pair (ms)':28}{figures['plain_p99_ms']:>20.2f}{figures['ours_p99_ms']:>20.2f}")
    print(f"{'marked correct':28}{figures['correct_plain']:>20}{figures['correct_ours']:>20}")
    print("marked correct per variant (plain / ours):")
    for k, name in enumerate(VARIANTS):
        print(f"  {name:26}{sum(plain[k::8]):>6} /{sum(ours[k::8]):>5}")
    print(f"ratio (ours / plain throughput): {figures['ratio']:.2f}x   target >= 2.5x on 2 cores")
    print(f"one verify() call through the pool, IPC included: p50 {figures['single_call_p50_ms']:.2f} ms, "
          f"p99 {figures['single_call_p99_ms']:.2f} ms (warm caches)")
    print(f"pool start-up (once per process, not in the figures above): {startup:.2f} s")
    print(f"verdict agreement: {100 * figures['agreement']:.1f}%  (per-pair latency of ours is grading time inside "
          f"a worker; mean {statistics.fmean(ours_lat) * 1000:.2f} ms)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
