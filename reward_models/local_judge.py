"""The judge's local backend: any causal LM with a chat template, run in this process.

Found by the judge through ``{"kind": "transformers"}`` (see
``rewardsmith.verifiers.judge.backends.LAZY_BACKENDS``): torch is imported only when a spec asks for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from rewardsmith.reward_models.loading import load_causal_lm
from rewardsmith.verifiers.judge.backends import (
    DEFAULT_LOCAL_MODEL,
    Backend,
    BackendError,
    Completion,
    GenParams,
    Messages,
    TokenLogprob,
)

logger = logging.getLogger(__name__)


class TransformersBackend(Backend):
    """Any causal LM with a chat template, run in-process; default: SmolLM2-135M-Instruct (offline).

    A batch is generated together (left-padded), grouped by sampling parameters; greedy when
    ``temperature`` is 0. Generation is serialised by a lock: one model, many threads.
    """

    kind = "transformers"

    def __init__(self, model: str = DEFAULT_LOCAL_MODEL, device: str = "cpu", dtype: str | None = None,
                 max_batch: int = 16) -> None:
        super().__init__()
        self.model = model
        self.device = device
        self.dtype = dtype
        self.max_batch = max(1, int(max_batch))
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_lock", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._lock = threading.Lock()

    def load(self) -> tuple[Any, Any]:
        if self.model == DEFAULT_LOCAL_MODEL:
            logger.warning("judging with SmolLM2-135M-Instruct (smollm2), a 135M-parameter model bundled for tests "
                           "and demos: it rarely follows a judging prompt; name a capable judge for real rewards")
        return load_causal_lm(self.model, self.device, self.dtype)

    def complete_batch(self, requests: Sequence[tuple[Messages, GenParams]]) -> list[Completion | BackendError]:
        out: list[Completion | BackendError | None] = [None] * len(requests)
        groups: dict[GenParams, list[int]] = {}
        for i, (_, params) in enumerate(requests):
            groups.setdefault(params, []).append(i)
        for params, indices in groups.items():
            for start in range(0, len(indices), self.max_batch):
                chunk = indices[start:start + self.max_batch]
                try:
                    results = self._generate([requests[i][0] for i in chunk], params)
                except BackendError as exc:
                    results = [exc] * len(chunk)
                except Exception as exc:  # an OOM or a template error is the backend failing
                    results = [BackendError(f"local judge generation failed: {type(exc).__name__}: {exc}")] * len(chunk)
                for i, result in zip(chunk, results, strict=True):
                    out[i] = result
        return [r for r in out if r is not None]

    def _generate(self, batch: list[Messages], params: GenParams) -> list[Completion]:
        import torch

        lm, tok = self.load()
        texts = [tok.apply_chat_template(m, add_generation_prompt=True, tokenize=False) for m in batch]
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(lm.device)
        sample = params.temperature > 0
        kwargs: dict[str, Any] = {"max_new_tokens": params.max_tokens, "do_sample": sample,
                                  "pad_token_id": tok.pad_token_id, "return_dict_in_generate": True,
                                  "output_logits": bool(params.top_logprobs)}
        if sample:
            kwargs.update(temperature=params.temperature, top_k=0, top_p=1.0)
        else:
            kwargs.update(temperature=None, top_k=None, top_p=None)
        with self._lock, torch.inference_mode():
            if sample and params.seed is not None:
                torch.manual_seed(params.seed)
            self._count(len(batch))
            gen = lm.generate(**enc, **kwargs)
        new = gen.sequences[:, enc["input_ids"].shape[1]:]
        stops = {tok.eos_token_id, tok.pad_token_id} - {None}
        results = []
        for row in range(new.shape[0]):
            ids = new[row].tolist()
            length = next((n for n, t in enumerate(ids) if t in stops), len(ids))
            text = tok.decode(ids[:length], skip_special_tokens=True)
            logprobs = None
            if params.top_logprobs:
                logprobs = []
                for step in range(length):
                    lp = torch.log_softmax(gen.logits[step][row].float(), dim=-1)
                    values, top_ids = lp.topk(params.top_logprobs)
                    top: dict[str, float] = {}
                    for v, t in zip(values.tolist(), top_ids.tolist(), strict=True):
                        top.setdefault(tok.decode([t]), v)  # two ids may decode alike; keep the likelier
                    chosen = ids[step]
                    logprobs.append(TokenLogprob(tok.decode([chosen]), float(lp[chosen]), top))
            results.append(Completion(text=text, logprobs=logprobs))
        return results
