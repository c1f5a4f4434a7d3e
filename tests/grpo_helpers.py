"""Shared pieces of the GRPO tests: a small Llama with SmolLM2's tokenizer, and a generator that
replays fixed completions (sampling is random; these tests are about what is computed from them)."""

from __future__ import annotations

from pathlib import Path

import torch

from rewardsmith.reward_models.sampling import Sampled, SamplingSettings, cut_completion
from rewardsmith.verifiers.core import Verdict, Verifier
from rewardsmith.verifiers.registry import register


class ReplayGenerator:
    """Hands out fixed completions, cut at EOS or the length limit as a sampler would."""

    def __init__(self, completions: list[list[int]], eos: set[int]) -> None:
        self.completions = completions
        self.eos = eos
        self.calls = 0

    def generate(self, prompt_ids, n, sampling: SamplingSettings) -> Sampled:
        self.calls += 1
        rows = self.completions[: len(prompt_ids) * n]
        cut = [cut_completion(ids[: sampling.max_new_tokens], self.eos) for ids in rows]
        ids = [c for c, _ in cut]
        return Sampled(ids, [t for _, t in cut], None, sum(map(len, ids)))

    def sync(self, model) -> None:
        pass


def make_tiny_llama(path: Path, *, scale: float = 5.0, seed: int = 0) -> str:
    """A 2-layer Llama (hidden 64) with SmolLM2's tokenizer and chat template: the policy's
    architecture and tokenisation at a size that trains in well under a second per step."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from rewardsmith.reward_models.loading import load_tokenizer

    tokenizer = load_tokenizer("smollm2", padded=True)
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # sharper logits than the init's, so ratios move visibly when weights do
        model.model.embed_tokens.weight.mul_(scale)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def grads(model) -> dict[str, torch.Tensor]:
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


@register("test_text_length")
class TextLength(Verifier):
    """Test-only: the completion's length in characters / 40 (capped at 1). A reward that varies
    within a group even for a random model's completions, so a short run has a policy gradient."""

    def _verify(self, sample):
        return Verdict(score=min(len(sample.completion_text), 40) / 40, status="ok")
