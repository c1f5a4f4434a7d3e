"""Is a gap between our GRPO runs and TRL's the algorithm or the dice? Replay TRL's dice into ours.

A seed fixes different things in the two trainers (TRL shuffles prompts with its own sampler and
its random stream is consumed by its data loader first), so "seed 3" of ours and of TRL are two
different runs, and on 40 steps of one prompt the spread across runs is wide. This benchmark
removes that difference: TRL 1.16's ``GRPOTrainer`` trains on the issue's arithmetic setting
(``benchmarks/grpo_learning.py``: SmolLM2-135M-Instruct, 40 steps of 1 prompt x 8 completions x
32 tokens, lr 5e-6, beta 0, reward ``math``) and records, at every generation, which prompt it
drew and the state of torch's random generator; then our loop trains from the same weights with
the prompt sampler returning those prompts and the generator's state set to TRL's before each
generation. Nothing else is shared.

If the two loops are the same algorithm, each step samples the same completions, gets the same
rewards and makes the same update (within float rounding, which may eventually flip a sample and
let the runs part). Printed per seed: the steps whose completions were identical, the training
reward curves, and the held-out greedy accuracy after training for both (scored by the same
code as grpo_learning.py), with the wall time of each.

    python benchmarks/grpo_paired.py [--seeds 0,1] [--steps 40]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))


def run_trl(seed: int, steps: int, workdir: Path) -> dict[str, Any]:
    import torch
    from grpo_learning import SETTING, evaluate, rows
    from grpo_trl import trl_trainer

    from rewardsmith.reward_models.model import resolve

    trainer, _ = trl_trainer(resolve("smollm2"), rows("arithmetic_train.jsonl"), workdir=workdir, seed=seed,
                             steps=steps, prompts_per_step=1, num_generations=SETTING["num_generations"],
                             max_completion_length=SETTING["max_completion_length"],
                             learning_rate=SETTING["learning_rate"], beta=SETTING["beta"])
    draws: list[dict[str, Any]] = []
    generate = trainer._generate_single_turn

    def recording(prompt_ids: list[list[int]], *args: Any, **kwargs: Any) -> Any:
        state = torch.get_rng_state()
        completion_ids, logprobs = generate(prompt_ids, *args, **kwargs)
        draws.append({"prompt": list(prompt_ids[0]), "rng": state.tolist(), "completions": completion_ids})
        return completion_ids, logprobs

    trainer._generate_single_turn = recording
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    return {"seconds": seconds, "rewards": rewards, "draws": draws,
            "after": evaluate(trainer.model.eval(), trainer.processing_class)}


def run_ours(trl: dict[str, Any], seed: int, steps: int, workdir: Path) -> dict[str, Any]:
    import torch
    from grpo_learning import SETTING, evaluate

    from rewardsmith.adapters.grpo.config import GRPOConfig
    from rewardsmith.adapters.grpo.loop import build_trainer

    config = GRPOConfig(model="smollm2", reward="math", output_dir=str(workdir), device="cpu", seed=seed,
                        max_steps=steps, save_every=0, save_model=False, samples_per_step=0, resume=False,
                        overwrite=True, micro_batch_size=8, **SETTING)
    trainer = build_trainer(config, ROOT / "data" / "arithmetic_train.jsonl", progress=False)
    by_ids = {tuple(p.ids): i for i, p in enumerate(trainer.train_set.prompts)}
    draws = iter(trl["draws"])
    pending: list[dict[str, Any]] = []

    def draw(k: int, step: int) -> tuple[list[int], int]:
        record = next(draws)
        pending.append(record)
        return [by_ids[tuple(record["prompt"])]], 0

    generator = trainer.generator
    sampled: list[list[list[int]]] = []

    class Replayed:
        """Our HF generator, started from TRL's random state for this step."""

        def generate(self, prompt_ids: Any, n: int, sampling: Any) -> Any:
            torch.set_rng_state(torch.tensor(pending[-1]["rng"], dtype=torch.uint8))
            out = generator.generate(prompt_ids, n, sampling)
            sampled.append(out.completion_ids)
            return out

        def sync(self, model: Any) -> None:
            generator.sync(model)

    trainer.sampler.draw = draw
    trainer.generator = Replayed()
    started = time.perf_counter()
    trainer.run()
    seconds = time.perf_counter() - started
    log = [json.loads(line) for line in (workdir / "log.jsonl").read_text().splitlines()]
    rewards = [r["reward_mean"] for r in log if "reward_mean" in r]
    same = [ours == record["completions"] for ours, record in zip(sampled, trl["draws"], strict=False)]
    return {"seconds": seconds, "rewards": rewards, "same_completions": same,
            "after": evaluate(trainer.model.eval(), trainer.tokenizer)}


def child(seed: int, steps: int, out: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trl = run_trl(seed, steps, Path(tmp) / "trl")
        ours = run_ours(trl, seed, steps, Path(tmp) / "ours")
    trl.pop("draws")
    out.write_text(json.dumps({"trl": trl, "ours": ours}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, args.steps, Path(args.out))
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    for seed in (int(s) for s in args.seeds.split(",")):
        out = RESULTS / f"grpo_paired_{seed}.json"
        with (RESULTS / f"grpo_paired_{seed}.log").open("w") as log:
            subprocess.run([sys.executable, __file__, "--child", str(seed), "--steps", str(args.steps), "--out",
                            str(out)], check=True, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        result = json.loads(out.read_text())
        trl, ours = result["trl"], result["ours"]
        same = ours["same_completions"]
        first_apart = next((i + 1 for i, s in enumerate(same) if not s), None)
        print(f"seed {seed}: identical completions in {sum(same)} of {len(same)} steps"
              + (f" (first difference at step {first_apart})" if first_apart else ""))
        print(f"  training reward, TRL : {' '.join(f'{r:.2f}' for r in trl['rewards'])}")
        print(f"  training reward, ours: {' '.join(f'{r:.2f}' for r in ours['rewards'])}")
        print(f"  held-out accuracy after: TRL {trl['after']['accuracy']:.3f}, ours {ours['after']['accuracy']:.3f}; "
              f"training time TRL {trl['seconds']:.0f} s, ours {ours['seconds']:.0f} s "
              f"({ours['seconds'] / trl['seconds']:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
