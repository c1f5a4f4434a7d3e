"""Reward server under load: throughput and p50/p99 latency at concurrency 1, 8, 32.

Starts ``rewardsmith serve`` on 127.0.0.1 (a free port), drives ``POST /get_reward`` with
OpenRLHF-shaped requests for GSM8K-like completions, prints one line per concurrency and
stops the server. Bounded: each level runs ``--seconds`` (default 5) or ``--max-requests``,
whichever comes first.

    python benchmarks/server_load.py [--data ../shared/data/math/gsm8k_test.jsonl] [--per-request 1]
        [--workers 1] [--batch-window-ms 5] [--max-batch 256] [--math-workers N]

Completions: each GSM8K solution rewritten as a model would answer (reasoning, then
"The answer is \\boxed{N}"), a third of them with a wrong final number, some as "#### N";
without the data file, generated arithmetic problems in the same shapes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "math" / "gsm8k_test.jsonl"
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

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        self.writer.write(head + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def run_level(base: str, rows: list, concurrency: int, per_request: int, seconds: float,
                    max_requests: int) -> dict:
    host, port = base.removeprefix("http://").split(":")
    latencies: list[float] = []
    errors = 0
    issued = 0
    stop_at = time.perf_counter() + seconds

    async def user(offset: int) -> None:
        nonlocal errors, issued
        conn = Connection(host, int(port))
        i = offset
        try:
            while time.perf_counter() < stop_at and issued < max_requests:
                issued += 1
                batch = [rows[(i + k) % len(rows)] for k in range(per_request)]
                i += per_request * concurrency
                body = json.dumps({"query": [b[1] for b in batch], "prompts": [b[0] for b in batch],
                                   "labels": [b[2] for b in batch]}).encode()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--per-request", type=int, default=1, help="samples per request (default 1: hardest case)")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--seconds", type=float, default=5.0, help="per concurrency level")
    parser.add_argument("--max-requests", type=int, default=20000, help="per concurrency level")
    parser.add_argument("--workers", type=int, default=1, help="server processes")
    parser.add_argument("--batch-window-ms", type=float, default=5.0)
    parser.add_argument("--max-batch", type=int, default=256)
    parser.add_argument("--math-workers", type=int, default=None, help="math pool size (default: all cores)")
    args = parser.parse_args()

    rng = random.Random(0)
    rows = load_rows(args.data, args.rows, rng)
    spec = {"type": "math"} if args.math_workers is None else {"type": "math", "workers": args.math_workers}
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        spec_path = Path(tmp) / "reward.json"
        spec_path.write_text(json.dumps(spec))
        cmd = [sys.executable, "-m", "rewardsmith.adapters.cli", "serve", "--reward", str(spec_path),
               "--port", str(port), "--workers", str(args.workers), "--batch-window-ms", str(args.batch_window_ms),
               "--max-batch", str(args.max_batch), "--max-queue", "1024", "--log-level", "warning"]
        server = subprocess.Popen(cmd, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            asyncio.run(_drive(f"http://127.0.0.1:{port}", rows, args, spec))
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()


async def _drive(base: str, rows: list, args: argparse.Namespace, spec: dict) -> None:
    import httpx

    deadline = time.monotonic() + 60
    async with httpx.AsyncClient() as client:
        while True:
            try:
                if (await client.get(f"{base}/health")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("server did not start within 60 s")
            await asyncio.sleep(0.2)
    # Warm-up: the math pool is already warm (the server warms it before accepting requests);
    # this fills the parse caches and the connections before measuring.
    await run_level(base, rows, 4, args.per_request, 2.0, 200)
    print(f"server: workers={args.workers} window={args.batch_window_ms}ms max_batch={args.max_batch} "
          f"spec={json.dumps(spec)}; {args.per_request} sample(s)/request; {os.cpu_count()} cores; "
          f"data={'gsm8k' if args.data.exists() else 'generated'}")
    print(f"{'conc':>5} {'requests':>9} {'errors':>7} {'rewards/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    for level in (int(c) for c in args.concurrency.split(",")):
        res = await run_level(base, rows, level, args.per_request, args.seconds, args.max_requests)
        print(f"{res['concurrency']:>5} {res['requests']:>9} {res['errors']:>7} {res['rewards_per_s']:>10.1f} "
              f"{res['p50_ms']:>8.1f} {res['p99_ms']:>8.1f}")
    from prometheus_client.parser import text_string_to_metric_families

    async with httpx.AsyncClient() as client:
        metrics = (await client.get(f"{base}/metrics")).text
    totals = {s.name: s.value for family in text_string_to_metric_families(metrics) for s in family.samples
              if not s.labels}
    batches, samples = totals.get("rewardsmith_batches_total"), totals.get("rewardsmith_batched_samples_total")
    if batches and samples:  # summed over every server process
        print(f"mean verify_batch size: {samples / batches:.1f} ({batches:.0f} batches, {samples:.0f} samples)")


if __name__ == "__main__":
    main()
