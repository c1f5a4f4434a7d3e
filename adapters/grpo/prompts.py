"""Which prompts a step samples: epoch order, plus a per-prompt pass-rate record.

Groups whose completions all pass or all fail teach nothing under GRPO (zero advantage), and
on a fixed prompt set they are the easy and the hopeless prompts. The record keeps each
prompt's last ``window`` group pass rates; with ``skip_extreme`` a prompt whose recent rate is
0 or 1 is passed over, until ``reprobe_after`` steps have gone by since its last group (a
model that improved may now solve it, or have started failing it). The order within an epoch
is a permutation seeded by (seed, epoch), so a resumed run draws the same prompts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any


@dataclass
class PassRecord:
    rates: list[float] = field(default_factory=list)
    last_step: int = -1


class PromptSampler:
    def __init__(self, n_prompts: int, seed: int, *, window: int = 2, skip_extreme: bool = False,
                 reprobe_after: int = 50) -> None:
        if n_prompts <= 0:
            raise ValueError("no prompts to train on")
        self.n = n_prompts
        self.seed = seed
        self.window = window
        self.skip_extreme = skip_extreme
        self.reprobe_after = reprobe_after
        self.epoch = 0
        self.cursor = 0
        self.records: dict[int, PassRecord] = {}
        self.skipped_total = 0

    def _order(self, epoch: int) -> list[int]:
        order = list(range(self.n))
        random.Random(f"{self.seed}:{epoch}").shuffle(order)
        return order

    def is_extreme(self, index: int, step: int) -> bool:
        """Recently always solved or never solved, and not yet due for another try."""
        record = self.records.get(index)
        if record is None or len(record.rates) < self.window:
            return False
        rate = sum(record.rates) / len(record.rates)
        return rate in (0.0, 1.0) and step - record.last_step < self.reprobe_after

    def draw(self, k: int, step: int) -> tuple[list[int], int]:
        """``k`` prompt indices in epoch order and how many were passed over as extreme. When
        every prompt is extreme, the next ones are taken anyway (there is nothing else)."""
        picked: list[int] = []
        passed = 0
        skip = self.skip_extreme and any(not self.is_extreme(i, step) for i in range(self.n))
        order = self._order(self.epoch)
        while len(picked) < k:
            if self.cursor >= self.n:
                self.epoch += 1
                self.cursor = 0
                order = self._order(self.epoch)
            index = order[self.cursor]
            self.cursor += 1
            if skip and self.is_extreme(index, step):
                passed += 1
                continue
            picked.append(index)
        self.skipped_total += passed
        return picked, passed

    def record(self, index: int, pass_rate: float, step: int) -> None:
        record = self.records.setdefault(index, PassRecord())
        record.rates = [*record.rates, float(pass_rate)][-self.window:]
        record.last_step = step

    def state_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "cursor": self.cursor, "skipped_total": self.skipped_total,
                "records": {str(k): [v.rates, v.last_step] for k, v in self.records.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.epoch, self.cursor, self.skipped_total = state["epoch"], state["cursor"], state["skipped_total"]
        self.records = {int(k): PassRecord(list(v[0]), int(v[1])) for k, v in state["records"].items()}
