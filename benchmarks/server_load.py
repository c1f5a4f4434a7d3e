"""Reward server under load: throughput and p50/p99 latency at concurrency 1, 8, 32, before and after.

Starts ``rewardsmith serve`` on 127.0.0.1 (a free port), drives ``POST /get_reward`` with
OpenRLHF-shaped requests for GSM8K-like completions, prints one line per concurrency and
stops the server. Bounded: each level runs ``--seconds`` (default 5) or ``--max-requests``,
whichever comes first.

    python benchmarks/server_load.py [--baseline REF] [--rounds 2] [--breakdown] [--token]
        [--data ../shared/data/math/gsm8k_test.jsonl] [--per-request 1] [--workers 1]
        [--batch-window-ms MS] [--max-batch 256] [--math-workers N]

``--baseline REF`` also serves the code of git ref REF (its four packages extracted with ``git
archive`` into a temporary folder, imported through a symlink tree put first on PYTHONPATH, both
removed at exit) with the same flags and load; the two servers take turns, ``--rounds`` times each
(one at a time, the order alternating), and the medians and the ratio per level are printed. On a
shared machine compare only within one run.

``--breakdown`` says where a request's time goes: the same load against a bare ASGI app that
answers a fixed body (what uvicorn's HTTP stack and this client cost on their own), against the
server with a reward that does no work (the server's own cost per request), and the per-request
steps of the server measured in this process (microseconds each).

``--token`` starts the current server with a bearer token and sends it (the baseline gets none).

Completions: each GSM8K solution rewritten as a model would answer (reasoning, then
"The answer is \\boxed{N}"), a third of them with a wrong final number, some as "#### N";
without the data file, generated arithmetic problems in the same shapes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import random
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from baseline import baseline_tree, check_imports_from, env_with

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "math" / "gsm8k_test.jsonl"
PROMPT = "<|im_start|>user\n{q}<|im_end|>\n<|im_start|>assistant\n"


def load_rows(path: Path, limit: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """(prompt, query, label) triples: the query is prompt + completion + end token, as OpenRLHF sends."""
    rows = []
    if path.exists():
        for line in path.read_text().splitlines()[:limit]:
            item = json.loads(line)
            reasoning, _, gold = item["answer"].rpartition("####")
            rows.append((item["question"], re.sub(r"<<[^>]*>>", "", reasoning).strip(), gold.strip()))
    else:
        for _ in range(limit):
            a, b, c = rng.randint(2, 99), rng.randint(2, 99), rng.randint(2, 9)
            rows.append((f"A box holds {a} pens and {b} pencils; {c} boxes hold how many items?",
                         f"One box holds {a} + {b} = {a + b} items.\n{c} boxes hold {c} * {a + b} items.",
                         str(c * (a + b))))
    out = []
    for i, (question, reasoning, gold) in enumerate(rows):
        answer = gold if i % 3 else str(int(float(gold.replace(",", ""))) + 1)
        ending = f"The answer is \\boxed{{{answer}}}." if i % 4 else f"#### {answer}"
        prompt = PROMPT.format(q=question)
        out.append((prompt, f"{prompt}{reasoning}\n{ending}<|im_end|>", gold))
    return out


def request_body(batch: list[tuple[str, str, str]]) -> bytes:
    return json.dumps({"query": [b[1] for b in batch], "prompts": [b[0] for b in batch],
                       "labels": [b[2] for b in batch]}).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Connection:
    """A minimal keep-alive HTTP/1.1 client on asyncio streams.

    Why not httpx: at concurrency 32 its pool costs more CPU than the server on a 2-core
    machine (measured: 200 req/s and p99 740 ms against a verifier that does nothing),
    so it would measure itself rather than the server.
    """

    def __init__(self, host: str, port: int, headers: str = "") -> None:
        self.host, self.port, self.headers = host, port, headers
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                f"{self.headers}Content-Length: {len(body)}\r\n\r\n").encode()
        self.writer.write(head + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
        return status, await self.reader.readexactly(length)

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        return await self.request("POST", path, body)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def run_level(port: int, rows: list, concurrency: int, per_request: int, seconds: float,
                    max_requests: int, headers: str = "") -> dict:
    latencies: list[float] = []
    errors = 0
    issued = 0
    stop_at = time.perf_counter() + seconds

    async def user(offset: int) -> None:
        nonlocal errors, issued
        conn = Connection("127.0.0.1", port, headers)
        i = offset
        try:
            while time.perf_counter() < stop_at and issued < max_requests:
                issued += 1
                body = request_body([rows[(i + k) % len(rows)] for k in range(per_request)])
                i += per_request * concurrency
                start = time.perf_counter()
                status, _ = await conn.post("/get_reward", body)
                latencies.append(time.perf_counter() - start)
                errors += status != 200
        finally:
            await conn.close()

    begin = time.perf_counter()
    await asyncio.gather(*(user(c * per_request) for c in range(concurrency)))
    wall = time.perf_counter() - begin
    lat = sorted(latencies)
    return {
        "concurrency": concurrency,
        "requests": len(lat),
        "errors": errors,
        "rewards_per_s": len(lat) * per_request / wall,
        "p50_ms": 1000 * statistics.median(lat),
        "p99_ms": 1000 * lat[min(len(lat) - 1, int(0.99 * len(lat)))],
    }


# ---------------------------------------------------------------- the servers


@contextlib.contextmanager
def running(cmd: list[str], env: dict[str, str], port: int) -> Iterator[None]:
    server = subprocess.Popen(cmd, env=env)
    try:
        asyncio.run(wait_ready(port, server))
        yield
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


async def wait_ready(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 90
    while True:
        with contextlib.suppress(OSError):
            conn = Connection("127.0.0.1", port)
            status, _ = await conn.request("GET", "/health")
            await conn.close()
            if status == 200:
                return
        if server.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"server did not start: {' '.join(server.args)}")
        await asyncio.sleep(0.2)


def serve_command(spec_path: Path, port: int, args: argparse.Namespace, token_file: Path | None) -> list[str]:
    cmd = [sys.executable, "-m", "rewardsmith.adapters.cli", "serve", "--reward", str(spec_path),
           "--port", str(port), "--workers", str(args.workers), "--max-batch", str(args.max_batch),
           "--max-queue", "1024", "--log-level", "warning"]
    if args.batch_window_ms is not None:
        cmd += ["--batch-window-ms", str(args.batch_window_ms)]
    if token_file is not None:
        cmd += ["--token-file", str(token_file)]
    return cmd


def measure(name: str, cmd: list[str], env: dict[str, str], rows: list, args: argparse.Namespace,
            headers: str = "") -> dict[int, dict]:
    port = int(cmd[cmd.index("--port") + 1])
    with running(cmd, env, port):
        return asyncio.run(_drive(name, port, rows, args, headers))


async def _drive(name: str, port: int, rows: list, args: argparse.Namespace, headers: str) -> dict[int, dict]:
    # Warm-up: the math pool is already warm (the server warms it before accepting requests);
    # this fills the parse caches and the connections before measuring.
    await run_level(port, rows, 4, args.per_request, 2.0, 200, headers)
    results = {}
    for level in levels(args):
        res = await run_level(port, rows, level, args.per_request, args.seconds, args.max_requests, headers)
        results[level] = res
        print(f"{name:>9} {level:>5} {res['requests']:>9} {res['errors']:>7} {res['rewards_per_s']:>10.1f} "
              f"{res['p50_ms']:>8.1f} {res['p99_ms']:>8.1f}", flush=True)
    conn = Connection("127.0.0.1", port, headers)
    status, metrics = await conn.request("GET", "/metrics")
    await conn.close()
    if status == 200:
        print(f"{'':>9} mean verify_batch size: {mean_batch(metrics.decode())}", flush=True)
    return results


def mean_batch(text: str) -> str:
    from prometheus_client.parser import text_string_to_metric_families

    totals = {s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples
              if not s.labels}
    batches, samples = totals.get("rewardsmith_batches_total"), totals.get("rewardsmith_batched_samples_total")
    if not batches or not samples:
        return "n/a"
    return f"{samples / batches:.1f} ({batches:.0f} batches, {samples:.0f} samples)"  # over every server process


def levels(args: argparse.Namespace) -> list[int]:
    return [int(c) for c in args.concurrency.split(",")]


# ---------------------------------------------------------------- where the time goes


async def bare_app(scope: dict, receive, send) -> None:  # type: ignore[no-untyped-def]
    """An ASGI app that reads the body and answers a fixed reward: uvicorn's HTTP stack alone."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    body = b'{"rewards":[1.0],"scores":[1.0],"extra_logs":{}}'
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def per_step_us(rows: list) -> list[tuple[str, float]]:
    """Microseconds per request for each step the server takes, timed in this process."""
    import pickle

    from rewardsmith.adapters.serve.reward_server import Metrics, parse_get_reward, request_line
    from rewardsmith.adapters.trainers.openrlhf import openrlhf_health, reward_dict, to_samples
    from rewardsmith.verifiers import build

    bodies = [request_body([row]) for row in rows]
    payloads = [json.loads(b) for b in bodies]
    inproc = build({"type": "math", "workers": 0})
    pooled = build({"type": "math"})
    pooled.start(True)
    samples = [to_samples(*parse_get_reward(p)) for p in payloads]
    verdicts = [inproc.verify_batch(s) for s in samples]
    pooled.verify_batch([s[0] for s in samples])  # both caches warm, as in a long run
    answers = [reward_dict(v, inproc) for v in verdicts]
    health, metrics = openrlhf_health(), Metrics()
    n = len(rows)

    def timed(fn, repeat: int = 2000) -> float:  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        for i in range(repeat):
            fn(i % n)
        return 1e6 * (time.perf_counter() - start) / repeat

    steps = [
        ("JSON parse (json.loads)", timed(lambda i: json.loads(bodies[i]))),
        ("fields + OpenRLHF split (to_samples)", timed(lambda i: to_samples(*parse_get_reward(payloads[i])))),
        ("reward dict + input health", timed(lambda i: (health.check(verdicts[i]), reward_dict(verdicts[i], inproc)))),
        ("JSON serialise (json.dumps)", timed(lambda i: json.dumps(answers[i], separators=(",", ":")).encode())),
        ("metrics (request, latency, verdicts)",
         timed(lambda i: (metrics.observe("/get_reward", 200, 0.01), metrics.scored(verdicts[i])))),
        ("log line (at --log-level info only)", timed(lambda i: request_line("math", "/get_reward", 200,
                                                                              verdicts[i], 0.01))),
        ("math grading in-process (1 sample)", timed(lambda i: inproc.verify_batch(samples[i]), 500)),
        ("math grading via the pool (1 sample)", timed(lambda i: pooled.verify_batch(samples[i]), 500)),
        ("  of which: pickling the task per call", timed(lambda i: pickle.dumps(pooled.task, protocol=5))),
        ("math grading via the pool (batch of 16, per sample)",
         timed(lambda i: pooled.verify_batch([s[0] for s in samples[i:i + 16]]), 100) / 16),
    ]
    return steps


