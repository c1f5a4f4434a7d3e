"""ProcessBench first-error F1 of a PRM trained here, beside the published table.

There is no PRM training set on this machine (no dataset hub), so the PRM is trained across
ProcessBench's own subsets, never on the rows it is tested on: a model trained on the MATH subset
is tested on GSM8K and one trained on GSM8K is tested on MATH. Each threshold (P(correct) below
which a step is wrong) is chosen on a declared split: 20% of the *training* subset's problems,
held out from training. Steps after the first wrong one carry no label in ProcessBench and are
dropped from training rows (PRM800K's convention); F1 is computed on the whole solutions.

The published figures are of 7B models trained on hundreds of thousands of labelled solutions
(Math-Shepherd-PRM-7B: 47.9 / 29.5; Qwen2.5-Math-7B-PRM800K: 68.2 / 62.6 on GSM8K / MATH); the
base here is a 22M-parameter sentence encoder (or the 135M SmolLM2) trained on ~300-800 rows on
two CPU cores, so the figures answer "does the pipeline work end to end on real data", not "is
this a good PRM".

    python benchmarks/rm_processbench.py                      # MiniLM, ~10 min on 2 cores
    python benchmarks/rm_processbench.py --model smollm2 --lora --epochs 1
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rewardsmith.reward_models import metrics
from rewardsmith.reward_models.data import from_processbench, load_examples
from rewardsmith.reward_models.inference import RewardModel, sigmoid
from rewardsmith.reward_models.train import TrainConfig, Trainer

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "prm"
RESULTS = Path(__file__).resolve().parent / "results"
PUBLISHED = {"Math-Shepherd-PRM-7B": (47.9, 29.5), "Qwen2.5-Math-7B-PRM800K": (68.2, 62.6)}


def load(subset: str) -> list[dict[str, Any]]:
    return json.loads((DATA / f"processbench_{subset}.json").read_text())


def split(rows: list[dict[str, Any]], fraction: float, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    order = list(range(len(rows)))
    random.Random(seed).shuffle(order)
    held = set(order[: int(len(rows) * fraction)])
    return [r for i, r in enumerate(rows) if i not in held], [r for i, r in enumerate(rows) if i in held]


def step_probs(rm: RewardModel, rows: list[dict[str, Any]]) -> list[list[float]]:
    values = rm.step_logits([(r["problem"], r["steps"]) for r in rows], 32)
    return [[0.0] * len(r["steps"]) if isinstance(v, Exception) else [sigmoid(x) for x in v]
            for r, v in zip(rows, values, strict=True)]


def fold(train_subset: str, test_subset: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    train_rows, threshold_rows = split(load(train_subset), 0.2, args.seed)
    converted = [from_processbench(r) for r in train_rows]
    examples = load_examples(enumerate(converted, 1), "stepwise").examples
    config = TrainConfig.from_mapping({
        "kind": "prm", "model": args.model, "output_dir": str(work / f"{train_subset}"), "epochs": args.epochs,
        "batch_size": args.batch_size, "learning_rate": args.lr, "max_length": args.max_length, "lora": args.lora,
        "eval_every": 0, "save_every": 0, "seed": args.seed, "resume": False, "overwrite": True, "eval_fraction": 0.0,
        "attention": args.attention})
    run = Trainer(config, examples, [], progress=not args.no_progress).run()
    rm = RewardModel(run.model_dir)
    threshold, chosen = metrics.best_threshold(step_probs(rm, threshold_rows), [r["label"] for r in threshold_rows])
    test = load(test_subset)
    probs = step_probs(rm, test)
    truth = [r["label"] for r in test]
    result = metrics.processbench_f1([metrics.first_error(p, threshold) for p in probs], truth)
    unreadable = sum(1 for p in probs if p and max(p) == 0.0)
    return {"trained_on": train_subset, "train_rows": len(examples), "train_seconds": run.seconds,
            "threshold": threshold, "threshold_split_f1": chosen["f1"], "tested_on": test_subset,
            "unreadable": unreadable, **result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--lora", action="store_true")
    parser.add_argument("--epochs", type=float, default=3.0)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--attention", choices=["prefix", "causal", "bidirectional"], default="prefix",
                        help="encoder PRMs: how step i is kept from seeing later steps (see TrainConfig)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    from rewardsmith.adapters.console import show_logs

    show_logs()  # the trainers' progress lines
    if not (DATA / "processbench_gsm8k.json").exists():
        print(f"ProcessBench is not at {DATA} (../shared/data/prm); nothing to measure")
        return 0
    work = Path(tempfile.mkdtemp(prefix="rm-processbench-"))
    start = time.perf_counter()
    folds = {"gsm8k": fold("math", "gsm8k", args, work), "math": fold("gsm8k", "math", args, work)}
    print("\nProcessBench first-error F1 (x100), threshold chosen on 20% of the training subset:\n")
    print(f"{'model':48}{'GSM8K':>8}{'MATH':>8}")
    for name, (g, m) in PUBLISHED.items():
        print(f"{name + ' (published)':48}{g:8.1f}{m:8.1f}")
    label = f"rewardsmith {args.model}{' + LoRA' if args.lora else ''} (trained on the other subset)"
    print(f"{label:48}{100 * folds['gsm8k']['f1']:8.1f}{100 * folds['math']['f1']:8.1f}")
    print(f"{'always no error':48}{0.0:8.1f}{0.0:8.1f}")
    for test, r in folds.items():
        print(f"  {test}: trained on {r['train_rows']} {r['trained_on']} rows in {r['train_seconds']:.0f} s; "
              f"threshold {r['threshold']}; error acc {r['error_accuracy']:.3f}, correct acc "
              f"{r['correct_accuracy']:.3f}; {r['unreadable']} solutions longer than max_length")
    RESULTS.mkdir(exist_ok=True)
    out = {"config": vars(args), "folds": folds, "published": PUBLISHED, "seconds": time.perf_counter() - start}
    (RESULTS / "rm_processbench.json").write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
