"""``rewardsmith eval rm``: what a trained reward model gets right, measured on labelled rows.

The rows decide what is measured: pairwise (accuracy, AUROC), pointwise (AUROC, accuracy, and
Best-of-N when prompts repeat: RM@N beside majority@N, pass@N and random), stepwise (a PRM's step
AUROC, ProcessBench first-error F1 per subset at a threshold chosen on a declared split, outcome
AUROC and Best-of-N per step aggregation). Every AUROC and F1 gets trivial baselines computed on
the same rows (completion length, number of steps, step position: :mod:`.metrics`) and flags when
it is below chance or not above the best of them, so a model that learned a shortcut, or nothing,
shows as such. A report folder gets ``metrics.json`` and PNG plots; the CLI prints the table
(``rewardsmith.adapters.reports.rm_eval``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

from rewardsmith.reward_models import metrics
from rewardsmith.reward_models.data import Pair, Point, Stepwise, from_processbench, load_examples, require_examples
from rewardsmith.reward_models.inference import RewardModel, model_folder, sigmoid
from rewardsmith.reward_models.steps import StepSplitter

Reader = Callable[[str], Iterator[tuple[int, Any]]]


def read_examples(path: str, read: Reader, kinds: Sequence[str] = ("pairwise", "pointwise", "stepwise")) -> Any:
    """Rows of ``path`` as examples (ProcessBench rows converted), with the raw rows by line."""
    raw: dict[int, Any] = {}

    def rows() -> Iterator[tuple[int, Any]]:
        for line, row in read(path):
            if (isinstance(row, dict) and "labels" not in row and "problem" in row
                    and isinstance(row.get("label"), int) and "steps" in row):
                try:
                    row = from_processbench(row)
                except ValueError as exc:
                    row = str(exc)
            raw[line] = row
            yield line, row

    loaded = require_examples(load_examples(rows(), kinds), path)  # type: ignore[arg-type]
    return loaded, raw


def evaluate_files(model: str, paths: Sequence[str], *, threshold_data: str | None = None,
                   threshold: float | None = None, output: Path | None = None, device: str = "auto",
                   batch_size: int = 32, read: Reader) -> dict[str, Any]:
    """The report of the reward model at ``model`` (its folder, or the run folder holding it) on
    each file of ``paths``: per file the metrics its rows allow, each AUROC and F1 with its trivial
    baselines (``baselines``) and what a reader must know (``flags``: below chance, not above the
    best baseline). Written to ``output/metrics.json`` (with the plots) when given."""
    folder = model_folder(model)
    rm = RewardModel.get(folder, device)
    report: dict[str, Any] = {"model": str(folder), "kind": rm.meta.kind, "files": {}}
    if rm.meta.kind == "prm":
        if threshold is None and threshold_data is not None:
            loaded, _ = read_examples(threshold_data, read, ("stepwise",))
            probs = _step_probs(rm, loaded.examples, batch_size)
            threshold, chosen = metrics.best_threshold(probs, [_first_error(e) for e in loaded.examples])
            report["threshold_chosen_on"] = {"file": threshold_data, "threshold": threshold, **chosen}
        elif threshold is None:
            threshold = rm.meta.threshold
        report["threshold"] = threshold
    plots: dict[str, Any] = {}
    for path in paths:
        loaded, raw = read_examples(path, read)
        name = Path(path).stem
        first = loaded.examples[0]
        form = "pairwise" if isinstance(first, Pair) else "pointwise" if isinstance(first, Point) else "stepwise"
        result: dict[str, Any] = {"file": str(path), "form": form, "rows": len(loaded.examples),
                                  "skipped": len(loaded.problems)}
        if isinstance(first, Pair):
            result.update(_pairwise(rm, loaded.examples, batch_size, plots, name))
        elif isinstance(first, Point):
            result.update(_pointwise(rm, loaded.examples, raw, batch_size, plots, name))
        else:
            if rm.meta.kind != "prm":
                result.update(_orm_on_steps(rm, loaded.examples, batch_size))
            else:
                assert threshold is not None
                result.update(_stepwise(rm, loaded.examples, threshold, batch_size, plots, name))
        report["files"][name] = result
    if output is not None:
        output.mkdir(parents=True, exist_ok=True)
        (output / "metrics.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
        _plot(plots, output)
    return report


def _judged(out: dict[str, Any], key: str, value: float | None, baselines: dict[str, dict[str, Any] | None],
            chance: float | None = None) -> None:
    """Put the baselines that exist for the figure ``key`` beside it, and its flags."""
    kept = {name: b for name, b in baselines.items() if b is not None}
    out.setdefault("baselines", {})[key] = kept
    flags = metrics.judge_against(value, kept, chance)
    if flags:
        out.setdefault("flags", {})[key] = flags


# --------------------------------------------------------------------------- ORM


def _orm_probs(rm: RewardModel, rows: Sequence[tuple[Any, Any]], batch_size: int) -> list[float]:
    """P(correct) per row; an unreadable completion scores 0 (as the verifier does)."""
    return [0.0 if isinstance(v, Exception) else sigmoid(v[0]) for v in rm.logits(rows, batch_size)]


def _outcome_baselines(rm: RewardModel, texts: Sequence[Any], labels: Sequence[float]) -> dict[str, Any]:
    """Length (characters) and number of steps (the model's separator) as the score."""
    split = StepSplitter(rm.meta.separator).split
    return {"length": metrics.baseline_auroc(labels, [len(_text(t)) for t in texts]),
            "steps": metrics.baseline_auroc(labels, [len(split(_text(t))) for t in texts])}


def _pairwise(rm: RewardModel, pairs: Sequence[Pair], batch_size: int, plots: dict[str, Any],
              name: str) -> dict[str, Any]:
    chosen = _orm_probs(rm, [(p.prompt, p.chosen) for p in pairs], batch_size)
    rejected = _orm_probs(rm, [(p.prompt, p.rejected) for p in pairs], batch_size)
    split = StepSplitter(rm.meta.separator).split
    plots[f"{name}: chosen vs rejected"] = ("hist", {"chosen": chosen, "rejected": rejected})
    out = {"pairwise_accuracy": metrics.pairwise_accuracy(chosen, rejected),
           "auroc": metrics.auroc([1.0] * len(chosen) + [0.0] * len(rejected), chosen + rejected)}
    _judged(out, "pairwise_accuracy", out["pairwise_accuracy"], {
        "length": metrics.baseline_pairwise_accuracy([len(_text(p.chosen)) for p in pairs],
                                                     [len(_text(p.rejected)) for p in pairs]),
        "steps": metrics.baseline_pairwise_accuracy([len(split(_text(p.chosen))) for p in pairs],
                                                    [len(split(_text(p.rejected))) for p in pairs])}, 0.5)
    _judged(out, "auroc", out["auroc"], _outcome_baselines(
        rm, [p.chosen for p in pairs] + [p.rejected for p in pairs], [1.0] * len(pairs) + [0.0] * len(pairs)), 0.5)
    return out


def _pointwise(rm: RewardModel, points: Sequence[Point], raw: dict[int, Any], batch_size: int,
               plots: dict[str, Any], name: str) -> dict[str, Any]:
    probs = _orm_probs(rm, [(p.prompt, p.completion) for p in points], batch_size)
    labels = [p.label for p in points]
    pairs = list(zip(probs, labels, strict=True))
    plots[f"{name}: scores by label"] = ("hist", {"label 1": [s for s, y in pairs if y >= 0.5],
                                                  "label 0": [s for s, y in pairs if y < 0.5]})
    out: dict[str, Any] = {"auroc": metrics.auroc(labels, probs),
                           "accuracy": metrics.mean_of([float((s >= 0.5) == (y >= 0.5))
                                                        for s, y in zip(probs, labels, strict=True)])}
    _judged(out, "auroc", out["auroc"], _outcome_baselines(rm, [p.completion for p in points], labels), 0.5)
    groups = _groups([(json.dumps(p.prompt, sort_keys=True), s, p.label >= 0.5,
                       final_answer(raw.get(p.line), _text(p.completion)))
                      for p, s in zip(points, probs, strict=True)])
    if groups:
        out["best_of_n"] = metrics.best_of_n(groups)
        plots[f"{name}: best of n"] = ("bars", out["best_of_n"])
    return out


def _orm_on_steps(rm: RewardModel, rows: Sequence[Stepwise], batch_size: int) -> dict[str, Any]:
    """An ORM on stepwise rows: the outcome is "no wrong step"."""
    join = StepSplitter(rm.meta.separator).join
    probs = _orm_probs(rm, [(r.prompt, join(r.steps)) for r in rows], batch_size)
    labels = [float(_first_error(r) < 0) for r in rows]
    out = {"auroc": metrics.auroc(labels, probs)}
    _judged(out, "auroc", out["auroc"], {
        "length": metrics.baseline_auroc(labels, [len(join(r.steps)) for r in rows]),
        "steps": metrics.baseline_auroc(labels, [len(r.steps) for r in rows])}, 0.5)
    return out


def final_answer(row: Any, text: str) -> str | None:
    """The answer a completion gave, for majority voting: the scoring job's extraction when the
    row carries one, else the math extractor's reading of the text."""
    if isinstance(row, dict):
        extracted = ((row.get("verdict") or {}).get("details") or {}).get("extracted")
        if isinstance(extracted, str):
            return _normal(extracted)
    from rewardsmith.verifiers.math.extract import extract_answer

    try:
        found = extract_answer(text)
    except Exception:  # an answer the extractor cannot read does not vote
        return None
    return _normal(found.text) if found is not None else None


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", text).rstrip(".")


# --------------------------------------------------------------------------- PRM


def _step_probs(rm: RewardModel, rows: Sequence[Stepwise], batch_size: int) -> list[list[float]]:
    values = rm.step_logits([(r.prompt, r.steps) for r in rows], batch_size)
    return [[0.0] * len(r.steps) if isinstance(v, Exception) else [sigmoid(x) for x in v]
            for r, v in zip(rows, values, strict=True)]


def _first_error(row: Stepwise) -> int:
    if row.first_error is not None:
        return row.first_error
    return next((i for i, v in enumerate(row.labels) if v < 0.5), -1)


def _step_features(rows: Sequence[Stepwise], separator: str) -> dict[str, list[list[float | None]]]:
    """Per step of each row, the trivial features the PRM baselines score with: ``position`` (the
    step's index) and ``length`` (characters of the solution up to and including the step)."""
    position: list[list[float | None]] = []
    length: list[list[float | None]] = []
    for row in rows:
        position.append([float(i) for i in range(len(row.steps))])
        length.append([float(v) for v in accumulate(len(s) + (len(separator) if i else 0)
                                                    for i, s in enumerate(row.steps))])
    return {"length": length, "position": position}


def _stepwise(rm: RewardModel, rows: Sequence[Stepwise], threshold: float, batch_size: int,
              plots: dict[str, Any], name: str) -> dict[str, Any]:
    probs = _step_probs(rm, rows, batch_size)
    truth = [_first_error(r) for r in rows]
    out = metrics.step_metrics(probs, [list(r.labels) for r in rows], threshold)
    features = _step_features(rows, rm.meta.separator)
    flat_y = [y for r in rows for y in r.labels]
    counts = [[float(len(r.steps))] * len(r.steps) for r in rows]
    _judged(out, "step_auroc", out["step_auroc"], {
        "length": metrics.baseline_auroc(flat_y, [v for row in features["length"] for v in row]),
        "steps": metrics.baseline_auroc(flat_y, [v for row in counts for v in row]),
        "position": metrics.baseline_auroc(flat_y, [v for row in features["position"] for v in row])}, 0.5)
    last_only: list[list[float | None]] = [[None] * (len(r.steps) - 1) + [float(len(r.steps))] for r in rows]
    subsets: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        subsets.setdefault(row.subset or name, []).append(i)
    out["processbench"] = {}
    for subset, members in subsets.items():
        result = metrics.processbench_f1([metrics.first_error(probs[i], threshold) for i in members],
                                         [truth[i] for i in members])
        out["processbench"][subset] = result
        mine = [truth[i] for i in members]
        _judged(out, f"processbench/{subset}", result["f1"], {
            "length": metrics.baseline_f1([features["length"][i] for i in members], mine),
            "steps": metrics.baseline_f1([last_only[i] for i in members], mine),
            "position": metrics.baseline_f1([features["position"][i] for i in members], mine)})
    out["f1_by_threshold"] = {t: metrics.processbench_f1([metrics.first_error(p, t) for p in probs], truth)["f1"]
                              for t in metrics.THRESHOLDS}
    outcome = [float(t < 0) for t in truth]
    join = StepSplitter(rm.meta.separator).join
    outcome_baselines = {"length": metrics.baseline_auroc(outcome, [len(join(r.steps)) for r in rows]),
                         "steps": metrics.baseline_auroc(outcome, [len(r.steps) for r in rows])}
    out["outcome_auroc"] = {}
    for how in metrics.AGGREGATIONS:
        value = metrics.auroc(outcome, [metrics.aggregate(p, how) for p in probs])
        out["outcome_auroc"][how] = value
        _judged(out, f"outcome_auroc/{how}", value, outcome_baselines, 0.5)
    plots[f"{name}: first-error F1 by threshold"] = ("line", out["f1_by_threshold"], threshold)
    keys = [json.dumps(r.prompt, sort_keys=True) for r in rows]
    if len(set(keys)) < len(keys):
        answers = [final_answer(None, join(r.steps)) for r in rows]
        out["best_of_n"] = {}
        for how in metrics.AGGREGATIONS:
            groups = _groups([(k, metrics.aggregate(p, how), t < 0, a)
                              for k, p, t, a in zip(keys, probs, truth, answers, strict=True)])
            out["best_of_n"][how] = metrics.best_of_n(groups)
    return out


def _groups(items: Sequence[tuple[str, float, bool, str | None]]) -> dict[str, list[tuple[float, bool, str | None]]]:
    grouped: dict[str, list[tuple[float, bool, str | None]]] = {}
    for key, score, correct, answer in items:
        grouped.setdefault(key, []).append((score, correct, answer))
    return {k: v for k, v in grouped.items() if len(v) > 1}


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return " ".join(str(m.get("content", "")) for m in value)


# --------------------------------------------------------------------------- plots


def _plot(plots: dict[str, Any], folder: Path) -> None:
    if not plots:
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, len(plots), figsize=(4.2 * len(plots), 3.4), squeeze=False)
    for ax, (title, (kind, data, *extra)) in zip(axes[0], plots.items(), strict=True):
        if kind == "hist":
            for label, values in data.items():
                ax.hist(values, bins=20, range=(0, 1), alpha=0.55, label=label)
            ax.set_xlabel("P(correct)")
            ax.legend(fontsize=7)
        elif kind == "line":
            xs = sorted(data)
            ax.plot(xs, [data[x] for x in xs], marker=".")
            ax.axvline(extra[0], color="gray", linestyle="--", linewidth=1)
            ax.set_xlabel("threshold")
            ax.set_ylim(0, 1)
        else:
            names = [k for k in ("random", "majority_at_n", "rm_at_n", "pass_at_n") if k in data]
            ax.bar(names, [data[k] for k in names], color=["#bbb", "#8ab", "#36c", "#9c6"][: len(names)])
            ax.set_ylim(0, 1)
            ax.tick_params(axis="x", labelsize=7)
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / "report.png", dpi=100)
    plt.close(fig)
