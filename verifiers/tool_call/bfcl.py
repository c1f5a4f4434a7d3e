"""Rows from the Berkeley Function Calling Leaderboard's own files, ready for ``tool_call``.

BFCL keeps a category's questions (``BFCL_v4_<category>.json``: ``id``, ``question`` as a list of
turns, ``function``) apart from its possible answers (``possible_answer/BFCL_v4_<category>.json``:
``id``, ``ground_truth``), one JSON object per line. :func:`bfcl_rows` joins them by ``id`` into the
rows the verifier reads; a category without answers (irrelevance) expects no call at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def bfcl_rows(questions: str | Path, answers: str | Path | None = None) -> list[dict[str, Any]]:
    """One row per question: ``id``, ``prompt`` (the question's chat messages), ``function`` and
    ``ground_truth`` (``[]`` when ``answers`` is None: no call should be made).

    Raises ``ValueError`` for a multi-turn question (the verifier grades one turn's calls) and for
    a question whose answer is missing from ``answers`` (a silent ``[]`` would pay every refusal).
    """
    expected: dict[str, Any] | None = None
    if answers is not None:
        expected = {item["id"]: item["ground_truth"] for item in _lines(Path(answers))}
    rows = []
    for item in _lines(Path(questions)):
        turns = item["question"]
        if len(turns) != 1:
            raise ValueError(f"{item['id']}: a multi-turn question ({len(turns)} turns); tool_call grades one turn")
        if expected is not None and item["id"] not in expected:
            raise ValueError(f"{item['id']}: no possible answer in {answers}")
        rows.append({"id": item["id"], "prompt": turns[0], "function": item["function"],
                     "ground_truth": [] if expected is None else expected[item["id"]]})
    return rows


def _lines(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
