"""TRL 1.16's GRPOTrainer set up the way the GRPO benchmarks compare against it (imported by them).

One function builds it from the same settings our loop gets, so the two sides differ only where
named: TRL's defaults where the benchmark says "defaults" (gradient checkpointing on, as TRL
ships it), ``use_cpu=True, bf16=False`` on a CPU and ``bf16=True`` on CUDA, the reward through our TRL reward functions
(the same ``build(spec)`` our loop calls). Phase timings come from wrapping TRL's own methods
(generation, reward computation) and from a callback around each optimizer step; nothing in
TRL's computation is changed.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any


def trl_trainer(model_dir: str, rows: list[dict[str, Any]], *, workdir: Path, seed: int, steps: int,
                prompts_per_step: int, num_generations: int, max_completion_length: int, learning_rate: float,
                beta: float = 0.0, loss_type: str = "dapo", temperature: float = 1.0,
                gradient_checkpointing: bool = True, generation_kwargs: dict[str, Any] | None = None,
                reward: Any = "math", device: str = "cpu") -> tuple[Any, dict[str, list[float]]]:
    """(trainer, timings): timings["generate"/"score"/"step"] are appended per call/step. On
    ``device="cuda"`` TRL runs with ``bf16=True`` (autocast over fp32 weights, as our loop does)."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from rewardsmith.adapters.trainers.trl import reward_funcs

    args = GRPOConfig(output_dir=str(workdir), use_cpu=device == "cpu", bf16=device == "cuda", report_to=[], seed=seed,
                      per_device_train_batch_size=prompts_per_step * num_generations, gradient_accumulation_steps=1,
                      num_generations=num_generations, max_completion_length=max_completion_length,
                      learning_rate=learning_rate, beta=beta, loss_type=loss_type, temperature=temperature,
                      max_steps=steps, save_strategy="no", logging_steps=1, disable_tqdm=True,
                      gradient_checkpointing=gradient_checkpointing, generation_kwargs=generation_kwargs or {})
    trainer = GRPOTrainer(model=model_dir, reward_funcs=reward_funcs(reward), args=args,
                          train_dataset=Dataset.from_list(rows))
    timings: dict[str, list[float]] = defaultdict(list)

    def timed(name: str, method: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*a, **k)
            finally:
                timings[name].append(time.perf_counter() - started)
        return wrapper

    trainer._generate_single_turn = timed("generate", trainer._generate_single_turn)
    trainer._calculate_rewards = timed("score", trainer._calculate_rewards)

    class Steps(TrainerCallback):
        def on_step_begin(self, *_: Any, **__: Any) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, *_: Any, **__: Any) -> None:
            timings["step"].append(time.perf_counter() - self.started)

    trainer.add_callback(Steps())
    return trainer, timings
