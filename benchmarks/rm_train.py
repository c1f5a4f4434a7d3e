"""ORM training throughput: rewardsmith's trainer against TRL's ``RewardTrainer``, same model, same pairs.

Pairwise Bradley-Terry training of one base model on the same synthetic pairs (a correct and a
wrong step-by-step solution of the same problem), the same batch size, the same number of
optimizer steps, learning rate, max_length and seed, on the CPU, in one run. Three variants,
each in its own child process (so each one's peak memory is its own):

* ``ours``: ``rewardsmith.reward_models.train.Trainer`` with its defaults (``precision: auto``:
  bf16 autocast on a CPU with AVX512-BF16/AMX or a bf16 GPU, fp32 elsewhere; no gradient
  checkpointing; dropout off; fused AdamW; batches grouped by length); warm-up 0 to match TRL's.
* ``TRL(defaults)``: ``RewardConfig`` as shipped, changed only where it cannot run on a CPU
  (``use_cpu=True``, so bf16 autocast and gradient checkpointing stay on, as a user who follows
  the error message gets them; ``eos_token=sep_token`` for a tokenizer without an EOS) and where
  the two runs must match (``per_device_train_batch_size``, ``max_steps``, ``learning_rate``,
  ``max_length``, ``seed``). TRL's rows are conversational when the tokenizer has a chat
  template (ours then renders the prompt with it), plain text otherwise (``--trl-format``).
* ``TRL(no GC)``: the same with ``gradient_checkpointing=False``.
* only when named in ``--variants``: ``ours-fp32`` (``precision: fp32``) and ``TRL(fp32, no GC)``
  (``bf16=False, gradient_checkpointing=False``): both sides doing fp32 arithmetic.

Both sides: ``report_to="none"`` / no saving / no evaluation during training / one log line at
the end (``eval_every=0, save_every=0, log_every=steps`` for ours). How to read the table:

* ``pairs/s`` is training pairs (a pair = chosen + rejected) per second of the training loop
  (from the first step to the end of the last; imports, model loading, tokenization, the final
  evaluation and saving are not in it: ``setup`` shows loading + tokenizing). ``median step``
  is the wall time between consecutive optimizer steps, the first left out; ``in
  fwd+bwd+clip+optim`` the part of it inside forward, backward, clipping and the optimizer
  step (the difference is the loop's own per-step overhead: data, logging, callbacks), and
  ``in optimizer.step()`` the optimizer alone (TRL's default is a fused AdamW).
* ``tokens/sequence`` and ``padding`` show how much work a step is: the two trainers frame the
  text differently (see below) and ours groups batches by length while TRL samples at random.
* ``held-out acc``: pairwise accuracy (chosen scored strictly higher) on the same held-out
  pairs, each model scored by the same code here (HF forward in fp32, batches of 32), each on
  its own trainer's encoding of the pairs (the input it was trained on).
* ``peak RSS in training``: the child's ``ru_maxrss`` when the last step ends; ``max RSS``: the
  child's whole life (``wait4``), evaluation and saving included.

    python benchmarks/rm_train.py [--model minilm|smollm2|PATH] [--pairs 1000] [--steps 60]
                                  [--batch-size 8] [--max-length 256] [--seed 0] [--threads N] [--quick]
                                  [--variants ours,trl-defaults,trl-no-gc,ours-fp32,trl-fp32]

Writes ``benchmarks/results/rm_train.json`` (and each child's log next to it).

On a busy CPU, pass ``--threads 1``: with torch's default of one thread per core, a variant whose
threads are descheduled waits at every op's barrier, which hurts many small ops (a per-tensor
optimizer, dropout) far more than large matmuls and distorts the ratios (measured here: ours'
AdamW step 2.3 s with 2 threads under load, 71 ms with 1). Even then only the ratios carry over.
"""

