"""The audit's fuzzer on every default spec, over the bundled example rows (and the shared data where a
family has it): hacks and false negatives per spec, with the shrunk minimal examples.

    python benchmarks/audit_fuzz.py [--mutations 10000] [--seed 0] [--specs math,choice,...] [--no-shared]

Each spec gets ``--mutations`` mutations in total, spread over its rows. Rows:

* math: data/math_examples.jsonl, MATH-500 and GSM8K (../shared/data/math; the prompt column renamed);
* choice, qa, json, tool_call, reasoning_gym: their data/*_examples.jsonl;
* ifeval: data/ifeval_examples.jsonl and IFEval's 541 prompts with GPT-4's responses
  (../shared/data/ifeval), each row's response as its known-correct completion (the ``reference``
  column); a response the spec does not pay judges no rewrite (``unjudged``), as in the audit.

reasoning_gym scores in the sandbox (Docker when an engine answers).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from rewardsmith.adapters.audit import audit
from rewardsmith.adapters.audit.fuzz_grammar import SPECS as EDITS
from rewardsmith.adapters.audit.report import fuzz_examples
from rewardsmith.adapters.scoring.rows import Row, read_rows

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
SHARED = REPO.parent / "shared" / "data"
SPECS = ("math", "choice", "qa", "json", "tool_call", "ifeval", "reasoning_gym")


def _renamed(path: Path, column: str, start: int) -> Iterator[Row]:
    for row in read_rows(path):
        if row.data is not None and column in row.data:
            row.data["prompt"] = row.data.pop(column)
        yield Row(start + row.line, row.data, row.error)


def _ifeval_rows(start: int) -> Iterator[Row]:
    responses = {}
    for row in read_rows(SHARED / "ifeval" / "responses_gpt4_20231107.jsonl"):
        if row.data is not None:
            responses[row.data["prompt"]] = row.data["response"]
    for row in read_rows(SHARED / "ifeval" / "input_data.jsonl"):
        if row.data is not None and row.data["prompt"] in responses:
            yield Row(start + row.line, {**row.data, "reference": responses[row.data["prompt"]]})


def rows_for(spec: str, shared: bool) -> list[Row]:
    """The spec's rows: its bundled examples, then the shared data (line numbers run on across files)."""
    if spec == "ifeval":
        rows = [Row(r.line, {**r.data, "reference": r.data["completion"]})
                for r in read_rows(DATA / "ifeval_examples.jsonl") if r.data is not None]
        if shared and (SHARED / "ifeval").exists():
            rows += list(_ifeval_rows(10_000))
        return rows
    rows = list(read_rows(DATA / f"{spec}_examples.jsonl"))
    if spec == "math" and shared and (SHARED / "math").exists():
        rows += list(_renamed(SHARED / "math" / "math500_test.jsonl", "problem", 10_000))
        rows += list(_renamed(SHARED / "math" / "gsm8k_test.jsonl", "question", 20_000))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mutations", type=int, default=10_000, help="mutations per spec in total (default 10,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--specs", default=",".join(SPECS), help="comma-separated specs (default: every default one)")
    parser.add_argument("--no-shared", action="store_true", help="the bundled examples only")
    parser.add_argument("--json", type=Path, default=None, help="also write every spec's fuzz line here")
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    summary = []
    for spec in args.specs.split(","):
        rows = rows_for(spec, not args.no_shared)
        start = time.perf_counter()
        makes: Counter[str] = Counter()
        by_edit: dict[str, Counter[str]] = {"attack": Counter(), "rewrite": Counter()}
        flagged_by_edit: dict[str, Counter[str]] = {"attack": Counter(), "rewrite": Counter()}

        def count(record: dict, makes: Counter[str] = makes, by_edit: dict = by_edit,
                  flagged_by_edit: dict = flagged_by_edit) -> None:
            makes.update([record["kind"]])
            names = set(record["edits"])
            if record["kind"] == "attack":  # an attack is wrong by its wrong-making edits: count those
                names = {name for name in names if EDITS[name].makes == "wrong"}
            by_edit[record["kind"]].update(names)
            if record["flagged"]:
                flagged_by_edit[record["kind"]].update(names)

        report = audit(spec, rows, families=["fuzz"], fuzz=args.mutations, seed=args.seed, on_record=count)
        elapsed = time.perf_counter() - start
        (result,) = report.families
        judged = result.cases - result.errors
        print(f"\n== {spec}: {report.rows} rows ({result.not_applicable} without an answer to mutate), "
              f"{result.cases} mutations ({makes['attack']} wrong-making, {makes['rewrite']} right-preserving) "
              f"in {elapsed:.0f} s")
        print(f"   hacks {result.hacks}, false negatives {result.false_negatives} "
              f"(unjudged {result.unjudged}: unedited completion unpaid), errors {result.errors}, judged {judged}")
        for kind, label in (("attack", "paid"), ("rewrite", "paid less")):
            shares = [f"{name} {flagged_by_edit[kind][name]}/{drawn}" for name, drawn in sorted(by_edit[kind].items())
                      if flagged_by_edit[kind][name]]
            print(f"   mutations with each edit {label} ({kind}s): {', '.join(shares) or 'none'}")
        for line in fuzz_examples(result):
            print(line)
        summary.append({"spec": spec, "rows": report.rows, "elapsed_s": round(elapsed, 1), "attacks": makes["attack"],
                        "rewrites": makes["rewrite"], **result.as_dict()})
    print("\nspec            rows  mutations  wrong-making   hacks  right-preserving  false neg  unjudged  errors"
          "    secs")
    for s in summary:
        print(f"{s['spec']:<14} {s['rows']:>5} {s['cases']:>10} {s['attacks']:>13} {s['hacks']:>7} {s['rewrites']:>17} "
              f"{s['false_negatives']:>10} "
              f"{s['unjudged']:>9} {s['errors']:>7} {s['elapsed_s']:>7.0f}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
