"""Every switch of ``rewardsmith train grpo``, declared once (type, default, one line of why).

Names follow TRL's ``GRPOConfig`` where TRL has the switch, so a config moves between the two;
two differences are on purpose: a *step* here is one batch of rollouts, which makes
``num_iterations`` optimizer updates (TRL's ``max_steps`` counts updates: ours × num_iterations),
and the batch is given in prompts (``prompts_per_step``) with ``num_generations`` completions each,
split into micro-batches of ``micro_batch_size`` completions (TRL's per-device batch size).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from rewardsmith.reward_models.tracking import LOG_EVERY_DOC, REPORT_TO_DOC, sinks
from rewardsmith.verifiers.options import CheckedOptions, Range, option

logger = logging.getLogger(__name__)


@dataclass(kw_only=True)
class GRPOConfig(CheckedOptions):
    """The GRPO loop's config: ``--config grpo.yaml`` sets any key; ``--list-config`` prints them."""

    config_name = "grpo config"

    model: str = option("smollm2", "policy: a local directory, a cached hub id, or the alias smollm2")
    reward: str | Mapping[str, Any] = option("math", "reward spec: a name, a YAML file or a mapping (built "
                                                     "before the model loads)")
    output_dir: str = option("grpo-out", "log, samples, checkpoints, curves and the final model go here")
    seed: int = option(0, "seeds the prompt order, sampling and initialisation")
    # data
    prompt_field: str = option("prompt", "column holding the prompt (text, or chat messages)")
    columns: Mapping[str, str] = option(factory=dict, doc="reward field -> dataset column (answer: solution)")
    chat_template: Literal["auto", "always", "never"] = option(
        "auto", "auto: chat messages get the tokenizer's chat template, text prompts are used as they are; "
                "always: text prompts become one user message")
    max_prompt_length: Annotated[int, Range(gt=0)] | None = option(
        None, "prompts longer than this (in tokens) are reported and skipped, never cut "
              "(default: the model's context minus max_completion_length)")
    eval_data: str | None = option(None, "held-out prompts for evaluation (default: eval_fraction of the data)")
    eval_fraction: Annotated[float, Range(ge=0, le=0.5)] = option(0.0, "prompts held out when no eval_data")
    # generation
    generator: Literal["hf", "vllm"] = option("hf", "hf: transformers generate with the training weights; "
                                                    "vllm: an in-process engine, weights loaded after each update")
    num_generations: Annotated[int, Range(ge=2)] = option(8, "completions per prompt (the group)")
    prompts_per_step: Annotated[int, Range(gt=0)] = option(4, "prompts (groups) per step")
    max_completion_length: Annotated[int, Range(gt=0)] = option(256, "new tokens per completion")
    temperature: Annotated[float, Range(gt=0)] = option(1.0, "sampling temperature; log-probs are taken at it")
    top_p: Annotated[float, Range(gt=0, le=1)] = option(1.0, "nucleus sampling")
    top_k: Annotated[int, Range(ge=0)] = option(0, "top-k sampling (0: off)")
    stop: tuple[str, ...] = option((), "stop strings (kept in the completion, like the EOS token)")
    generation_kwargs: Mapping[str, Any] = option(factory=dict, doc="passed to the sampler as they are (HF "
                                                                     "GenerationConfig / vLLM SamplingParams), "
                                                                     "e.g. {min_new_tokens: 32}")
    generation_batch_size: Annotated[int, Range(gt=0)] = option(64, "HF: sequences per generate call")
    vllm_gpu_memory_utilization: Annotated[float, Range(gt=0, le=1)] = option(0.3, "vllm: share of the GPU's "
                                                                                    "memory (CPU: of the RAM)")
    vllm_importance_sampling_correction: bool = option(
        True, "vllm: weight the loss by trainer/sampler probability, bounded (TRL's correction for the "
              "sampler's numerics; the HF sampler is the trainer, so it has none)")
    vllm_importance_sampling_mode: Literal["token_truncate", "token_mask", "sequence_truncate",
                                           "sequence_mask"] = option("sequence_mask", "how the correction "
                                                                                      "bounds the ratio")
    vllm_importance_sampling_clip_max: Annotated[float, Range(gt=0)] | None = option(3.0, "upper bound")
    vllm_importance_sampling_clip_min: Annotated[float, Range(ge=0)] | None = option(None, "lower bound (mask "
                                                                                            "modes)")
    # advantages and loss
    loss_type: Literal["grpo", "dr_grpo", "dapo", "bnpo"] = option(
        "dapo", "grpo: mean per sequence, then over sequences; dr_grpo: sum / (rows × max_completion_length); "
                "dapo: sum over the batch's tokens / its token count; bnpo: token mean per micro-batch")
    scale_rewards: Literal["group", "batch", "none"] = option("group", "divide advantages by the group's std, "
                                                                       "the batch's, or nothing (Dr. GRPO)")
    epsilon: Annotated[float, Range(gt=0, le=1)] = option(0.2, "lower clip: ratio >= 1 - epsilon")
    epsilon_high: Annotated[float, Range(gt=0)] | None = option(None, "upper clip (clip-higher, DAPO 0.28); "
                                                                      "default: epsilon")
    delta: Annotated[float, Range(gt=1)] | None = option(None, "cap the unclipped ratio (two-sided clipping)")
    importance_sampling_level: Literal["token", "sequence"] = option("token", "sequence: one ratio per "
                                                                              "completion (GSPO)")
    beta: Annotated[float, Range(ge=0)] = option(0.0, "KL weight (k3 estimator); 0 loads no reference model")
    use_bias_correction_kl: bool = option(True, "weight the KL by the importance ratio (TRL's default)")
    num_iterations: Annotated[int, Range(gt=0)] = option(1, "optimizer updates per batch of rollouts (μ)")
    mask_truncated_completions: bool = option(False, "completions cut at max_completion_length train nothing")
    filter_zero_variance_groups: bool = option(False, "drop groups whose rewards are all equal from the "
                                                      "loss (no gradient, even from the KL)")
    # difficulty-aware sampling
    pass_threshold: float = option(1.0, "a completion whose verdict has no correct flag passes at this score")
    skip_extreme_prompts: bool = option(False, "skip prompts whose recent pass rate is 0 or 1")
    pass_rate_window: Annotated[int, Range(gt=0)] = option(2, "groups per prompt the pass rate is taken over")
    reprobe_after: Annotated[int, Range(gt=0)] = option(50, "steps after which a skipped prompt is tried again")
    dynamic_sampling: bool = option(False, "DAPO: sample more prompts until prompts_per_step groups have "
                                           "non-zero reward variance")
    max_resample_rounds: Annotated[int, Range(ge=0)] = option(3, "extra sampling rounds per step (dynamic)")
    # optimisation
    learning_rate: Annotated[float, Range(gt=0)] = option(1e-6, "peak learning rate (AdamW)")
    weight_decay: Annotated[float, Range(ge=0)] = option(0.0, "AdamW weight decay")
    adam_beta1: Annotated[float, Range(ge=0, le=0.9999)] = option(0.9, "AdamW beta1")
    adam_beta2: Annotated[float, Range(ge=0, le=0.9999)] = option(0.999, "AdamW beta2")
    lr_scheduler: Literal["linear", "cosine", "constant"] = option("linear", "decay after warm-up")
    warmup_ratio: Annotated[float, Range(ge=0, le=1)] = option(0.0, "share of updates spent warming up")
    max_steps: Annotated[int, Range(gt=0)] = option(100, "steps (batches of rollouts)")
    micro_batch_size: Annotated[int, Range(gt=0)] = option(8, "completions per forward/backward")
    max_grad_norm: Annotated[float, Range(gt=0)] | None = option(1.0, "gradient clipping (none: off)")
    gradient_checkpointing: bool = option(False, "recompute activations in backward: less memory, slower")
    precision: Literal["auto", "fp32", "bf16"] = option("auto", "auto: bf16 autocast on CUDA with bf16, fp32 "
                                                                "elsewhere (master weights stay fp32)")
    disable_dropout: bool = option(True, "switch dropout off, so the sampler and trainer see one policy")
    device: Literal["auto", "cpu", "cuda"] = option("auto", "auto: cuda when available")
    lora: bool = option(False, "train LoRA adapters (peft); merged into the saved model")
    lora_r: Annotated[int, Range(gt=0)] = option(16, "LoRA rank")
    lora_alpha: Annotated[float, Range(gt=0)] = option(32.0, "LoRA scale")
    lora_dropout: Annotated[float, Range(ge=0, le=1)] = option(0.0, "LoRA dropout")
    lora_target_modules: str | tuple[str, ...] = option("all-linear", "modules that get adapters")
    # operating
    log_every: Literal["auto"] | Annotated[int, Range(gt=0)] = option("auto", LOG_EVERY_DOC)
    report_to: (Literal["none", "tensorboard", "wandb"]
                | tuple[Literal["none", "tensorboard", "wandb"], ...]) = option("none", REPORT_TO_DOC)
    samples_per_step: Annotated[int, Range(ge=0)] = option(2, "completions per step written to samples.jsonl")
    eval_every: Annotated[int, Range(ge=0)] = option(0, "evaluate pass@1 on held-out prompts every N steps "
                                                        "(0: at the start and the end only)")
    eval_max_prompts: Annotated[int, Range(gt=0)] = option(200, "held-out prompts per evaluation")
    eval_temperature: Annotated[float, Range(ge=0)] = option(0.0, "0: greedy pass@1")
    save_every: Annotated[int, Range(ge=0)] = option(50, "checkpoint every N steps (0: never)")
    keep_checkpoints: Annotated[int, Range(gt=0)] = option(2, "checkpoints kept (oldest removed)")
    resume: bool = option(True, "continue from the last checkpoint in output_dir when there is one")
    overwrite: bool = option(False, "start over in an output_dir that holds a previous run, removing its files "
                                    "(without it, such a folder is refused unless there is a run to resume)")
    no_signal_warn_after: Annotated[int, Range(ge=0)] = option(
        3, "warn (once per stretch, saying why and what to change) when this many steps in a row have no "
           "reward variance in >= 99% of their groups (0: never)")
    save_model: bool = option(True, "write the final model (LoRA merged) to output_dir/model")
    tensorboard: bool = option(False, "deprecated: use report_to: tensorboard (true adds it to report_to)")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tensorboard:
            logger.warning("grpo config: `tensorboard: true` is deprecated; use `report_to: tensorboard`")
            names = sinks(self.report_to)
            if "tensorboard" not in names:
                self.report_to = (*names, "tensorboard")