# What trips a user up with TRL 1.16's RewardTrainer on this setup. Each item is tried by the
# `probes` child on every run (its outcome is printed and stored in the JSON); the messages
# below are the ones it showed with transformers 5.24 / torch 2.13 (CPU) and MiniLM / SmolLM2:
#
# 1. RewardConfig(output_dir=...) left at its defaults refuses to be built on a machine without a
#    bf16 GPU: "ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you
#    want to train the model on CPU." Its defaults: bf16=None -> True (TRL's _BaseConfig turns it on
#    unless fp16 is set), gradient_checkpointing=True, learning_rate=1e-4, optim=adamw_torch_fused,
#    lr_scheduler_type=linear, warmup_steps=0, max_grad_norm=1.0, weight_decay=0, logging_steps=10,
#    save_strategy="steps" (every 500), eval_strategy="no", max_length=1024 (longer pairs are dropped,
#    not truncated), disable_dropout=True, num_train_epochs=3, per_device_train_batch_size=8, seed=42.
#    Fix: use_cpu=True (bf16 then runs as CPU autocast, gradient checkpointing stays on), or
#    bf16=False; gradient_checkpointing=False for speed when memory allows.
# 2. `model` as a str (local directory or hub id) is loaded by TRL with num_labels=1 and fp32. A
#    model object loaded the usual way, AutoModelForSequenceClassification.from_pretrained(path), has
#    num_labels=2 and is refused: "ValueError: The model has `num_labels=2`, but reward models require
#    `num_labels=1` ...". Fix: pass the path, or from_pretrained(path, num_labels=1).
# 3. A tokenizer without an eos_token (BERT-like encoders: MiniLM) crashes while preparing a
#    plain-text dataset, since TRL appends the EOS to every chosen/rejected text:
#    "TypeError: endswith first arg must be str or a tuple of str, not NoneType". Fix:
#    RewardConfig(eos_token=tokenizer.sep_token); the text then ends in "[SEP] [SEP]" (the appended
#    one plus the tokenizer's own).
# 4. Plain-text rows: TRL tokenizes prompt + chosen as one string with nothing between them, so a
#    prompt that does not end in whitespace runs into the completion ("...now?Kofi starts...").
#    Harmless for BERT's pre-tokenizer (it splits at punctuation); with a byte-level BPE the first
#    word loses its leading space ("K ofi", not " K ofi"). End the prompt with whitespace, or use
#    conversational rows.
# 5. pad == eos (SmolLM2: both "<|im_end|>"): the EOS TRL appends to plain-text rows is the pad
#    token, and HF's sequence-classification head reads the last token that is not the pad id, so
#    the score is read at the token before the EOS (the probe scores a row with and without the
#    appended EOS: 0.513509 both times, with SmolLM2's fresh head).
#    Harmless for training; it matters when the model is later served by code that reads the
#    score at the EOS. Conversational rows avoid it (the template ends in "<|im_end|>\n").

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
VARIANTS = ("ours", "trl-defaults", "trl-no-gc")
EXTRA = ("ours-fp32", "trl-fp32")  # only when asked for (--variants): both sides in fp32
LABELS = {"ours": "ours", "trl-defaults": "TRL(defaults)", "trl-no-gc": "TRL(no GC)", "trl-fp32": "TRL(fp32, no GC)",
          "ours-fp32": "ours(fp32)"}
SCORE_BATCH = 32


# --------------------------------------------------------------------------- shared helpers


