"""What several test modules share to drive verl 0.9.1's own code: its Hydra config composed in a
subprocess, a real byte-level tokenizer, ``DataProto`` batches as its agent loop hands them to the
reward loop, and its ``RewardLoopWorker``.

Hydra 1.3.8 needs antlr4 4.9 while rewardsmith's math-verify needs 4.13, so the config is composed
in a subprocess whose path holds hydra-core 1.3.8, omegaconf 2.3.0 and antlr4 4.9.3
(``tests/run.sh`` installs them into ``$REWARDSMITH_HYDRA_PATH``, default
``~/.cache/rewardsmith/hydra-1.3.8``), and handed back as YAML, which OmegaConf loads here.

Call :func:`require_verl` at the top of a module before importing verl's parts.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HYDRA_PATH = Path(os.environ.get("REWARDSMITH_HYDRA_PATH", Path.home() / ".cache" / "rewardsmith" / "hydra-1.3.8"))


def require_verl() -> None:
    """Skip the module without verl 0.9.1 and Hydra's path, but fail where tests/run.sh promised them."""
    problem = None
    try:
        import verl

        if verl.__version__ != "0.9.1":
            problem = f"verl {verl.__version__} is installed; these tests pin verl 0.9.1"
    except ImportError as exc:
        problem = f"verl is not importable ({exc})"
    if problem is None and not (HYDRA_PATH / "hydra").is_dir():
        problem = f"no Hydra for composing verl's config in {HYDRA_PATH} (tests/run.sh installs it)"
    if problem is None:
        return
    if os.environ.get("REWARDSMITH_REQUIRE_VERL") == "1":
        pytest.fail(problem)
    pytest.skip(problem, allow_module_level=True)


_COMPOSE = """
import importlib.util, json, os, sys
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
config_dir = os.path.join(importlib.util.find_spec("verl").submodule_search_locations[0], "trainer", "config")
with initialize_config_dir(config_dir=config_dir, version_base=None):
    cfg = compose("ppo_trainer", overrides=json.loads(sys.argv[1]))
sys.stdout.write(OmegaConf.to_yaml(cfg))
"""


def compose(*overrides: str) -> Any:
    """verl 0.9.1's trainer config (``main_ppo``'s ``ppo_trainer``) with command-line overrides."""
    from omegaconf import OmegaConf

    env = {**os.environ, "PYTHONPATH": str(HYDRA_PATH)}
    done = subprocess.run(
        [sys.executable, "-c", _COMPOSE, json.dumps(list(overrides))],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return OmegaConf.create(done.stdout)


def save_byte_tokenizer(path: Path) -> Path:
    """A real byte-level BPE tokenizer (every text round-trips), saved where verl's hf_tokenizer loads it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {"<pad>": 0, "</s>": 1, **{c: i + 2 for i, c in enumerate(alphabet)}}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="</s>").save_pretrained(path)
    return path


def load_tokenizer(path: Path) -> Any:
    """The tokenizer as verl loads it."""
    from verl.utils import hf_tokenizer

    return hf_tokenizer(str(path))


def make_batch(tokenizer: Any, rows: list[dict], non_tensor: dict[str, Any] | None = None) -> Any:
    """A DataProto shaped as verl's agent loop hands it to the reward loop: left-padded prompts,
    right-padded responses ending in EOS, one attention mask over both; labels as verl's
    preprocessing writes them (``data_source``, ``reward_model.ground_truth``, ``extra_info``), or
    ``non_tensor`` as given (e.g. what verl's own dataset and ``collate_fn`` made of a parquet file)."""
    import numpy as np
    import torch
    from tensordict import TensorDict
    from verl import DataProto

    prompts = [tokenizer(r["prompt"])["input_ids"] for r in rows]
    responses = [tokenizer(r["response"])["input_ids"] + [tokenizer.eos_token_id] for r in rows]
    width_p = max(map(len, prompts))
    width_r = max(map(len, responses)) + 2
    pad = tokenizer.pad_token_id
    prompt_ids = torch.tensor([[pad] * (width_p - len(p)) + p for p in prompts])
    prompt_mask = torch.tensor([[0] * (width_p - len(p)) + [1] * len(p) for p in prompts])
    response_ids = torch.tensor([r + [pad] * (width_r - len(r)) for r in responses])
    response_mask = torch.tensor([[1] * len(r) + [0] * (width_r - len(r)) for r in responses])
    batch = TensorDict(
        {
            "prompts": prompt_ids,
            "responses": response_ids,
            "input_ids": torch.cat([prompt_ids, response_ids], 1),
            "attention_mask": torch.cat([prompt_mask, response_mask], 1),
        },
        batch_size=len(rows),
    )
    if non_tensor is None:
        non_tensor = {
            "data_source": np.array([r["data_source"] for r in rows], dtype=object),
            "extra_info": np.array([dict(r.get("extra_info", {})) for r in rows], dtype=object),
        }
        if any("ground_truth" in r for r in rows):
            non_tensor["reward_model"] = np.array(
                [{"style": "rule", "ground_truth": r.get("ground_truth")} for r in rows], dtype=object
            )
    return DataProto(batch=batch, non_tensor_batch=non_tensor)


def run_worker(config: Any, data: Any, per_row: bool = False) -> tuple[Any, list[dict]]:
    """verl's RewardLoopWorker, built and awaited on one event loop as its Ray actor is."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    async def main():
        worker = RewardLoopWorker(config)
        if per_row:  # the streaming path: the agent loop sends each finished rollout on its own
            outputs = await asyncio.gather(*(worker.compute_score(data[i : i + 1]) for i in range(len(data))))
        else:
            outputs = await worker.compute_score_batch(data)
        return worker, outputs

    return asyncio.run(main())
