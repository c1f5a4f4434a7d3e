"""verl 0.9.1's reward manager for rewardsmith: rows that arrive together are scored by ONE ``verify_batch``.

verl 0.9.1 reaches a custom reward manager through its reward loop (``reward.reward_manager``)::

    reward.reward_manager.source=importlib
    reward.reward_manager.name=RewardsmithRewardManager
    reward.reward_manager.module.path=pkg://rewardsmith.adapters.trainers.verl_manager
        # or <repo>/adapters/trainers/verl_manager.py
    +reward.reward_kwargs.reward=/abs/reward.yaml      # default: $REWARDSMITH_REWARD, else math
    +reward.reward_kwargs.on_error=raise               # default: $REWARDSMITH_ON_ERROR, else zero

Leave ``reward.custom_reward_function.path`` unset (this manager is the reward; a custom function
beside it is refused rather than silently ignored) and ``reward.reward_model.enable`` false.

Each reward-loop worker calls :meth:`RewardsmithRewardManager.run_single` once per row, many rows
at a time (a validation chunk all at once; rollouts as they finish). The manager holds the rows
that arrive while a batch is being scored and scores them together as the next batch, so the
math worker pool sees batches as large as the traffic makes them, not one row at a time. Each
row returns ``{"reward_score", "reward_extra_info"}``, as verl's own managers do; verl puts the
score on the row's last valid response token (``assemble_rm_scores``) and aggregates the extra
info (``score``, ``acc``, ``status``, ``pred``, numeric ``error`` and ``invalid``) into its metrics.
Rows become samples exactly as in :mod:`rewardsmith.adapters.trainers.verl` (``reward_model.ground_truth``,
``data_source``, ``extra_info``), with the prompt from ``raw_prompt`` (chat messages) or the
decoded prompt tokens.

This module imports torch and verl: verl loads it, nothing in rewardsmith imports it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from verl import DataProto
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from rewardsmith.adapters.trainers import verl as glue
from rewardsmith.verifiers.core import Sample

# The keys this manager reads from ``reward.reward_kwargs``.
OPTIONS = ("reward", "on_error")


def manager_options(config: Any) -> dict[str, Any]:
    """``reward.reward_kwargs`` of verl's config, checked: a key meant for another manager (DAPO's
    ``overlong_buffer_cfg``) would otherwise be silently dropped from the reward."""
    reward_cfg = config.get("reward") if isinstance(config, Mapping) else None
    raw = (reward_cfg.get("reward_kwargs") if isinstance(reward_cfg, Mapping) else None) or {}
    options = glue.plain_value(raw)
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"reward.reward_kwargs has {', '.join(map(repr, unknown))}, which rewardsmith's reward "
                         f"manager does not use; it reads {', '.join(OPTIONS)} (put length penalties and the like "
                         "in the rewardsmith spec)")
    return options


class _Batcher:
    """Coalesce concurrent async calls into one blocking batch call at a time, off the event loop."""

    def __init__(self, score: Callable[[list[Sample]], list[dict[str, Any]]]) -> None:
        self._score = score
        self._waiting: list[tuple[Sample, asyncio.Future]] = []
        self._drain_task: asyncio.Task | None = None

    async def submit(self, sample: Sample) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()
        self._waiting.append((sample, future))
        if self._drain_task is None or self._drain_task.done():
            # Its first step runs after the steps already queued: rows submitted together go together.
            self._drain_task = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while self._waiting:
            # A caller cancelled meanwhile (its task, or its event loop, is gone) needs no reward.
            batch = [(sample, future) for sample, future in self._waiting if not future.done()]
            self._waiting = []
            if not batch:
                continue
            try:
                results = await loop.run_in_executor(None, self._score, [sample for sample, _ in batch])
            except Exception as exc:  # RewardError under on_error=raise: every row of the batch raises it
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            except BaseException:  # cancelled (the worker is shutting down): so are the rows' callers
                for _, future in batch:
                    future.cancel()
                raise
            for (_, future), res in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(res)


class RewardsmithRewardManager(RewardManagerBase):
    """A verl reward manager whose reward is ``build(spec).verify_batch`` over the rows at hand."""

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, reward_router_address: Any = None,
                 reward_model_tokenizer: Any = None, **kwargs: Any) -> None:
        super().__init__(config, tokenizer, compute_score)
        custom = config.get("reward", {}).get("custom_reward_function", {}) or {}
        if custom.get("path"):
            raise ValueError(f"reward.custom_reward_function.path={custom.get('path')!r} is set, but rewardsmith's "
                             "reward manager scores with the rewardsmith spec and would ignore that function: unset it "
                             "(pass the spec as +reward.reward_kwargs.reward=...), or keep the function and use "
                             "reward.reward_manager.name=naive")
        options = manager_options(config)
        self.reward = options.get("reward")
        self.on_error = glue.resolve_on_error(options.get("on_error"))
        # A bad spec fails when the worker starts, not at the first batch; the math workers start
        # importing sympy now, while verl is still loading the model.
        glue.verifier(self.reward).start()
        self._batcher = _Batcher(self.score)

    def score(self, samples: list[Sample]) -> list[dict[str, Any]]:
        """One ``verify_batch`` for ``samples``; the per-row dicts of :mod:`rewardsmith.adapters.trainers.verl`."""
        return glue.score_samples(samples, reward=self.reward, on_error=self.on_error)

    def sample(self, data: DataProto) -> Sample:
        """The last row of ``data`` (verl scores the last turn of a multi-turn output) as a sample."""
        item = data[-1:][0]
        response_ids = item.batch["responses"]
        mask = item.batch["attention_mask"]
        valid = int(mask[-response_ids.shape[-1]:].sum())
        text = self.tokenizer.decode(response_ids[:valid], skip_special_tokens=True)
        row = item.non_tensor_batch
        reward_model = row.get("reward_model")
        truth = reward_model.get("ground_truth") if isinstance(reward_model, Mapping) else None
        return glue.row_sample(row.get("data_source"), text, truth, row.get("extra_info"), prompt=self._prompt(item))

    def _prompt(self, item: Any) -> Any:
        messages = item.non_tensor_batch.get("raw_prompt")
        if messages is not None and not isinstance(messages, str):
            messages = glue.plain_value(messages)
            if isinstance(messages, list) and all(isinstance(m, Mapping) for m in messages):
                return messages
        prompt_ids = item.batch["prompts"]
        keep = item.batch["attention_mask"][: prompt_ids.shape[-1]].bool()
        return self.tokenizer.decode(prompt_ids[keep], skip_special_tokens=True)

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        """verl's per-row call; the row waits for the batch it joins."""
        extra = await self._batcher.submit(self.sample(data))
        return {"reward_score": extra["score"], "reward_extra_info": extra}
