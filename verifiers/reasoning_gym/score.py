"""Score one answer with reasoning-gym's own scorer: a pure, picklable task, so the same code runs in
the calling process and in the killable workers of :mod:`rewardsmith.verifiers.pool`.

The task returns ``(kind, value)``: ``("score", float)``, ``("raised", message)`` when the scorer raised
on this answer but pays the gold (the completion's doing), ``("bad_row", message)`` when the row cannot
be scored at all (an unknown dataset, metadata the scorer cannot read even for the gold), and
``("missing", message)`` when reasoning-gym is not installed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

INSTALL_HINT = "reasoning-gym is not installed: pip install 'rewardsmith[gym]' (reasoning-gym==0.1.25)"
_scorers: dict[str, Any] = {}  # per process: a scorer's dataset object is built once


@dataclass(frozen=True)
class Item:
    dataset: str
    answer: str
    entry: dict[str, Any]
    config: dict[str, Any] | None = None  # the generator options the row was made with (None: the defaults)


def scorer(dataset: str, config: dict[str, Any] | None = None) -> Any:
    """The dataset's ``score_answer`` under ``config`` (several scorers read their config: puzzle24's
    number range, time_intervals' tolerance), built once per process and config."""
    key = dataset if not config else f"{dataset}:{json.dumps(config, sort_keys=True, default=str)}"
    if key not in _scorers:
        import reasoning_gym

        if config:
            _scorers[key] = reasoning_gym.create_dataset(dataset, **config).score_answer
        else:
            _scorers[key] = reasoning_gym.get_score_answer_fn(dataset)
    return _scorers[key]


def known(dataset: str) -> bool:
    from reasoning_gym.factory import DATASETS

    return dataset in DATASETS


@dataclass(frozen=True)
class ScoreTask:
    preload: ClassVar[tuple[str, ...]] = ("reasoning_gym",)

    def __call__(self, item: Item) -> tuple[str, Any]:
        try:
            if not known(item.dataset):
                return "bad_row", f"unknown reasoning-gym dataset {item.dataset!r}"
        except ImportError:
            return "missing", INSTALL_HINT
        try:
            score = scorer(item.dataset, item.config)
        except Exception as exc:  # a config the generator refuses, or none where one is needed (composite)
            return "bad_row", f"cannot build the scorer of {item.dataset!r}: {type(exc).__name__}: {exc}"
        try:
            return "score", float(score(item.answer, item.entry))
        except Exception as exc:
            problem = f"{type(exc).__name__}: {str(exc)[:200]}"
        try:  # whose fault: does the scorer read this row at all?
            score(_gold_text(item.entry.get("answer")), item.entry)
        except Exception as exc:
            return "bad_row", f"the scorer of {item.dataset!r} cannot read this row: {type(exc).__name__}: {exc}"
        return "raised", problem


def _gold_text(answer: Any) -> str:
    return answer if isinstance(answer, str) else "" if answer is None else str(answer)
