"""How often the math reward is right, next to plain math-verify, on the same inputs.

Every row has a label (right or wrong); both graders see the same gold and completion,
and for each source we print how many rows each marks correct, their false positives and
false negatives against the label, and how often the two agree. Sources:

* ``math500``: MATH-500's own solutions against its answers (all right: must stay 100%);
* ``gsm8k``: GSM8K's worked answers against their ``#### N`` (all right: must stay 100%);
* ``grpo``: each MATH-500 problem as a GRPO group would see it: the solution, reformatted
  right answers, two wrong numbers, a hedge between a wrong and the right box (both
  orders), and, where the answer is an ordered tuple, the tuple reversed;
* ``classes``: ``data/math_cases.jsonl``, the gaming classes (hedging, order, undefined,
  relations, unit words, integer tolerance, multi-part golds, equation hedges, crashes,
  named equations, prose answers, set notation, gold notation, think blocks, extraction),
  labelled blind; also printed class by class;
* ``pairs``: ``data/math_freeform_pairs.jsonl``, olympiad-style free-form answer pairs
  labelled blind (the answer is boxed for both graders);
* ``processbench``: real model completions from ProcessBench, joined to MATH-500 and GSM8K
  golds by problem text, labelled by ProcessBench's ``final_answer_correct``.

Then every row where the two graders disagree, with the label, so who is right can be read
off (the closing note of the issue summarises them).

    python benchmarks/math_accuracy.py [--data ../shared/data] [--problems N] [--show N] [--json out.json]

Plain math-verify runs as its README shows: ``verify(parse("$" + gold + "$"), parse(completion))``,
its own signal timeouts, main thread. Ours is ``build("math").verify_batch`` on the worker pool.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(HERE))

from math_throughput import perturb, replace_last_boxed  # noqa: E402 - the benchmarks folder is not a package


@dataclass
class Row:
    source: str
    kind: str  # a variant or class name, for the breakdown
    gold: str
    completion: str
    label: bool
    prompt: str = ""  # the question, where the source has it: what it asks for (a unit, a percentage) counts
    options: str = "{}"  # verifier options as JSON (data/math_cases.jsonl rows that turn a switch on)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _norm(text: str) -> str:
    return " ".join(text.split())


def math500_rows(problems: list[dict]) -> list[Row]:
    return [Row("math500", "solution", p["answer"], p["solution"], True, p["problem"]) for p in problems]


def gsm8k_rows(data: Path) -> list[Row]:
    rows = _jsonl(data / "math" / "gsm8k_test.jsonl")
    return [Row("gsm8k", "worked answer", r["answer"].split("####")[-1].strip(), r["answer"], True, r["question"])
            for r in rows]


_TUPLE = re.compile(r"^\s*(?:\\left)?\(\s*([^(),]+?)\s*,\s*([^(),]+?)\s*(?:\\right)?\)\s*$")


def grpo_rows(problems: list[dict]) -> list[Row]:
    """One GRPO group per problem: right in several dresses, wrong, hedged, reordered."""
    out = []
    for p in problems:
        answer, solution = p["answer"], p["solution"]
        wrong = perturb(answer, 1)
        group = [
            ("reference", solution, True),
            ("final answer is", f"Working omitted. The final answer is ${answer}$.", True),
            ("answer tag", f"<think>{solution[:200]}</think>\n<answer>{answer}</answer>", True),
            ("boxed, dfrac", f"Answer: \\boxed{{ {answer.replace(chr(92) + 'frac', chr(92) + 'dfrac')} }}", True),
            ("wrong +1", replace_last_boxed(solution, f"\\boxed{{{wrong}}}"), False),
            ("wrong +7", replace_last_boxed(solution, f"\\boxed{{{perturb(answer, 7)}}}"), False),
            ("hedge wrong|right", f"It is either $\\boxed{{{wrong}}}$ or $\\boxed{{{answer}}}$.", False),
            ("hedge right|wrong", f"It is $\\boxed{{{answer}}}$, or possibly $\\boxed{{{wrong}}}$.", False),
        ]
        pair = _TUPLE.match(answer)
        if pair and _norm(pair.group(1)) != _norm(pair.group(2)):
            group.append(("reordered tuple", f"\\boxed{{({pair.group(2)}, {pair.group(1)})}}", False))
        out += [Row("grpo", kind, answer, completion, label, p["problem"]) for kind, completion, label in group]
    return out


def class_rows() -> list[Row]:
    rows = _jsonl(REPO / "data" / "math_cases.jsonl")
    # Rows with verifier options are graded by a verifier with those options (plain math-verify has none).
    return [Row("classes", r["class"], r["gold"], r["completion"], r["correct"],
                options=json.dumps(r.get("options", {}), sort_keys=True)) for r in rows]


def pair_rows() -> list[Row]:
    rows = _jsonl(REPO / "data" / "math_freeform_pairs.jsonl")
    return [Row("pairs", r["topic"], r["gold"], f"\\boxed{{{r['answer']}}}", r["equivalent"]) for r in rows]


def processbench_rows(data: Path) -> list[Row]:
    out = []
    for name, source, key in (("gsm8k", "gsm8k_test.jsonl", "question"), ("math", "math500_test.jsonl", "problem")):
        path = data / "prm" / f"processbench_{name}.json"
        if not path.exists():
            continue
        golds = {}
        for r in _jsonl(data / "math" / source):
            golds[_norm(r[key])] = r["answer"].split("####")[-1].strip() if name == "gsm8k" else r["answer"]
        for r in json.loads(path.read_text(encoding="utf-8")):
            gold = golds.get(_norm(r["problem"]))
            if gold is not None:
                out.append(Row("processbench", name, gold, "\n\n".join(r["steps"]), bool(r["final_answer_correct"]),
                               r["problem"]))
    return out


def run_plain(rows: list[Row]) -> list[bool]:
    from math_verify import parse, verify

    out = []
    for row in rows:
        try:
            out.append(bool(verify(parse(f"${row.gold}$"), parse(row.completion))))
        except Exception:  # math-verify raising on an input counts as "not correct" for it
            out.append(False)
    return out


def run_ours(rows: list[Row]) -> list[bool]:
    from rewardsmith.verifiers import Sample, build

    out: list[bool] = [False] * len(rows)
    for options in sorted({r.options for r in rows}):
        indices = [i for i, r in enumerate(rows) if r.options == options]
        verifier = build({"type": "math", **json.loads(options)})
        samples = [Sample(prompt=rows[i].prompt, completion=rows[i].completion, fields={"answer": rows[i].gold})
                   for i in indices]
        for i, verdict in zip(indices, verifier.verify_batch(samples), strict=True):
            out[i] = verdict.correct is True
    return out


def _stats(rows: list[Row], ours: list[bool], plain: list[bool]) -> dict[str, float]:
    n = len(rows)
    positives = sum(r.label for r in rows)
    negatives = n - positives

    def side(said: list[bool]) -> dict[str, float]:
        tp = sum(s and r.label for r, s in zip(rows, said, strict=True))
        fp = sum(s and not r.label for r, s in zip(rows, said, strict=True))
        return {"correct": sum(said), "accuracy": sum(s == r.label for r, s in zip(rows, said, strict=True)) / n,
                "recall": tp / positives if positives else float("nan"),
                "fp": fp, "fp_rate": fp / negatives if negatives else float("nan"), "fn": positives - tp}

    return {"rows": n, "positives": positives, "ours": side(ours), "plain": side(plain),
            "agreement": sum(a == b for a, b in zip(ours, plain, strict=True)) / n}


def _table(title: str, groups: dict[str, list[int]], rows: list[Row], ours: list[bool], plain: list[bool]) -> dict:
    print(f"\n{title}")
    print(f"{'':24}{'rows':>6}{'right':>7} | {'ours acc':>8}{'FP':>5}{'FN':>5} | {'plain acc':>9}{'FP':>5}{'FN':>5}"
          f" | {'agree':>6}")
    figures = {}
    for name, idx in groups.items():
        s = _stats([rows[i] for i in idx], [ours[i] for i in idx], [plain[i] for i in idx])
        figures[name] = s
        o, p = s["ours"], s["plain"]
        print(f"{name[:24]:24}{s['rows']:>6}{s['positives']:>7} | {100 * o['accuracy']:>7.1f}%{o['fp']:>5}{o['fn']:>5}"
              f" | {100 * p['accuracy']:>8.1f}%{p['fp']:>5}{p['fn']:>5} | {100 * s['agreement']:>5.1f}%")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared benchmark data folder")
    parser.add_argument("--problems", type=int, default=None, help="use only the first N MATH-500 problems")
    parser.add_argument("--show", type=int, default=None, help="list at most N disagreements per source")
    parser.add_argument("--json", type=Path, help="also write the figures and every disagreement here")
    parser.add_argument("--verdicts", type=Path,
                        help="also write every row's verdict here (JSON lines), to diff two versions row by row")
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)  # its timeout warnings are noise here

    rows = class_rows() + pair_rows()
    math500 = args.data / "math" / "math500_test.jsonl"
    if math500.exists():
        problems = _jsonl(math500)[: args.problems]
        shared = math500_rows(problems) + gsm8k_rows(args.data) + grpo_rows(problems)
        rows = shared + rows + processbench_rows(args.data)
    else:
        print(f"{math500} not found: only the project's own labelled sets are measured (pass --data)")
    print(f"{len(rows)} labelled rows; grading with rewardsmith (worker pool), then plain math-verify 0.9 ...",
          flush=True)
    ours = run_ours(rows)
    plain = run_plain(rows)

    by_source: dict[str, list[int]] = defaultdict(list)
    by_variant: dict[str, list[int]] = defaultdict(list)
    by_class: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        by_source[row.source].append(i)
        if row.source == "grpo":
            by_variant[row.kind].append(i)
        if row.source == "classes":
            by_class[row.kind].append(i)
    figures = {"sources": _table("per source (FP/FN against the label)", by_source, rows, ours, plain)}
    if by_variant:
        figures["grpo"] = _table("GRPO-shaped groups, per completion variant", by_variant, rows, ours, plain)
    figures["classes"] = _table("gaming classes (data/math_cases.jsonl)", by_class, rows, ours, plain)

    disagreements = [
        {"source": r.source, "kind": r.kind, "label": r.label, "ours": o, "plain": p, "right": "ours" if o == r.label
         else "plain", "gold": r.gold, "completion": r.completion}
        for r, o, p in zip(rows, ours, plain, strict=True) if o != p
    ]
    print(f"\ndisagreements: {len(disagreements)} of {len(rows)} rows; right according to the label: "
          + ", ".join(f"{k} {v}" for k, v in Counter(d["right"] for d in disagreements).items()))
    shown: Counter[str] = Counter()
    for d in disagreements:
        if args.show is not None and shown[d["source"]] >= args.show:
            continue
        shown[d["source"]] += 1
        completion = d["completion"] if len(d["completion"]) <= 90 else "…" + d["completion"][-89:]
        print(f"  [{d['source']}/{d['kind']}] label={'right' if d['label'] else 'wrong'} "
              f"ours={'right' if d['ours'] else 'wrong'} plain={'right' if d['plain'] else 'wrong'} "
              f"-> {d['right']} is right | gold {d['gold'][:40]!r} | {completion!r}")
    if args.json:
        figures["disagreements"] = disagreements
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    if args.verdicts:
        args.verdicts.write_text("".join(
            json.dumps({"source": r.source, "kind": r.kind, "label": r.label, "ours": o, "gold": r.gold,
                        "completion": r.completion}) + "\n" for r, o in zip(rows, ours, strict=True)))


if __name__ == "__main__":
    main()
