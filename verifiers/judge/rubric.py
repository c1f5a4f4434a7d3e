"""Rubrics for LLM judges: weighted checklist items, pitfalls, an optional reference answer.

A rubric arrives per row (the ``rubric`` field, as a dict, a list or a JSON string) or once in
the spec. Parsing is strict about shape and lenient about spelling (``text``/``criterion``/
``description``), because rubric datasets disagree on key names but a silently empty rubric
would score every completion 0.

Checklist score (documented in docs/verifiers/judge.md and pinned by tests)::

    score = clip( Σ weight(item) over met items  /  Σ weight(item) over items with weight > 0 , 0, 1 )

Pitfall items carry negative weights: "met" means the response falls into the pitfall, which
subtracts. A rubric with no positive weight cannot be normalised and is rejected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.sandbox.errors import RewardsmithError

CATEGORIES = ("essential", "important", "optional", "pitfall")
# Weights used when an item names a category but no weight (RaR-style rubrics).
CATEGORY_WEIGHTS = {"essential": 5.0, "important": 3.0, "optional": 1.0, "pitfall": -2.0}
_TEXT_KEYS = ("text", "criterion", "description", "item", "title")


class RubricError(RewardsmithError, ValueError):
    """A rubric that cannot be parsed; the sample gets ``invalid_input``, saying why."""


@dataclass(frozen=True)
class RubricItem:
    text: str
    weight: float = 1.0
    category: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "weight": self.weight}
        if self.category:
            out["category"] = self.category
        return out


@dataclass(frozen=True)
class Rubric:
    items: tuple[RubricItem, ...]
    reference: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def positive_total(self) -> float:
        return sum(item.weight for item in self.items if item.weight > 0)

    def score(self, met: Sequence[bool]) -> float:
        """Σ weight of met items ÷ Σ positive weights, clipped to [0, 1]."""
        if len(met) != len(self.items):
            raise ValueError(f"{len(met)} verdicts for {len(self.items)} rubric items")
        total = self.positive_total
        if total <= 0:
            raise RubricError("rubric has no item with a positive weight")
        raw = sum(item.weight for item, ok in zip(self.items, met, strict=True) if ok) / total
        return min(1.0, max(0.0, raw))

    def to_dict(self) -> dict[str, Any]:
        """Canonical form: what the cache key hashes."""
        out: dict[str, Any] = {"items": [item.to_dict() for item in self.items]}
        if self.reference is not None:
            out["reference"] = self.reference
        return out


def _item(raw: Any, index: int) -> RubricItem:
    if isinstance(raw, str):
        text, weight, category = raw, None, None
    elif isinstance(raw, Mapping):
        text = next((raw[k] for k in _TEXT_KEYS if isinstance(raw.get(k), str)), None)
        if text is None:
            raise RubricError(f"rubric item {index} has no text (keys tried: {', '.join(_TEXT_KEYS)}): {dict(raw)!r}")
        weight = raw.get("weight", raw.get("points"))
        category = raw.get("category")
    else:
        raise RubricError(f"rubric item {index} must be a string or a dict, got {type(raw).__name__}")
    if category is not None:
        category = str(category).strip().lower()
        if category not in CATEGORIES:
            raise RubricError(f"rubric item {index} has category {category!r}; expected one of {', '.join(CATEGORIES)}")
    if weight is None:
        weight = CATEGORY_WEIGHTS[category] if category else 1.0
    try:
        weight = float(weight)
    except (TypeError, ValueError) as exc:
        raise RubricError(f"rubric item {index} has a non-numeric weight {weight!r}") from exc
    if category == "pitfall" and weight > 0:
        weight = -weight  # "pitfall" with a positive weight is a common spelling of a penalty
    if not text.strip():
        raise RubricError(f"rubric item {index} has empty text")
    return RubricItem(text=text.strip(), weight=weight, category=category)


def parse_rubric(value: Any, reference: str | None = None) -> Rubric:
    """A Rubric from a dict (``{"items": [...], "reference": ...}``), a list of items, or JSON text.

    ``reference`` fills in the reference answer when the rubric itself has none.
    """
    if isinstance(value, Rubric):
        return value if value.reference is not None or reference is None else Rubric(value.items, reference)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RubricError(f"rubric is not valid JSON: {exc}") from exc
    extra: dict[str, Any] = {}
    if isinstance(value, Mapping):
        raw_items = next((value[k] for k in ("items", "rubric", "criteria", "checklist") if k in value), None)
        if raw_items is None:
            raise RubricError(f"rubric dict needs 'items' (or 'criteria'), got keys {sorted(value)}")
        reference = value.get("reference", value.get("reference_answer", reference))
        extra = {k: v for k, v in value.items() if k not in ("items", "rubric", "criteria", "checklist", "reference")}
        value = raw_items
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise RubricError(f"rubric must be a list of items, got {type(value).__name__}")
    if not value:
        raise RubricError("rubric has no items")
    items = tuple(_item(raw, i) for i, raw in enumerate(value, 1))
    rubric = Rubric(items=items, reference=None if reference is None else str(reference), extra=extra)
    if rubric.positive_total <= 0:
        raise RubricError("rubric has no item with a positive weight, so no score can be normalised")
    return rubric