def breakdown(args: argparse.Namespace, rows: list, tmp: Path) -> None:
    level = max(levels(args))
    print(f"\nwhere the time goes (concurrency {level}; rewards/s, and what one request costs the machine, "
          "its 2 cores and this client together):")
    noop = tmp / "noop.json"
    noop.write_text(json.dumps({"type": "format"}))  # one regex: next to no work
    variants = [
        ("bare ASGI app on uvicorn (HTTP stack + client)",
         [sys.executable, "-m", "uvicorn", "server_load:bare_app", "--app-dir", str(Path(__file__).parent),
          "--port", "{port}", "--log-level", "warning", "--no-access-log"]),
        ("rewardsmith serve, a reward that does no work", None),
    ]
    quick = argparse.Namespace(**{**vars(args), "concurrency": str(level)})
    for name, cmd in variants:
        port = free_port()
        cmd = ([c.replace("{port}", str(port)) for c in cmd] if cmd is not None
               else serve_command(noop, port, quick, None))
        with running(cmd, env_with(None), port):
            asyncio.run(run_level(port, rows, 4, 1, 1.0, 200))  # warm-up
            res = asyncio.run(run_level(port, rows, level, args.per_request, args.seconds, args.max_requests))
        print(f"  {name:<52} {res['rewards_per_s']:>8.1f}/s  {1e6 / res['rewards_per_s']:>6.0f} us  "
              f"p99 {res['p99_ms']:.1f} ms")
    print("per request, in this process (us):")
    for name, us in per_step_us(rows[:200]):
        print(f"  {name:<52} {us:>8.1f}")


