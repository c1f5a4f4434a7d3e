"""The GRPO loop: sample a group of completions per prompt, score them with any reward spec,
turn rewards into group advantages, and take ``num_iterations`` clipped policy-gradient updates.

One step, in order (each phase timed and logged):

1. *generate*: draw prompts (epoch order, optionally skipping prompts the pass-rate record says
   are always or never solved), sample ``num_generations`` completions each;
2. *score*: ``build(spec).verify_batch`` on every completion; an error verdict is left out of
   its group's statistics and of the loss and counted, never paid as 0; a batch that is all
   errors stops the run (an outage, not a signal); with dynamic sampling, sample again until
   enough groups have reward variance;
3. *reference*: log-probabilities before the update (when ``num_iterations`` > 1) and under the
   reference model (when ``beta`` > 0);
4. *update*: micro-batches, the loss of :mod:`.objective`, one optimizer step per iteration;
5. *sync*: the sampler gets the new weights (vLLM; HF generates with them already).
"""

from __future__ import annotations

import copy
import json
import logging
import math
import random
import time
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch

from rewardsmith.adapters.fields import map_fields
from rewardsmith.adapters.grpo.config import GRPOConfig
from rewardsmith.adapters.grpo.data import Prompt, PromptSet
from rewardsmith.adapters.grpo.no_signal import NoSignalWatch, StepSignal
from rewardsmith.adapters.grpo.objective import (
    BatchTotals,
    LossSettings,
    group_advantages,
    policy_loss,
    sampler_correction,
    token_logps,
)
from rewardsmith.adapters.grpo.prompts import PromptSampler
from rewardsmith.adapters.health import InputHealth
from rewardsmith.reward_models import lifecycle
from rewardsmith.reward_models.checkpoint import checkpoint_dirs
from rewardsmith.reward_models.sampling import HFSampler, Sampled, Sampler, SamplingSettings
from rewardsmith.reward_models.shared_prompt import prompt_groups
from rewardsmith.reward_models.tracking import Tracker, log_interval, require
from rewardsmith.verifiers import RewardsmithError
from rewardsmith.verifiers.core import Sample, Verdict, Verifier
from rewardsmith.verifiers.wording import plural

logger = logging.getLogger(__name__)


class Generator(Sampler, Protocol):
    """The loop's sampler (:mod:`rewardsmith.reward_models.sampling`), which follows the training."""

    def sync(self, model: Any) -> None:
        """Make the sampler's weights the trainer's (after an optimizer update)."""


class RewardOutage(RewardsmithError, RuntimeError):
    """Every completion of a step came back ``status=error``: the reward is down, not the policy."""


@dataclass
class Rollouts:
    """One step's groups: ``group_size`` rows per prompt, group-major."""

    prompts: list[Prompt]
    group_size: int
    completion_ids: list[list[int]]
    truncated: list[bool]
    sampler_logps: list[list[float]] | None
    completions: list[Any]
    verdicts: list[Verdict]
    rewards: torch.Tensor  # (N,), NaN for error rows
    passed: list[bool]
    old_logps: list[torch.Tensor] | None = None
    ref_logps: list[torch.Tensor] | None = None

    def __len__(self) -> int:
        return len(self.completion_ids)

    def select_groups(self, groups: Sequence[int]) -> Rollouts:
        rows = [g * self.group_size + j for g in groups for j in range(self.group_size)]
        pick = lambda items: None if items is None else [items[i] for i in rows]  # noqa: E731
        return Rollouts([self.prompts[g] for g in groups], self.group_size, pick(self.completion_ids),
                        pick(self.truncated), pick(self.sampler_logps), pick(self.completions), pick(self.verdicts),
                        self.rewards[rows] if rows else self.rewards[:0], pick(self.passed), pick(self.old_logps),
                        pick(self.ref_logps))

    @staticmethod
    def concat(parts: Sequence[Rollouts]) -> Rollouts:
        first = parts[0]
        join = lambda name: (None if any(getattr(p, name) is None for p in parts)  # noqa: E731
                             else [x for p in parts for x in getattr(p, name)])
        return Rollouts([x for p in parts for x in p.prompts], first.group_size, join("completion_ids"),
                        join("truncated"), join("sampler_logps"), join("completions"), join("verdicts"),
                        torch.cat([p.rewards for p in parts]), join("passed"))


@dataclass
class GRPOResult:
    """What a run did: ``initial_eval`` and ``final_eval`` are the held-out evaluations before the
    first step and after the last (empty without an eval set); ``no_signal_steps`` the steps whose
    groups carried no reward variance (see :mod:`.no_signal`)."""

    output_dir: Path
    model_dir: Path | None
    steps: int
    seconds: float
    final_eval: dict[str, Any]
    skipped_prompts: dict[str, int] = field(default_factory=dict)
    initial_eval: dict[str, Any] = field(default_factory=dict)
    no_signal_steps: int = 0

    def summary(self) -> str:
        """The run's last line: steps, time, the share of steps without signal, and held-out
        pass@1 (and the answered share) before -> after."""
        share = self.no_signal_steps / max(self.steps, 1)
        line = (f"GRPO: {self.steps} steps in {self.seconds:.0f} s; {self.no_signal_steps} of {self.steps} steps "
                f"({share:.0%}) without learning signal")
        if self.final_eval:
            before, after = self.initial_eval, self.final_eval
            shown = lambda d, k: f"{d[k]:.3f}" if isinstance(d.get(k), (int, float)) else "?"  # noqa: E731
            line += (f"; eval pass@1 {shown(before, 'pass_at_1')} → {shown(after, 'pass_at_1')}, answered "
                     f"{shown(before, 'answered')} → {shown(after, 'answered')} "
                     f"({int(after.get('prompts', 0))} prompts)")
        return line


