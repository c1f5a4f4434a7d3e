"""Does the GRPO loop learn? SmolLM2-135M-Instruct on two-number additions, ours beside TRL 1.16.

The setting the issue measured TRL in: prompts "What is a + b? Give only the final number in
\\boxed{}." (a, b in 2-30; data/arithmetic_train.jsonl), 40 steps of 1 prompt x 8 completions x
32 tokens, learning rate 5e-6, beta 0, reward ``math``, on the CPU, seeds 0-9. Both sides
use TRL's defaults otherwise (loss dapo, temperature 1, group-scaled advantages, AdamW, linear
decay, grad-norm clip 1); TRL also keeps its default gradient checkpointing.

Each trained model is then scored by the same code (ours: HF greedy decoding, 32 new tokens,
the ``math`` reward) on the 60 held-out pairs of data/arithmetic_heldout.jsonl, none of which
is in the training file:

* accuracy: the completion's answer equals a + b;
* format: the completion has a ``\\boxed{...}`` (what the prompt asks for, and what an early
  gain is often made of) - reported apart from accuracy.

Each run is a child process. Printed: before / after per seed, the mean (with the gap between
the sides and its standard error: a seed fixes different prompts and random draws in each
trainer, so the runs are independent samples of each), training wall time and its ratio; the
reward curves and the accuracies are drawn in benchmarks/results/grpo_learning.png. Run it on
a quiet machine: two processes on two cores slow each other several-fold. For the same prompts
and draws on both sides, see grpo_paired.py.

    python benchmarks/grpo_learning.py [--seeds 0,...,9] [--steps 40] [--sides ours,trl] [--threads N]
                                       [--device cpu|cuda]   # cuda: bf16 autocast on both sides
    python benchmarks/grpo_learning.py --replot   # the plot and summary again from the saved results
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


def evaluate(model: Any, tokenizer: Any, bf16: bool = False) -> dict[str, float]:
    """Greedy accuracy and format compliance on the held-out additions, with our scoring code."""
    from rewardsmith.adapters.grpo.data import encode_rows
    from rewardsmith.reward_models.sampling import HFSampler, SamplingSettings
    from rewardsmith.verifiers import Sample, build

    heldout = rows("arithmetic_heldout.jsonl")
    prompts = encode_rows(((i + 1, r, None) for i, r in enumerate(heldout)), tokenizer, "prompt", "auto", 512)
    settings = SamplingSettings(max_new_tokens=SETTING["max_completion_length"], temperature=0.0)
    sampled = HFSampler(model, tokenizer, bf16=bf16).generate([list(p.ids) for p in prompts.prompts], 1, settings)
    texts = tokenizer.batch_decode(sampled.completion_ids, skip_special_tokens=True)
    reward = build("math")
    verdicts = reward.verify_batch([Sample(prompt=p.prompt, completion=t, fields=p.fields)
                                    for p, t in zip(prompts.prompts, texts, strict=True)])
    return {"accuracy": sum(bool(v.correct) for v in verdicts) / len(verdicts),
            "format": sum("\\boxed{" in t for t in texts) / len(texts)}


def run_ours(seed: int, steps: int, workdir: Path, device: str) -> dict[str, Any]:
    from rewardsmith.adapters.grpo.config import GRPOConfig
    from rewardsmith.adapters.grpo.loop import build_trainer

    config = GRPOConfig(model="smollm2", reward="math", output_dir=str(workdir), device=device, seed=seed,
                        max_steps=steps, save_every=0, save_model=False, samples_per_step=0, resume=False,
                        overwrite=True, micro_batch_size=8, **SETTING)
    trainer = build_trainer(config, ROOT / "data" / "arithmetic_train.jsonl", progress=False)
    started = time.perf_counter()
    trainer.run()
    seconds = time.perf_counter() - started
    log = [json.loads(line) for line in (workdir / "log.jsonl").read_text().splitlines()]
    rewards = [r["reward_mean"] for r in log if "reward_mean" in r]
    return {"seconds": seconds, "rewards": rewards,
            "after": evaluate(trainer.model.eval(), trainer.tokenizer, bf16=device == "cuda")}


def run_trl(seed: int, steps: int, workdir: Path, device: str) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from grpo_trl import trl_trainer

    from rewardsmith.reward_models.model import resolve

    trainer, _ = trl_trainer(resolve("smollm2"), rows("arithmetic_train.jsonl"), workdir=workdir, seed=seed,
                             steps=steps, prompts_per_step=1, num_generations=8, max_completion_length=32,
                             learning_rate=5e-6, beta=0.0, device=device)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    return {"seconds": seconds, "rewards": rewards,
            "after": evaluate(trainer.model.eval(), trainer.processing_class, bf16=device == "cuda")}


def run_before(device: str) -> dict[str, Any]:
    from rewardsmith.reward_models.loading import load_causal_lm

    model, tokenizer = load_causal_lm("smollm2", device)
    return {"before": evaluate(model, tokenizer, bf16=device == "cuda")}


def child(role: str, seed: int, steps: int, out: Path, device: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        if role == "before":
            result = run_before(device)
        elif role == "ours":
            result = run_ours(seed, steps, Path(tmp), device)
        else:
            result = run_trl(seed, steps, Path(tmp), device)
    out.write_text(json.dumps(result))


def plot(results: dict[str, dict[int, dict[str, Any]]], before: float, target: Path) -> None:
    """Left: each run's training reward (8-step running mean, thin) and each side's mean over
    seeds (bold). Right: held-out accuracy after training, one dot per seed, the mean as a bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (curves, accuracy) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={"width_ratios": [2.2, 1]})
    colours = {"ours": "tab:blue", "trl": "tab:orange"}
    for side, runs in results.items():
        smoothed = []
        for run in runs.values():
            values = run["rewards"]
            smooth = [statistics.mean(values[max(0, i - 7):i + 1]) for i in range(len(values))]
            smoothed.append(smooth)
            curves.plot(range(1, len(smooth) + 1), smooth, color=colours.get(side), alpha=0.2, linewidth=0.8)
        width = min(len(s) for s in smoothed)
        mean = [statistics.mean(s[i] for s in smoothed) for i in range(width)]
        curves.plot(range(1, width + 1), mean, color=colours.get(side), linewidth=2.5,
                    label=f"{side}: mean of {len(smoothed)} seeds")
    curves.set_xlabel("step (1 prompt x 8 completions)")
    curves.set_ylabel("training reward (8-step running mean)")
    curves.grid(alpha=0.3)
    curves.legend()
    for x, (side, runs) in enumerate(results.items()):
        values = [r["after"]["accuracy"] for r in runs.values()]
        accuracy.bar(x, statistics.mean(values), color=colours.get(side), alpha=0.35, width=0.6)
        accuracy.scatter([x + (k - len(values) / 2) * 0.03 for k in range(len(values))], values,
                         color=colours.get(side), s=18, zorder=3)
        accuracy.text(x, max(values) + 0.04, f"mean {statistics.mean(values):.3f}", ha="center")
    accuracy.axhline(before, color="grey", linestyle="--", linewidth=1, label=f"before training {before:.3f}")
    accuracy.set_xticks(range(len(results)), list(results))
    accuracy.set_ylim(0, 1)
    accuracy.set_ylabel("held-out greedy accuracy after training")
    accuracy.legend(loc="upper left", fontsize=8)
    seeds = sorted({seed for runs in results.values() for seed in runs})
    fig.suptitle(f"GRPO, SmolLM2-135M on additions: ours vs TRL 1.16 (seeds {', '.join(map(str, seeds))})",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def summarise(before: dict[str, float], results: dict[str, dict[int, dict[str, Any]]]) -> None:
    """Per side: accuracy and format after training, training time; then ours against TRL: the
    gap in mean accuracy with its standard error (the runs of one side are independent of the
    other's: a seed fixes different prompts and draws in each), and the ratio of training times."""
    for side, runs in results.items():
        acc = [r["after"]["accuracy"] for r in runs.values()]
        fmt = [r["after"]["format"] for r in runs.values()]
        secs = [r["seconds"] for r in runs.values()]
        spread = statistics.stdev(acc) if len(acc) > 1 else 0.0
        gain = statistics.mean(acc) - before["accuracy"]
        print(f"{side:>4}: accuracy {before['accuracy']:.3f} -> mean {statistics.mean(acc):.3f} (sd {spread:.3f}, "
              f"min {min(acc):.3f}, max {max(acc):.3f}; gain {gain:+.3f}); "
              f"format {before['format']:.3f} -> mean {statistics.mean(fmt):.3f}; "
              f"training {statistics.mean(secs):.0f} s "
              f"mean, {statistics.median(secs):.0f} s median ({min(secs):.0f}-{max(secs):.0f})")
    if "ours" in results and "trl" in results:
        ours, trl = results["ours"], results["trl"]
        acc = {side: [r["after"]["accuracy"] for r in runs.values()] for side, runs in (("ours", ours), ("trl", trl))}
        gap = statistics.mean(acc["ours"]) - statistics.mean(acc["trl"])
        if min(len(acc["ours"]), len(acc["trl"])) > 1:
            se = (statistics.variance(acc["ours"]) / len(acc["ours"])
                  + statistics.variance(acc["trl"]) / len(acc["trl"])) ** 0.5
            print(f"ours - trl mean accuracy: {gap:+.3f} (standard error {se:.3f})")
        mean_ratio = statistics.mean(r["seconds"] for r in ours.values()) / statistics.mean(
            r["seconds"] for r in trl.values())
        median_ratio = statistics.median(r["seconds"] for r in ours.values()) / statistics.median(
            r["seconds"] for r in trl.values())
        print(f"ours / trl training time: {mean_ratio:.2f}x (means), {median_ratio:.2f}x (medians)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1,2,3,4,5,6,7,8,9")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--sides", default="ours,trl")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--replot", action="store_true", help="summary and plot again from the saved results")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.seed, args.steps, Path(args.out), args.device)
        return
    suffix = "" if args.device == "cpu" else f"_{args.device}"
    if args.replot:
        saved = json.loads((RESULTS / f"grpo_learning{suffix}.json").read_text())
        results = {side: {int(k): v for k, v in runs.items()} for side, runs in saved["results"].items()}
        summarise(saved["before"], results)
        plot(results, saved["before"]["accuracy"], RESULTS / f"grpo_learning{suffix}.png")
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if args.threads:
        env.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))

    def spawn(role: str, seed: int) -> dict[str, Any]:
        out = RESULTS / f"grpo_learning{suffix}_{role}_{seed}.json"
        with (RESULTS / f"grpo_learning{suffix}_{role}_{seed}.log").open("w") as log:
            subprocess.run([sys.executable, __file__, "--child", role, "--seed", str(seed), "--steps",
                            str(args.steps), "--out", str(out), "--device", args.device], check=True, env=env,
                           cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
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
    summarise(before, results)
    plot(results, before["accuracy"], RESULTS / f"grpo_learning{suffix}.png")
    (RESULTS / f"grpo_learning{suffix}.json").write_text(json.dumps({"before": before, "results": results}, indent=2))
    print(f"curves: {RESULTS / f'grpo_learning{suffix}.png'}")


if __name__ == "__main__":
    main()
