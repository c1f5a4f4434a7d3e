"""Training outcome and process reward models: one loop for both, on CPU and CUDA alike.

* ORM, pairwise rows: Bradley-Terry, ``-log σ(r_c - r_r - margin)`` (a row's ``margin`` column,
  else ``margin``), plus ``center_rewards_coefficient · (r_c + r_r)²`` to keep rewards centred
  (Eisenstein et al., 2023); chosen and rejected go through the model in one forward pass.
  Pointwise rows: binary cross-entropy against the label.
* PRM: the loss is read only at the last token of each step (every other token is ignored);
  hard labels with two-class cross-entropy, soft labels (Monte-Carlo fractions) with BCE.
* Common: LoRA (peft) or full fine-tuning; accelerate for the device and bf16 autocast on GPUs
  that support it; gradient accumulation; gradient checkpointing; batches grouped by length
  (sorted within shuffled windows, so padding stays small and order stays random); evaluation
  every N steps; checkpoints that resume with the same data order; a JSONL log and a PNG of the
  curves. Nothing here asks for a CPU or a GPU: the same config runs on either.

The config is one dataclass whose fields are its options (the same declaration machinery as the
verifiers), so a YAML file's typo is reported with the closest key.
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from rewardsmith.reward_models import lifecycle, metrics
from rewardsmith.reward_models.checkpoint import checkpoint_dirs
from rewardsmith.reward_models.curves import Series, draw, read_log, series
from rewardsmith.reward_models.data import Example, Pair, Point, Stepwise
from rewardsmith.reward_models.encoding import Encoded, Encoder
from rewardsmith.reward_models.inference import IGNORE, META_FILE, ModelMeta, collate, log_odds, predict, sigmoid
from rewardsmith.reward_models.loading import load_tokenizer
from rewardsmith.reward_models.model import is_bidirectional, load_model, position_logits
from rewardsmith.reward_models.steps import DEFAULT_SEPARATOR, StepSplitter
from rewardsmith.reward_models.tracking import LOG_EVERY_DOC, REPORT_TO_DOC, Tracker, log_interval, require
from rewardsmith.verifiers.options import CheckedOptions, Range, option
from rewardsmith.verifiers.wording import plural

logger = logging.getLogger(__name__)


@dataclass(kw_only=True)
class TrainConfig(CheckedOptions):
    """Every switch of ``rewardsmith train orm|prm`` (``--config train.yaml`` sets any of them)."""

    config_name = "train config"

    kind: Literal["orm", "prm"] = option("orm", "orm: one score per completion; prm: one per step")
    model: str = option("minilm", "base model: a local directory, a cached hub id, or an alias (minilm, smollm2)")
    output_dir: str = option("rm-out", "where checkpoints, the log, the curves and the final model go")
    # optimisation
    learning_rate: Annotated[float, Range(gt=0)] = option(1e-4, "peak learning rate (AdamW)")
    weight_decay: Annotated[float, Range(ge=0)] = option(0.0, "AdamW weight decay")
    lr_scheduler: Literal["linear", "cosine", "constant"] = option("linear", "decay after warm-up")
    warmup_ratio: Annotated[float, Range(ge=0, le=1)] = option(0.05, "share of steps spent warming up")
    epochs: Annotated[float, Range(gt=0)] = option(1.0, "passes over the training rows")
    max_steps: Annotated[int, Range(gt=0)] | None = option(None, "optimizer steps (overrides epochs)")
    batch_size: Annotated[int, Range(gt=0)] = option(8, "rows per micro-batch (a pair is one row)")
    gradient_accumulation_steps: Annotated[int, Range(gt=0)] = option(1, "micro-batches per optimizer step")
    max_grad_norm: Annotated[float, Range(gt=0)] | None = option(1.0, "gradient clipping (none: off)")
    max_length: Annotated[int, Range(gt=8)] = option(1024, "tokens per sequence; the prompt is cut from "
                                                           "the left first, longer completions are skipped")
    seed: int = option(0, "seeds the data order, the held-out split, dropout and the new head")
    group_by_length: bool = option(True, "batch rows of similar length (less padding)")
    gradient_checkpointing: bool = option(False, "recompute activations in backward: less memory, ~30% slower")
    precision: Literal["auto", "fp32", "bf16"] = option("auto", "auto: bf16 autocast where the hardware does "
                                                                "bf16 natively (CUDA with bf16, CPUs with "
                                                                "AVX512-BF16 or AMX), fp32 elsewhere")
    disable_dropout: bool = option(True, "switch the base model's dropout off (as TRL does): a reward is a "
                                         "regression target, and dropout costs time and memory")
    device: Literal["auto", "cpu", "cuda"] = option("auto", "auto: cuda when available")
    # LoRA
    lora: bool = option(False, "train LoRA adapters (peft) instead of every weight; merged into the saved model")
    lora_r: Annotated[int, Range(gt=0)] = option(16, "LoRA rank")
    lora_alpha: Annotated[float, Range(gt=0)] = option(32.0, "LoRA scale")
    lora_dropout: Annotated[float, Range(ge=0, le=1)] = option(0.05, "LoRA dropout")
    lora_target_modules: str | tuple[str, ...] = option("all-linear", "modules that get adapters")
    # ORM
    margin: float = option(0.0, "Bradley-Terry margin for pairs without a margin column")
    center_rewards_coefficient: Annotated[float, Range(ge=0)] = option(0.0, "weight of the (r_c + r_r)² "
                                                                            "centering term")
    # PRM
    labels: Literal["auto", "hard", "soft"] = option("auto", "PRM labels: hard (cross-entropy), soft (BCE); "
                                                            "auto: soft when any label is strictly between 0 and 1")
    separator: str = option(DEFAULT_SEPARATOR, "joins a row's steps (and splits completions when served)")
    attention: Literal["prefix", "causal", "bidirectional"] = option(
        "prefix", "encoder PRMs, so that step i's score is that of the prefix ending there (as during RL): "
                  "prefix scores one sequence per step prefix (K times the tokens, the encoder's full "
                  "attention within the prefix); causal masks attention to earlier tokens (one sequence, "
                  "but a bidirectionally pretrained encoder learns slowly under it); bidirectional lets "
                  "later steps in (for comparison only). Decoders are causal by themselves")
    chat_template: bool = option(True, "render the prompt with the tokenizer's chat template when it has one")
    # operating
    eval_fraction: Annotated[float, Range(ge=0, le=0.5)] = option(0.05, "rows held out for evaluation when "
                                                                         "no eval data is given")
    eval_every: Annotated[int, Range(ge=0)] = option(100, "evaluate every N optimizer steps (0: only at the end)")
    eval_batch_size: Annotated[int, Range(gt=0)] = option(32, "rows per evaluation batch")
    save_every: Annotated[int, Range(ge=0)] = option(200, "checkpoint every N optimizer steps (0: never)")
    keep_checkpoints: Annotated[int, Range(gt=0)] = option(2, "checkpoints kept (oldest removed)")
    log_every: Literal["auto"] | Annotated[int, Range(gt=0)] = option("auto", LOG_EVERY_DOC)
    report_to: (Literal["none", "tensorboard", "wandb"]
                | tuple[Literal["none", "tensorboard", "wandb"], ...]) = option("none", REPORT_TO_DOC)
    resume: bool = option(True, "continue from the last checkpoint in output_dir when there is one")
    overwrite: bool = option(False, "start over in an output_dir that holds a previous run, removing its files "
                                    "(without it, such a folder is refused unless there is a run to resume)")



@dataclass
class TrainResult:
    output_dir: Path
    model_dir: Path
    steps: int
    seconds: float
    samples_per_s: float
    final_eval: dict[str, Any]
    skipped: dict[str, int] = field(default_factory=dict)




class Trainer:
    """One training run. ``run()`` does it; each phase is a method so tests can look at the parts."""

    def __init__(self, config: TrainConfig, train: Sequence[Example], evaluation: Sequence[Example] | None = None,
                 *, progress: bool = True) -> None:
        import torch

        self.config = config
        self.progress = progress
        self.out = Path(config.output_dir)
        self.kind = config.kind
        _check_examples(config.kind, train)
        require(config.report_to)  # a missing tensorboard / wandb fails before the model loads
        # resume, refuse or clear a used output_dir before anything loads
        lifecycle.claim_output_dir(self.out, resume=config.resume, overwrite=config.overwrite)
        self.tracker = Tracker()  # no sink until run() opens them
        if evaluation is None:
            train, evaluation = holdout(train, config.eval_fraction, config.seed)
        self.raw_train, self.raw_eval = list(train), list(evaluation or [])
        device = config.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        bf16 = config.precision == "bf16" or (config.precision == "auto" and native_bf16(device))
        from accelerate import Accelerator
        from accelerate.state import AcceleratorState

        # accelerate keeps one state per process and refuses a second Accelerator with another
        # precision; each run here is self-contained, so it starts from a fresh state
        AcceleratorState._reset_state(reset_partial_state=True)
        self.accelerator = Accelerator(cpu=device == "cpu", mixed_precision="bf16" if bf16 else "no")
        self.device = self.accelerator.device
        self.bf16 = bf16
        self.tokenizer = load_tokenizer(config.model, padded=True)
        self.hard = self.kind == "prm" and _hard_labels(config.labels, self.raw_train)
        torch.manual_seed(config.seed)
        # fp32 master weights whatever the checkpoint's dtype (bf16 is autocast's business)
        self.model = load_model(config.model, config.kind, num_labels=2 if self.hard else 1, dtype=torch.float32,
                                pad_token_id=self.tokenizer.pad_token_id)
        encoder_prm = self.kind == "prm" and is_bidirectional(self.model.config)
        self.attention = config.attention if encoder_prm else "native"
        self.causal = self.attention == "causal"
        self.encoder = Encoder(self.tokenizer, config.max_length, config.chat_template, StepSplitter(config.separator),
                               prefixes=self.attention == "prefix")
        self.skipped: dict[str, int] = {}
        self.train_set = self._encode(self.raw_train, "train")
        self.eval_set = self._encode(self.raw_eval, "eval")
        if not self.train_set:
            raise ValueError(f"no training row fits in max_length {config.max_length}; raise max_length")
        self._prepare_model()

    # ------------------------------------------------------------------ setup

    def _encode(self, examples: Sequence[Example], split: str) -> list[tuple[Example, list[Encoded]]]:
        out = []
        for example in examples:
            try:
                out.append((example, self.encoder.example(example)))
            except ValueError as exc:  # too long, or a step no token starts in
                key = f"{split}: {'too long' if 'max_length' in str(exc) else 'unencodable'}"
                self.skipped[key] = self.skipped.get(key, 0) + 1
        return out

    def _prepare_model(self) -> None:
        import torch

        config = self.config
        if config.disable_dropout:
            for module in self.model.modules():
                if isinstance(module, torch.nn.Dropout):
                    module.p = 0.0
        if config.gradient_checkpointing:
            self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            self.model.config.use_cache = False
        if config.lora:
            from peft import LoraConfig, get_peft_model

            task = "SEQ_CLS" if self.kind == "orm" else "TOKEN_CLS"
            targets = config.lora_target_modules
            targets = targets if isinstance(targets, str) else list(targets)
            lora = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                              target_modules=targets, task_type=task, modules_to_save=_head_names(self.model))
            self.model = get_peft_model(self.model, lora)
            if config.gradient_checkpointing:
                self.model.enable_input_require_grads()
        params = [p for p in self.model.parameters() if p.requires_grad]
        self.optimizer = lifecycle.adamw(params, config.learning_rate, config.weight_decay)
        self.steps_per_epoch = max(1, math.ceil(len(self.train_set) / config.batch_size)
                                   // config.gradient_accumulation_steps)
        self.total_steps = config.max_steps or max(1, math.ceil(self.steps_per_epoch * config.epochs))
        self.scheduler = lifecycle.lr_schedule(config.lr_scheduler, self.optimizer, config.warmup_ratio,
                                               self.total_steps)
        self.model, self.optimizer, self.scheduler = self.accelerator.prepare(self.model, self.optimizer,
                                                                              self.scheduler)
        self.model.train()

    # ------------------------------------------------------------------ data order

    def micro_batches(self, epoch: int) -> list[list[int]]:
        """The epoch's micro-batches (indices into the training set): a permutation seeded by
        (seed, epoch), grouped by length within windows of 50 batches, the batches shuffled again.
        A function of the seed and the epoch alone, so a resumed run sees the same order."""
        rng = random.Random(f"{self.config.seed}:{epoch}")
        order = list(range(len(self.train_set)))
        rng.shuffle(order)
        size = self.config.batch_size
        if self.config.group_by_length:
            window = size * 50
            lengths = [sum(len(e) for e in self.train_set[i][1]) for i in range(len(self.train_set))]
            grouped = []
            for start in range(0, len(order), window):
                grouped += sorted(order[start:start + window], key=lambda i: -lengths[i])
            order = grouped
        batches = [order[i:i + size] for i in range(0, len(order), size)]
        if self.config.group_by_length:
            rng.shuffle(batches)
        return batches

    def optimizer_steps(self, start: int) -> Iterator[tuple[int, int, list[list[int]]]]:
        """(step, epoch, its micro-batches) from optimizer step ``start`` on."""
        accum = self.config.gradient_accumulation_steps
        step = 0
        epoch = 0
        while True:
            batches = self.micro_batches(epoch)
            for first in range(0, len(batches) - accum + 1, accum):
                if step >= self.total_steps:
                    return
                if step >= start:
                    yield step, epoch, batches[first:first + accum]
                step += 1
            epoch += 1

    # ------------------------------------------------------------------ loss

    def batch_loss(self, indices: Sequence[int]) -> tuple[Any, dict[str, float]]:
        """The mean loss over a micro-batch, and what it got right (for the log)."""
        import torch
        import torch.nn.functional as F

        examples = [self.train_set[i] for i in indices]
        sequences = [seq for _, seqs in examples for seq in seqs]
        batch = collate(sequences, self.tokenizer.pad_token_id, self.device)
        with self.accelerator.autocast():
            logits = position_logits(self.model, batch["input_ids"], batch["attention_mask"], batch["positions"],
                                     causal=self.causal)
        logits = logits.float()
        if self.kind == "orm" and isinstance(examples[0][0], Pair):
            rewards = logits[:, 0, 0]
            chosen, rejected = rewards[0::2], rewards[1::2]
            margins = batch["margins"][0::2]
            loss = -F.logsigmoid(chosen - rejected - margins).mean()
            if self.config.center_rewards_coefficient:
                loss = loss + self.config.center_rewards_coefficient * ((chosen + rejected) ** 2).mean()
            return loss, {"correct": float((chosen > rejected).sum()), "count": float(len(chosen))}
        labels = batch["labels"]
        read = labels != IGNORE
        if self.hard:
            target = (labels[read] >= 0.5).long()
            loss = F.cross_entropy(logits[read], target)
            predicted = logits[read].argmax(-1)
        else:
            z = logits[..., 0][read]
            target = labels[read]
            loss = F.binary_cross_entropy_with_logits(z, target)
            predicted = (z > 0).long()
            target = (target >= 0.5).long()
        return loss, {"correct": float((predicted == target).sum()), "count": float(torch.numel(target))}

    # ------------------------------------------------------------------ the loop

    def run(self) -> TrainResult:
        import torch

        self.out.mkdir(parents=True, exist_ok=True)
        start_step = self.maybe_resume()
        log_path = self.out / "log.jsonl"
        if start_step == 0 and log_path.exists():
            log_path.unlink()
        logger.info(f"training {self.kind} on {plural(len(self.train_set), 'row', thousands=True)} "
                 f"({len(self.eval_set):,} held out) for {plural(self.total_steps, 'step')} on {self.device}"
                 f"{' in bf16' if self.bf16 else ''}"
                 f"{', LoRA' if self.config.lora else ''}" + (f"; skipped {self.skipped}" if self.skipped else ""))
        log_every = log_interval(self.config.log_every, self.total_steps)
        self.tracker = Tracker.open(self.config.report_to, self.out, asdict(self.config), start_step=start_step)
        bar = lifecycle.progress(self.total_steps, start_step, self.progress, "training")
        window: dict[str, float] = {"loss": 0.0, "correct": 0.0, "count": 0.0, "samples": 0.0, "steps": 0.0}
        started = time.perf_counter()
        window_start = started
        samples_total = 0
        last_eval: dict[str, Any] = {}
        step = start_step
        try:
            for step, _epoch, micro in self.optimizer_steps(start_step):
                grad_norm = self._optimizer_step(micro, window)
                samples = sum(len(m) for m in micro)
                samples_total += samples
                window["samples"] += samples
                done = step + 1
                bar.update(1)
                if done % log_every == 0 or done == self.total_steps:
                    now = time.perf_counter()
                    record = {"step": done, "epoch": round(done / self.steps_per_epoch, 3),
                              "loss": window["loss"] / window["steps"],
                              "accuracy": window["correct"] / max(window["count"], 1.0),
                              "lr": self.scheduler.get_last_lr()[0], "grad_norm": grad_norm,
                              "samples_per_s": window["samples"] / max(now - window_start, 1e-9)}
                    self._write_log(log_path, record)
                    bar.set_postfix(loss=f"{record['loss']:.4f}", acc=f"{record['accuracy']:.3f}")
                    window = dict.fromkeys(window, 0.0)
                    window_start = now
                if self.config.eval_every and done % self.config.eval_every == 0 and done < self.total_steps:
                    last_eval = self.evaluate()
                    self._write_log(log_path, {"step": done, **{f"eval_{k}": v for k, v in last_eval.items()}})
                if self.config.save_every and done % self.config.save_every == 0 and done < self.total_steps:
                    self.save_checkpoint(done)
            seconds = time.perf_counter() - started
            last_eval = self.evaluate()
            self._write_log(log_path, {"step": self.total_steps, **{f"eval_{k}": v for k, v in last_eval.items()}})
        finally:
            bar.close()
            self.tracker.close()
        model_dir = self.save_model(last_eval)
        plot_curves(log_path, self.out / "curves.png")
        del torch  # imported for its side effect of failing early when missing
        result = TrainResult(self.out, model_dir, self.total_steps, seconds,
                             samples_total / max(seconds, 1e-9), last_eval, dict(self.skipped))
        (self.out / "result.json").write_text(json.dumps(
            {**asdict(result), "output_dir": str(self.out), "model_dir": str(model_dir)}, indent=2, default=str))
        return result

    def _optimizer_step(self, micro: list[list[int]], window: dict[str, float]) -> float | None:
        accum = len(micro)
        for indices in micro:
            loss, stats = self.batch_loss(indices)
            self.accelerator.backward(loss / accum)
            window["loss"] += loss.item() / accum
            window["correct"] += stats["correct"]
            window["count"] += stats["count"]
        grad_norm = None
        if self.config.max_grad_norm is not None:
            grad_norm = float(self.accelerator.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm))
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        window["steps"] += 1
        return grad_norm

    def _write_log(self, path: Path, record: dict[str, Any]) -> None:
        with path.open("a") as handle:
            handle.write(json.dumps(record) + "\n")
        self.tracker.log(record["step"], record)

    # ------------------------------------------------------------------ evaluation

    def evaluate(self) -> dict[str, Any]:
        """Held-out metrics: pairwise accuracy (pairs), AUROC and accuracy (points), step AUROC,
        step accuracy and first-error F1 at threshold 0.5 (steps); the loss-free view of progress."""
        if not self.eval_set:
            return {}
        return evaluate_encoded(self.model, self.eval_set, self.tokenizer.pad_token_id, self.config.eval_batch_size,
                                self.causal)

    # ------------------------------------------------------------------ checkpoints

    def checkpoint_dirs(self) -> list[Path]:
        return checkpoint_dirs(self.out)

    def save_checkpoint(self, step: int) -> Path:
        """Trainable weights, optimizer, scheduler and RNG states (see :mod:`.lifecycle`)."""
        return lifecycle.save_checkpoint(self.out, step, self.accelerator.unwrap_model(self.model), self.optimizer,
                                         self.scheduler, self.fingerprint(), self.config.keep_checkpoints)

    def fingerprint(self) -> dict[str, Any]:
        """What must match for a resume to continue the same run."""
        keys = ("kind", "model", "seed", "batch_size", "gradient_accumulation_steps", "lora", "labels",
                "separator", "max_length", "group_by_length", "attention")
        return lifecycle.fingerprint(self.config, keys, rows=len(self.train_set), total_steps=self.total_steps)

    def maybe_resume(self) -> int:
        """The step to start from: that of the last complete checkpoint (weights, optimizer,
        scheduler and RNG restored), or 0."""
        if not self.config.resume:
            return 0
        state = lifecycle.resume(self.out, self.fingerprint(), self.accelerator.unwrap_model(self.model),
                                 self.optimizer, self.scheduler, total=self.total_steps)
        return int(state["step"]) if state is not None else 0

    # ------------------------------------------------------------------ the saved model

    def save_model(self, final_eval: dict[str, Any]) -> Path:
        """The final model as a plain HF checkpoint (LoRA merged in) with ``rewardsmith.json``."""
        model = self.accelerator.unwrap_model(self.model)
        if self.config.lora:
            model = model.merge_and_unload()
        threshold = float(final_eval.get("threshold", 0.5)) if self.kind == "prm" else 0.5
        meta = ModelMeta(kind=self.kind, max_length=self.config.max_length, chat_template=self.config.chat_template,
                         separator=self.config.separator, causal=self.causal, attention=self.attention,
                         base=self.config.model,
                         threshold=threshold, num_labels=2 if self.hard else 1)
        return lifecycle.save_model(self.out, model, self.tokenizer, {META_FILE: json.dumps(meta.to_json(), indent=2)})


# --------------------------------------------------------------------------- helpers


def train(config: TrainConfig, examples: Sequence[Example], evaluation: Sequence[Example] | None = None,
          *, progress: bool = True) -> TrainResult:
    """Train a reward model (see :class:`TrainConfig`); the model lands in ``output_dir/model``."""
    return Trainer(config, examples, evaluation, progress=progress).run()


def holdout(examples: Sequence[Example], fraction: float, seed: int) -> tuple[list[Example], list[Example]]:
    """A seeded split; rows of one prompt stay on one side (no prompt is both trained and tested)."""
    if fraction <= 0 or len(examples) < 2:
        return list(examples), []
    prompts = sorted({json.dumps(e.prompt, sort_keys=True) for e in examples})
    random.Random(f"holdout:{seed}").shuffle(prompts)
    held = set(prompts[: max(1, round(len(prompts) * fraction))])
    if len(held) == len(prompts):
        return list(examples), []
    train_part = [e for e in examples if json.dumps(e.prompt, sort_keys=True) not in held]
    eval_part = [e for e in examples if json.dumps(e.prompt, sort_keys=True) in held]
    return train_part, eval_part


def evaluate_encoded(model: Any, encoded: Sequence[tuple[Example, list[Encoded]]], pad_id: int, batch_size: int,
                     causal: bool) -> dict[str, Any]:
    flat = [seq for _, seqs in encoded for seq in seqs]
    values = predict(model, flat, pad_id, batch_size, causal)
    first = encoded[0][0]
    if isinstance(first, Pair):
        chosen, rejected = [v[0] for v in values[0::2]], [v[0] for v in values[1::2]]
        return {"pairwise_accuracy": metrics.pairwise_accuracy(chosen, rejected),
                "auroc": metrics.auroc([1.0] * len(chosen) + [0.0] * len(rejected), chosen + rejected)}
    if isinstance(first, Point):
        labels = [e.label for e, _ in encoded]  # type: ignore[union-attr]
        scores = [v[0] for v in values]
        return {"auroc": metrics.auroc(labels, scores),
                "accuracy": metrics.mean_of([float((s > 0) == (y >= 0.5)) for s, y in zip(scores, labels,
                                                                                          strict=True)])}
    probs, k = [], 0
    for _, seqs in encoded:  # a row's positions, over its one sequence or its prefixes
        probs.append([sigmoid(x) for v in values[k:k + len(seqs)] for x in v])
        k += len(seqs)
    labels = [list(e.labels) for e, _ in encoded]  # type: ignore[union-attr]
    out = metrics.step_metrics(probs, labels)
    truth = [_first_error(e) for e, _ in encoded]  # type: ignore[arg-type]
    threshold, best = metrics.best_threshold(probs, truth)
    out.update({"first_error_f1": metrics.processbench_f1([metrics.first_error(p, 0.5) for p in probs], truth)["f1"],
                "best_threshold_f1": best["f1"], "threshold": threshold,
                "outcome_auroc": metrics.auroc([float(t < 0) for t in truth], [min(p) for p in probs])})
    return out


def _first_error(example: Stepwise) -> int:
    if example.first_error is not None:
        return example.first_error
    return next((i for i, v in enumerate(example.labels) if v < 0.5), -1)


def native_bf16(device: str) -> bool:
    """Whether ``device`` computes in bf16 natively, so that autocast speeds training up instead
    of emulating it (CUDA with bf16; x86 CPUs with AVX512-BF16 or AMX)."""
    import torch

    if device.startswith("cuda"):
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in checks)


def _check_examples(kind: str, examples: Sequence[Example]) -> None:
    if not examples:
        raise ValueError("no training rows")
    wanted = (Pair, Point) if kind == "orm" else (Stepwise,)
    if not isinstance(examples[0], wanted):
        found = type(examples[0]).__name__.lower()
        need = "pairwise or pointwise" if kind == "orm" else "stepwise"
        raise ValueError(f"`train {kind}` needs {need} rows, got {found} rows")
    if len({type(e) for e in examples}) > 1:
        raise ValueError("the training rows mix formats; use one (pairwise, pointwise or stepwise) per file")


def _hard_labels(mode: str, examples: Sequence[Example]) -> bool:
    if mode != "auto":
        return mode == "hard"
    return all(v in (0.0, 1.0) for e in examples for v in e.labels)  # type: ignore[union-attr]


def _head_names(model: Any) -> list[str]:
    return [name for name in ("score", "classifier", "pooler") if hasattr(model, name)]


def curve_panels(records: Sequence[dict[str, Any]]) -> dict[str, list[Series]]:
    """What :func:`plot_curves` draws: the training loss; training accuracy with every evaluation
    metric in [0, 1] (AUROC, F1, accuracy); the learning rate."""
    keys = sorted({k for r in records for k in r if k.startswith("eval_") and k not in SKIPPED_IN_PLOT})
    panels = {"training loss": ["loss"], "accuracy and evaluation": ["accuracy", *keys], "learning rate": ["lr"]}
    return {title: [s for s in (series(records, key) for key in names) if s.xs] for title, names in panels.items()}


def plot_curves(log_path: Path, target: Path) -> Path | None:
    """The curves of :func:`curve_panels` as a PNG (matplotlib, no display); None when nothing
    was logged or matplotlib is missing."""
    records = read_log(log_path)
    if not any("loss" in r for r in records):
        return None
    return draw(curve_panels(records), target, "optimizer step")


SKIPPED_IN_PLOT = frozenset({"eval_steps", "eval_threshold"})


__all__ = ["TrainConfig", "TrainResult", "Trainer", "curve_panels", "evaluate_encoded", "holdout", "log_odds",
           "plot_curves", "train"]