def max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def current_rss_mb() -> float | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def make_rows(pairs: int, eval_pairs: int, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``pairs`` training pairs and ``eval_pairs`` held-out ones, each from its own problem."""
    from rewardsmith.adapters.cli.reward_models import synthetic_form
    from rewardsmith.reward_models.synthetic import generate

    rows = synthetic_form(generate(pairs + eval_pairs, seed), "pairwise")
    return rows[:pairs], rows[pairs:]


def use_chat(spec: dict[str, Any], tokenizer: Any) -> bool:
    """TRL gets conversational rows when the tokenizer has a chat template (ours renders the
    prompt with it then, by default), plain-text rows otherwise."""
    if spec["trl_format"] != "auto":
        return bool(spec["trl_format"] == "chat")
    return bool(getattr(tokenizer, "chat_template", None))


def trl_rows(rows: list[dict[str, Any]], chat: bool) -> list[dict[str, Any]]:
    if not chat:
        return [{"prompt": r["prompt"], "chosen": r["chosen"], "rejected": r["rejected"]} for r in rows]
    return [{"prompt": [{"role": "user", "content": r["prompt"]}],
             "chosen": [{"role": "assistant", "content": r["chosen"]}],
             "rejected": [{"role": "assistant", "content": r["rejected"]}]} for r in rows]


def score_pairs(model: Any, pairs: list[tuple[list[int], list[int]]], pad_id: int) -> dict[str, Any]:
    """The one scoring path for every variant: right-padded batches through the HF model's own
    forward in fp32 (pooled [CLS] for encoders, last non-pad token for decoders), one logit each."""
    import torch

    flat = [ids for pair in pairs for ids in pair]
    order = sorted(range(len(flat)), key=lambda i: len(flat[i]))
    scores = [0.0] * len(flat)
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), SCORE_BATCH):
            chunk = order[start:start + SCORE_BATCH]
            length = max(len(flat[i]) for i in chunk)
            ids = torch.full((len(chunk), length), pad_id, dtype=torch.long)
            mask = torch.zeros((len(chunk), length), dtype=torch.long)
            for row, i in enumerate(chunk):
                ids[row, :len(flat[i])] = torch.tensor(flat[i], dtype=torch.long)
                mask[row, :len(flat[i])] = 1
            logits = model(input_ids=ids, attention_mask=mask).logits.float()
            for row, i in enumerate(chunk):
                scores[i] = float(logits[row, 0])
    chosen, rejected = scores[0::2], scores[1::2]
    correct = sum(c > r for c, r in zip(chosen, rejected, strict=True))
    return {"heldout_pairs": len(pairs), "heldout_accuracy": correct / len(pairs) if pairs else None,
            "heldout_ties": sum(c == r for c, r in zip(chosen, rejected, strict=True))}


def step_figures(ends: list[float], inner: list[float], optim: list[float], start: float) -> dict[str, Any]:
    """Median wall time between optimizer steps (the first, with its warm-up, left out), and the
    median time inside forward/backward/clipping/optimizer and inside ``optimizer.step()`` alone."""

    def median_ms(values: list[float]) -> float | None:
        steady = values[1:] or values
        return 1000 * statistics.median(steady) if steady else None

    gaps = [b - a for a, b in zip([start, *ends[:-1]], ends, strict=True)]
    return {"median_step_ms": median_ms(gaps), "median_compute_ms": median_ms(inner),
            "median_optimizer_ms": median_ms(optim), "first_step_ms": 1000 * gaps[0] if gaps else None}


# --------------------------------------------------------------------------- children


def run_ours(spec: dict[str, Any], train: list[dict[str, Any]], heldout: list[dict[str, Any]],
             workdir: Path, precision: str = "auto") -> dict[str, Any]:
    from rewardsmith.reward_models.data import load_examples
    from rewardsmith.reward_models.train import TrainConfig, Trainer

    class TimedTrainer(Trainer):
        """Ours, unchanged, with a stopwatch around each optimizer step."""

        ends: list[float]
        inner: list[float]
        pairs_seen = 0
        tokens = 0
        padded = 0
        peak_train_mb = 0.0

        def _optimizer_step(self, micro: list[list[int]], window: dict[str, float]) -> float | None:
            t = time.perf_counter()
            out = super()._optimizer_step(micro, window)
            now = time.perf_counter()
            self.inner.append(now - t)
            self.ends.append(now)
            for indices in micro:
                seqs = [seq for i in indices for seq in self.train_set[i][1]]
                self.pairs_seen += len(indices)
                self.tokens += sum(len(s) for s in seqs)
                self.padded += len(seqs) * max(len(s) for s in seqs)
            self.peak_train_mb = max_rss_mb()
            return out

    # what Trainer.__init__ imports lazily, imported before the clock starts (TRL's are by `import trl`)
    from accelerate import Accelerator  # noqa: F401
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_scheduler  # noqa: F401

    train_ex = load_examples(enumerate(train, 1), "pairwise").examples
    eval_ex = load_examples(enumerate(heldout, 1), "pairwise").examples
    config = TrainConfig.from_mapping({
        "kind": "orm", "model": spec["model"], "output_dir": str(workdir / "ours"), "device": "cpu",
        "learning_rate": spec["learning_rate"], "warmup_ratio": 0.0, "max_steps": spec["steps"],
        "batch_size": spec["batch_size"], "max_length": spec["max_length"], "seed": spec["seed"],
        "eval_every": 0, "save_every": 0, "log_every": spec["steps"], "resume": False, "overwrite": True,
        "precision": precision,
    })
    t = time.perf_counter()
    trainer = TimedTrainer(config, train_ex, eval_ex, progress=False)
    trainer.ends, trainer.inner = [], []
    setup = time.perf_counter() - t
    optim: list[float] = []
    clock = {"t": 0.0}
    inner_opt = getattr(trainer.optimizer, "optimizer", trainer.optimizer)  # accelerate's wrapper
    inner_opt.register_step_pre_hook(lambda *_: clock.__setitem__("t", time.perf_counter()))
    inner_opt.register_step_post_hook(lambda *_: optim.append(time.perf_counter() - clock["t"]))
    rss_before = current_rss_mb()
    result = trainer.run()
    loop_start = trainer.ends[-1] - result.seconds if trainer.ends else 0.0
    model = trainer.accelerator.unwrap_model(trainer.model)
    pairs = [(seqs[0].input_ids, seqs[1].input_ids) for _, seqs in trainer.eval_set]
    scored = score_pairs(model, pairs, trainer.tokenizer.pad_token_id)
    return {
        "setup_s": setup, "loop_s": result.seconds, "steps": len(trainer.ends), "pairs_trained": trainer.pairs_seen,
        "pairs_per_s": trainer.pairs_seen / result.seconds, "train_pairs_kept": len(trainer.train_set),
        "tokens_per_sequence": trainer.tokens / max(2 * trainer.pairs_seen, 1),
        "padding_share": 1 - trainer.tokens / max(trainer.padded, 1),
        **step_figures(trainer.ends, trainer.inner, optim, loop_start), **scored,
        "optim": f"torch.optim.AdamW ({_adamw_mode(inner_opt)})",
        "own_eval_pairwise_accuracy": result.final_eval.get("pairwise_accuracy"),
        "rss_before_train_mb": rss_before, "peak_train_rss_mb": trainer.peak_train_mb,
        "precision": "bf16 autocast" if trainer.bf16 else "fp32", "gradient_checkpointing": False,
    }


def _adamw_mode(optimizer: Any) -> str:
    """Which AdamW implementation runs: fused, foreach, or the per-tensor loop (torch's CPU default)."""
    inner = getattr(optimizer, "optimizer", optimizer)
    group = inner.param_groups[0] if getattr(inner, "param_groups", None) else {}
    if group.get("fused"):
        return "fused"
    if group.get("foreach") is None:
        return "torch's default: a per-tensor loop on a CPU"
    return "foreach" if group["foreach"] else "per-tensor loop"


def trl_config_kwargs(spec: dict[str, Any], variant: str, tokenizer: Any, workdir: Path) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "output_dir": str(workdir / variant), "use_cpu": True,  # the one change TRL's defaults need on a CPU
        "per_device_train_batch_size": spec["batch_size"], "max_steps": spec["steps"],
        "learning_rate": spec["learning_rate"], "max_length": spec["max_length"], "seed": spec["seed"],
        "report_to": "none", "save_strategy": "no", "eval_strategy": "no", "logging_steps": spec["steps"],
        "disable_tqdm": True,
    }
    if tokenizer.eos_token is None:  # trap 3: TRL appends an EOS to plain-text rows
        kwargs["eos_token"] = tokenizer.sep_token
    if variant == "trl-no-gc":
        kwargs.update(gradient_checkpointing=False)
    if variant == "trl-fp32":
        kwargs.update(bf16=False, gradient_checkpointing=False)
    return kwargs


def run_trl(spec: dict[str, Any], variant: str, train: list[dict[str, Any]], heldout: list[dict[str, Any]],
            workdir: Path) -> dict[str, Any]:
    from datasets import Dataset, disable_progress_bars
    from transformers import AutoTokenizer, TrainerCallback
    from trl import RewardConfig, RewardTrainer

    from rewardsmith.reward_models.model import resolve

    disable_progress_bars()
    path = resolve(spec["model"])
    tokenizer = AutoTokenizer.from_pretrained(path)  # only to decide; TRL loads its own from the path
    chat = use_chat(spec, tokenizer)
    args = RewardConfig(**trl_config_kwargs(spec, variant, tokenizer, workdir))

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.start = 0.0
            self.begin = 0.0
            self.ends: list[float] = []
            self.inner: list[float] = []
            self.optim: list[float] = []
            self.optim_begin = 0.0
            self.peak_train_mb = 0.0

        def on_train_begin(self, *_: Any, **__: Any) -> None:
            self.start = time.perf_counter()

        def on_step_begin(self, *_: Any, **__: Any) -> None:
            self.begin = time.perf_counter()

        def on_pre_optimizer_step(self, *_: Any, **__: Any) -> None:
            self.optim_begin = time.perf_counter()

        def on_optimizer_step(self, *_: Any, **__: Any) -> None:
            self.optim.append(time.perf_counter() - self.optim_begin)

        def on_step_end(self, *_: Any, **__: Any) -> None:
            now = time.perf_counter()
            self.inner.append(now - self.begin)
            self.ends.append(now)
            self.peak_train_mb = max_rss_mb()

    timer = StepTimer()
    t = time.perf_counter()
    trainer = RewardTrainer(model=path, args=args, train_dataset=Dataset.from_list(trl_rows(train, chat)),
                            callbacks=[timer])
    setup = time.perf_counter() - t
    counts = {"pairs": 0, "tokens": 0, "padded": 0}

    def count(_: Any, __: Any, kwargs: dict[str, Any]) -> None:
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        counts["pairs"] += ids.shape[0] // 2
        counts["tokens"] += int(mask.sum())
        counts["padded"] += ids.numel()

    model = trainer.accelerator.unwrap_model(trainer.model)
    handle = model.register_forward_pre_hook(count, with_kwargs=True)
    rss_before = current_rss_mb()
    output = trainer.train()
    handle.remove()
    loop_s = timer.ends[-1] - timer.start
    prepared = trainer._prepare_dataset(Dataset.from_list(trl_rows(heldout, chat)), trainer.processing_class,
                                        trainer.args, "heldout")  # exactly TRL's own preprocessing
    pairs = [(row["chosen_ids"], row["rejected_ids"]) for row in prepared]
    scored = score_pairs(model, pairs, trainer.processing_class.pad_token_id)
    return {
        "setup_s": setup, "loop_s": loop_s, "steps": len(timer.ends), "pairs_trained": counts["pairs"],
        "pairs_per_s": counts["pairs"] / loop_s, "train_pairs_kept": len(trainer.train_dataset),
        "tokens_per_sequence": counts["tokens"] / max(2 * counts["pairs"], 1),
        "padding_share": 1 - counts["tokens"] / max(counts["padded"], 1),
        **step_figures(timer.ends, timer.inner, timer.optim, timer.start), **scored,
        "trl_train_runtime_s": output.metrics.get("train_runtime"),
        "rss_before_train_mb": rss_before, "peak_train_rss_mb": timer.peak_train_mb,
        "precision": "bf16 autocast" if args.bf16 else "fp32",
        "gradient_checkpointing": bool(args.gradient_checkpointing),
        "optim": f"{getattr(args.optim, 'value', args.optim)} ({_adamw_mode(trainer.optimizer)})",
        "disable_dropout": args.disable_dropout,
        "format": "conversational" if chat else "plain text",
    }


def run_probes(spec: dict[str, Any], train: list[dict[str, Any]], workdir: Path) -> list[dict[str, str]]:
    """Try each thing a user trips over (see the comment at the top) and record what happened."""
    import torch
    from datasets import Dataset, disable_progress_bars
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from trl import RewardConfig, RewardTrainer

    from rewardsmith.reward_models.model import resolve

    disable_progress_bars()
    path = resolve(spec["model"])
    tokenizer = AutoTokenizer.from_pretrained(path)
    small = Dataset.from_list(trl_rows(train[:8], chat=False))
    found: list[dict[str, str]] = []

    def attempt(trap: str, fix: str, action: Any) -> Any:
        try:
            value = action()
        except Exception as exc:  # the point is to show the message
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            found.append({"trap": trap, "seen": f"{type(exc).__name__}: {text[:240]}", "fix": fix})
            return None
        found.append({"trap": trap, "seen": "no error" if value is None else str(value), "fix": fix})
        return value

    base = {"output_dir": str(workdir / "probe"), "report_to": "none", "save_strategy": "no", "max_steps": 1}
    attempt("RewardConfig() with its defaults on a CPU",
            "use_cpu=True (keeps bf16, as CPU autocast) or bf16=False",
            lambda: RewardConfig(**base) and "accepted (this machine has a bf16 GPU)")

    def defaults() -> str:
        c = RewardConfig(output_dir=str(workdir / "probe"), use_cpu=True)
        return (f"bf16={c.bf16} gradient_checkpointing={c.gradient_checkpointing} lr={c.learning_rate} "
                f"optim={getattr(c.optim, 'value', c.optim)} scheduler={getattr(c.lr_scheduler_type, 'value', '')} "
                f"warmup_steps={c.warmup_steps} max_grad_norm={c.max_grad_norm} logging_steps={c.logging_steps} "
                f"save_strategy={getattr(c.save_strategy, 'value', c.save_strategy)}/{c.save_steps} "
                f"max_length={c.max_length} disable_dropout={c.disable_dropout} epochs={c.num_train_epochs} "
                f"batch={c.per_device_train_batch_size} seed={c.seed} report_to={c.report_to}")

    attempt("what RewardConfig(use_cpu=True) leaves on", "set what you need explicitly", defaults)
    cfg_kwargs = {**base, "use_cpu": True, "bf16": False}
    if tokenizer.eos_token is None:
        cfg_kwargs["eos_token"] = tokenizer.sep_token
    cfg = RewardConfig(**cfg_kwargs)

    def model_object() -> str:
        obj = AutoModelForSequenceClassification.from_pretrained(path)
        RewardTrainer(model=obj, args=cfg, train_dataset=small)
        return "accepted"

    attempt("model passed as AutoModelForSequenceClassification.from_pretrained(path)",
            "pass the path as a str (TRL sets num_labels=1, fp32), or from_pretrained(path, num_labels=1)",
            model_object)
    if tokenizer.eos_token is None:
        attempt(f"tokenizer without an eos_token ({type(tokenizer).__name__}), plain-text rows",
                f"RewardConfig(eos_token={tokenizer.sep_token!r})",
                lambda: RewardTrainer(model=path, args=RewardConfig(**{**cfg_kwargs, "eos_token": None}),
                                      train_dataset=small) and "accepted")
    trainer = RewardTrainer(model=path, args=cfg, train_dataset=small)  # the fixed config: what TRL trains on
    ids = trainer.train_dataset[0]["chosen_ids"]
    tok = trainer.processing_class
    found.append({"trap": "plain-text rows: the tokens TRL trains on end with",
                  "seen": repr(" ".join(tok.convert_ids_to_tokens(ids[-4:]))),
                  "fix": "expected: the appended EOS (an encoder: after its own [SEP])"})
    text = tok.decode(ids, skip_special_tokens=True)
    cut = len(train[0]["prompt"])
    found.append({"trap": "plain-text rows: prompt + chosen are joined with nothing between them",
                  "seen": repr(text[max(0, cut - 12):cut + 14]),
                  "fix": "end the prompt with whitespace, or use conversational rows"})
    pad, eos = tok.pad_token_id, tok.eos_token_id
    if pad is not None and pad == eos and ids[-1] == eos:
        model = trainer.accelerator.unwrap_model(trainer.model).eval()
        with torch.inference_mode():
            full = float(model(input_ids=torch.tensor([ids])).logits[0, 0])
            cut_eos = float(model(input_ids=torch.tensor([ids[:-1]])).logits[0, 0])
        found.append({"trap": f"pad == eos ({tok.eos_token!r}): where the score is read",
                      "seen": f"score with the appended EOS {full:.6f}, without it {cut_eos:.6f}: "
                              f"{'the same' if abs(full - cut_eos) < 1e-5 else 'different'}",
                      "fix": "the head reads the token before the EOS; serve the model the same way"})
    return found


def child(role: str, spec_path: Path, result_path: Path) -> None:
    import torch

    spec = json.loads(spec_path.read_text())
    data = json.loads((spec_path.parent / "rows.json").read_text())
    workdir = spec_path.parent
    torch.manual_seed(spec["seed"])
    if spec.get("threads"):
        torch.set_num_threads(spec["threads"])
    if role == "probes":
        out: Any = run_probes(spec, data["train"], workdir)
    elif role in ("ours", "ours-fp32"):
        out = run_ours(spec, data["train"], data["heldout"], workdir, "fp32" if role == "ours-fp32" else "auto")
    else:
        out = run_trl(spec, role, data["train"], data["heldout"], workdir)
    if role != "probes":
        out["torch_threads"] = torch.get_num_threads()
    result_path.write_text(json.dumps(out, indent=2, default=str))


# --------------------------------------------------------------------------- parent


def spawn(role: str, spec_path: Path, log_path: Path, threads: int | None) -> dict[str, Any]:
    """One child process; its result plus its own peak RSS (``wait4``, so not mixed with others')."""
    result_path = spec_path.with_name(f"result-{role}.json")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    started = time.perf_counter()
    with log_path.open("w") as log:
        proc = subprocess.Popen([sys.executable, __file__, "--child", role, "--spec", str(spec_path),
                                 "--result", str(result_path)], stdout=log, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    if proc.returncode != 0 or not result_path.exists():
        tail = "\n".join(log_path.read_text().splitlines()[-25:])
        raise SystemExit(f"{role} failed (exit {proc.returncode}); the end of {log_path}:\n{tail}")
    out = json.loads(result_path.read_text())
    if isinstance(out, dict):
        out.update({"max_rss_mb": usage.ru_maxrss / 1024, "process_wall_s": wall})
    return out


def fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def print_table(results: dict[str, dict[str, Any]]) -> None:
    rows = [("setup: load + tokenize (s)", "setup_s", ".1f"), ("training loop (s)", "loop_s", ".1f"),
            ("steps", "steps", "d"), ("pairs trained", "pairs_trained", "d"),
            ("pairs/s", "pairs_per_s", ".2f"), ("median step (ms)", "median_step_ms", ".0f"),
            ("  in fwd+bwd+clip+optim (ms)", "median_compute_ms", ".0f"),
            ("  in optimizer.step() (ms)", "median_optimizer_ms", ".0f"), ("first step (ms)", "first_step_ms", ".0f"),
            ("tokens/sequence", "tokens_per_sequence", ".1f"), ("padding (% of tokens)", "padding_pct", ".1f"),
            ("held-out pairwise acc", "heldout_accuracy", ".3f"), ("held-out pairs scored", "heldout_pairs", "d"),
            ("RSS before training (MB)", "rss_before_train_mb", ".0f"),
            ("peak RSS in training (MB)", "peak_train_rss_mb", ".0f"), ("max RSS of process (MB)", "max_rss_mb", ".0f"),
            ("process wall (s)", "process_wall_s", ".1f")]
    names = [n for n in (*VARIANTS, *EXTRA) if n in results]
    print(f"{'':30}" + "".join(f"{LABELS[n]:>19}" for n in names))
    for label, key, spec in rows:
        values = []
        for name in names:
            value = results[name].get(key)
            if key == "padding_pct":
                value = 100 * results[name]["padding_share"]
            values.append(fmt(value, spec))
        print(f"{label:30}" + "".join(f"{v:>19}" for v in values))
    print(f"{'precision / grad. checkpoint':30}" + "".join(
        f"{results[n]['precision'] + (' / GC' if results[n]['gradient_checkpointing'] else ' / -'):>19}"
        for n in names))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="minilm", help="alias (minilm, smollm2) or a local model directory")
    parser.add_argument("--pairs", type=int, default=1000, help="training pairs")
    parser.add_argument("--eval-pairs", type=int, default=200, help="held-out pairs (other problems)")
    parser.add_argument("--steps", type=int, default=250, help="optimizer steps, every variant (250 x 8: two epochs)")
    parser.add_argument("--batch-size", type=int, default=8, help="pairs per step (TRL: per_device_train_batch_size)")
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--learning-rate", type=float, default=1e-4, help="1e-4 is both trainers' default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, default=3,
                        help="training seeds per variant (data fixed): 60-125 steps of a small model land anywhere in "
                        "a 0.1-wide band of held-out accuracy, so accuracy is compared as a mean over seeds")
    parser.add_argument("--trl-format", choices=("auto", "text", "chat"), default="auto",
                        help="TRL's rows: auto = conversational when the tokenizer has a chat template")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads per variant (default: torch's, one per core); 1 on a busy machine")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated, from " + ",".join((*VARIANTS, *EXTRA)) + " (default: the first three)")
    parser.add_argument("--no-probes", action="store_true", help="skip trying TRL's traps")
    parser.add_argument("--quick", action="store_true", help="smoke run: 40 pairs, 16 held out, 4 steps")
    parser.add_argument("--json", type=Path, default=RESULTS / "rm_train.json")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--spec", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.spec, args.result)
        return
    if args.quick:
        args.pairs, args.eval_pairs, args.steps = 40, 16, 4
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = sorted(set(variants) - {*VARIANTS, *EXTRA})
    if unknown:
        raise SystemExit(f"unknown variants {unknown}; choose from {', '.join((*VARIANTS, *EXTRA))}")

    import torch
    import transformers
    import trl

    from rewardsmith.reward_models.model import resolve

    RESULTS.mkdir(parents=True, exist_ok=True)
    spec = {"model": args.model, "model_path": resolve(args.model), "pairs": args.pairs,
            "eval_pairs": args.eval_pairs, "steps": args.steps, "batch_size": args.batch_size,
            "max_length": args.max_length, "learning_rate": args.learning_rate, "seed": args.seed,
            "trl_format": args.trl_format, "threads": args.threads}
    train, heldout = make_rows(args.pairs, args.eval_pairs, args.seed)
    load = os.getloadavg()
    print(f"ORM training, {args.model} ({spec['model_path']}): {len(train)} training pairs, {len(heldout)} held out, "
          f"{args.steps} steps x {args.batch_size} pairs, max_length {args.max_length}, lr {args.learning_rate}, "
          f"seed {args.seed}")
    threads = args.threads or torch.get_num_threads()
    print(f"{os.cpu_count()} cores, {threads} torch thread(s) per variant, load average {load[0]:.2f} at start; "
          f"torch {torch.__version__}, transformers {transformers.__version__}, trl {trl.__version__}; "
          f"each variant in its own process")
    workdir = Path(tempfile.mkdtemp(prefix="rm_train-"))
    figures: dict[str, Any] = {"spec": spec, "platform": platform.platform(), "cores": os.cpu_count(),
                               "load_average_start": load, "versions": {"torch": torch.__version__,
                                                                        "transformers": transformers.__version__,
                                                                        "trl": trl.__version__}}
    try:
        spec_path = workdir / "spec.json"
        spec_path.write_text(json.dumps(spec))
        (workdir / "rows.json").write_text(json.dumps({"train": train, "heldout": heldout}))
        if not args.no_probes:
            probes = spawn("probes", spec_path, RESULTS / "rm_train-probes.log", args.threads)
            figures["trl_traps"] = probes
            print("\nWhat trips a user up with TRL's RewardTrainer here (each tried just now):")
            for k, item in enumerate(probes, 1):
                print(f"  {k}. {item['trap']}\n       seen: {item['seen']}\n       fix:  {item['fix']}")
        results: dict[str, dict[str, Any]] = {}
        per_seed: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
        for k in range(max(1, args.seeds)):
            seed_path = spec_path if k == 0 else workdir / f"spec-{k}.json"
            if k:
                seed_path.write_text(json.dumps({**spec, "seed": args.seed + k}))
            for name in variants:
                print(f"\nrunning {LABELS[name]} (training seed {args.seed + k}) ...", flush=True)
                r = spawn(name, seed_path, RESULTS / f"rm_train-{name}-{k}.log", args.threads)
                per_seed[name].append(r)
                print(f"  {r['pairs_per_s']:.2f} pairs/s over {r['loop_s']:.1f} s, held-out acc "
                      f"{fmt(r['heldout_accuracy'], '.3f')}, max RSS {r['max_rss_mb']:.0f} MB", flush=True)
        for name, runs in per_seed.items():
            results[name] = {**runs[0], "seeds": len(runs),
                             "pairs_per_s": statistics.median(r["pairs_per_s"] for r in runs),
                             "heldout_accuracy": statistics.mean(r["heldout_accuracy"] for r in runs),
                             "heldout_accuracy_sd": statistics.pstdev(r["heldout_accuracy"] for r in runs),
                             "heldout_accuracy_by_seed": [r["heldout_accuracy"] for r in runs]}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    figures["results"] = results
    figures["load_average_end"] = os.getloadavg()

    print()
    print_table(results)
    ratios: dict[str, float] = {}
    if "ours-fp32" in results and "trl-fp32" in results:
        ratios["pairs_per_s_ours-fp32_over_trl-fp32"] = (results["ours-fp32"]["pairs_per_s"]
                                                         / results["trl-fp32"]["pairs_per_s"])
        print(f"ours(fp32) / TRL(fp32, no GC) samples/s: {ratios['pairs_per_s_ours-fp32_over_trl-fp32']:.2f}x "
              f"(the same arithmetic on both sides)")
    if "ours" in results:
        ours = results["ours"]
        for name in ("trl-defaults", "trl-no-gc", "trl-fp32"):
            if name in results:
                other = results[name]
                ratios[f"pairs_per_s_ours_over_{name}"] = ours["pairs_per_s"] / other["pairs_per_s"]
                ratios[f"peak_train_rss_ours_over_{name}"] = ours["peak_train_rss_mb"] / other["peak_train_rss_mb"]
                ratios[f"max_rss_ours_over_{name}"] = ours["max_rss_mb"] / other["max_rss_mb"]
                print(f"ours / {LABELS[name]} samples/s: {ratios[f'pairs_per_s_ours_over_{name}']:.2f}x   "
                      f"peak RSS in training: {ratios[f'peak_train_rss_ours_over_{name}']:.2f}x   "
                      f"held-out acc: {fmt(ours['heldout_accuracy'], '.3f')} vs "
                      f"{fmt(other['heldout_accuracy'], '.3f')}")
        own = ours.get("own_eval_pairwise_accuracy")
        print(f"check: ours' own final evaluation on the same held-out pairs: {fmt(own, '.3f')} "
              f"(this script's scoring, same seed: {fmt(ours['heldout_accuracy_by_seed'][0], '.3f')})")
    figures["ratios"] = ratios
    print(f"held-out accuracy over {max(1, args.seeds)} training seeds (mean ± sd; pairs/s above is the median): "
          + "; ".join(f"{LABELS[n]} {r['heldout_accuracy']:.3f} ± {r['heldout_accuracy_sd']:.3f}"
                      for n, r in results.items()))
    if "trl-defaults" in results and "trl-no-gc" in results:
        print(f"TRL(no GC) / TRL(defaults) samples/s: "
              f"{results['trl-no-gc']['pairs_per_s'] / results['trl-defaults']['pairs_per_s']:.2f}x "
              f"(what gradient checkpointing costs TRL)")
    trl_any = next((results[n] for n in ("trl-defaults", "trl-no-gc", "trl-fp32") if n in results), None)
    if trl_any is not None:
        ours_optim = results.get("ours", {}).get("optim", "torch.optim.AdamW")
        trl_text = ("the chat template over prompt + completion" if trl_any["format"] == "conversational"
                    else "prompt + completion + EOS as one text")
        print(f"Still different by design (both at their defaults): TRL optimizer {trl_any['optim']}, ours "
              f"{ours_optim}; TRL disable_dropout={trl_any['disable_dropout']}, ours too (disable_dropout: true); "
              f"TRL samples batches at random, ours groups them by length; TRL's rows are {trl_any['format']} "
              f"({trl_text}), ours frames prompt and completion as a pair (or renders the prompt with the chat "
              f"template) and appends no EOS.")
    print(f"load average at the end: {figures['load_average_end'][0]:.2f} (a shared CPU inflates every figure; "
          f"compare the ratios)")
    if load[0] > (os.cpu_count() or 1) - 0.5 and threads > 1:  # busy before we started
        print(f"warning: the CPU was busy and each variant ran {threads} threads: OpenMP threads then wait for each "
              f"other at every op, which hits many small ops (a per-tensor optimizer, dropout) far harder than big "
              f"ones; rerun with --threads 1 for ratios that hold on a quiet machine")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
