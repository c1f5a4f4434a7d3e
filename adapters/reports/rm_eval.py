"""The table ``rewardsmith eval rm`` prints: per file, each figure beside its trivial baselines
and what a reader must know about it (below chance, not above a baseline), then Best-of-N, then
what the names mean. The figures themselves are computed by
:mod:`rewardsmith.reward_models.evaluate` (and written to ``metrics.json``); this only lays them out.
"""

from __future__ import annotations

from typing import Any

from rewardsmith.adapters.reports.table import grid, number

BASELINES = ("length", "steps", "position")

BASELINE_NOTE = """\
baselines: the same rows scored by one trivial feature, in whichever direction does better on them:
  length (characters of the completion; per step, of the solution up to that step), steps (the
  number of steps, split with the model's separator), position (a step's index); for first-error F1
  the rule "the first step at or past a threshold is the wrong one", its threshold chosen on these
  rows. "-": no such baseline (the feature does not vary here, or ties in every pair, or the figure
  is undefined); "n/a": undefined on these rows (an AUROC needs both labels). A model that does not
  beat a baseline has learned nothing that feature does not already tell."""

BEST_OF_N_NOTE = """\
Best-of-N, over prompts that have N > 1 completions:
  RM@N        the completion the model scores highest is correct
  majority@N  the most common final answer is a correct one (self-consistency: no model; it misses
              whenever the right answer is in the minority, so it can be 0 beside pass@N 1);
              absent when no completion has a final answer to vote with
  pass@N      some completion is correct (the ceiling of any way of choosing)
  random      the expected accuracy of one completion picked at random (the floor)"""

_BON_COLUMNS = (("rm_at_n", "RM@N"), ("majority_at_n", "majority@N"), ("pass_at_n", "pass@N"), ("random", "random"))


def format_eval(report: dict[str, Any]) -> str:
    """The report of :func:`~rewardsmith.reward_models.evaluate.evaluate_files` as text."""
    lines = [f"eval rm: {report['model']} ({report['kind']}){_threshold(report)}"]
    flagged = below = figures = 0
    best_of_n = False
    for name, result in report["files"].items():
        lines.append("")
        lines.append(f"{result.get('file', name)}: {result['rows']} {result.get('form', '')} rows"
                     + (f", {result['skipped']} skipped" if result["skipped"] else ""))
        rows = _figures(result, report.get("threshold"))
        names = [b for b in BASELINES if any(b in result.get("baselines", {}).get(key, {}) for key, *_ in rows)]
        table = []
        for key, label, value in rows:
            baselines = result.get("baselines", {}).get(key)
            flags = result.get("flags", {}).get(key, [])
            figures += bool(baselines)
            flagged += any(f.startswith("does not beat") for f in flags)
            below += any(f.startswith("below chance") for f in flags)
            cells = [number(baselines[b]["value"]) if b in baselines else "-" for b in names] if baselines is not None \
                else [""] * len(names)
            table.append([label, number(value), *cells, "; ".join(flags)])
        lines += grid(["metric", "model", *names, ""], table, "<>" + ">" * len(names) + "<")
        if "best_of_n" in result:
            best_of_n = True
            lines += _best_of_n(result["best_of_n"])
    if figures:
        lines.append("")
        lines.append(f"{flagged} of {figures} figures do not beat a trivial baseline"
                     + (f"; {below} below chance" if below else "") + ".")
        lines.append(BASELINE_NOTE)
    if best_of_n:
        lines.append(BEST_OF_N_NOTE)
    return "\n".join(lines)


def _threshold(report: dict[str, Any]) -> str:
    if "threshold" not in report:
        return ""
    chosen = report.get("threshold_chosen_on")
    if chosen:  # its F1 there stays in metrics.json: a figure on the tuning rows, not an evaluation
        return f"; first-error threshold {report['threshold']:g}, chosen on {chosen['file']}"
    return f"; first-error threshold {report['threshold']:g}"


def _figures(result: dict[str, Any], threshold: float | None) -> list[tuple[str, str, float | None]]:
    """(key in ``baselines``, label, value) of each figure the file has, in reading order."""
    rows: list[tuple[str, str, float | None]] = []
    for key, label in (("pairwise_accuracy", "pairwise accuracy"), ("auroc", "AUROC"),
                       ("accuracy", "accuracy (P >= 0.5)"), ("step_auroc", "step AUROC")):
        if key in result:
            rows.append((key, label, result[key]))
    if "step_accuracy" in result:
        rows.append(("step_accuracy", f"step accuracy (P >= {threshold:g})" if threshold is not None
                     else "step accuracy", result["step_accuracy"]))
    for subset, pb in result.get("processbench", {}).items():
        rows.append((f"processbench/{subset}", f"first-error F1 {subset}", pb["f1"]))
    for how, value in result.get("outcome_auroc", {}).items():
        rows.append((f"outcome_auroc/{how}", f"outcome AUROC ({how})", value))
    return rows


def _best_of_n(data: dict[str, Any]) -> list[str]:
    per = data if "groups" not in data else {"": data}
    first = next(iter(per.values()))
    sizes = f"N = {first['n_min']}" if first["n_min"] == first["n_max"] else f"N = {first['n_min']}..{first['n_max']}"
    columns = [(k, t) for k, t in _BON_COLUMNS if any(k in v for v in per.values())]
    cells = [[number(v[k]) if k in v else "-" for k, _ in columns] for v in per.values()]
    if "" in per:  # one selector: the reward model's score
        table = grid([t for _, t in columns], cells, ">" * len(columns), indent=4)
    else:  # a PRM: one row per step aggregation
        table = grid(["aggregation", *(t for _, t in columns)], [[how, *c] for how, c in zip(per, cells, strict=True)],
                     "<" + ">" * len(columns), indent=4)
    out = ["", f"  Best-of-N over {first['groups']} prompts ({sizes}):"]
    out += table
    if not any("majority_at_n" in v for v in per.values()):
        out.append("    majority@N: absent, no completion has a final answer to vote with")
    return out
