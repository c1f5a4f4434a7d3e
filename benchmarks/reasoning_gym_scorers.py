"""reasoning-gym's own scorers, surveyed and timed: what each dataset pays for cheats, and rows/s of
rewardsmith's ``reasoning_gym`` verifier vs calling the scorer directly, on the same rows.

Survey: for every dataset (``composite`` needs a config and is skipped), a few generated entries are
scored by the dataset's own ``score_answer`` with the gold and each attack of
:data:`rewardsmith.verifiers.reasoning_gym.survey.ATTACKS`; the table prints the best score each
attack earned (``gold`` is the worst the gold earned) and flags the datasets whose scorer pays a cheat
in full (marked unsafe in :mod:`rewardsmith.verifiers.reasoning_gym.policy`) or pays partial credit.

Throughput: ``--rows`` rows per dataset, each with two completions (the gold in an answer tag, a wrong
answer in one). The direct path is reasoning-gym's own: ``extract_answer`` then ``score_answer`` in a
loop (scorers built beforehand). Ours is ``verify_batch`` in-process (``workers: 0``) and on a warm
pool (batches of 256, start-up reported apart). Each side runs ``--repeat`` times; the fastest run is
reported. Agreement: both pay the row in full or both do not.

    python benchmarks/reasoning_gym_scorers.py [--size 3] [--rows 4] [--workers N] [--repeat 3] [--no-survey]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from functools import partial


def survey_table(size: int, workers: int) -> list[str]:
    from reasoning_gym.factory import DATASETS

    from rewardsmith.verifiers.pool import WorkerPool
    from rewardsmith.verifiers.reasoning_gym.policy import UNSAFE
    from rewardsmith.verifiers.reasoning_gym.survey import ATTACKS, CHEATS, SKIPPED, pays_cheats, probe

    names = [n for n in sorted(DATASETS) if n not in SKIPPED]
    with WorkerPool(workers, preload=("reasoning_gym",)) as pool:
        outcomes = pool.map(partial(probe, size=size), names, 120.0)
    head = ["dataset", "gold", *ATTACKS, "json", "verdict"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    counts = {"unsafe": 0, "partial": 0, "clean": 0}
    for name, outcome in zip(names, outcomes, strict=True):
        if outcome.kind != "ok":
            lines.append(f"| {name} | {outcome.kind}: {str(outcome.value)[:60]} |")
            continue
        row = outcome.value
        cheats = pays_cheats(row)
        paid_some = any(0 < row[k] < 1 for k in CHEATS)
        verdict = "unsafe: " + ", ".join(cheats) if cheats else "partial credit" if paid_some else "clean"
        counts["unsafe" if cheats else "partial" if paid_some else "clean"] += 1
        if bool(cheats) != (name in UNSAFE):
            verdict += " (MISMATCH with policy.UNSAFE)"
        cells = [name, _num(row["gold"]), *(_num(row[k]) for k in ATTACKS), row["json"], verdict]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(
        f"\n{len(names)} datasets: {counts['unsafe']} pay a cheat in full, {counts['partial']} pay partial "
        f"credit for a cheat, {counts['clean']} pay cheats nothing"
    )
    return lines


def _num(value: float) -> str:
    return "1" if value >= 1 else "0" if value == 0 else f"{value:.2f}"


def _fastest(run, repeat: int):
    """(result, seconds) of the fastest of ``repeat`` runs: first calls warm caches; the machine is shared."""
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        took = time.perf_counter() - start
        best = (result, took) if best is None or took < best[1] else best
    return best


def throughput(rows_per_set: int, workers: int | None, repeat: int = 3) -> list[str]:
    from reasoning_gym.factory import DATASETS
    from reasoning_gym.utils import extract_answer

    from rewardsmith.verifiers import Sample, build
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows
    from rewardsmith.verifiers.reasoning_gym.score import scorer
    from rewardsmith.verifiers.reasoning_gym.survey import SKIPPED

    rows = []
    for name in sorted(DATASETS):
        if name in SKIPPED:
            continue
        made = make_rows(name, size=rows_per_set, seed=1)
        for row in made:
            gold = row["answer"] if isinstance(row["answer"], str) else json.dumps(row["answer"])
            rows.append((name, row, f"<think>working</think><answer>{gold}</answer>"))
            rows.append((name, row, "<think>working</think><answer>12345</answer>"))
    for name in {name for name, _, _ in rows}:
        scorer(name)  # built beforehand on both sides (ours: in-process here, the pool warms below)

    def run_direct() -> list[float]:
        scores = []
        for name, row, completion in rows:
            entry = {"question": row["prompt"], "answer": row["answer"], "metadata": row["metadata"]}
            try:
                scores.append(float(scorer(name)(extract_answer(completion), entry)))
            except Exception:
                scores.append(0.0)
        return scores

    direct, direct_s = _fastest(run_direct, repeat)
    samples = [Sample(prompt=row["prompt"], completion=completion, fields=row) for _, row, completion in rows]

    out = [f"{len(rows)} rows ({rows_per_set} per dataset × 2 completions, {len(DATASETS) - len(SKIPPED)} datasets)"]
    out.append(f"direct (extract_answer + score_answer): {len(rows) / direct_s:8.0f} rows/s")
    for label, spec in (("ours, in-process", {"workers": 0}), ("ours, warm pool", {"workers": workers})):
        verifier = build({"type": "reasoning_gym", **spec})
        t0 = time.perf_counter()
        verifier.start(wait=True)
        warm = time.perf_counter() - t0
        verdicts, ours_s = _fastest(
            lambda v=verifier: [x for i in range(0, len(samples), 256) for x in v.verify_batch(samples[i : i + 256])],
            repeat,
        )
        agree = sum((d >= 1 - 1e-9) == (v.score == 1.0) for d, v in zip(direct, verdicts, strict=True))
        differ = [
            (rows[i][0], direct[i], verdicts[i])
            for i in range(len(rows))
            if (direct[i] >= 1 - 1e-9) != (verdicts[i].score == 1.0)
        ]
        out.append(
            f"{label + ':':<40} {len(rows) / ours_s:8.0f} rows/s  ratio ours/direct {direct_s / ours_s:.2f}  "
            f"start {warm:.1f}s  full-credit agreement {agree}/{len(rows)}"
        )
        for name, raw, verdict in differ[:16]:
            out.append(f"    differs on {name}: direct {raw:.3g}, ours {verdict.score:g} {verdict.feedback[:70]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=3, help="entries probed per dataset in the survey")
    parser.add_argument("--rows", type=int, default=4, help="rows per dataset in the throughput run")
    parser.add_argument("--workers", type=int, default=None, help="pool processes (default: the CPUs)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; the fastest is reported")
    parser.add_argument("--no-survey", action="store_true")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if not args.no_survey:
        print("\n".join(survey_table(args.size, args.workers or 2)))
        print()
    print("\n".join(throughput(args.rows, args.workers, args.repeat)))


if __name__ == "__main__":
    main()
