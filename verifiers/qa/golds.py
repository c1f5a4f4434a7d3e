"""The gold answers of a short-answer row, in the shapes QA datasets use: every alias, in order.

* a string: one answer;
* a list of strings (several accepted answers), or SQuAD's official list of
  ``{"text": ..., "answer_start": ...}`` objects;
* SQuAD (``datasets``): ``{"text": [...], "answer_start": [...]}``;
* TriviaQA: ``{"value": ..., "aliases": [...], "normalized_aliases": [...]}`` (every one of them;
  the normalised aliases are the same answers already normalised);
* Natural Questions-style ``{"answer": [...]}`` / ``{"answers": [...]}`` nested one level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.verifiers.qa.normalize import normalize

_ALIAS_KEYS = ("text", "value", "aliases", "normalized_aliases", "normalized_value", "answer", "answers")
MAX_ALIASES = 1000


def read_aliases(value: Any) -> list[str] | str:
    """The distinct gold answers (each non-empty after normalisation), or a message saying why there are none."""
    found: list[str] = []
    _collect(value, found, depth=0)
    aliases = list(dict.fromkeys(a.strip() for a in found if normalize(a)))
    if not aliases:
        return f"no gold answer in {type(value).__name__} {str(value)[:60]!r} (empty once normalised, or no text)"
    return aliases[:MAX_ALIASES]


def _collect(value: Any, out: list[str], depth: int) -> None:
    if depth > 3 or len(out) > MAX_ALIASES:
        return
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, int | float):
        out.append(str(value))  # a year, a count
    elif isinstance(value, Mapping):
        for key in _ALIAS_KEYS:
            if key in value:
                _collect(value[key], out, depth + 1)
    elif isinstance(value, Sequence):
        for item in value:
            _collect(item, out, depth + 1)
