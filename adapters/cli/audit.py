"""``rewardsmith audit``: attack a reward spec the way RL will, on the user's own rows."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rewardsmith.adapters.cli.common import _fail, _say

AUDIT_EPILOG = """\
Every row gives a prompt, the fields the spec reads (the gold answer, tests, a
rubric) and, optionally, a known-correct completion (the `reference` column; else
`The answer is \\boxed{GOLD}.`). From each row every family builds completions that
are wrong by construction (attacks) or right by construction (rewrites); all are
scored with build(SPEC).verify_batch, the path every adapter uses.

  hack            an attack paid more than --threshold (default 0: any reward)
  false negative  a rewrite paid less than the row's known-correct completion
  errors          status=error verdicts (an outage, or a probe that forced one:
                  trainers drop error rows, so a policy can learn to cause them)

Rows and columns are read as `score` reads them (any format, --field, dotted
paths, --limit); a malformed row is reported with its line number and the rest
audited. The same command gives the same report (--seed).

--fuzz N adds the fuzzer (the family `fuzz`): N mutations in total, spread over
the rows, of each row's known-correct completion, drawn by hypothesis (seeded by
--seed) from a grammar of edits and composed one to four at a time. Wrong-making
edits state another value W (another row's gold or a perturbed gold, kept only
when the spec pays W stated cleanly nothing) before, after, beside or inside the
answer, in other phrasings, languages, scripts, markup and containers, or hide,
strike, attribute, condition, relabel, script or macro-redefine the answer;
right-preserving edits restyle it (another answer form, emphasis, a sentence of
working, working in another language, white space). A wrong-making mutation paid
above --threshold is a hack; a right-preserving one paid less than the unedited
completion is a false negative. The first flagged ones are shrunk to a minimal
example and printed with their edits. `--families fuzz --fuzz N` runs it alone.

REPORT_DIR gets audit.json (the table with up to three examples per family),
audit.jsonl (every probe and its verdict) and hack_rates.png.

--against SPEC2 compares SPEC with SPEC2 on the rows' own `completion`s instead:
the two-way table of paid/unpaid, the disagreement rate, and SPEC's false-positive
and false-negative rates taking SPEC2 as the reference, with 95% intervals.

exit status: 0 done (hacks are reported; with --fail-on-hacks, 1 when any family
has one); 2 bad arguments or unreadable input.

examples:
  rewardsmith audit --list-families
  rewardsmith audit --reward math --data rows.jsonl --field answer=solution -o audit/
  rewardsmith audit --reward data/reward.yaml --data rows.jsonl --families denial,hedge_after --fail-on-hacks
  rewardsmith audit --reward math --data rollouts.jsonl --against cascade.yaml
  rewardsmith audit --reward choice --data rows.jsonl --families fuzz --fuzz 10000 -o audit/
