"""Sampling completions behind one small interface: HF ``generate`` or an in-process vLLM engine.

A generator takes token ids (the rendered prompts) and returns, per completion, the sampled
token ids up to and including the token that ended it (EOS, or the last token of a stop
string), whether it was cut at ``max_new_tokens`` instead, and the log-probability the sampler
gave each token, so the trainer can measure how far its own log-probabilities are from the
sampler's (a stale weight sync shows up there at once).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from rewardsmith.adapters.grpo.shared_prompt import prefill_for_groups


@dataclass(frozen=True)
class SamplingSettings:
    max_new_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    stop: tuple[str, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()  # generation_kwargs, as (key, value) pairs


@dataclass
class Sampled:
    """``n`` completions per prompt, prompt-major (prompt 0's n first)."""

    completion_ids: list[list[int]]
    truncated: list[bool]
    sampler_logps: list[list[float]] | None = None
    tokens: int = 0


class Generator(Protocol):
    def generate(self, prompt_ids: Sequence[list[int]], n: int, sampling: SamplingSettings) -> Sampled: ...

    def sync(self, model: Any) -> None:
        """Make the sampler's weights the trainer's (after an optimizer update)."""


def cut_completion(ids: Sequence[int], eos_ids: set[int], stop_hit: int | None = None) -> tuple[list[int], bool]:
    """The completion up to and including its first EOS (or the token ending a stop string,
    ``stop_hit``, whichever comes first) and whether it ended without either (truncated)."""
    end = next((i for i, t in enumerate(ids) if t in eos_ids), None)
    if stop_hit is not None and (end is None or stop_hit < end):
        end = stop_hit
    if end is None:
        return list(ids), True
    return list(ids[:end + 1]), False


def stop_position(tokenizer: Any, ids: Sequence[int], stops: Sequence[str]) -> int | None:
    """Index of the token whose decoding first completes one of ``stops`` (binary search over
    prefixes: "the decoded prefix contains a stop string" only turns true once)."""
    if not stops:
        return None

    def has_stop(k: int) -> bool:
        text = tokenizer.decode(ids[:k], skip_special_tokens=True)
        return any(s in text for s in stops)

    if not ids or not has_stop(len(ids)):
        return None
    lo, hi = 1, len(ids)
    while lo < hi:
        mid = (lo + hi) // 2
        if has_stop(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo - 1


def eos_token_ids(tokenizer: Any, model: Any) -> set[int]:
    ids = set()
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (tokenizer.eos_token_id, configured):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    return ids


class _SampledLogps:
    """A logits processor that keeps the previous position's distribution at the sampling
    temperature and, once the next call shows which token was drawn from it, that token's
    log-probability. transformers runs it before its temperature/top-k/top-p warpers (it sees
    raw logits), so it divides by the temperature itself; top-k/top-p truncation is not in it,
    as it is not in the trainer's log-probabilities. Memory: one (rows, vocab) tensor."""

    def __init__(self, temperature: float) -> None:
        self.temperature = temperature
        self.previous: torch.Tensor | None = None
        self.picked: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        self.take(input_ids[:, -1])
        self.previous = (scores.float() / self.temperature).log_softmax(-1)
        return scores

    def take(self, tokens: torch.Tensor) -> None:
        if self.previous is not None:
            self.picked.append(self.previous.gather(-1, tokens.unsqueeze(-1)).squeeze(-1))
            self.previous = None

    def rows(self) -> torch.Tensor:
        return torch.stack(self.picked, dim=1) if self.picked else torch.zeros(0, 0)


@contextlib.contextmanager
def _without_model_defaults(model: Any) -> Any:
    """transformers fills every generation knob left unset from the model's own
    ``generation_config`` (a hub model's ``repetition_penalty``, ``top_k``, ``min_new_tokens``,
    ``num_beams``, suppressed tokens...), which would sample from a distribution the trainer's
    log-probabilities do not describe. While sampling, the model keeps only its token ids; its
    config is put back afterwards (it is what a saved model ships with)."""
    from transformers import GenerationConfig

    target = model.get_base_model() if hasattr(model, "get_base_model") else model
    original = getattr(target, "generation_config", None)
    if original is None:
        yield
        return
    target.generation_config = GenerationConfig(bos_token_id=original.bos_token_id, eos_token_id=original.eos_token_id,
                                                pad_token_id=original.pad_token_id)
    try:
        yield
    finally:
        target.generation_config = original


class HFGenerator:
    """``model.generate`` on the training weights themselves: nothing to sync, and the canary
    (sampler vs trainer log-probabilities) measures only numerics."""

    def __init__(self, model: Any, tokenizer: Any, batch_size: int = 64, bf16: bool = False) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.bf16 = bf16  # sample under the same bf16 autocast the trainer computes its log-probs in
        self.eos = eos_token_ids(tokenizer, model)

    def sync(self, model: Any) -> None:
        self.model = model

    def generate(self, prompt_ids: Sequence[list[int]], n: int, sampling: SamplingSettings) -> Sampled:
        out = Sampled([], [], [], 0)
        per_call = max(1, self.batch_size // n)
        for start in range(0, len(prompt_ids), per_call):
            self._generate_chunk(prompt_ids[start:start + per_call], n, sampling, out)
        return out

    def _generate_chunk(self, chunk: Sequence[list[int]], n: int, sampling: SamplingSettings, out: Sampled) -> None:
        from transformers import GenerationConfig, LogitsProcessorList

        tok, model = self.tokenizer, self.model
        pad = tok.pad_token_id if tok.pad_token_id is not None else next(iter(self.eos))
        width = max(len(p) for p in chunk)
        device = next(model.parameters()).device
        input_ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in chunk], device=device)
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in chunk], device=device)
        greedy = sampling.temperature == 0
        knobs = ({"do_sample": False} if greedy else
                 {"do_sample": True, "temperature": sampling.temperature, "top_p": sampling.top_p,
                  "top_k": sampling.top_k})
        share = n > 1 and min(len(p) for p in chunk) > 1  # each prompt prefilled once for its n completions
        config = GenerationConfig(max_new_tokens=sampling.max_new_tokens, num_return_sequences=1 if share else n,
                                  pad_token_id=pad, eos_token_id=sorted(self.eos),
                                  stop_strings=list(sampling.stop) or None, **{**knobs, **dict(sampling.extra)})
        recorder = _SampledLogps(1.0 if greedy else sampling.temperature)
        was_training = model.training
        model.eval()
        autocast = torch.autocast(device.type, dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()
        try:
            with torch.inference_mode(), autocast, _without_model_defaults(model):
                prefilled = prefill_for_groups(model, input_ids, attention, n) if share else {}
                if share:
                    input_ids, attention = input_ids.repeat_interleave(n, 0), attention.repeat_interleave(n, 0)
                sequences = model.generate(input_ids=input_ids, attention_mask=attention, generation_config=config,
                                           logits_processor=LogitsProcessorList([recorder]),
                                           tokenizer=tok if sampling.stop else None, **prefilled)
        finally:
            model.train(was_training)
        new = sequences[:, width:]
        recorder.take(new[:, -1]) if new.shape[1] else None
        logps = recorder.rows()
        for row, ids in enumerate(new.tolist()):
            stop_hit = stop_position(tok, ids, sampling.stop)
            kept, truncated = cut_completion(ids, self.eos, stop_hit)
            out.completion_ids.append(kept)
            out.truncated.append(truncated)
            out.sampler_logps.append(logps[row, :len(kept)].tolist())  # type: ignore[union-attr]
            out.tokens += len(kept)
