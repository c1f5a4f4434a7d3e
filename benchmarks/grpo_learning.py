"""Does the GRPO loop learn? SmolLM2-135M-Instruct on two-number additions, ours beside TRL 1.16.

The setting the issue measured TRL in: prompts "What is a + b? Give only the final number in
\\boxed{}." (a, b in 2-30; data/arithmetic_train.jsonl), 40 steps of 1 prompt x 8 completions x
32 tokens, learning rate 5e-6, beta 0, reward ``math``, on the CPU, seeds 0, 1 and 2. Both sides
use TRL's defaults otherwise (loss dapo, temperature 1, group-scaled advantages, AdamW, linear
decay, grad-norm clip 1); TRL also keeps its default gradient checkpointing.

Each trained model is then scored by the same code (ours: HF greedy decoding, 32 new tokens,
the ``math`` reward) on the 60 held-out pairs of data/arithmetic_heldout.jsonl, none of which
is in the training file:

* accuracy: the completion's answer equals a + b;
* format: the completion has a ``\\boxed{...}`` (what the prompt asks for, and what an early
  gain is often made of) - reported apart from accuracy.

Each run is a child process. Printed: before / after per seed and the mean, training wall time,
and the reward curves (benchmarks/results/grpo_learning.png, 8-step running mean of the
training reward for each run).

    python benchmarks/grpo_learning.py [--seeds 0,1,2] [--steps 40] [--sides ours,trl] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
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
SETTING = {"prompts_per_step": 1, "num_generations": 8, "max_completion_length": 32, "learning_rate": 5e-6,
           "beta": 0.0}


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (ROOT / "data" / name).read_text().splitlines()]


def evaluate(model: Any, tokenizer: Any) -> dict[str, float]:
    """Greedy accuracy and format compliance on the held-out additions, with our scoring code."""
    from rewardsmith.adapters.grpo.data import encode_rows
    from rewardsmith.adapters.grpo.generation import HFGenerator, SamplingSettings
    from rewardsmith.verifiers import Sample, build

    heldout = rows("arithmetic_heldout.jsonl")
    prompts = encode_rows(((i + 1, r, None) for i, r in enumerate(heldout)), tokenizer, "prompt", "auto", 512)
    settings = SamplingSettings(max_new_tokens=SETTING["max_completion_length"], temperature=0.0)
    sampled = HFGenerator(model, tokenizer).generate([list(p.ids) for p in prompts.prompts], 1, settings)
    texts = tokenizer.batch_decode(sampled.completion_ids, skip_special_tokens=True)
    reward = build("math")
    verdicts = reward.verify_batch([Sample(prompt=p.prompt, completion=t, fields=p.fields)
                                    for p, t in zip(prompts.prompts, texts, strict=True)])
    return {"accuracy": sum(bool(v.correct) for v in verdicts) / len(verdicts),
            "format": sum("\\boxed{" in t for t in texts) / len(texts)}


def run_ours(seed: int, steps: int, workdir: Path) -> dict[str, Any]:
    from rewardsmith.adapters.grpo.config import GRPOConfig
    from rewardsmith.adapters.grpo.loop import build_trainer

    config = GRPOConfig(model="smollm2", reward="math", output_dir=str(workdir), device="cpu", seed=seed,
                        max_steps=steps, save_every=0, save_model=False, samples_per_step=0, resume=False,
                        micro_batch_size=8, **SETTING)
    trainer = build_trainer(config, ROOT / "data" / "arithmetic_train.jsonl", progress=False, log=lambda _: None)
    started = time.perf_counter()
    trainer.run()
    seconds = time.perf_counter() - started
    log = [json.loads(line) for line in (workdir / "log.jsonl").read_text().splitlines()]
    rewards = [r["reward_mean"] for r in log if "reward_mean" in r]
    return {"seconds": seconds, "rewards": rewards, "after": evaluate(trainer.model.eval(), trainer.tokenizer)}


def run_trl(seed: int, steps: int, workdir: Path) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from grpo_trl import trl_trainer

    from rewardsmith.reward_models.model import resolve

    trainer, _ = trl_trainer(resolve("smollm2"), rows("arithmetic_train.jsonl"), workdir=workdir, seed=seed,
                             steps=steps, prompts_per_step=1, num_generations=8, max_completion_length=32,
                             learning_rate=5e-6, beta=0.0)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    return {"seconds": seconds, "rewards": rewards, "after": evaluate(trainer.model.eval(), trainer.processing_class)}


def run_before() -> dict[str, Any]:
    from rewardsmith.reward_models.loading import load_causal_lm

    model, tokenizer = load_causal_lm("smollm2", "cpu")
    return {"before": evaluate(model, tokenizer)}


def child(role: str, seed: int, steps: int, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if role == "before":
            result = run_before()
        elif role == "ours":
            result = run_ours(seed, steps, Path(tmp))
        else:
            result = run_trl(seed, steps, Path(tmp))
    out.write_text(json.dumps(result))


def plot(results: dict[str, dict[int, dict[str, Any]]], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    colours = {"ours": "tab:blue", "trl": "tab:orange"}
    for side, runs in results.items():
        for seed, run in runs.items():
            values = run["rewards"]
            smooth = [statistics.mean(values[max(0, i - 7):i + 1]) for i in range(len(values))]
            ax.plot(range(1, len(values) + 1), smooth, color=colours.get(side), alpha=0.8,
                    label=f"{side}" if seed == min(runs) else None)
    ax.set_xlabel("step (1 prompt x 8 completions)")
    ax.set_ylabel("training reward (8-step running mean)")
    ax.set_title("GRPO, SmolLM2-135M on additions: ours vs TRL 1.16 (seeds 0-2)", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--sides", default="ours,trl")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.seed, args.steps, Path(args.out))
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if args.threads:
        env.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))

    def spawn(role: str, seed: int) -> dict[str, Any]:
        out = RESULTS / f"grpo_learning_{role}_{seed}.json"
        with (RESULTS / f"grpo_learning_{role}_{seed}.log").open("w") as log:
            subprocess.run([sys.executable, __file__, "--child", role, "--seed", str(seed), "--steps",
                            str(args.steps), "--out", str(out)], check=True, env=env, cwd=ROOT, stdout=log,
                           stderr=subprocess.STDOUT)
        return json.loads(out.read_text())

    before = spawn("before", 0)["before"]
    print(f"before training: accuracy {before['accuracy']:.3f}, format {before['format']:.3f}", flush=True)
    seeds = [int(s) for s in args.seeds.split(",")]
    results: dict[str, dict[int, dict[str, Any]]] = {}
    for seed in seeds:
        for side in args.sides.split(","):
            run = spawn(side, seed)
            results.setdefault(side, {})[seed] = run
            print(f"{side:>4} seed {seed}: accuracy {before['accuracy']:.3f} -> {run['after']['accuracy']:.3f}, "
                  f"format {before['format']:.3f} -> {run['after']['format']:.3f}, {run['seconds']:.0f} s", flush=True)
    print()
    for side, runs in results.items():
        acc = [r["after"]["accuracy"] for r in runs.values()]
        fmt = [r["after"]["format"] for r in runs.values()]
        secs = [r["seconds"] for r in runs.values()]
        print(f"{side:>4}: accuracy {before['accuracy']:.3f} -> mean {statistics.mean(acc):.3f} "
              f"(min {min(acc):.3f}, max {max(acc):.3f}); format {before['format']:.3f} -> mean "
              f"{statistics.mean(fmt):.3f}; training {statistics.mean(secs):.0f} s mean "
              f"({min(secs):.0f}-{max(secs):.0f})")
    if "ours" in results and "trl" in results:
        ours = statistics.mean(r["seconds"] for r in results["ours"].values())
        trl = statistics.mean(r["seconds"] for r in results["trl"].values())
        print(f"ours / trl training time: {ours / trl:.2f}x")
    plot(results, RESULTS / "grpo_learning.png")
    (RESULTS / "grpo_learning.json").write_text(json.dumps({"before": before, "results": results}, indent=2))
    print(f"curves: {RESULTS / 'grpo_learning.png'}")


if __name__ == "__main__":
    main()
