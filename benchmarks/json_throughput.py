"""Structured output: the reference check (``json.loads`` + ``Draft202012Validator(schema).is_valid``)
in a loop vs rewardsmith's ``json`` batch path, on the same generated rows.

Rows are generated here, deterministically (``--seed``): five schema shapes (a person with an
``email`` format, an order with a ``pattern`` id, an event with a ``date`` format, a tag list with
``uniqueItems``, a nested config), each with completions of known kinds: the right value, the right
value reformatted, a wrong value that the schema allows, a schema violation, an extra key, a
trailing comma, a second value, a duplicate key, ``NaN``, and a ``format`` violation. Both sides
read the same text; we print rows/s for each, the ratio, and how often they agree on validity
(ours with ``reference_field: null``, i.e. schema only), per kind, with why they differ where they do
(duplicate keys, ``NaN`` and ``format`` are refused by ours and accepted by the reference's defaults).

    python benchmarks/json_throughput.py [--rows 3000] [--seed 0] [--workers N] [--repeat 3] [--write-rows PATH]

``--write-rows`` also writes one row per generated (schema, reference) pair, with a ``known_good``
column holding the reference as JSON text, for ``rewardsmith audit --reference-field known_good``.
Each side runs ``--repeat`` times in interleaved rounds and its fastest run is reported (the machine is
shared). Ours runs ``verify_batch`` over batches of 256 rows on a warm pool (start-up reported apart):
rows whose schema uses a costly keyword (``pattern``, ``uniqueItems``, ``$ref``) are validated in the
pool with a time limit, the rest in-process.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter, defaultdict
from typing import Any

FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John"]
LAST = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus"]
SKUS = ["pen", "pad", "ink", "clip", "tape", "glue"]
KINDS = (
    "right",
    "reformatted",
    "wrong value",
    "schema violation",
    "extra key",
    "trailing comma",
    "second value",
    "duplicate key",
    "NaN",
    "format violation",
)
# Kinds where ours refuses on purpose what the reference's defaults accept.
BY_DESIGN = ("duplicate key", "NaN", "format violation")


def person(rng: random.Random) -> tuple[dict, dict, dict]:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "age": {"type": "integer", "minimum": 0},
            "email": {"type": "string", "format": "email"},
        },
        "required": ["name", "age", "email"],
        "additionalProperties": False,
    }
    first, last = rng.choice(FIRST), rng.choice(LAST)
    ref = {"name": f"{first} {last}", "age": rng.randint(20, 90), "email": f"{first.lower()}@example.org"}
    return schema, ref, {"field": "email", "bad_format": f"{first.lower()} at example.org", "bad_type": ("age", "old")}


def order(rng: random.Random) -> tuple[dict, dict, dict]:
    schema = {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "pattern": "^ORD-[0-9]{4}$"},
            "items": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
                    "required": ["sku", "qty"],
                },
            },
            "total": {"type": "number", "minimum": 0},
        },
        "required": ["order_id", "items", "total"],
    }
    items = [{"sku": s, "qty": rng.randint(1, 5)} for s in rng.sample(SKUS, rng.randint(1, 3))]
    ref = {"order_id": f"ORD-{rng.randint(0, 9999):04d}", "items": items, "total": round(rng.uniform(1, 90), 2)}
    return schema, ref, {"field": "order_id", "bad_format": "ORD-12", "bad_type": ("total", "7.5")}


def event(rng: random.Random) -> tuple[dict, dict, dict]:
    schema = {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "day": {"type": "string", "format": "date"},
            "online": {"type": "boolean"},
        },
        "required": ["title", "day", "online"],
    }
    ref = {
        "title": f"Meetup {rng.randint(1, 99)}",
        "day": f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "online": rng.random() < 0.5,
    }
    return schema, ref, {"field": "day", "bad_format": "next Tuesday", "bad_type": ("online", "yes")}


def tags(rng: random.Random) -> tuple[dict, dict, dict]:
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "maxItems": 8}},
        "required": ["tags"],
    }
    ref = {"tags": rng.sample(["math", "code", "json", "rl", "llm", "eval", "data"], rng.randint(2, 5))}
    return schema, ref, {"field": None, "bad_type": ("tags", "math")}


def config(rng: random.Random) -> tuple[dict, dict, dict]:
    schema = {
        "type": "object",
        "properties": {
            "model": {"type": "string", "enum": ["small", "base", "large"]},
            "train": {
                "type": "object",
                "properties": {
                    "lr": {"type": "number", "exclusiveMinimum": 0},
                    "steps": {"type": "integer", "minimum": 1},
                },
                "required": ["lr", "steps"],
            },
        },
        "required": ["model", "train"],
    }
    ref = {
        "model": rng.choice(["small", "base", "large"]),
        "train": {"lr": rng.choice([1e-4, 3e-4, 1e-5]), "steps": rng.randint(100, 5000)},
    }
    return schema, ref, {"field": None, "bad_type": ("model", "huge")}


SHAPES = (person, order, event, tags, config)


def completion(kind: str, ref: dict, info: dict, rng: random.Random) -> str | None:
    text = json.dumps(ref)
    if kind == "right":
        return text
    if kind == "reformatted":
        return json.dumps(dict(reversed(list(ref.items()))), indent=2)
    if kind == "wrong value":  # schema-valid, not the reference
        other = json.loads(text)
        key = next(iter(other))
        other[key] = other[key] + "x" if isinstance(other[key], str) else other[key]
        if key == "model":
            other[key] = "small" if ref[key] != "small" else "base"
        if key == "tags":
            other[key] = other[key][:-1]
        if key == "order_id":
            other[key] = "ORD-" + f"{(int(ref[key][4:]) + 1) % 10000:04d}"
        return json.dumps(other)
    if kind == "schema violation":
        field, bad = info["bad_type"]
        return json.dumps({**ref, field: bad})
    if kind == "extra key":
        return json.dumps({**ref, "note": "also possible: something else"})
    if kind == "trailing comma":
        return text[:-1] + ", }"
    if kind == "second value":
        return text + "\n" + text
    if kind == "duplicate key":
        key = next(iter(ref))
        return "{" + json.dumps(key) + ': "decoy", ' + text[1:]
    if kind == "NaN":
        return text[:-1] + ', "score": NaN}'
    if kind == "format violation":
        if info.get("field") is None:
            return None
        return json.dumps({**ref, info["field"]: info["bad_format"]})
    raise ValueError(kind)


def generate(n: int, seed: int) -> tuple[list[dict], list[dict]]:
    """``n`` rows (schema, reference, completion, kind) and the (schema, reference) pairs behind them."""
    rng = random.Random(seed)
    rows: list[dict] = []
    tasks: list[dict] = []
    while len(rows) < n:
        shape = SHAPES[len(tasks) % len(SHAPES)]
        schema, ref, info = shape(rng)
        tasks.append(
            {
                "id": f"t{len(tasks):04d}",
                "prompt": f"Give the {shape.__name__} as JSON.",
                "schema": schema,
                "reference": ref,
                "known_good": json.dumps(ref),
            }
        )
        for kind in KINDS:
            text = completion(kind, ref, info, rng)
            if text is not None and len(rows) < n:
                rows.append(
                    {
                        "prompt": tasks[-1]["prompt"],
                        "completion": text,
                        "schema": schema,
                        "reference": ref,
                        "kind": kind,
                    }
                )
    return rows, tasks


def reference_valid(rows: list[dict]) -> tuple[list[bool], float]:
    from jsonschema import Draft202012Validator

    start = time.perf_counter()
    out = []
    for row in rows:
        try:
            value = json.loads(row["completion"])
        except ValueError:
            out.append(False)
            continue
        out.append(bool(Draft202012Validator(row["schema"]).is_valid(value)))
    return out, time.perf_counter() - start


def ours(rows: list[dict], spec: dict[str, Any], batch: int = 256) -> tuple[list[Any], float, float]:
    """Our verdicts on ``rows``, the seconds they took and the start-up (imports, a warm pool) before."""
    from rewardsmith.verifiers import Sample, build

    verifier = build(spec)
    start = time.perf_counter()
    verifier.verify_batch([Sample.from_row(rows[0])])  # imports jsonschema in this process
    if spec.get("workers") != 0:
        from rewardsmith.verifiers.pool import shared_pool

        pool = shared_pool(spec.get("workers"))
        pool.start()
        right = [verifier._item(Sample.from_row(r)) for r in rows if r["kind"] == "right"]
        pool.map(verifier.task, right[:64], 30)
    warm = time.perf_counter() - start
    start = time.perf_counter()
    verdicts = []
    for i in range(0, len(rows), batch):
        verdicts += verifier.verify_batch([Sample.from_row(r) for r in rows[i : i + batch]])
    return verdicts, time.perf_counter() - start, warm


def best_of_runs(results: list[tuple[Any, float, float]]) -> tuple[Any, float, float]:
    """The last run's result, the fastest time (the machine is shared: the least disturbed run is the
    one to compare) and the first run's start-up."""
    return results[-1][0], min(r[1] for r in results), results[0][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="rounds; each side's fastest is reported")
    parser.add_argument("--write-rows", default=None, help="also write the (schema, reference) rows for the audit")
    args = parser.parse_args()
    rows, tasks = generate(args.rows, args.seed)
    if args.write_rows:
        with open(args.write_rows, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(task) + "\n" for task in tasks)
        print(f"wrote {len(tasks)} rows to {args.write_rows}")

    spec = {"type": "json", "reference_field": None, "workers": args.workers}
    runs: dict[str, list[tuple[Any, float, float]]] = defaultdict(list)
    for _ in range(args.repeat):  # rounds, so that a busy spell on the shared machine hits every side
        runs["reference"].append((*reference_valid(rows), 0.0))
        runs["pool"].append(ours(rows, spec))
        runs["full"].append(ours(rows, {"type": "json", "workers": args.workers}))
        runs["here"].append(ours(rows, {"type": "json", "reference_field": None, "workers": 0}))
    ref_valid, ref_s, _ = best_of_runs(runs["reference"])
    verdicts, our_s, warm_s = best_of_runs(runs["pool"])
    our_valid = [v.score == 1.0 for v in verdicts]
    full, full_s, _ = best_of_runs(runs["full"])
    here, here_s, _ = best_of_runs(runs["here"])
    assert [v.score for v in here] == [v.score for v in verdicts], "in-process and pool verdicts differ"

    n = len(rows)
    isolated = sum(1 for r in rows if "pattern" in json.dumps(r["schema"]) or "uniqueItems" in json.dumps(r["schema"]))
    print(f"{n} rows ({isolated} with a costly schema, validated in the pool), seed {args.seed}")
    print(f"reference  json.loads + Draft202012Validator(schema).is_valid: {n / ref_s:8.0f} rows/s  ({ref_s:.2f} s)")
    print(
        f"ours       json, schema only (batch path, warm pool):           {n / our_s:8.0f} rows/s  ({our_s:.2f} s)"
        f"  speed vs reference {ref_s / our_s:.2f}x   [start-up {warm_s:.2f} s]"
    )
    print(f"ours       json, schema + reference (the default spec):         {n / full_s:8.0f} rows/s  ({full_s:.2f} s)")
    print(
        f"ours       json, schema only, workers: 0 (in-process, no limit): {n / here_s:8.0f} rows/s  ({here_s:.2f} s)"
        f"  speed vs reference {ref_s / here_s:.2f}x"
    )
    statuses = Counter(v.status for v in verdicts)
    print(f"statuses (schema only): {dict(statuses)}")

    agree = sum(a == b for a, b in zip(ref_valid, our_valid, strict=True))
    print(f"\nvalidity agreement: {agree}/{n} = {agree / n:.1%}")
    plain = [(a, b) for row, a, b in zip(rows, ref_valid, our_valid, strict=True) if row["kind"] not in BY_DESIGN]
    print(
        f"  on the kinds where both read the same rules (all but {', '.join(BY_DESIGN)}): "
        f"{sum(a == b for a, b in plain)}/{len(plain)} = {sum(a == b for a, b in plain) / len(plain):.1%}"
    )
    by_kind: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for row, a, b in zip(rows, ref_valid, our_valid, strict=True):
        by_kind[row["kind"]].append((a, b))
    print(f"{'kind':<18} {'rows':>5} {'ref valid':>9} {'ours valid':>10} {'agree':>7} {'ours paid (default)':>20}")
    paid_default = defaultdict(int)
    for row, verdict in zip(rows, full, strict=True):
        paid_default[row["kind"]] += verdict.score == 1.0
    for kind in KINDS:
        pairs = by_kind.get(kind, [])
        if not pairs:
            continue
        print(
            f"{kind:<18} {len(pairs):>5} {sum(a for a, _ in pairs):>9} {sum(b for _, b in pairs):>10} "
            f"{sum(a == b for a, b in pairs) / len(pairs):>7.1%} {paid_default[kind]:>20}"
        )
    print(
        "\nwhere they differ, ours is right by design: a duplicate key is two answers (the reference keeps the "
        "last),\nNaN is not JSON (json.loads accepts it), and 'format' is asserted (jsonschema only annotates it "
        "by default)."
    )


if __name__ == "__main__":
    main()
