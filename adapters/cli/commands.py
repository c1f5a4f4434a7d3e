"""The ``rewardsmith`` command line. Each subcommand is a thin layer over the library."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rewardsmith.adapters.cli.common import Parser, _fail, _say, logger
from rewardsmith.adapters.console import show_logs
from rewardsmith.verifiers.wording import plural

DESCRIPTION = """\
rewardsmith: rewards that RL training can trust.

One reward spec (a registry name such as `math`, or a YAML/JSON file composing
verifiers) scores completions offline and serves every trainer adapter alike.
"""

SCORE_EPILOG = """\
input rows need `prompt`, `completion` and the fields the reward reads
(`answer` for `math`). Columns under other names are mapped with --field:
  --field answer=solution --field completion=response
  --field answer=reward_model.ground_truth    (a dotted path into a nested column)
A row without a completion or without a field the reward reads is
invalid_input (reward 0), and a warning names the missing field when most of a
batch is. Output rows keep every input field and add `reward` (null when the
status is `error`) and `verdict` (status, correct, score, feedback, details,
line). A malformed line is reported with its number and written through with
status=invalid_input; the rest is scored.

formats, by name: INPUT  JSON lines (.jsonl or any other name; - reads stdin),
  gzip'd (.gz), .json (a JSON array of objects, or JSON lines), .parquet, or a
  folder written by datasets' save_to_disk (--split picks a DatasetDict's split).
  OUTPUT  .jsonl (or any other name), .parquet, .jsonl.gz, .json (an array), or
  - for stdout. Non-JSONL outputs are scored into OUTPUT.part.jsonl and
  converted when every row is in; parquet stores verdict.details, .components
  and .parts as JSON text (rewardsmith reads them back as objects).

