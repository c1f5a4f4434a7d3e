"""``rewardsmith train grpo``: the GRPO loop from the command line (torch loads only when it runs)."""

from __future__ import annotations

import argparse
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
from rewardsmith.adapters.grpo.config import GRPOConfig

EPILOG = """\
data: prompts as JSONL / JSON / parquet / a datasets folder. `prompt` holds text or chat
messages (chat gets the tokenizer's chat template); every other column (answer, tests, ...)
goes to the reward as a field (`columns: {answer: solution}` maps other names). Prompts
longer than max_prompt_length tokens and malformed rows are reported and skipped.

The reward spec is built before the model loads (a typo fails in a second, not after the
download). Each step samples prompts_per_step x num_generations completions, scores them
with the spec, and makes num_iterations updates. A completion whose verdict is
status=error is left out of its group and counted; a step whose every verdict is an error
stops the run (the reward is down; rerun to resume).

OUTPUT_DIR gets log.jsonl (one record per step: reward_mean/std, reward/<part>, pass_rate,
zero_variance_share, informative_share, lengths, clipped_share, kl, entropy, clip_ratio,
sampler_logp_gap_*, time_* and tokens/s; eval_* records), samples.jsonl (completions with
their verdicts), curves.png, checkpoints/step-N (rerun the same command to resume), model/,
result.json. A folder holding a finished run, or one without a checkpoint to resume from, is
refused: --overwrite starts over (removing the old run's files), or pass another -o.
Steps whose groups all got equal rewards teach nothing: after no_signal_warn_after (3) such
steps in a row a warning says why and what to change; the last line gives the share of such
steps and held-out pass@1 before -> after.
Every config key with its default: `rewardsmith train grpo --list-config`.

examples:
  rewardsmith train grpo --model smollm2 --data data/arithmetic_train.jsonl --reward math \\
      --eval-data data/arithmetic_heldout.jsonl --max-steps 40 -o grpo-arith
  rewardsmith train grpo --config grpo.yaml --data prompts.jsonl --reward reward.yaml
"""

FLAGS: tuple[tuple[str, Any, str], ...] = (
    ("--max-steps", int, "steps (batches of rollouts)"), ("--learning-rate", float, "peak learning rate"),
    ("--num-generations", int, "completions per prompt"), ("--prompts-per-step", int, "prompts per step"),
    ("--max-completion-length", int, "new tokens per completion"), ("--temperature", float, "sampling temperature"),
    ("--loss-type", str, "grpo | dr_grpo | dapo | bnpo"), ("--beta", float, "KL weight"),
    ("--num-iterations", int, "updates per batch"), ("--seed", int, "seed"),
    ("--eval-every", int, "evaluate every N steps"), ("--save-every", int, "checkpoint every N steps"),
    ("--micro-batch-size", int, "completions per forward/backward"),
)


def add_parser(kinds: Any) -> None:
    grpo = kinds.add_parser("grpo", help="train a policy with GRPO, rewarded by any reward spec",
                            description="Train a causal LM with GRPO; rewards come from a rewardsmith spec.",
                            epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    grpo.add_argument("--data", default=None, metavar="PROMPTS", help="training prompts")
    grpo.add_argument("--eval-data", default=None, metavar="PROMPTS", help="held-out prompts (pass@1 is measured)")
    grpo.add_argument("--reward", default=None, metavar="SPEC", help="a reward name, a YAML file (default: math)")
    grpo.add_argument("--model", default=None, help="policy model (default: smollm2)")
    grpo.add_argument("--config", type=Path, default=None, help="a YAML file of config keys")
    grpo.add_argument("-o", "--output-dir", default=None, help="where everything goes (default: grpo-out)")
    for flag, kind, text in FLAGS:
        grpo.add_argument(flag, type=kind, default=None, help=text)
    grpo.add_argument("--generator", choices=["hf", "vllm"], default=None, help="sampler (default: hf)")
    grpo.add_argument("--lora", action="store_true", default=None, help="train LoRA adapters (peft)")
    add_run_flags(grpo)
    grpo.set_defaults(handler=run)


def config_from_args(args: argparse.Namespace) -> GRPOConfig:
    names = ["model", "output_dir", "reward", "eval_data", "generator", "lora", *RUN_CONFIG_KEYS,
             *(flag[2:].replace("-", "_") for flag, _, _ in FLAGS)]
    return _config_from_args(args, GRPOConfig, names)


def run(args: argparse.Namespace) -> int:
    from rewardsmith.verifiers import SpecError

    done = _list_or_require_data(args, "train grpo", GRPOConfig, "prompts")
    if done is not None:
        return done
    try:
        config = config_from_args(args)
    except (SpecError, ValueError) as exc:
        return _fail(str(exc))
    from rewardsmith.adapters.grpo.loop import RewardOutage, build_trainer
    from rewardsmith.adapters.scoring.rows import InputError
    from rewardsmith.reward_models.model import ModelLoadError

    try:
        trainer = build_trainer(config, args.data, progress=not args.no_progress)
        result = trainer.run()
    except SpecError as exc:
        return _fail(f"reward spec: {exc}")
    except (ModelLoadError, InputError, RewardOutage) as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return _interrupted(config.output_dir)
    except ValueError as exc:
        return _fail(str(exc))
    _say(f"log: {result.output_dir / 'log.jsonl'}, curves: {result.output_dir / 'curves.png'}"
         + (f", model: {result.model_dir}" if result.model_dir else ""))
    return 0