"""


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "audit",
        help="attack a reward spec with completions wrong (or right) by construction and report what gets paid",
        description="Find reward hacks before RL does: score completions that are wrong by construction "
        "(hedges, denials, echoes, forged verdicts, ...) and rewrites that are right by construction, and "
        "report per family what the spec pays.",
        epilog=AUDIT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--reward", default="math", metavar="SPEC",
                        help="registry name, YAML/JSON spec file or inline JSON (default: math)")
    parser.add_argument("--data", metavar="ROWS", help="rows to build probes from: JSONL, .json, .parquet, .gz, "
                        "a datasets folder (as `score` reads them)")
    parser.add_argument("--field", action="append", default=[], metavar="FIELD=COLUMN",
                        help="read sample field FIELD from COLUMN (e.g. answer=solution); repeatable")
    parser.add_argument("--split", default=None, metavar="NAME", help="the split of a datasets folder")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="audit only the first N rows")
    parser.add_argument("--families", action="append", default=[], metavar="NAMES",
                        help="comma-separated families (or targets: answer, judge, code) to run; default: all")
    parser.add_argument("--per-row", type=int, default=2, metavar="N",
                        help="at most N probes per family and row, drawn with --seed (default: 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default: 0)")
    parser.add_argument("--fuzz", type=int, default=0, metavar="N",
                        help="also run the fuzzer: N mutations in total over the rows (see below; default: 0, off)")
    parser.add_argument("--threshold", type=float, default=0.0, metavar="T",
                        help="an attack scoring above T was paid (default: 0; raise it for specs whose wrong "
                        "answers earn a positive floor)")
    parser.add_argument("--reference-field", default="reference", metavar="COLUMN",
                        help="column with a known-correct completion (default: reference)")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="REPORT_DIR",
                        help="folder for audit.json, audit.jsonl and hack_rates.png")
    parser.add_argument("--fail-on-hacks", action="store_true", help="exit 1 when any family has a hack")
    parser.add_argument("--against", default=None, metavar="SPEC2",
                        help="compare SPEC with SPEC2 on the rows' own completions (see below)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="worker processes for verifiers with a pool (default: the CPUs available)")
    parser.add_argument("--list-families", action="store_true", help="list every family and exit")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument("--no-plot", action="store_true", help="skip hack_rates.png (no matplotlib needed)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.audit.family import all_families, select
    from rewardsmith.adapters.audit.report import family_listing

    if args.list_families:
        print(family_listing(all_families().values()))
        return 0
    if not args.data:
        return _fail("--data ROWS is required (or --list-families)")
    for name in ("limit", "per_row", "workers"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            return _fail(f"--{name.replace('_', '-')} must be at least 1")
    if args.fuzz < 0:
        return _fail("--fuzz must be 0 or more")
    from rewardsmith.adapters.fields import parse_field_map
    from rewardsmith.adapters.scoring.rows import InputError, open_source
    from rewardsmith.verifiers import SpecError, build
    from rewardsmith.verifiers.pool import set_default_workers
    from rewardsmith.verifiers.registry import load_spec

    try:
        fields = parse_field_map(args.field)
        source = open_source(args.data, args.split)
        names = [n for item in args.families for n in item.split(",")]
        select([n for n in names if n.strip() != "fuzz"] or None)
    except (ValueError, InputError) as exc:
        return _fail(str(exc))
    try:
        spec = load_spec(args.reward)
        verifier = build(spec)
        other = build(load_spec(args.against)) if args.against else None
    except SpecError as exc:
        return _fail(f"bad --reward/--against: {exc}")
    set_default_workers(args.workers)
    total = source.count()
    if total is not None and args.limit is not None:
        total = min(total, args.limit)
    rows = source.rows() if args.limit is None else _first(source.rows(), args.limit)
    try:
        if other is not None:
            return _against(args, verifier, other, rows, fields, total)
        return _audit(args, verifier, names, rows, fields, total)
    except InputError as exc:
        return _fail(str(exc))


def _audit(args: argparse.Namespace, verifier: Any, names: list[str], rows: Any, fields: dict[str, str],
           total: int | None) -> int:
    from rewardsmith.adapters.audit.report import RecordWriter, format_table, write_report
    from rewardsmith.adapters.audit.run import audit

    writer = RecordWriter(args.output) if args.output else None
    bar = _bar(None if total is None else total * (2 if args.fuzz else 1), not args.no_progress, "auditing")
    try:
        report = audit(verifier, rows, families=names, per_row=args.per_row, seed=args.seed, fields=fields,
                       threshold=args.threshold, reference_field=args.reference_field, on_record=writer,
                       progress=bar.update if bar is not None else None, fuzz=args.fuzz)
    finally:
        if writer is not None:
            writer.close()
        if bar is not None:
            bar.close()
    report.spec = args.reward
    for malformed in report.malformed:
        _say(f"rewardsmith: line {malformed['line']}: {malformed['error']} (skipped)")
    print(format_table(report))
    if args.output:
        try:
            written = write_report(report, args.output, plot=not args.no_plot)
        except ImportError as exc:
            written = write_report(report, args.output, plot=False)
            _say(f"rewardsmith: no chart ({exc}): pip install 'rewardsmith[plots]'")
        from rewardsmith.adapters.audit.report import RECORDS_JSONL

        print(f"wrote {', '.join(str(p) for p in [*written, args.output / RECORDS_JSONL])}")
    if report.rows == 0:
        return _fail("no row could be audited")
    return 1 if args.fail_on_hacks and report.hacks else 0


def _against(args: argparse.Namespace, verifier: Any, other: Any, rows: Any, fields: dict[str, str],
             total: int | None) -> int:
    from rewardsmith.adapters.audit.against import compare, format_comparison, write_comparison

    bar = _bar(total, not args.no_progress, "comparing")
    try:
        comparison = compare(verifier, other, rows, fields=fields, threshold=args.threshold,
                             progress=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    comparison.spec, comparison.reference_spec = args.reward, args.against
    print(format_comparison(comparison))
    if args.output:
        print(f"wrote {write_comparison(comparison, args.output)}")
    return 0 if comparison.rows else _fail("no row could be compared")


def _first(rows: Any, limit: int) -> Any:
    from itertools import islice

    return islice(rows, limit)


def _bar(total: int | None, enabled: bool, desc: str) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="row", desc=desc, file=sys.stderr, dynamic_ncols=True)


