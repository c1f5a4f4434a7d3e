"""Can a reward model trained here find an injected error? The synthetic sanity benchmark.

Generates the project's step-by-step solutions with an error at a known step
(``rewardsmith.reward_models.synthetic``: every error contradicts earlier text — a start value
misread from the problem, a value carried wrongly from the previous step, a final answer that is
not the last result), trains a PRM and an ORM on them with ``rewardsmith``'s trainer, and reports,
in one run:

* PRM first-error F1 (ProcessBench's metric) on a held-out split of the same generator and on the
  held-out *variant* (other number range, other story and step templates; and each change alone,
  to tell which one a drop comes from), at a threshold chosen
  on a separate validation split;
* ORM AUROC (correct vs wrong solutions) on both, with the length-only AUROC beside it;
* the baselines: always "no error" (F1 0), a random first-error guess, and a surface-feature model
  (logistic regression on word 1-3-grams, step length and step index) given the same threshold
  choice — a score that only n-grams can reach would show here;
* the wall time of each training run.

    python benchmarks/rm_synthetic.py                       # the reported run (~25 min on 2 cores)
    python benchmarks/rm_synthetic.py --problems 300 --epochs 1   # a quick look
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
from rewardsmith.reward_models.data import load_examples
from rewardsmith.reward_models.inference import RewardModel, sigmoid
from rewardsmith.reward_models.steps import StepSplitter
from rewardsmith.reward_models.synthetic import generate
from rewardsmith.reward_models.train import TrainConfig, Trainer

RESULTS = Path(__file__).resolve().parent / "results"


def stepwise(rows: list[dict[str, Any]]) -> list[Any]:
    return load_examples(enumerate(rows, 1), "stepwise").examples


def pairwise(rows: list[dict[str, Any]]) -> list[Any]:
    join = StepSplitter().join
    pairs = [{"prompt": a["prompt"], "chosen": join(a["steps"]), "rejected": join(b["steps"])}
             for a, b in zip(rows[::2], rows[1::2], strict=True)]
    return load_examples(enumerate(pairs, 1), "pairwise").examples


def truth(rows: list[dict[str, Any]]) -> list[int]:
    return [r["first_error"] for r in rows]


# --------------------------------------------------------------------------- baselines


def random_f1(rows: list[dict[str, Any]], seed: int = 0) -> float:
    rng = random.Random(seed)
    guesses = [rng.randrange(-1, len(r["steps"])) for r in rows]
    return metrics.processbench_f1(guesses, truth(rows))["f1"]


def step_features(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[float]], list[int]]:
    """Per step: the step's text (n-grams), its length and index, and its label."""
    texts, numeric, labels = [], [], []
    for r in rows:
        for i, (step, label) in enumerate(zip(r["steps"], r["labels"], strict=True)):
            texts.append(step)
            numeric.append([len(step) / 50.0, i / 5.0, float(i == len(r["steps"]) - 1)])
            labels.append(int(label))
    return texts, numeric, labels


