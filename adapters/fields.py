"""Where a sample's fields come from: dataset columns renamed or reached by dotted path, and labels.

Every adapter turns its trainer's row into sample fields here, so a label means the same thing
to the scoring job, the server, OpenRLHF's file and verl: a mapping (or a JSON object string) is
spread into fields, anything else fills one named field (``answer`` by default).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from rewardsmith.verifiers.core import COMPLETION_ERROR, MISSING, Sample, lookup

DEFAULT_LABEL_FIELD = "answer"


def label_fields(label: Any, label_field: str = DEFAULT_LABEL_FIELD) -> dict[str, Any]:
    """The fields a label carries: a dict (or JSON object text) spread, else ``{label_field: label}``.

    A JSON object lets one dataset column carry the answer and a routing field together
    (``{"answer": "4", "data_source": "gsm8k"}``); ``None`` carries nothing.
    """
    if isinstance(label, str) and label.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            parsed = json.loads(label)
            if isinstance(parsed, Mapping):
                label = parsed
    if isinstance(label, Mapping):
        return {str(k): v for k, v in label.items()}
    return {} if label is None else {label_field: label}


def parse_field_map(items: Iterable[str]) -> dict[str, str]:
    """``["answer=solution", "completion=response"]`` → ``{"answer": "solution", ...}`` (CLI ``--field``)."""
    mapping: dict[str, str] = {}
    for item in items:
        field, sep, source = item.partition("=")
        field, source = field.strip(), source.strip()
        if not sep or not field or not source:
            raise ValueError(f"--field takes FIELD=COLUMN (e.g. answer=solution or answer=reward_model.ground_truth), "
                             f"got {item!r}")
        if field in mapping and mapping[field] != source:
            raise ValueError(f"--field {field} is given twice ({mapping[field]!r} and {source!r})")
        mapping[field] = source
    return mapping


def map_fields(row: Mapping[str, Any], mapping: Mapping[str, str]) -> dict[str, Any]:
    """``row`` with each ``field`` set from its ``source`` column (a name or a dotted path).

    A source the row lacks makes the field absent, so the verifier reports it missing by its
    own name. It never falls back to the row's own column of that name: with
    ``answer=solution``, a rollout file's ``answer`` column may be the model's own extracted
    answer, which would then be graded against itself. The source columns themselves are kept.
    """
    out = dict(row)
    for field, source in mapping.items():
        value = lookup(row, source)
        if value is MISSING:
            out.pop(field, None)
        else:
            out[field] = value
    return out


def row_sample(data: Mapping[str, Any], fields: Mapping[str, str] | None = None) -> Sample:
    """The sample a row stands for, after ``--field`` mapping (a mapped field whose column this row
    lacks is absent, not the row's own column of that name). A row without a completion gets
    ``completion=None`` and the reason, which every verifier reports as ``invalid_input`` (an
    empty string would be a real, empty generation, and scored ``no_answer``)."""
    mapped = map_fields(data, fields) if fields else dict(data)
    if mapped.get("completion") is None:
        source = (fields or {}).get("completion")
        reason = (f"the row has no completion: its column {source!r} is missing or null" if source else
                  "the row has no 'completion' (missing or null); map your column with --field completion=<column>")
        mapped = {**mapped, "completion": None, COMPLETION_ERROR: reason}
    return Sample.from_row(mapped)
