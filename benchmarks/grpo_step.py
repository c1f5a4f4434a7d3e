"""GRPO step time: rewardsmith's loop against TRL 1.16's GRPOTrainer, same model, prompts and work.

Both sides train SmolLM2-135M-Instruct (fp32 on the CPU; ``--device cuda``: bf16 autocast over
fp32 weights on both sides, ``--model`` for another checkpoint) on the same arithmetic prompts
(data/arithmetic_train.jsonl, in the same order: both shuffle with their own seed, so the
benchmark hands each the same prompts by giving them a file of exactly steps × prompts rows),
with the same group size, completion length, learning rate, loss (dapo), beta and reward
(``math``). Every completion is forced to the full length (``min_new_tokens`` =
``max_completion_length`` in both samplers' generation kwargs), so each step generates the
same number of tokens on both sides and step times compare like for like.

Variants, each in its own child process (so each peak RSS is its own):

* ``ours``: ``rewardsmith train grpo`` defaults (no gradient checkpointing, dropout off);
* ``trl``: GRPOTrainer with its defaults (gradient checkpointing on, as TRL ships it);
* ``trl-no-gc``: the same with ``gradient_checkpointing=False`` (the like-for-like config).

Printed per variant: median step time (the first step, a warm-up, left out), generation
tokens/s, scoring time, the rest of the step (log-probabilities, backward, optimizer; TRL does
not split them), peak RSS (and on CUDA peak GPU memory); then ours / TRL for step time.

    python benchmarks/grpo_step.py [--steps 5] [--prompts 2] [--generations 8] [--length 32]
                                   [--threads N] [--variants ours,trl,trl-no-gc]
                                   [--device cpu|cuda] [--model smollm2]

Writes benchmarks/results/grpo_step.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"


def peak_memory(device: str) -> dict[str, float]:
    peaks = {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if device == "cuda":
        import torch

        peaks["peak_gpu_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return peaks


def prompt_rows(n: int) -> list[dict[str, Any]]:
    lines = (ROOT / "data" / "arithmetic_train.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines[:n]]


def run_ours(spec: dict[str, Any], workdir: Path) -> dict[str, Any]:
    from rewardsmith.adapters.grpo.config import GRPOConfig
    from rewardsmith.adapters.grpo.loop import build_trainer

    data = workdir / "prompts.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in prompt_rows(spec["steps"] * spec["prompts"])))
    config = GRPOConfig(model=spec["model"], reward="math", output_dir=str(workdir / "ours"), device=spec["device"],
                        seed=spec["seed"], max_steps=spec["steps"], prompts_per_step=spec["prompts"],
                        num_generations=spec["generations"], max_completion_length=spec["length"],
                        micro_batch_size=spec["prompts"] * spec["generations"], learning_rate=5e-6,
                        generation_kwargs={"min_new_tokens": spec["length"]}, save_every=0, save_model=False,
                        samples_per_step=0, resume=False, overwrite=True)
    trainer = build_trainer(config, data, progress=False)
    steps = [trainer.train_step() for _ in range(spec["steps"])]
    return {"step": [s["step_time"] for s in steps], "generate": [s["time_generate"] for s in steps],
            "score": [s["time_score"] for s in steps],
            "rest": [s["time_reference"] + s["time_update"] + s["time_sync"] for s in steps],
            "tokens": [s["tokens_generated"] for s in steps], **peak_memory(spec["device"])}


def run_trl(spec: dict[str, Any], workdir: Path, gradient_checkpointing: bool) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from grpo_trl import trl_trainer

    from rewardsmith.reward_models.model import resolve

    rows = prompt_rows(spec["steps"] * spec["prompts"])
    trainer, timings = trl_trainer(resolve(spec["model"]), rows, device=spec["device"], workdir=workdir / "trl",
                                   seed=spec["seed"],
                                   steps=spec["steps"], prompts_per_step=spec["prompts"],
                                   num_generations=spec["generations"], max_completion_length=spec["length"],
                                   learning_rate=5e-6, gradient_checkpointing=gradient_checkpointing,
                                   generation_kwargs={"min_new_tokens": spec["length"]})
    trainer.train()
    steps = timings["step"]
    rest = [s - g - r for s, g, r in zip(steps, timings["generate"], timings["score"], strict=False)]
    tokens = spec["prompts"] * spec["generations"] * spec["length"]
    return {"step": steps, "generate": timings["generate"], "score": timings["score"], "rest": rest,
            "tokens": [tokens] * len(steps), **peak_memory(spec["device"])}


def child(variant: str, spec: dict[str, Any], out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        if variant == "ours":
            result = run_ours(spec, Path(tmp))
        else:
            result = run_trl(spec, Path(tmp), gradient_checkpointing=variant == "trl")
        result["wall_s"] = time.perf_counter() - started
    out.write_text(json.dumps(result))


def summarise(result: dict[str, Any]) -> dict[str, float]:
    def median(key: str) -> float:
        values = result[key][1:] or result[key]
        return statistics.median(values)

    gen_time = sum(result["generate"][1:]) or sum(result["generate"])
    tokens = sum(result["tokens"][1:]) or sum(result["tokens"])
    return {"step_s": median("step"), "generate_s": median("generate"), "score_s": median("score"),
            "rest_s": median("rest"), "generate_tokens_per_s": tokens / gen_time,
            "tokens_per_step": statistics.median(result["tokens"]), "peak_rss_mb": result["peak_rss_mb"],
            "peak_gpu_mb": result.get("peak_gpu_mb", 0.0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--prompts", type=int, default=2)
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--variants", default="ours,trl,trl-no-gc")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--model", default="smollm2", help="a local checkpoint directory or the alias smollm2")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--spec", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, json.loads(args.spec), Path(args.out))
        return
    spec = {"steps": args.steps, "prompts": args.prompts, "generations": args.generations, "length": args.length,
            "seed": args.seed, "device": args.device, "model": args.model}
    RESULTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if args.threads:
        env.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    table: dict[str, dict[str, float]] = {}
    for variant in args.variants.split(","):
        out = RESULTS / f"grpo_step_{variant}.json"
        log = RESULTS / f"grpo_step_{variant}.log"
        with log.open("w") as handle:
            subprocess.run([sys.executable, __file__, "--child", variant, "--spec", json.dumps(spec), "--out",
                            str(out)], check=True, env=env, stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT)
        table[variant] = summarise(json.loads(out.read_text()))
        print(f"{variant:>10}: " + ", ".join(f"{k} {v:.3g}" for k, v in table[variant].items()), flush=True)
    precision = "bf16 autocast on CUDA" if args.device == "cuda" else "fp32 on CPU"
    print(f"\nsetting: {args.model} {precision}, {args.prompts} prompts x {args.generations} completions x "
          f"{args.length} tokens per step, {args.steps} steps (first left out), dapo, beta 0")
    print(f"{'':>10}  {'step s':>8} {'gen tok/s':>10} {'score s':>8} {'rest s':>8} {'peak MB':>8} {'GPU MB':>8}")
    for variant, row in table.items():
        print(f"{variant:>10}  {row['step_s']:8.2f} {row['generate_tokens_per_s']:10.1f} {row['score_s']:8.3f} "
              f"{row['rest_s']:8.2f} {row['peak_rss_mb']:8.0f} {row['peak_gpu_mb']:8.0f}")
    if "ours" in table:
        for reference in ("trl", "trl-no-gc"):
            if reference in table:
                print(f"ours / {reference} step time: {table['ours']['step_s'] / table[reference]['step_s']:.2f}x")
    (RESULTS / "grpo_step.json").write_text(json.dumps({"spec": spec, "table": table}, indent=2))


if __name__ == "__main__":
    main()
