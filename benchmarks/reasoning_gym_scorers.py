"""reasoning-gym's own scorers, surveyed and timed: what each dataset pays for cheats, which evaluate the
answer's text, and rows/s of rewardsmith's ``reasoning_gym`` verifier (scorers in the sandbox) beside
the same scorers on a host process pool (what rewardsmith did before they moved into the sandbox, and
what a user's own reward code does), on the same rows.

Survey (:func:`rewardsmith.verifiers.reasoning_gym.survey.run_survey`): for every dataset (``composite``
needs a config and is skipped), a few generated entries scored in the sandbox by the dataset's own
scorer, the evaluation boundary off, with the gold, each cheat and each code payload. ``--write-survey``
stores it as ``verifiers/reasoning_gym/survey.json`` (which the policy reads) and rewrites the table in
docs/verifiers/reasoning_gym.md; CI reruns it and requires the same answers.

Throughput: ``--rows`` rows per dataset, each with two completions (the gold in an answer tag, a wrong
answer in one). The host pool: reasoning-gym's own ``extract_answer`` and ``score_answer`` in
rewardsmith's killable worker pool (``verifiers/pool.py``, scorers built once per worker), batches of
256. Ours: ``verify_batch`` with the scorers in the sandbox (warm: containers started and
reasoning-gym imported beforehand, reported apart), batches of 256. Each side runs ``--repeat`` times;
the fastest run is reported. Agreement: both pay the row in full or both do not.

    python benchmarks/reasoning_gym_scorers.py [--size 3] [--rows 4] [--backend auto] [--repeat 3]
                                               [--no-survey] [--write-survey]
"""

from __future__ import annotations

import argparse
import json
import re
import time
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "verifiers" / "reasoning_gym.md"
TABLE_START, TABLE_END = "<!-- survey table: start -->", "<!-- survey table: end -->"


def survey(size: int, backend: str, write: bool) -> list[str]:
    import reasoning_gym
    from reasoning_gym.factory import DATASETS

    from rewardsmith.sandbox import get_backend
    from rewardsmith.verifiers.reasoning_gym import survey as surveyed

    names = [n for n in sorted(DATASETS) if n not in surveyed.SKIPPED]
    start = time.perf_counter()
    found = surveyed.run_survey(names, get_backend(backend), size=size)
    took = time.perf_counter() - start
    lines = surveyed.table(found)
    if write:
        surveyed.write(found, reasoning_gym.__version__)
        write_docs_table(lines)
    else:
        stored = surveyed.load()
        changed = sorted(n for n in found if _answers(found[n]) != _answers(stored.get(n, {})))
        lines.append(f"differs from survey.json: {', '.join(changed) or 'nothing'}")
    lines.append(f"survey: {len(names)} datasets in {took:.0f} s")
    return lines


def _answers(row: dict) -> tuple:
    from rewardsmith.verifiers.reasoning_gym.survey import evaluates_text, pays_cheats

    return tuple(pays_cheats(row)), tuple(sorted(evaluates_text(row))), (row.get("gold") or 0) >= 1 - 1e-9