def completions_for(prompts: Sequence[Prompt], texts: Sequence[str], group_size: int) -> list[Any]:
    """What the reward sees: text, or one assistant message when the prompt is chat (as TRL)."""
    return [[{"role": "assistant", "content": text}] if not isinstance(prompts[i // group_size].prompt, str) else text
            for i, text in enumerate(texts)]


def samples_for(prompts: Sequence[Prompt], completions: Sequence[Any], columns: Mapping[str, str],
                completion_ids: Sequence[list[int]] | None = None) -> list[Sample]:
    """The reward's samples: the prompt's columns as fields, plus ``completion_ids`` (the sampled
    tokens, TRL's name) for rewards that count tokens (``overlong``, ``ids_field: completion_ids``)."""
    n = len(completions) // max(len(prompts), 1)
    out = []
    for i, completion in enumerate(completions):
        fields = map_fields(prompts[i // n].fields, columns)
        if completion_ids is not None:
            fields["completion_ids"] = list(completion_ids[i])
        out.append(Sample(prompt=prompts[i // n].prompt, completion=completion, fields=fields))
    return out


def evaluate_policy(generator: Generator, tokenizer: Any, reward: Verifier, prompts: Sequence[Prompt],
                    settings: SamplingSettings, columns: Mapping[str, str] | None = None,
                    pass_threshold: float = 1.0) -> dict[str, float]:
    """pass@1 (greedy when ``settings.temperature`` is 0), the mean reward, and the share of
    completions with an answer the reward could read (``answered``: the format, which a policy
    learns first, apart from being right)."""
    sampled = generator.generate([list(p.ids) for p in prompts], 1, settings)
    texts = tokenizer.batch_decode(sampled.completion_ids, skip_special_tokens=True)
    verdicts = reward.verify_batch(samples_for(prompts, completions_for(prompts, texts, 1), columns or {},
                                               sampled.completion_ids))
    scores = [v.score for v in verdicts if v.status != "error"]
    n = max(len(prompts), 1)
    return {"pass_at_1": sum(passes(v, pass_threshold) for v in verdicts) / n,
            "reward_mean": sum(scores) / max(len(scores), 1),
            "answered": sum(v.status not in ("no_answer", "error") for v in verdicts) / n,
            "prompts": float(len(prompts))}


def passes(verdict: Verdict, threshold: float) -> bool:
    """A completion passes when its verdict says correct; one without a correct flag passes at
    ``threshold`` (the stated meaning of "pass" for a non-binary reward)."""
    if verdict.status == "error":
        return False
    if verdict.correct is not None:
        return bool(verdict.correct)
    return verdict.score >= threshold


class GRPOTrainer:
    """One run. ``run()`` does it all; ``rollout`` and ``update`` are the two halves of a step,
    public so tests and benchmarks can drive them (with any :class:`Generator`)."""

    def __init__(self, config: GRPOConfig, train: PromptSet, evaluation: PromptSet | None = None, *,
                 reward: Verifier | None = None, model: Any = None, tokenizer: Any = None,
                 generator: Generator | None = None, progress: bool = True) -> None:
        from rewardsmith.verifiers.registry import build

        self.config = config
        self.progress = progress
        self.out = Path(config.output_dir)
        self.reward = reward if reward is not None else build(config.reward)  # fails before any model loads
        require(config.report_to)  # so does a missing tensorboard / wandb
        lifecycle.claim_output_dir(self.out, resume=config.resume, overwrite=config.overwrite)  # likewise
        if not train.prompts:
            raise ValueError("no prompt to train on" + (f" ({train.describe()})" if train.skipped else ""))
        self.train_set, self.eval_set = train, evaluation
        device = config.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.bf16 = config.precision == "bf16" or (config.precision == "auto" and device == "cuda"
                                                   and torch.cuda.is_bf16_supported())
        self.loss_settings = LossSettings(config.loss_type, config.epsilon, config.epsilon_high,
                                          config.importance_sampling_level, config.beta,
                                          config.max_completion_length, config.delta, config.use_bias_correction_kl)
        self.sampling = SamplingSettings(config.max_completion_length, config.temperature, config.top_p, config.top_k,
                                         tuple(config.stop), tuple(config.generation_kwargs.items()))
        random.seed(config.seed)
        torch.manual_seed(config.seed)
        if tokenizer is None:
            from rewardsmith.reward_models.loading import load_tokenizer

            tokenizer = load_tokenizer(config.model, padded=True)
        if model is None:
            model = _load_policy(config.model)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.tokenizer = tokenizer
        self.model = self._prepare_model(model.to(self.device))
        self.ref_model = self._reference_model() if config.beta > 0 else None
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = lifecycle.adamw(params, config.learning_rate, config.weight_decay,
                                         (config.adam_beta1, config.adam_beta2))
        self.scheduler = lifecycle.lr_schedule(config.lr_scheduler, self.optimizer, config.warmup_ratio,
                                               config.max_steps * config.num_iterations)
        self.generator = generator if generator is not None else self._make_generator()
        self.sampler = PromptSampler(len(train.prompts), config.seed, window=config.pass_rate_window,
                                     skip_extreme=config.skip_extreme_prompts, reprobe_after=config.reprobe_after)
        self.step = 0
        self.counters: dict[str, int] = {"error_rows": 0, "invalid_rows": 0, "skipped_extreme": 0, "empty_steps": 0,
                                         "no_signal_steps": 0}
        self.signal = StepSignal(step=1)  # the groups of the step being sampled
        self.no_signal = NoSignalWatch(config)
        # a dataset without the column the reward reads trains on zeros without a word: say it once
        self.health = InputHealth("train grpo", _columns_fix)
        self.tracker = Tracker()  # opened by run()

    # ------------------------------------------------------------------ setup

    def _prepare_model(self, model: Any) -> Any:
        config = self.config
        if config.disable_dropout:
            for module in model.modules():
                if isinstance(module, torch.nn.Dropout):
                    module.p = 0.0
        if config.gradient_checkpointing:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if config.lora:
            from peft import LoraConfig, get_peft_model

            targets = config.lora_target_modules
            lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                              target_modules=targets if isinstance(targets, str) else list(targets),
                              task_type="CAUSAL_LM")
            model = get_peft_model(model, lora)
            if config.gradient_checkpointing:
                model.enable_input_require_grads()
        model.train()
        return model

    def _reference_model(self) -> Any:
        """With LoRA the reference is the base model (adapters switched off); else a frozen copy."""
        if self.config.lora:
            return None
        ref = copy.deepcopy(self.model).eval()
        for p in ref.parameters():
            p.requires_grad_(False)
        return ref

    def _make_generator(self) -> Generator:
        if self.config.generator == "vllm":
            from rewardsmith.adapters.grpo.vllm_engine import VLLMGenerator

            longest = max(len(p.ids) for p in self.train_set.prompts + (self.eval_set.prompts if self.eval_set else []))
            return VLLMGenerator(self.config.model, self.tokenizer, self.model, self.config,
                                 max_model_len=longest + self.config.max_completion_length)
        return HFSampler(self.model, self.tokenizer, self.config.generation_batch_size, bf16=self.bf16)

    def autocast(self) -> Any:
        return torch.autocast(self.device.type, dtype=torch.bfloat16) if self.bf16 else nullcontext()

    def clock(self) -> float:
        """perf_counter once the device's queued work is done: CUDA kernels run asynchronously, so
        without the wait a phase's time would be billed to whichever phase next reads a result."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return time.perf_counter()

    # ------------------------------------------------------------------ a step: rollouts

    def score(self, prompts: Sequence[Prompt], sampled: Sampled, group_size: int) -> Rollouts:
        texts = self.tokenizer.batch_decode(sampled.completion_ids, skip_special_tokens=True)
        completions = completions_for(prompts, texts, group_size)
        verdicts = self.reward.verify_batch(samples_for(prompts, completions, self.config.columns,
                                                        sampled.completion_ids))
        errors = [v for v in verdicts if v.status == "error"]
        if verdicts and len(errors) == len(verdicts):
            raise RewardOutage(f"all {len(verdicts)} completions of step {self.step + 1} came back status=error "
                               f"(first: {errors[0].feedback or 'no message'}); nothing was trained on them. Fix "
                               f"the reward backend, then rerun the same command to resume")
        self.counters["error_rows"] += len(errors)
        self.health.check(verdicts)
        self.counters["invalid_rows"] += sum(v.status == "invalid_input" for v in verdicts)
        rewards = torch.tensor([math.nan if v.status == "error" else float(v.score) for v in verdicts])
        passed = [passes(v, self.config.pass_threshold) for v in verdicts]
        return Rollouts(list(prompts), group_size, sampled.completion_ids, sampled.truncated, sampled.sampler_logps,
                        completions, verdicts, rewards, passed)

    def rollout(self, prompts: Sequence[Prompt] | None = None) -> tuple[Rollouts, dict[str, float]]:
        """Generate and score one step's groups; with dynamic sampling, keep sampling (up to
        ``max_resample_rounds`` more rounds) until ``prompts_per_step`` groups have reward variance."""
        config = self.config
        timing = {"generate": 0.0, "score": 0.0}
        stats = {"rounds": 0.0, "groups_sampled": 0.0, "informative_groups": 0.0, "tokens_generated": 0.0}
        kept: list[Rollouts] = []
        informative = 0
        self.signal = StepSignal(step=self.step + 1)
        for round_ in range(1 + (config.max_resample_rounds if config.dynamic_sampling else 0)):
            want = config.prompts_per_step - (informative if config.dynamic_sampling else 0)
            if prompts is not None and round_ == 0:
                chosen = list(prompts)
            else:
                indices, passed_over = self.sampler.draw(want, self.step)
                self.counters["skipped_extreme"] += passed_over
                chosen = [self.train_set.prompts[i] for i in indices]
            started = self.clock()
            sampled = self.generator.generate([list(p.ids) for p in chosen], config.num_generations, self.sampling)
            timing["generate"] += self.clock() - started
            stats["tokens_generated"] += sampled.tokens
            started = self.clock()
            batch = self.score(chosen, sampled, config.num_generations)
            timing["score"] += self.clock() - started
            advantages = group_advantages(batch.rewards, config.num_generations, config.scale_rewards)
            for g, prompt in enumerate(chosen):
                rows = range(g * config.num_generations, (g + 1) * config.num_generations)
                self.sampler.record(prompt.index, sum(batch.passed[i] for i in rows) / len(rows), self.step)
                self.signal.add_group([batch.verdicts[i] for i in rows], [batch.passed[i] for i in rows],
                                      [batch.truncated[i] for i in rows], bool(advantages.zero_variance[g]))
            useful = [g for g in range(len(chosen)) if not bool(advantages.zero_variance[g])]
            stats["rounds"] += 1
            stats["groups_sampled"] += len(chosen)
            stats["informative_groups"] += len(useful)
            if not config.dynamic_sampling:
                kept.append(batch)
                break
            take = useful[: config.prompts_per_step - informative]
            if take:
                kept.append(batch.select_groups(take))
            informative += len(take)
            if informative >= config.prompts_per_step:
                break
        if not kept:
            empty = Rollouts([], config.num_generations, [], [], None, [], [], torch.zeros(0), [])
            return empty, {**timing, **stats}
        return Rollouts.concat(kept), {**timing, **stats}

    # ------------------------------------------------------------------ a step: the update

    def micro_batches(self, n_rows: int) -> list[list[int]]:
        size = self.config.micro_batch_size
        return [list(range(i, min(i + size, n_rows))) for i in range(0, n_rows, size)]

    def collate(self, batch: Rollouts, rows: Sequence[int]) -> dict[str, torch.Tensor]:
        """Left-padded prompts then right-padded completions, as TRL lays them out; the loss mask
        covers each completion up to and including its EOS (none for a masked truncated row)."""
        pad = self.tokenizer.pad_token_id
        n = batch.group_size
        prompts = [list(batch.prompts[i // n].ids) for i in rows]
        completions = [batch.completion_ids[i] for i in rows]
        p_width = max(len(p) for p in prompts)
        c_width = max(1, max(len(c) for c in completions))
        input_ids, attention, mask = [], [], []
        for i, p, c in zip(rows, prompts, completions, strict=True):
            input_ids.append([pad] * (p_width - len(p)) + p + c + [pad] * (c_width - len(c)))
            attention.append([0] * (p_width - len(p)) + [1] * (len(p) + len(c)) + [0] * (c_width - len(c)))
            keep = not (self.config.mask_truncated_completions and batch.truncated[i])
            mask.append([int(keep)] * len(c) + [0] * (c_width - len(c)))
        as_tensor = lambda x, dtype=torch.long: torch.tensor(x, dtype=dtype, device=self.device)  # noqa: E731
        out = {"input_ids": as_tensor(input_ids), "attention_mask": as_tensor(attention),
               "mask": as_tensor(mask, torch.float32), "completion_length": torch.tensor(c_width)}
        shared = prompt_groups([tuple(p) for p in prompts])  # a group's rows share their prompt's forward
        if shared is not None:
            out["prompt_of_row"] = shared
        for name in ("old_logps", "ref_logps", "sampler_logps"):
            values = getattr(batch, name)
            if values is not None:
                out[name] = torch.stack([_pad_to(torch.as_tensor(values[i], dtype=torch.float32), c_width)
                                         for i in rows]).to(self.device)
        return out

    @torch.no_grad()
    def reference_logps(self, batch: Rollouts) -> None:
        """Log-probabilities the update compares against, computed before it: the policy's (for
        ``num_iterations`` > 1, or to correct for the sampler) and the reference model's (beta > 0)."""
        need_old = self.config.num_iterations > 1
        need_ref = self.config.beta > 0
        if not (need_old or need_ref):
            return
        old: list[torch.Tensor] = []
        ref: list[torch.Tensor] = []
        for rows in self.micro_batches(len(batch)):
            inputs = self.collate(batch, rows)
            length = int(inputs["completion_length"])
            lengths = [len(batch.completion_ids[i]) for i in rows]
            with self.autocast():
                if need_old:
                    logps, _ = token_logps(self.model, inputs["input_ids"], inputs["attention_mask"], length,
                                           self.config.temperature, prompt_of_row=inputs.get("prompt_of_row"))
                    old += [row[:n].float().cpu() for row, n in zip(logps, lengths, strict=True)]
                if need_ref:
                    ctx = self.model.disable_adapter() if self.ref_model is None else nullcontext()
                    with ctx:
                        logps, _ = token_logps(self.ref_model or self.model, inputs["input_ids"],
                                               inputs["attention_mask"], length, self.config.temperature,
                                               prompt_of_row=inputs.get("prompt_of_row"))
                    ref += [row[:n].float().cpu() for row, n in zip(logps, lengths, strict=True)]
        batch.old_logps = old if need_old else None
        batch.ref_logps = ref if need_ref else None

    def compute_loss(self, batch: Rollouts, advantages: torch.Tensor, rows: Sequence[int], totals: BatchTotals,
                     *, first_iteration: bool = True) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """One micro-batch's share of the batch loss (and its metric sums)."""
        inputs = self.collate(batch, rows)
        length = int(inputs["completion_length"])
        with self.autocast():
            logps, entropy = token_logps(self.model, inputs["input_ids"], inputs["attention_mask"], length,
                                         self.config.temperature, entropy=True,
                                         prompt_of_row=inputs.get("prompt_of_row"))
        mask = inputs["mask"]
        trainer_logps = inputs.get("old_logps", logps.detach())
        is_ratio = None
        if (self.config.generator == "vllm" and self.config.vllm_importance_sampling_correction
                and "sampler_logps" in inputs):
            is_ratio = sampler_correction(trainer_logps, inputs["sampler_logps"], mask,
                                          self.config.vllm_importance_sampling_mode,
                                          self.config.vllm_importance_sampling_clip_max,
                                          self.config.vllm_importance_sampling_clip_min)
        loss, stats = policy_loss(logps, inputs.get("old_logps"), inputs.get("ref_logps"),
                                  advantages[list(rows)].to(self.device), mask, self.loss_settings, totals, is_ratio)
        stats["entropy"] = (entropy * mask).sum() if entropy is not None else torch.zeros(())
        if first_iteration and "sampler_logps" in inputs:
            gap = ((trainer_logps - inputs["sampler_logps"]).abs() * mask).nan_to_num(0.0)
            stats["sampler_gap_sum"] = gap.sum()
            stats["sampler_gap_max"] = gap.max() if mask.any() else torch.zeros(())
        return loss, stats

    def prepare_update(self, batch: Rollouts) -> tuple[Rollouts, torch.Tensor, BatchTotals] | None:
        """What the loss sees: the batch without error rows (and, when asked, zero-variance groups),
        their advantages, and the batch totals the loss is normalised by. None: nothing to train on."""
        config = self.config
        adv = group_advantages(batch.rewards, batch.group_size, config.scale_rewards)
        keep_groups = [g for g in range(len(batch.prompts))
                       if not (config.filter_zero_variance_groups and bool(adv.zero_variance[g]))]
        rows = [g * batch.group_size + j for g in keep_groups for j in range(batch.group_size)
                if bool(adv.valid[g * batch.group_size + j])]
        if not rows:
            return None
        trained = _subset_rows(batch, rows)
        tokens = sum(_loss_tokens(trained, i, config.mask_truncated_completions) for i in range(len(trained)))
        totals = BatchTotals(rows=len(trained), tokens=tokens,
                             micro_batches=len(self.micro_batches(len(trained))))
        return trained, adv.values[rows], totals

    def accumulate_gradients(self, trained: Rollouts, advantages: torch.Tensor, totals: BatchTotals,
                             iteration: int, sums: dict[str, float]) -> float:
        """Backward through every micro-batch of one iteration (gradients add up to the batch's);
        returns the batch loss and adds the metric sums into ``sums``."""
        loss_total = 0.0
        for rows in self.micro_batches(len(trained)):
            loss, stats = self.compute_loss(trained, advantages, rows, totals, first_iteration=iteration == 0)
            loss.backward()
            loss_total += float(loss.detach())
            for key, value in stats.items():
                if key.endswith("_max"):
                    sums[key] = max(sums.get(key, 0.0), float(value))
                else:
                    sums[key] = sums.get(key, 0.0) + float(value)
        return loss_total

    def update(self, batch: Rollouts) -> dict[str, float]:
        """``num_iterations`` optimizer steps on one batch."""
        config = self.config
        prepared = self.prepare_update(batch)
        if prepared is None:
            self.counters["empty_steps"] += 1
            return {"rows_in_loss": 0.0}
        trained, advantages, totals = prepared
        sums: dict[str, float] = {}
        losses, norms = [], []
        for iteration in range(config.num_iterations):
            losses.append(self.accumulate_gradients(trained, advantages, totals, iteration, sums))
            if config.max_grad_norm is not None:
                norms.append(float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), config.max_grad_norm)))
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad(set_to_none=True)
        all_tokens = max(sums.get("tokens", 0.0), 1.0)
        metrics = {"rows_in_loss": float(totals.rows), "tokens_in_loss": float(totals.tokens),
                   "loss": sum(losses) / len(losses), "entropy": sums.get("entropy", 0.0) / all_tokens,
                   "clip_ratio_low": sums.get("clip_low", 0.0) / all_tokens,
                   "clip_ratio_high": sums.get("clip_high", 0.0) / all_tokens,
                   "clip_ratio": (sums.get("clip_low", 0.0) + sums.get("clip_high", 0.0)) / all_tokens,
                   "ratio_max": sums.get("ratio_max", 1.0), "lr": self.scheduler.get_last_lr()[0]}
        if config.beta > 0:
            metrics["kl"] = sums.get("kl", 0.0) / all_tokens
        if norms:
            metrics["grad_norm"] = norms[0]
        if "sampler_gap_sum" in sums:
            metrics["sampler_logp_gap_mean"] = sums["sampler_gap_sum"] / max(sums["tokens"] / config.num_iterations, 1)
            metrics["sampler_logp_gap_max"] = sums["sampler_gap_max"]
        return metrics

    # ------------------------------------------------------------------ the run

    def train_step(self) -> dict[str, Any]:
        """One step: rollouts, reference log-probs, update, sync; returns its log record."""
        started = self.clock()
        batch, roll = self.rollout()
        record: dict[str, Any] = {"step": self.step + 1}
        record.update(_reward_stats(batch, self.config.num_generations))
        started_ref = self.clock()
        if len(batch):
            self.reference_logps(batch)
        time_ref = self.clock() - started_ref
        started_update = self.clock()
        record.update(self.update(batch) if len(batch) else {"rows_in_loss": 0.0})
        time_update = self.clock() - started_update
        started_sync = self.clock()
        self.generator.sync(self.model)
        time_sync = self.clock() - started_sync
        self.step += 1
        total = self.clock() - started
        groups = max(roll["groups_sampled"], 1.0)
        record.update({
            "informative_share": roll["informative_groups"] / groups, "sampling_rounds": roll["rounds"],
            "groups_sampled": roll["groups_sampled"], "skipped_extreme_total": self.counters["skipped_extreme"],
            "error_rows_total": self.counters["error_rows"],
            "invalid_rows_total": self.counters["invalid_rows"],
            "time_generate": roll["generate"], "time_score": roll["score"], "time_reference": time_ref,
            "time_update": time_update, "time_sync": time_sync, "step_time": total,
            "tokens_generated": roll["tokens_generated"],
            "generate_tokens_per_s": roll["tokens_generated"] / max(roll["generate"], 1e-9)})
        if len(batch):
            self._write_samples(batch)
        if self.signal.no_signal:
            self.counters["no_signal_steps"] += 1
        warning = self.no_signal.observe(self.signal)
        if warning:
            logger.warning(warning)
        return record

    def run(self) -> GRPOResult:
        self.out.mkdir(parents=True, exist_ok=True)
        self.maybe_resume()
        log_path = self.out / "log.jsonl"
        _truncate_log(log_path, self.step)
        _truncate_log(self.out / "samples.jsonl", self.step)
        logger.info(f"GRPO on {self.train_set.describe()} for {plural(self.config.max_steps, 'step')} of "
                 f"{plural(self.config.prompts_per_step, 'prompt')} x {self.config.num_generations} completions on "
                 f"{self.device}{' (bf16)' if self.bf16 else ''}{', LoRA' if self.config.lora else ''}"
                 f"{f', resuming at step {self.step}' if self.step else ''}")
        log_every = log_interval(self.config.log_every, self.config.max_steps)
        self.tracker = Tracker.open(self.config.report_to, self.out, asdict(self.config), start_step=self.step)
        started = time.perf_counter()
        initial_eval: dict[str, Any] = {}
        if self.step == 0 and self.eval_set and self.eval_set.prompts:
            initial_eval = self.evaluate()
            self._write(log_path, {"step": 0, **_prefixed("eval_", initial_eval)})
        elif self.eval_set and self.eval_set.prompts:  # resumed: the step-0 record of the log
            initial_eval = _initial_eval(log_path)
        bar = lifecycle.progress(self.config.max_steps, self.step, self.progress, "grpo")
        try:
            while self.step < self.config.max_steps:
                record = self.train_step()
                bar.update(1)
                bar.set_postfix(reward=f"{record.get('reward_mean', float('nan')):.3f}",
                                passed=f"{record.get('pass_rate', float('nan')):.2f}")
                last = self.step == self.config.max_steps
                if self.config.eval_every and self.step % self.config.eval_every == 0 and not last:
                    record.update(_prefixed("eval_", self.evaluate()))
                if self.step % log_every == 0 or last:
                    self._write(log_path, record)
                if self.config.save_every and self.step % self.config.save_every == 0 and not last:
                    self.save_checkpoint()
            seconds = time.perf_counter() - started
            final_eval = self.evaluate() if self.eval_set and self.eval_set.prompts else {}
            if final_eval:
                self._write(log_path, {"step": self.step, **_prefixed("eval_", final_eval)})
        finally:
            bar.close()
            self.tracker.close()
        model_dir = self.save_model() if self.config.save_model else None
        from rewardsmith.adapters.grpo.report import plot_run

        plot_run(log_path, self.out / "curves.png")
        result = GRPOResult(self.out, model_dir, self.step, seconds, final_eval, dict(self.train_set.skipped),
                            initial_eval, self.counters["no_signal_steps"])
        (self.out / "result.json").write_text(json.dumps(asdict(result), indent=2, default=str))
        logger.info(result.summary())
        return result

    # ------------------------------------------------------------------ evaluation

    def evaluate(self) -> dict[str, float]:
        """pass@1 on the held-out prompts with the training reward (see :func:`evaluate_policy`)."""
        assert self.eval_set is not None
        settings = SamplingSettings(self.config.max_completion_length, self.config.eval_temperature,
                                    self.config.top_p, self.config.top_k, tuple(self.config.stop))
        return evaluate_policy(self.generator, self.tokenizer, self.reward,
                               self.eval_set.prompts[: self.config.eval_max_prompts], settings, self.config.columns,
                               self.config.pass_threshold)

    # ------------------------------------------------------------------ output

    def _write(self, path: Path, record: dict[str, Any]) -> None:
        record = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in record.items()}
        with path.open("a") as handle:
            handle.write(json.dumps(record) + "\n")
        self.tracker.log(record["step"], record)

    def _write_samples(self, batch: Rollouts) -> None:
        k = self.config.samples_per_step
        if not k:
            return
        self.out.mkdir(parents=True, exist_ok=True)
        with (self.out / "samples.jsonl").open("a") as handle:
            for i in range(min(k, len(batch))):
                verdict = batch.verdicts[i]
                completion = batch.completions[i]
                text = completion if isinstance(completion, str) else completion[0]["content"]
                handle.write(json.dumps({"step": self.step, "prompt": batch.prompts[i // batch.group_size].prompt,
                                         "completion": text, "score": verdict.score, "status": verdict.status,
                                         "correct": verdict.correct, "feedback": verdict.feedback,
                                         "truncated": batch.truncated[i]}, default=str) + "\n")

    # ------------------------------------------------------------------ checkpoints

    def checkpoint_dirs(self) -> list[Path]:
        return checkpoint_dirs(self.out)

    def fingerprint(self) -> dict[str, Any]:
        keys = ("model", "seed", "num_generations", "prompts_per_step", "lora", "max_completion_length",
                "loss_type", "num_iterations", "max_steps")
        return lifecycle.fingerprint(self.config, keys, prompts=len(self.train_set.prompts))

    def save_checkpoint(self) -> Path:
        """Trainable weights, optimizer, scheduler, RNG and the prompt sampler (see
        :mod:`rewardsmith.reward_models.lifecycle`: a run killed mid-save resumes from the one before)."""
        return lifecycle.save_checkpoint(self.out, self.step, self.model, self.optimizer, self.scheduler,
                                         self.fingerprint(), self.config.keep_checkpoints,
                                         sampler=self.sampler.state_dict(), counters=dict(self.counters))

    def maybe_resume(self) -> int:
        if not self.config.resume:
            return 0
        state = lifecycle.resume(self.out, self.fingerprint(), self.model, self.optimizer, self.scheduler,
                                 total=self.config.max_steps)
        if state is None:
            return 0
        self.sampler.load_state_dict(state["sampler"])
        self.counters.update(state["counters"])
        self.step = int(state["step"])
        self.generator.sync(self.model)
        return self.step

    def save_model(self) -> Path:
        model = self.model.merge_and_unload() if self.config.lora else self.model
        return lifecycle.save_model(self.out, model, self.tokenizer)


# --------------------------------------------------------------------------- helpers


def _load_policy(name: str) -> Any:
    """fp32 master weights whatever the checkpoint's dtype (bf16 is autocast's business)."""
    from transformers import AutoModelForCausalLM

    from rewardsmith.reward_models.loading import quiet_loading
    from rewardsmith.reward_models.model import ModelLoadError, resolve

    try:
        with quiet_loading():
            return AutoModelForCausalLM.from_pretrained(resolve(name), dtype=torch.float32)
    except OSError as exc:
        raise ModelLoadError(f"cannot load the policy {name!r}: {exc}") from exc


def _pad_to(row: torch.Tensor, width: int) -> torch.Tensor:
    return torch.cat([row, row.new_zeros(width - row.numel())]) if row.numel() < width else row[:width]


def _subset_rows(batch: Rollouts, rows: Sequence[int]) -> Rollouts:
    """A batch of some rows (group structure no longer needed: advantages are fixed already).
    Each row keeps its own prompt, so group_size becomes 1."""
    pick = lambda items: None if items is None else [items[i] for i in rows]  # noqa: E731
    n = batch.group_size
    return Rollouts([batch.prompts[i // n] for i in rows], 1, pick(batch.completion_ids), pick(batch.truncated),
                    pick(batch.sampler_logps), pick(batch.completions), pick(batch.verdicts), batch.rewards[list(rows)],
                    pick(batch.passed), pick(batch.old_logps), pick(batch.ref_logps))


def _loss_tokens(batch: Rollouts, i: int, mask_truncated: bool) -> int:
    return 0 if mask_truncated and batch.truncated[i] else len(batch.completion_ids[i])


def _reward_stats(batch: Rollouts, group_size: int) -> dict[str, float]:
    """Reward mean/std, per-component means, pass rate, zero-variance share and lengths
    (all, cut at the limit, passing vs failing completions)."""
    if not len(batch):
        return {}
    valid = ~torch.isnan(batch.rewards)
    rewards = batch.rewards[valid]
    adv = group_advantages(batch.rewards, group_size)
    lengths = [len(c) for c in batch.completion_ids]
    good = [n for n, p in zip(lengths, batch.passed, strict=True) if p]
    bad = [n for n, p in zip(lengths, batch.passed, strict=True) if not p]
    out = {"reward_mean": float(rewards.mean()) if rewards.numel() else math.nan,
           "reward_std": float(rewards.std()) if rewards.numel() > 1 else 0.0,
           "pass_rate": sum(batch.passed) / len(batch), "error_rows": float((~valid).sum()),
           "invalid_rows": float(sum(v.status == "invalid_input" for v in batch.verdicts)),
           "zero_variance_share": float(adv.zero_variance.float().mean()),
           "length_mean": sum(lengths) / len(lengths), "clipped_share": sum(batch.truncated) / len(batch),
           "length_passing": sum(good) / len(good) if good else math.nan,
           "length_failing": sum(bad) / len(bad) if bad else math.nan}
    components: dict[str, list[float]] = {}
    for verdict in batch.verdicts:
        for name, value in verdict.components.items():
            if value is not None:
                components.setdefault(name, []).append(float(value))
    out.update({f"reward/{name}": sum(v) / len(v) for name, v in components.items()})
    return out


def _columns_fix(field: str | None) -> str:
    if field is None:
        return "check the prompt file's columns against the fields the reward spec reads"
    return (f"add a {field!r} column to the prompt file, or map yours with `columns: {{{field}: <your column>}}` "
            f"in the config")


def _prefixed(prefix: str, values: dict[str, Any]) -> dict[str, Any]:
    return {f"{prefix}{k}": v for k, v in values.items()}


def _initial_eval(log_path: Path) -> dict[str, Any]:
    """The held-out evaluation before the first step, from the log (a resumed run's)."""
    from rewardsmith.adapters.grpo.report import read_log

    for record in read_log(log_path):
        if record.get("step") == 0 and any(k.startswith("eval_") for k in record):
            return {k.removeprefix("eval_"): v for k, v in record.items() if k.startswith("eval_")}
    return {}


def _truncate_log(path: Path, step: int) -> None:
    """Drop records past ``step`` (written after the checkpoint a resume starts from), so a resumed
    run's log has every step once."""
    if not path.exists():
        return
    if step == 0:
        path.unlink()
        return
    kept = [line for line in path.read_text().splitlines() if line.strip() and json.loads(line).get("step", 0) <= step]
    path.write_text("".join(line + "\n" for line in kept))


def build_trainer(config: GRPOConfig, data: str | Path, *, progress: bool = True) -> GRPOTrainer:
    """The reward first (a spec that cannot be built fails before any model loads), the output
    folder (a previous run there is resumed, refused or, with ``overwrite``, cleared), then the
    tokenizer and the prompts (too-long and malformed rows reported), then the trainer."""
    from rewardsmith.adapters.grpo.data import load_prompts
    from rewardsmith.reward_models.loading import load_tokenizer
    from rewardsmith.verifiers.registry import build

    reward = build(config.reward)
    require(config.report_to)
    lifecycle.claim_output_dir(Path(config.output_dir), resume=config.resume, overwrite=config.overwrite)
    tokenizer = load_tokenizer(config.model, padded=True)
    limit = config.max_prompt_length or _context_length(config.model) - config.max_completion_length
    if limit <= 0:
        raise ValueError(f"max_completion_length {config.max_completion_length} leaves no room for a prompt in "
                         f"the model's context; lower it or set max_prompt_length")
    train = load_prompts(data, tokenizer, config.prompt_field, config.chat_template, limit)
    logger.info(f"data: {train.describe()}")
    for problem in train.problems:
        logger.info(f"  {data}: {problem}")
    evaluation = None
    if config.eval_data:
        evaluation = load_prompts(config.eval_data, tokenizer, config.prompt_field, config.chat_template, limit)
        logger.info(f"eval data: {evaluation.describe()}")
    elif config.eval_fraction > 0:
        train, evaluation = split_prompts(train, config.eval_fraction, config.seed)
    return GRPOTrainer(config, train, evaluation, reward=reward, tokenizer=tokenizer, progress=progress)


def split_prompts(prompts: PromptSet, fraction: float, seed: int) -> tuple[PromptSet, PromptSet]:
    """Hold out a seeded share of the prompts (at least one, at most all but one)."""
    order = list(range(len(prompts.prompts)))
    random.Random(seed).shuffle(order)
    n = min(max(1, round(fraction * len(order))), len(order) - 1)
    held = set(order[:n])
    train = PromptSet([p for i, p in enumerate(prompts.prompts) if i not in held], prompts.skipped, prompts.problems)
    return train, PromptSet([p for i, p in enumerate(prompts.prompts) if i in held])


def _context_length(model: str) -> int:
    from transformers import AutoConfig

    from rewardsmith.reward_models.model import resolve

    config = AutoConfig.from_pretrained(resolve(model))
    return int(getattr(config, "max_position_embeddings", None) or 2048)
