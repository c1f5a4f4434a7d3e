"""The policy that continues step prefixes for Monte-Carlo step labelling, on any engine.

One small interface (:class:`Policy`) so that labelling does not care which engine samples:
``continue_texts(prefixes, n)`` returns ``n`` continuations of each prefix. A prefix is the
rendered prompt (chat template, generation prompt) followed by the partial answer, exactly as
the policy would have seen it mid-generation. The sampling itself (HF ``generate`` or vLLM) is
:mod:`.sampling`'s, shared with the GRPO loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from rewardsmith.reward_models.data import Text
from rewardsmith.reward_models.sampling import Engine, Sampler, SamplingSettings, load_sampler


class Policy(Protocol):
    """A causal LM that continues text. ``render`` turns a prompt into the text generation starts
    from; ``continue_texts`` samples ``n`` continuations per input text."""

    tokens_generated: int

    def render(self, prompt: Text) -> str: ...

    def continue_texts(self, texts: Sequence[str], n: int, sampling: SamplingSettings) -> list[list[str]]: ...


def _render(tokenizer: Any, prompt: Text) -> str:
    if not getattr(tokenizer, "chat_template", None):
        return prompt if isinstance(prompt, str) else "\n".join(str(m.get("content", "")) for m in prompt)
    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


class SamplerPolicy:
    """A :class:`Policy` on a sampler (:func:`~.sampling.load_sampler`): texts in, texts out."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler
        self.tokenizer: Any = sampler.tokenizer  # type: ignore[attr-defined]
        self.tokens_generated = 0

    def render(self, prompt: Text) -> str:
        return _render(self.tokenizer, prompt)

    def continue_texts(self, texts: Sequence[str], n: int, sampling: SamplingSettings) -> list[list[str]]:
        sampled = self.sampler.generate(list(texts), n, sampling)
        self.tokens_generated += sampled.tokens
        decoded = sampled.texts or []
        return [decoded[i * n:(i + 1) * n] for i in range(len(texts))]


def load_policy(model: str, engine: Engine = "auto", device: str = "auto", dtype: str | None = None,
                batch_size: int = 16) -> Policy:
    """vLLM when asked for (or, with ``auto``, when it imports), else HF ``generate``."""
    return SamplerPolicy(load_sampler(model, engine, device, dtype, batch_size))