def surface_baseline(train: list[dict[str, Any]], valid: list[dict[str, Any]],
                     tests: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """A linear model on word 1-3-grams + step length and index: per-step P(correct) for the PRM
    metrics, and one on the whole solution's n-grams + length for the ORM AUROC."""
    import numpy as np
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vec = TfidfVectorizer(ngram_range=(1, 3), min_df=2, token_pattern=r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")
    texts, numeric, labels = step_features(train)
    x = hstack([vec.fit_transform(texts), csr_matrix(np.array(numeric))]).tocsr()
    step_model = LogisticRegression(max_iter=2000, C=4.0).fit(x, labels)

    def step_probs(rows: list[dict[str, Any]]) -> list[list[float]]:
        t, n, _ = step_features(rows)
        p = step_model.predict_proba(hstack([vec.transform(t), csr_matrix(np.array(n))]).tocsr())[:, 1]
        out, k = [], 0
        for r in rows:
            out.append([float(v) for v in p[k:k + len(r["steps"])]])
            k += len(r["steps"])
        return out

    threshold, _ = metrics.best_threshold(step_probs(valid), truth(valid))
    whole = TfidfVectorizer(ngram_range=(1, 3), min_df=2, token_pattern=r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")
    joined = [" ".join(r["steps"]) for r in train]
    xo = hstack([whole.fit_transform(joined), csr_matrix(np.array([[len(t) / 200.0] for t in joined]))]).tocsr()
    outcome = LogisticRegression(max_iter=2000, C=4.0).fit(xo, [int(r["first_error"] < 0) for r in train])
    report: dict[str, Any] = {"threshold": threshold}
    for name, rows in tests.items():
        probs = step_probs(rows)
        joined = [" ".join(r["steps"]) for r in rows]
        xt = hstack([whole.transform(joined), csr_matrix(np.array([[len(t) / 200.0] for t in joined]))]).tocsr()
        report[name] = {
            "first_error_f1": metrics.processbench_f1([metrics.first_error(p, threshold) for p in probs],
                                                      truth(rows))["f1"],
            "orm_auroc": metrics.auroc([float(r["first_error"] < 0) for r in rows],
                                       list(outcome.predict_proba(xt)[:, 1]))}
    return report


# --------------------------------------------------------------------------- ours


def train(kind: str, examples: list[Any], evaluation: list[Any], args: argparse.Namespace, out: Path) -> Any:
    config = TrainConfig.from_mapping({
        "kind": kind, "model": args.model, "output_dir": str(out), "learning_rate": args.lr, "epochs": args.epochs,
        "batch_size": args.batch_size, "max_length": 256, "eval_every": args.eval_every, "save_every": 0,
        "log_every": 20, "seed": args.seed, "warmup_ratio": 0.05, "resume": False, "overwrite": True, "lora": args.lora,
        "attention": args.attention})
    trainer = Trainer(config, examples, evaluation, progress=not args.no_progress)
    return trainer.run()


def prm_report(model_dir: Path, valid: list[dict[str, Any]], tests: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    rm = RewardModel(model_dir)

    def probs(rows: list[dict[str, Any]]) -> list[list[float]]:
        values = rm.step_logits([(r["prompt"], r["steps"]) for r in rows], 64)
        return [[sigmoid(x) for x in v] for v in values]  # type: ignore[union-attr]

    threshold, on_valid = metrics.best_threshold(probs(valid), truth(valid))
    report: dict[str, Any] = {"threshold": threshold, "valid_f1": on_valid["f1"],
                              "verifier_rows_per_s": verifier_speed("prm", model_dir, tests["test"])}
    for name, rows in tests.items():
        p = probs(rows)
        report[name] = {
            **metrics.processbench_f1([metrics.first_error(s, threshold) for s in p], truth(rows)),
            **metrics.step_metrics(p, [r["labels"] for r in rows], threshold),
            "outcome_auroc_min": metrics.auroc([float(r["first_error"] < 0) for r in rows], [min(s) for s in p])}
    return report


def verifier_speed(kind: str, model_dir: Path, rows: list[dict[str, Any]]) -> float:
    """Rows per second through the registry verifier (``build({type: orm|prm, path})``), batches
    of 64, the model already loaded (its first batch is not timed)."""
    from rewardsmith.verifiers import Sample, build

    verifier = build({"type": kind, "path": str(model_dir), "batch_size": 64})
    samples = [Sample(prompt=r["prompt"], completion=StepSplitter().join(r["steps"])) for r in rows]
    verifier.verify_batch(samples[:8])
    start = time.perf_counter()
    for i in range(0, len(samples), 64):
        verifier.verify_batch(samples[i:i + 64])
    return len(samples) / (time.perf_counter() - start)


def orm_report(model_dir: Path, tests: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    rm = RewardModel(model_dir)
    join = StepSplitter().join
    report: dict[str, Any] = {"verifier_rows_per_s": verifier_speed("orm", model_dir, tests["test"])}
    for name, rows in tests.items():
        values = rm.logits([(r["prompt"], join(r["steps"])) for r in rows], 64)
        labels = [float(r["first_error"] < 0) for r in rows]
        report[name] = {"auroc": metrics.auroc(labels, [v[0] for v in values]),  # type: ignore[index]
                        "length_only_auroc": metrics.auroc(labels, [len(join(r["steps"])) for r in rows])}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--problems", type=int, default=3000, help="training problems (x2 solutions)")
    parser.add_argument("--test-problems", type=int, default=300)
    parser.add_argument("--epochs", type=float, default=2.0)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--lora", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--attention", choices=["prefix", "causal", "bidirectional"], default="prefix",
                        help="encoder PRMs: how step i is kept from seeing later steps (see TrainConfig)")
    parser.add_argument("--eval-every", type=int, default=0)
    parser.add_argument("--skip", choices=["prm", "orm"], action="append", default=[])
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--out", type=Path, default=None, help="keep the trained models here")
    args = parser.parse_args(argv)
    from rewardsmith.adapters.console import show_logs

    show_logs()  # the trainers' progress lines

    train_rows = generate(args.problems, seed=1)
    valid = generate(200, seed=4)
    tests = {"test": generate(args.test_problems, seed=2),
             "heldout_variant": generate(args.test_problems, seed=3, variant="heldout"),
             "heldout_templates": generate(args.test_problems, seed=3, variant="heldout-templates"),
             "heldout_numbers": generate(args.test_problems, seed=3, variant="heldout-numbers")}
    work = args.out or Path(tempfile.mkdtemp(prefix="rm-synthetic-"))
    results: dict[str, Any] = {"config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                               "rows": {"train": len(train_rows), "valid": len(valid),
                                        **{k: len(v) for k, v in tests.items()}}}
    start = time.perf_counter()
    results["surface_baseline"] = surface_baseline(train_rows, valid, tests)
    results["surface_baseline"]["seconds"] = time.perf_counter() - start
    results["random_f1"] = {name: random_f1(rows) for name, rows in tests.items()}
    results["always_no_error_f1"] = {name: metrics.processbench_f1([-1] * len(rows), truth(rows))["f1"]
                                     for name, rows in tests.items()}
    if "prm" not in args.skip:
        run = train("prm", stepwise(train_rows), stepwise(valid), args, work / "prm")
        results["prm"] = {"train_seconds": run.seconds, "steps": run.steps, "rows_per_s": run.samples_per_s,
                          **prm_report(run.model_dir, valid, tests)}
    if "orm" not in args.skip:
        run = train("orm", pairwise(train_rows), pairwise(valid), args, work / "orm")
        results["orm"] = {"train_seconds": run.seconds, "steps": run.steps, "pairs_per_s": run.samples_per_s,
                          **orm_report(run.model_dir, tests)}
    print_table(results)
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / "rm_synthetic.json"
    target.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nresults: {target}; models: {work}")
    return 0


def print_table(r: dict[str, Any]) -> None:
    columns = {"test": "test", "heldout_variant": "variant", "heldout_templates": "templates only",
               "heldout_numbers": "numbers only"}

    def row(label: str, values: dict[str, Any], key: str | None = None) -> None:
        cells = [values.get(c) if key is None else values.get(c, {}).get(key) for c in columns]
        print(f"{label:32}" + "".join("{:>16}".format("n/a" if v is None else f"{v:.3f}") for v in cells))

    print(f"\n{'':32}" + "".join(f"{c:>16}" for c in columns.values()))
    s = r["surface_baseline"]
    if "prm" in r:
        p = r["prm"]
        row("PRM first-error F1 (ours)", p, "f1")
        row("  step AUROC", p, "step_auroc")
        row("  outcome AUROC (min of steps)", p, "outcome_auroc_min")
    row("PRM F1, surface baseline", s, "first_error_f1")
    row("PRM F1, random guess", r["random_f1"])
    row("PRM F1, always no error", r["always_no_error_f1"])
    if "orm" in r:
        o = r["orm"]
        row("ORM AUROC (ours)", o, "auroc")
        row("ORM AUROC, length only", o, "length_only_auroc")
    row("ORM AUROC, surface baseline", s, "orm_auroc")
    if "prm" in r:
        p = r["prm"]
        print(f"PRM threshold {p['threshold']} (chosen on validation, F1 there {p['valid_f1']:.3f}); trained in "
              f"{p['train_seconds']:.0f} s ({p['steps']} steps, {p['rows_per_s']:.1f} rows/s); as a verifier "
              f"{p['verifier_rows_per_s']:.1f} rows/s")
    if "orm" in r:
        o = r["orm"]
        print(f"ORM trained in {o['train_seconds']:.0f} s ({o['steps']} steps, {o['pairs_per_s']:.1f} pairs/s); "
              f"as a verifier {o['verifier_rows_per_s']:.1f} rows/s")


if __name__ == "__main__":
    sys.exit(main())
