"""``rewardsmith score`` end to end against a plain math-verify loop, process start-up included.

The rows are MATH-500 × 8 completion variants (the builder of ``math_throughput.py``:
the reference solution, two wrong numbers, three reformatted equivalents, the solution
unboxed, a truncated one), written once as a JSONL file of ``prompt``/``completion``/``answer``
rows in a temporary folder. Both sides then run on that same file as fresh subprocesses,
timed by wall clock from launch to exit:

* plain: ``python plain_loop.py rows.jsonl``, a loop of ``verify(parse(gold), parse(completion))``
  as math-verify's README shows it (its default signal-based timeouts, main thread);
* ours: ``rewardsmith score rows.jsonl -o out.jsonl --reward math`` (default workers, progress bar on).

Each side runs ``--repeats`` times (alternating); the medians and their ratio are printed,
plus how often the two agree on the rows where the answer is unambiguous (the reference
solution and the two wrong-number variants).

    python benchmarks/math_cli.py [--data ../shared/data/math/math500_test.jsonl] [--problems N] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from math_throughput import DEFAULT_DATA, VARIANTS, variants  # the row builder, shared

PLAIN_LOOP = '''\
"""Plain math-verify over a rows file: verify(parse(gold), parse(completion)) per row."""
import json
import logging
import sys

from math_verify import parse, verify

logging.getLogger("math_verify").setLevel(logging.ERROR)
with open(sys.argv[1], encoding="utf-8") as rows, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in rows:
        row = json.loads(line)
        correct = bool(verify(parse(f"${row['answer']}$"), parse(row["completion"])))
        out.write(json.dumps(correct) + "\\n")
'''

# Variants whose verdict any sound grader must give: the reference is right, the wrong numbers wrong.
UNAMBIGUOUS = {"reference": True, "wrong +1": False, "wrong +7": False}


def build_rows(data: Path, problems: int | None, path: Path) -> int:
    records = [json.loads(line) for line in data.read_text().splitlines() if line.strip()]
    records = records[:problems] if problems else records
    with path.open("w", encoding="utf-8") as out:
        for p in records:
            for name, completion in zip(VARIANTS, variants(p["solution"], p["answer"]), strict=True):
                row = {"prompt": p["problem"], "completion": completion, "answer": p["answer"], "variant": name}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(records) * len(VARIANTS)


def rewardsmith_command() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).with_name("rewardsmith")
    if script.exists():
        return [str(script)]
    found = shutil.which("rewardsmith")
    return [found] if found else [sys.executable, "-m", "rewardsmith.adapters.cli"]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--problems", type=int, default=None, help="use only the first N problems")
    parser.add_argument("--repeats", type=int, default=3, help="runs per side; the median is reported")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not args.data.exists():
        print(f"skipped: MATH-500 not found at {args.data} (the shared benchmark data beside the repository); "
              "pass --data", file=sys.stderr)
        return

    with tempfile.TemporaryDirectory(prefix="rewardsmith-math-cli-") as tmp:
        folder = Path(tmp)
        rows_path, plain_script = folder / "rows.jsonl", folder / "plain_loop.py"
        n = build_rows(args.data, args.problems, rows_path)
        plain_script.write_text(PLAIN_LOOP)
        ours_cmd = rewardsmith_command()
        print(f"{n} rows ({n // len(VARIANTS)} problems x {len(VARIANTS)} completions), {os.cpu_count()} cores")
        print(f"plain: {Path(sys.executable).name} plain_loop.py rows.jsonl")
        print(f"ours:  {' '.join(Path(c).name if i == 0 else c for i, c in enumerate(ours_cmd))} "
              "score rows.jsonl -o out.jsonl --reward math")

        plain_s, ours_s = [], []
        for k in range(args.repeats):
            plain_out, ours_out = folder / f"plain_{k}.jsonl", folder / f"ours_{k}.jsonl"
            plain_s.append(timed([sys.executable, str(plain_script), str(rows_path), str(plain_out)]))
            ours_s.append(timed([*ours_cmd, "score", str(rows_path), "-o", str(ours_out), "--reward", "math"]))
            print(f"  run {k + 1}: plain {plain_s[-1]:.2f} s, ours {ours_s[-1]:.2f} s, "
                  f"ratio {plain_s[-1] / ours_s[-1]:.2f}x")

        plain = [json.loads(line) for line in plain_out.read_text().splitlines()]
        ours_rows = [json.loads(line) for line in ours_out.read_text().splitlines()]
        if len(plain) != n or len(ours_rows) != n:
            raise SystemExit(f"expected {n} verdicts per side, got plain {len(plain)}, ours {len(ours_rows)}")
        ours = [row["verdict"]["correct"] is True for row in ours_rows]
        statuses: dict[str, int] = {}
        for row in ours_rows:
            statuses[row["verdict"]["status"]] = statuses.get(row["verdict"]["status"], 0) + 1

    checked = [i for i, row in enumerate(ours_rows) if row["variant"] in UNAMBIGUOUS]
    agree = sum(plain[i] == ours[i] for i in checked)
    wrong_passed = [sum(ours[i] for i in checked if ours_rows[i]["variant"] == v) for v in ("wrong +1", "wrong +7")]
    plain_med, ours_med = statistics.median(plain_s), statistics.median(ours_s)
    figures = {
        "rows": n,
        "repeats": args.repeats,
        "plain_s": plain_s,
        "ours_s": ours_s,
        "plain_median_s": plain_med,
        "ours_median_s": ours_med,
        "ratio": plain_med / ours_med,
        "plain_rows_per_s": n / plain_med,
        "ours_rows_per_s": n / ours_med,
        "unambiguous_rows": len(checked),
        "unambiguous_agreement": agree / len(checked) if checked else None,
        "ours_statuses": statuses,
    }
    print(f"{'':34}{'plain math-verify':>20}{'rewardsmith score':>20}")
    print(f"{'wall time, median (s)':34}{plain_med:>20.2f}{ours_med:>20.2f}")
    print(f"{'rows/s, start-up included':34}{n / plain_med:>20.1f}{n / ours_med:>20.1f}")
    print(f"{'marked correct':34}{sum(plain):>20}{sum(ours):>20}")
    print(f"agreement on the {len(checked)} unambiguous rows (reference, wrong +1, wrong +7): {agree}/{len(checked)}; "
          f"wrong-number rows ours passed: {sum(wrong_passed)}")
    print(f"ours, statuses: {statuses}")
    print(f"ratio (plain / ours wall time): {figures['ratio']:.2f}x   target >= 2.5x on 2 cores")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