def write_docs_table(lines: list[str]) -> None:
    text = DOCS.read_text(encoding="utf-8")
    block = TABLE_START + "\n" + "\n".join(lines) + "\n" + TABLE_END
    pattern = re.compile(re.escape(TABLE_START) + ".*?" + re.escape(TABLE_END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{DOCS} has no {TABLE_START} ... {TABLE_END} block to rewrite")
    DOCS.write_text(pattern.sub(lambda _: block, text), encoding="utf-8")


_SCORERS: dict = {}  # per worker process: each dataset's scorer built once, as a host pool keeps them


class HostScore:
    """The host-pool reference: reasoning-gym's extraction and scorer in a worker process."""

    preload = ("reasoning_gym",)

    def __call__(self, item: tuple[str, dict, str]) -> float:
        import reasoning_gym
        from reasoning_gym.utils import extract_answer

        name, entry, completion = item
        if name not in _SCORERS:
            _SCORERS[name] = reasoning_gym.get_score_answer_fn(name)
        try:
            return float(_SCORERS[name](extract_answer(completion), entry))
        except Exception:
            return 0.0


def _fastest(run, repeat: int):
    """(result, seconds) of the fastest of ``repeat`` runs: first calls warm caches; the machine is shared."""
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        took = time.perf_counter() - start
        best = (result, took) if best is None or took < best[1] else best
    return best


def throughput(rows_per_set: int, backend: str, repeat: int = 3) -> list[str]:
    from reasoning_gym.factory import DATASETS

    from rewardsmith.verifiers import Sample, build
    from rewardsmith.verifiers.pool import WorkerPool
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows
    from rewardsmith.verifiers.reasoning_gym.survey import SKIPPED

    rows = []
    for name in sorted(DATASETS):
        if name in SKIPPED:
            continue
        for row in make_rows(name, size=rows_per_set, seed=1):
            gold = row["answer"] if isinstance(row["answer"], str) else json.dumps(row["answer"])
            rows.append((name, row, f"<think>working</think><answer>{gold}</answer>"))
            rows.append((name, row, "<think>working</think><answer>12345</answer>"))
    items = [(name, {"question": row["prompt"], "answer": row["answer"], "metadata": row["metadata"]}, completion)
             for name, row, completion in rows]
    samples = [Sample(prompt=row["prompt"], completion=completion, fields=row) for _, row, completion in rows]
    out = [f"{len(rows)} rows ({rows_per_set} per dataset × 2 completions, {len(DATASETS) - len(SKIPPED)} datasets)"]

    # By its module's name, not __main__'s: the pool's workers import the task they are sent.
    from reasoning_gym_scorers import HostScore as host_score

    with WorkerPool(None, preload=host_score.preload) as pool:
        t0 = time.perf_counter()
        pool.map(host_score(), items[: pool.size], 120.0)
        warm = time.perf_counter() - t0

        def run_host() -> list[float]:
            scores = []
            for k in range(0, len(items), 256):
                outcomes = pool.map(host_score(), items[k : k + 256], 60.0)
                scores += [o.value if o.kind == "ok" else 0.0 for o in outcomes]
            return scores

        direct, host_s = _fastest(run_host, repeat)
    out.append(f"{'host pool (reasoning-gym scorers, host processes):':<52} {len(rows) / host_s:8.0f} rows/s  "
               f"start {warm:.1f}s")
    verifier = build({"type": "reasoning_gym", "backend": backend})
    t0 = time.perf_counter()
    verifier.start(wait=True)
    warm = time.perf_counter() - t0
    verdicts, ours_s = _fastest(
        lambda: [x for k in range(0, len(samples), 256) for x in verifier.verify_batch(samples[k : k + 256])], repeat
    )
    agree = sum((d >= 1 - 1e-9) == (v.score == 1.0) for d, v in zip(direct, verdicts, strict=True))
    out.append(f"{'ours (scorers in the sandbox, ' + backend + '):':<52} {len(rows) / ours_s:8.0f} rows/s  "
               f"start {warm:.1f}s  ratio ours/host {host_s / ours_s:.2f}  full-credit agreement {agree}/{len(rows)}")
    differ = [(rows[i][0], direct[i], verdicts[i]) for i in range(len(rows))
              if (direct[i] >= 1 - 1e-9) != (verdicts[i].score == 1.0)]
    for name, raw, verdict in differ[:16]:
        out.append(f"    differs on {name}: host {raw:.3g}, ours {verdict.score:g} {verdict.feedback[:70]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=3, help="entries probed per dataset in the survey")
    parser.add_argument("--rows", type=int, default=4, help="rows per dataset in the throughput run")
    parser.add_argument("--backend", default="auto", choices=["auto", "docker", "local"], help="the sandbox")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side; the fastest is reported")
    parser.add_argument("--no-survey", action="store_true", help="only the throughput run")
    parser.add_argument("--no-throughput", action="store_true", help="only the survey")
    parser.add_argument("--write-survey", action="store_true",
                        help="store the survey as survey.json and rewrite the docs table")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if not args.no_survey:
        print("\n".join(survey(args.size, args.backend, args.write_survey)))
        print()
    if not args.no_throughput:
        print("\n".join(throughput(args.rows, args.backend, args.repeat)))


if __name__ == "__main__":
    main()