Rerunning on the same OUTPUT resumes: rows already written are skipped, so a
killed job rerun yields exactly one output row per input row. OUTPUT.rewardsmith.json
records the job (the input's path, size and content fingerprint, the spec's
fingerprint, --field and --split); a rerun with another input, spec or mapping is
refused with what differs: start over with --overwrite, or use another -o.
stdin, stdout and pipes cannot be resumed. --retry-errors rescores only the rows
whose status is `error` (an outage, not the completion's doing) and rewrites
OUTPUT atomically, every other row as it was.

exit status:
  0    done (status=error rows are counted, and a hint names --retry-errors)
  2    bad arguments, an unreadable input, an unusable OUTPUT, a refused resume
  3    every row is malformed or invalid_input: nothing was judged
  4    --fail-on STATUS or --max-error-rate tripped
  5    a scored row could not be written (a full disk; a field name parquet cannot hold):
       the message names its input line; the rows before it are kept
  130  interrupted (Ctrl-C); the rows written are kept: rerun to resume. A SIGINT that was
       already ignored when rewardsmith started (a `&` job of a script, nohup) stays
       ignored: stop such a job with SIGTERM, which a rerun also resumes from
  141  the reader of the output stream went away (e.g. `| head`)

--backend ray runs the same job on Ray actors (a local instance, or a cluster with
--ray-address auto) and writes the same OUTPUT row for row.

examples:
  rewardsmith score data/math_examples.jsonl -o scored.jsonl
  rewardsmith score rollouts.parquet -o scored.parquet --reward data/reward.yaml --workers 8
  rewardsmith score verl_data/ --split test -o scored.jsonl \\
      --field answer=reward_model.ground_truth --field completion=response
  cat rows.jsonl | rewardsmith score - -o - --no-progress | jq .reward
"""

CALIBRATE_EPILOG = """\
FIELD is a column name or a dotted path into nested objects
(`verdict.details.confidence`, `verdict.correct`, `meta.scores.0`). The
probability must be a number in [0, 1]; the label true/false or 0/1. Rows where
either is missing or null (or unusable) are skipped, counted and reported.

Bins follow scikit-learn's calibration_curve: `uniform` = equal width on [0, 1],
`quantile` = equal mass (edges at the quantiles of the predictions); bins are
right-closed. ECE = sum over bins of (bin count / n) * |observed - mean predicted|;
MCE = the largest such gap; Brier = mean (p - label)^2; AUROC rank-based (ties = 1/2).

DIR gets metrics.json, reliability.csv (one row per bin) and reliability.png
(reliability diagram over a histogram of the predictions). Needs numpy and
matplotlib: pip install 'rewardsmith[plots]'.

examples:
  rewardsmith score data/calibration_examples.jsonl -o scored.jsonl --reward data/brier.yaml
  rewardsmith calibrate scored.jsonl --prob verdict.details.confidence --label verdict.correct -o report/
"""


SERVE_EPILOG = """\
routes:
  POST /get_reward  OpenRLHF remote reward: {"query": [...], "prompts": [...], "labels": [...]}
                    -> {"rewards": [...], "scores": [...], "extra_logs": {...}}
                    (response = query minus its prompt, or minus the tail of a prompt
                    OpenRLHF cut to fit; labels fill --label-field, a JSON object label
                    is spread into fields)
  POST /v1/score    {"samples": [{"prompt", "completion", ...fields}]} -> {"verdicts", "rewards"}
  GET  /health, GET /metrics (Prometheus text; totals over every --workers process)

extra_logs: status_<status> per row; `correct` and `component/<part>` (nested
parts as dotted paths, e.g. component/gsm8k.math) each with a `<key>/present`
mask, 1 where the row has that value and 0 where it does not (a route not taken,
a gate not passed): OpenRLHF logs plain means, so the mean over the rows that
have it is mean(<key>) / mean(<key>/present).

Concurrent requests are merged into one verify_batch: the requests that arrive
while a batch is scored form the next one (up to --max-batch samples). The math
worker pool is warm before the first request is accepted. Each request is logged
(rows, invalid_input, error, latency) at --log-level info; a batch mostly
invalid_input is warned about once, naming the missing field and the fix.
SIGINT/SIGTERM finish in-flight requests.

Authentication: with --token-file FILE (or $REWARDSMITH_SERVER_TOKEN; not both)
every route but /health needs the header 'Authorization: Bearer <token>' (401
otherwise). Bound beyond loopback without a token, serve warns what is exposed.

examples:
  rewardsmith serve --reward math --port 8000
  # OpenRLHF 0.11.2: --reward.remote_url http://127.0.0.1:8000/get_reward --data.label_key answer
  python -c 'import secrets; print(secrets.token_urlsafe(32))' > token && chmod 600 token
  rewardsmith serve --reward data/reward.yaml --host 0.0.0.0 --token-file token --workers 2
  curl -H "Authorization: Bearer $(cat token)" http://HOST:8000/v1/score -d '{"samples": [...]}'
  # OpenRLHF sends no headers: a client file that sends the token
  rewardsmith export openrlhf --url http://HOST:8000 --token-file token -o reward_func.py
  # OpenRLHF 0.11.2: --reward.remote_url reward_func.py --data.label_key answer
"""

EXPORT_EPILOG = """\
The written file exposes reward_func(queries, prompts, labels, **kwargs),
returning the same dict as the server's /get_reward (as torch tensors).
OpenRLHF loads it by path. Without --url it imports rewardsmith and builds the
embedded spec once (scoring in the trainer's process); with --url it posts to a
running `rewardsmith serve` (standard library only), sending the bearer token
read at call time from --token-file's path or $REWARDSMITH_SERVER_TOKEN: the
token itself is never written into the file.

  rewardsmith export openrlhf --reward math -o reward_func.py
  # OpenRLHF 0.11.2: --reward.remote_url reward_func.py --data.label_key answer
  rewardsmith export openrlhf --url http://HOST:8000 --token-file /path/to/token -o reward_func.py
  # OpenRLHF 0.11.2: --reward.remote_url reward_func.py --data.label_key answer
"""


VERIFIERS_EPILOG = """\
A spec names a verifier by its `type` and sets its options; nested specs (parts,
when/then, routes, correctness, rule/judge) take the same form. A mistake is
reported with where it is in the spec and the closest valid name, e.g.
  routes.gsm8k.then.answer_feild: unknown option 'answer_feild'; did you mean 'answer_field'?

examples:
  rewardsmith verifiers
  rewardsmith verifiers math
  rewardsmith verifiers route --json
  rewardsmith score rows.jsonl -o scored.jsonl --reward '{"type": "math", "timeout_s": 2}'
"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="rewardsmith", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action=_Version, help="print the installed rewardsmith version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="what to do; `rewardsmith COMMAND --help` for its flags")

    score = sub.add_parser(
        "score",
        help="score a file of completions (JSONL, JSON, parquet, datasets folder) with a reward spec",
        description="Score completions offline with a reward spec.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("input", help="rows: JSONL (- for stdin), .gz, .json, .parquet, or a datasets folder "
                       "(save_to_disk); see formats below")
    score.add_argument("-o", "--output", required=True,
                       help="where to write: .jsonl (resumed if it exists), .parquet, .jsonl.gz, .json, "
                       "or - for stdout (no resume)")
    score.add_argument("--reward", default="math", metavar="SPEC",
                       help="registry name (see `rewardsmith verifiers`), YAML/JSON spec file, or inline JSON "
                       "such as '{\"type\": \"math\", \"timeout_s\": 2}' (default: math)")
    score.add_argument("--field", action="append", default=[], metavar="FIELD=COLUMN",
                       help="read sample field FIELD from COLUMN (a name or dotted path, e.g. "
                       "answer=reward_model.ground_truth); repeatable")
    score.add_argument("--split", default=None, metavar="NAME",
                       help="the split to score of a datasets folder holding a DatasetDict (needed when it has "
                       "several)")
    score.add_argument("--limit", type=int, default=None, metavar="N",
                       help="score only the first N input rows (a later run without it resumes from there)")
    score.add_argument("--workers", type=int, default=None, metavar="N",
                       help="worker processes for verifiers with a pool (default: the CPUs this process may use)")
    score.add_argument("--batch-size", type=int, default=256, metavar="N",
                       help="rows per batch; each batch is written and synced before the next (default: 256)")
    score.add_argument("--overwrite", action="store_true",
                       help="discard an existing OUTPUT (and its job record) instead of resuming it")
    score.add_argument("--retry-errors", action="store_true",
                       help="rescore only the rows of an existing OUTPUT whose status is error (same input and "
                       "spec required), rewriting it atomically; then finish any rows not yet scored")
    score.add_argument("--fail-on", action="append", default=[], metavar="STATUS",
                       choices=["error", "timeout", "no_answer", "invalid_input"],
                       help="exit 4 when any row has this status (error, timeout, no_answer, invalid_input); "
                       "repeatable")
    score.add_argument("--max-error-rate", type=float, default=None, metavar="R",
                       help="exit 4 when more than this fraction (0-1) of the rows have status=error")
    score.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    score.add_argument("--summary-json", type=Path, metavar="FILE", help="also write the summary as JSON")
    score.add_argument("--backend", choices=["local", "ray"], default="local",
                       help="local: this machine (default); ray: the same job on Ray actors, same output")
    score.add_argument("--ray-address", default=None, metavar="ADDR",
                       help="with --backend ray: 'auto' or ray://HOST:10001 to join a cluster "
                       "(default: start a local Ray instance); ignored otherwise")
    score.set_defaults(handler=_score)

    calibrate = sub.add_parser(
        "calibrate",
        help="calibration report (Brier, ECE, AUROC, reliability diagram) of confidences vs correctness",
        description="How well do stated confidences match being right? Writes metrics, a per-bin table "
        "and a reliability diagram, and prints a summary.",
        epilog=CALIBRATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    calibrate.add_argument("input", type=Path, help="JSONL or parquet file of rows (e.g. the output of `score`)")
    calibrate.add_argument("--prob", default="verdict.details.confidence", metavar="FIELD",
                           help="field with the predicted probability (default: verdict.details.confidence, "
                           "what the brier reward records)")
    calibrate.add_argument("--label", default="verdict.correct", metavar="FIELD",
                           help="field with the 0/1 outcome (default: verdict.correct)")
    calibrate.add_argument("-o", "--output", type=Path, required=True, metavar="DIR",
                           help="report folder to write (created if needed)")
    calibrate.add_argument("--bins", type=int, default=10, metavar="N", help="number of bins (default: 10)")
    calibrate.add_argument("--strategy", choices=["uniform", "quantile"], default="uniform",
                           help="uniform: equal-width bins; quantile: equal-mass bins (default: uniform)")
    calibrate.add_argument("--no-plot", action="store_true", help="skip reliability.png (no matplotlib needed)")
    calibrate.set_defaults(handler=_calibrate)

    from rewardsmith.adapters.on_error import NO_MISSING

    serve = sub.add_parser(
        "serve",
        help="serve a reward spec over HTTP (OpenRLHF /get_reward, native /v1/score, /health, /metrics)",
        description="Run the reward server for one reward spec.",
        epilog=SERVE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--reward", default="math", metavar="SPEC",
                       help="registry name, YAML/JSON spec file or inline JSON object (default: math)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, loopback only)")
    serve.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    serve.add_argument("--workers", type=int, default=1, metavar="N",
                       help="server processes (uvicorn workers), each with its own verifier (default: 1)")
    serve.add_argument("--max-batch", type=int, default=256, metavar="N",
                       help="most samples merged into one verify_batch (default: 256)")
    serve.add_argument("--batch-window-ms", type=float, default=0.0, metavar="MS",
                       help="when the verifier is idle, how long a request waits for others to join its batch "
                       "(default: 0; requests that arrive while a batch is scored are batched anyway)")
    serve.add_argument("--max-body-mb", type=float, default=32.0, metavar="N",
                       help="request body limit in MiB, checked before parsing; larger gets 413 (default: 32)")
    serve.add_argument("--timeout-s", type=float, default=60.0, metavar="N",
                       help="per-request deadline in seconds; slower gets 504 (default: 60)")
    serve.add_argument("--max-queue", type=int, default=256, metavar="N",
                       help="requests admitted per worker (queued or scoring); more get 503 + Retry-After "
                       "(default: 256)")
    serve.add_argument("--label-field", default="answer", metavar="FIELD",
                       help="sample field that OpenRLHF's labels (--data.label_key) fill (default: answer)")
    serve.add_argument("--on-error", choices=NO_MISSING, default="zero",
                       help="/get_reward, status=error verdicts (an outage, never the completion's doing): "
                       "reward 0 and counted in extra_logs status_error (zero, default), or answer 500 (raise; "
                       "OpenRLHF 0.11.2 retries, then logs it and leaves that row without a reward). "
                       "OpenRLHF cannot take a missing reward, so there is no 'none'")
    serve.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                       help="info (default) logs one line per request; warning keeps only warnings")
    serve.add_argument("--token-file", default=None, metavar="FILE",
                       help="require 'Authorization: Bearer <token>' on every route but /health, the token read "
                       "from FILE (or set $REWARDSMITH_SERVER_TOKEN; not both). Default: no token")
    serve.set_defaults(handler=_serve)

    export = sub.add_parser(
        "export",
        help="write a trainer hook file for a reward spec (openrlhf: reward_func.py)",
        description="Write a file a trainer loads in-process instead of calling the server.",
        epilog=EXPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument("target", choices=["openrlhf"], help="trainer to export for")
    export.add_argument("--reward", default=None, metavar="SPEC",
                        help="registry name, YAML/JSON spec file or inline JSON object, embedded in the file "
                        "(default: math; not with --url, where the server's spec applies)")
    export.add_argument("-o", "--output", type=Path, default=Path("reward_func.py"), help="file to write")
    export.add_argument("--label-field", default=None, metavar="FIELD",
                        help="sample field that OpenRLHF's labels fill (default: answer; not with --url)")
    export.add_argument("--on-error", choices=NO_MISSING, default=None,
                        help="status=error verdicts: reward 0 and counted in extra_logs status_error (zero, "
                        "default), or raise RewardError in reward_func (raise); not with --url")
    export.add_argument("--url", default=None, metavar="URL",
                        help="write a client of the reward server at URL (http://HOST:PORT) instead of "
                        "embedding the spec")
    export.add_argument("--token-file", default=None, metavar="FILE",
                        help="with --url: the file the client reads the bearer token from at each call "
                        "(default: $REWARDSMITH_SERVER_TOKEN at call time, if set)")
    export.set_defaults(handler=_export)

    listing = sub.add_parser(
        "verifiers",
        help="list the verifiers, or one verifier's options",
        description="Without NAME: every verifier a spec can name (built-ins and installed plugins).\n"
        "With NAME: that verifier's options, each with its type, default and what it does.",
        epilog=VERIFIERS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument("name", nargs="?", metavar="NAME", help="a verifier name, e.g. math or route")
    listing.add_argument("--json", action="store_true",
                         help="print JSON instead: name, doc, options and the JSON Schema of its spec object "
                         "(a list of them without NAME)")
    listing.set_defaults(handler=_list_verifiers)

    gym = sub.add_parser(
        "gym",
        help="write rows made by a reasoning-gym generator, for the reasoning_gym reward",
        description="Write SIZE rows of the reasoning-gym dataset NAME as JSONL: prompt, answer and metadata, "
        "what the reasoning_gym reward reads. Needs reasoning-gym (pip install 'rewardsmith[gym]').",
    )
    gym.add_argument("name", metavar="NAME", help="a reasoning-gym dataset, e.g. chain_sum or maze")
    gym.add_argument("--size", type=int, default=100, help="rows to write (default: 100)")
    gym.add_argument("--seed", type=int, default=0, help="generator seed (default: 0)")
    gym.add_argument("--config", default=None, metavar="JSON",
                     help="the generator's options as a JSON object, e.g. '{\"max_value\": 5}' (kept in each row)")
    gym.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: stdout)")
    gym.set_defaults(handler=_gym)

    sandbox = sub.add_parser("sandbox", help="inspect the code sandbox")
    sandbox_sub = sandbox.add_subparsers(dest="sandbox_command", required=True, metavar="ACTION",
                                        help="what to check")
    doctor = sandbox_sub.add_parser(
        "doctor",
        help="check the Docker engine, the image and every limit with a self-test",
        description="Check that untrusted code can be run safely here: the Docker engine, the sandbox "
        "image, and each limit (time, memory, output, read-only root, network, leftover processes) "
        "by running a real job against it; the local backend too. Says what to do when something fails.",
    )
    doctor.add_argument("--backend", choices=["docker", "local", "all"], default="all",
                        help="which sandbox backend to check (default: all)")
    doctor.set_defaults(handler=_doctor)

    from rewardsmith.adapters.cli.audit import add_parser as add_audit
    from rewardsmith.adapters.cli.reward_models import add_parsers

    add_parsers(sub)
    add_audit(sub)
    return parser


def _score(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.fields import parse_field_map
    from rewardsmith.adapters.scoring.job import Interrupted, OutputClosed, WriteError, format_summary, score_file
    from rewardsmith.adapters.scoring.outputs import OutputError, resolve_target
    from rewardsmith.adapters.scoring.provenance import ResumeError
    from rewardsmith.adapters.scoring.rows import InputError, open_source
    from rewardsmith.verifiers import SpecError, build
    from rewardsmith.verifiers.pool import set_default_workers
    from rewardsmith.verifiers.registry import load_spec

    for name in ("workers", "batch_size", "limit"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            return _fail(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_error_rate is not None and not 0.0 <= args.max_error_rate <= 1.0:
        return _fail("--max-error-rate is a fraction of the rows, between 0 and 1")
    if args.overwrite and args.retry_errors:
        return _fail("--overwrite discards OUTPUT and --retry-errors rescores part of it: choose one")
    if args.summary_json is not None and not args.summary_json.parent.is_dir():
        return _fail(f"the folder of --summary-json {str(args.summary_json)!r} does not exist")
    try:
        fields = parse_field_map(args.field)
        source, target = open_source(args.input, args.split), resolve_target(args.output)
    except (ValueError, InputError, OutputError) as exc:
        return _fail(str(exc))
    try:
        spec = load_spec(args.reward)
        verifier = build(spec)
    except SpecError as exc:
        return _fail(f"bad --reward: {exc}")
    set_default_workers(args.workers)
    if args.backend == "local":
        verifier.start()  # the workers import sympy & co. while this process reads the input
    options = {"batch_size": args.batch_size, "progress": not args.no_progress, "overwrite": args.overwrite,
               "fields": fields, "split": source.split, "limit": args.limit, "retry_errors": args.retry_errors,
               "reward_name": args.reward}
    try:
        if args.backend == "ray":
            from rewardsmith.adapters.scoring.ray import score_file_ray

            summary = score_file_ray(args.input, args.output, spec, address=args.ray_address,
                                     cpus_per_actor=args.workers or 1, **options)
        else:
            summary = score_file(args.input, args.output, spec, verifier=verifier, **options)
    except Interrupted as exc:
        _say(f"rewardsmith: {exc}")
        return 130
    except OutputClosed:
        _quiet_stdout()
        return 141
    except WriteError as exc:
        _say(f"rewardsmith: cannot write {args.output}: {exc}")
        return 5
    except (InputError, OutputError, ResumeError, RuntimeError, ValueError) as exc:
        return _fail(str(exc))
    report = sys.stderr if target.stream else sys.stdout  # a stream OUTPUT may be this stdout
    print(format_summary(summary, f"scored {args.input} -> {args.output} (reward: {args.reward})"), file=report)
    if args.summary_json:
        args.summary_json.write_text(json.dumps(summary.as_dict(), indent=2) + "\n")
    return _score_status(summary, args.fail_on, args.max_error_rate, resumable=not target.stream)


def _score_status(summary: object, fail_on: list[str], max_error_rate: float | None, resumable: bool) -> int:
    """The exit status of a finished job (see SCORE_EPILOG), with its one-line reason on stderr."""
    from rewardsmith.adapters.scoring.job import Summary

    assert isinstance(summary, Summary)
    retry = " (rerun with --retry-errors to rescore only those rows)" if resumable else ""
    if summary.rows == 0:
        logger.error("the input has no rows")
        return 3
    if summary.invalid == summary.rows:
        lacking = summary.missing.most_common(1)
        hint = (f"; {lacking[0][1]} lack {lacking[0][0]!r}: map it with --field {lacking[0][0]}=<your column>"
                if lacking else "")
        every = "the only row is" if summary.rows == 1 else f"all {summary.rows} rows are"
        logger.error(f"{every} malformed or invalid_input, so nothing was judged{hint}")
        return 3
    for status in fail_on:
        if summary.statuses[status]:
            found = summary.statuses[status]
            logger.error(f"--fail-on {status}: {found} of {plural(summary.rows, 'row')} {_has(found)} "
                         f"status={status}" + (retry if status == "error" else ""))
            return 4
    if max_error_rate is not None and summary.errors / summary.rows > max_error_rate:
        logger.error(f"{summary.errors} of {plural(summary.rows, 'row')} {_has(summary.errors)} status=error, more "
                     f"than --max-error-rate {max_error_rate}{retry}")
        return 4
    if summary.errors:
        _say(f"rewardsmith: {plural(summary.errors, 'row has', 'rows have')} status=error (reward null){retry}")
    return 0


def _has(n: int) -> str:
    """The verb after "1 of 3 rows" (has) or "2 of 3 rows" (have)."""
    return "has" if n == 1 else "have"


def _quiet_stdout() -> None:
    """The reader of stdout left (``| head``): point fd 1 at /dev/null so the exit flush stays quiet."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _calibrate(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.reports.calibration import calibrate, format_report

    if not args.input.exists():
        return _fail(f"input file {str(args.input)!r} does not exist")
    if args.bins < 1:
        return _fail("--bins must be at least 1")
    try:
        report = calibrate(args.input, args.output, args.prob, args.label, args.bins, args.strategy,
                           plot=not args.no_plot)
    except ImportError as exc:
        return _fail(f"calibrate needs numpy and matplotlib ({exc}): pip install 'rewardsmith[plots]'")
    except (ValueError, RuntimeError) as exc:
        return _fail(str(exc))
    print(format_report(report, f"calibration of {args.input} (prob: {args.prob}, label: {args.label})"))
    written = ["metrics.json", "reliability.csv"] + ([] if args.no_plot else ["reliability.png"])
    print(f"wrote {', '.join(str(args.output / name) for name in written)}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    from rewardsmith.verifiers import SpecError, build
    from rewardsmith.verifiers.registry import load_spec

    for name in ("port", "workers", "max_batch", "max_queue"):
        if getattr(args, name) < 1:
            return _fail(f"--{name.replace('_', '-')} must be at least 1")
    if args.max_body_mb <= 0 or args.timeout_s <= 0 or args.batch_window_ms < 0:
        return _fail("--max-body-mb and --timeout-s must be positive, --batch-window-ms not negative")
    try:
        spec = load_spec(args.reward)
        build(spec)
    except SpecError as exc:
        return _fail(f"bad --reward: {exc}")
    try:
        from rewardsmith.adapters.serve.auth import TokenError, load_token, token_source
        from rewardsmith.adapters.serve.reward_server import BindError, ServerConfig, serve
    except ImportError as exc:
        return _fail(f"serve needs uvicorn and prometheus_client ({exc}): pip install 'rewardsmith[serve]'")
    try:
        token_file, from_env = token_source(args.token_file)
        load_token(token_file, from_env)  # a bad token fails here, before anything starts
    except TokenError as exc:
        return _fail(str(exc))
    config = ServerConfig(reward=spec, max_batch=args.max_batch, batch_window_ms=args.batch_window_ms,
                          max_body_mb=args.max_body_mb, timeout_s=args.timeout_s, max_queue=args.max_queue,
                          label_field=args.label_field, on_error=args.on_error,
                          token_file=str(Path(token_file).resolve()) if token_file else None, token_from_env=from_env)
    try:
        serve(config, host=args.host, port=args.port, workers=args.workers, log_level=args.log_level)
    except BindError as exc:
        return _fail(str(exc))
    return 0


def _export(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.trainers.openrlhf import export_client_source, export_source
    from rewardsmith.verifiers import SpecError, build
    from rewardsmith.verifiers.registry import load_spec

    if args.url is not None:
        given = [flag for flag, value in (("--reward", args.reward), ("--label-field", args.label_field),
                                          ("--on-error", args.on_error)) if value is not None]
        if given:
            return _fail(f"{', '.join(given)} set(s) what the server does: pass it to `rewardsmith serve`, not "
                         "to an export with --url")
        try:
            source = export_client_source(args.url, args.token_file, args.output.name)
        except ValueError as exc:
            return _fail(str(exc))
        args.output.write_text(source)
        print(f"wrote {args.output}, a client of {args.url}; OpenRLHF: --reward.remote_url {args.output} "
              "--data.label_key <your label column>")
        return 0
    if args.token_file is not None:
        return _fail("--token-file goes with --url (the client sends the token); without --url the file scores "
                     "in-process and calls no server")
    try:
        spec = load_spec(args.reward or "math")
        build(spec)
    except SpecError as exc:
        return _fail(f"bad --reward: {exc}")
    args.output.write_text(export_source(spec, args.label_field or "answer", args.on_error or "zero",
                                         args.output.name))
    print(f"wrote {args.output}; OpenRLHF: --reward.remote_url {args.output} --data.label_key <your label column>")
    return 0


def _gym(args: argparse.Namespace) -> int:
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    if args.size < 1:
        return _fail("--size must be at least 1")
    try:
        config = json.loads(args.config) if args.config else {}
    except json.JSONDecodeError as exc:
        return _fail(f"--config is not JSON: {exc}")
    if not isinstance(config, dict):
        return _fail("--config must be a JSON object of the generator's options")
    try:
        rows = make_rows(args.name, size=args.size, seed=args.seed, **config)
    except ImportError:
        return _fail("reasoning-gym is not installed: pip install 'rewardsmith[gym]'")
    except (ValueError, KeyError, TypeError, AssertionError) as exc:  # an unknown dataset, a refused option
        return _fail(f"cannot make rows of {args.name!r}: {type(exc).__name__}: {exc}")
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)
        _say(f"wrote {plural(len(rows), 'row')} of {args.name} to {args.output}")
    return 0


def _list_verifiers(args: argparse.Namespace) -> int:
    from rewardsmith.verifiers.options import describe, format_options
    from rewardsmith.verifiers.registry import SpecError, available, get_factory

    if args.name is not None:
        try:
            factory = get_factory(args.name)
        except SpecError as exc:
            return _fail(f"{exc}; `rewardsmith verifiers` lists them")
        print(json.dumps(describe(args.name, factory), indent=2) if args.json else format_options(args.name, factory))
        return 0
    described, lines = [], []
    names = available()
    width = max(map(len, names))  # names line up, and the longest still has a space before its description
    for name in names:
        try:
            factory = get_factory(name)
        except SpecError as exc:  # a broken plugin: say so, list the others
            lines.append(f"{name:{width}} (cannot load: {exc})")
            continue
        described.append(describe(name, factory))
        lines.append(f"{name:{width}} {_first_line(factory)}")
    if args.json:
        print(json.dumps(described, indent=2))
    else:
        print("\n".join([*lines, "", "`rewardsmith verifiers NAME` lists a verifier's options."]))
    return 0


def _first_line(factory: object) -> str:
    import inspect

    return (inspect.getdoc(factory) or "").partition("\n")[0]


class _Version(argparse.Action):
    """``--version``, looked up only when asked (importlib.metadata costs every other command time)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("rewardsmith")
        except PackageNotFoundError:
            found = "unknown (not installed; run pip install -e . in the repository)"
        print(f"rewardsmith {found}")
        parser.exit()


def _doctor(args: argparse.Namespace) -> int:
    from rewardsmith.sandbox.doctor import run_doctor

    backends = ("docker", "local") if args.backend == "all" else (args.backend,)
    checks = run_doctor(backends)
    for check in checks:
        print(f"[{'ok' if check.ok else 'FAIL'}] {check.name}: {check.detail}")
        if check.fix:
            print(f"       -> {check.fix}")
    failed = [c for c in checks if not c.ok]
    print("sandbox: ready" if not failed else f"sandbox: {plural(len(failed), 'problem')}; see the lines marked FAIL")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    show_logs()  # the library logs; the command line shows it on stderr
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except KeyboardInterrupt:  # Ctrl-C before or after the work a handler reports on itself
        _say("rewardsmith: interrupted")
        return 130
    except BrokenPipeError:  # stdout's reader left (`| head`): quiet, as Unix tools are
        _quiet_stdout()
        return 141


if __name__ == "__main__":
    raise SystemExit(main())