def http_stack() -> str:
    http = "httptools" if importlib.util.find_spec("httptools") else "h11 (pure Python; pip install httptools)"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio (pip install uvloop)"
    return f"http={http} loop={loop}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--per-request", type=int, default=1, help="samples per request (default 1: hardest case)")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--seconds", type=float, default=5.0, help="per concurrency level")
    parser.add_argument("--max-requests", type=int, default=20000, help="per concurrency level")
    parser.add_argument("--workers", type=int, default=1, help="server processes")
    parser.add_argument("--batch-window-ms", type=float, default=None, help="default: serve's own")
    parser.add_argument("--max-batch", type=int, default=256)
    parser.add_argument("--math-workers", type=int, default=None, help="math pool size (default: all cores)")
    parser.add_argument("--baseline", metavar="REF", default=None,
                        help="also serve git ref REF (e.g. HEAD~3, main) and print both and the ratio")
    parser.add_argument("--rounds", type=int, default=1, help="turns each server takes (default 1)")
    parser.add_argument("--breakdown", action="store_true", help="also measure where a request's time goes")
    parser.add_argument("--token", action="store_true", help="the current server requires a bearer token")
    args = parser.parse_args()

    rows = load_rows(args.data, args.rows, random.Random(0))
    spec = {"type": "math"} if args.math_workers is None else {"type": "math", "workers": args.math_workers}
    with tempfile.TemporaryDirectory() as tmp_name, contextlib.ExitStack() as stack:
        tmp = Path(tmp_name)
        spec_path = tmp / "reward.json"
        spec_path.write_text(json.dumps(spec))
        token_file, headers = None, ""
        if args.token:
            token_file = tmp / "token"
            token = secrets.token_urlsafe(32)
            token_file.write_text(token + "\n")
            headers = f"Authorization: Bearer {token}\r\n"
        servers = [("current", env_with(None), token_file, headers)]
        if args.baseline is not None:
            tree = stack.enter_context(baseline_tree(args.baseline))
            env = env_with(tree)
            check_imports_from(env, tree)
            servers.insert(0, (f"{args.baseline}"[:9], env, None, ""))
        print(f"server: workers={args.workers} window={args.batch_window_ms or 'default'} max_batch={args.max_batch} "
              f"spec={json.dumps(spec)}; {args.per_request} sample(s)/request; {os.cpu_count()} cores; "
              f"data={'gsm8k' if args.data.exists() else 'generated'}; {http_stack()}"
              f"{'; current server with a token' if args.token else ''}")
        print(f"{'server':>9} {'conc':>5} {'requests':>9} {'errors':>7} {'rewards/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
        results: dict[str, list[dict[int, dict]]] = {name: [] for name, *_ in servers}
        for turn in range(args.rounds):
            for name, env, token_path, head in servers if turn % 2 == 0 else servers[::-1]:
                port = free_port()
                results[name].append(measure(name, serve_command(spec_path, port, args, token_path), env, rows,
                                             args, head))
        if args.baseline is not None or args.rounds > 1:
            summary(results, levels(args), args.rounds)
        if args.breakdown:
            breakdown(args, rows, tmp)


def summary(results: dict[str, list[dict[int, dict]]], conc: list[int], rounds: int) -> None:
    names = list(results)
    print(f"\nmedians over {rounds} round(s):")
    print(f"{'conc':>5} " + " ".join(f"{n + ' r/s':>14} {'p50':>6} {'p99':>6}" for n in names)
          + ("   ratio r/s  p99" if len(names) == 2 else ""))
    for level in conc:
        cells, med = [], {}
        for name in names:
            runs = [r[level] for r in results[name]]
            med[name] = {k: statistics.median(r[k] for r in runs) for k in ("rewards_per_s", "p50_ms", "p99_ms")}
            cells.append(f"{med[name]['rewards_per_s']:>14.1f} {med[name]['p50_ms']:>6.1f} {med[name]['p99_ms']:>6.1f}")
        line = f"{level:>5} " + " ".join(cells)
        if len(names) == 2:
            before, after = med[names[0]], med[names[1]]
            line += (f"   {after['rewards_per_s'] / before['rewards_per_s']:>8.2f}x "
                     f"{after['p99_ms'] / before['p99_ms']:>5.2f}x")
        print(line)


if __name__ == "__main__":
    main()
