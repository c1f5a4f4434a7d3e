"""Read dataset rows from JSONL or parquet without losing the bad ones.

A malformed JSONL line is not an exception: it is a row with an ``error`` and its raw
text, so the scoring job can report it by line number, write it through, and go on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass
class Row:
    line: int  # 1-based line number (JSONL) or row number (parquet)
    data: dict[str, Any] | None
    error: str | None = None
    raw: str | None = None


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() in PARQUET_SUFFIXES


def read_rows(path: Path) -> Iterator[Row]:
    """Every row of ``path`` in order; blank JSONL lines are not rows."""
    if is_parquet(path):
        yield from _read_parquet(path)
        return
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            yield parse_line(number, line)


def parse_line(number: int, line: str) -> Row:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return Row(number, None, f"not valid JSON ({exc.msg} at column {exc.colno})", line.rstrip("\n"))
    if not isinstance(data, dict):
        return Row(number, None, f"expected a JSON object, got {type(data).__name__}", line.rstrip("\n"))
    return Row(number, data)


def count_rows(path: Path) -> int:
    """Row count for the progress bar: parquet metadata, or non-blank JSONL lines."""
    if is_parquet(path):
        pq = _pyarrow_parquet()
        return pq.ParquetFile(path).metadata.num_rows
    count = 0
    with path.open("rb") as handle:
        for line in handle:
            count += bool(line.strip())
    return count


def _read_parquet(path: Path) -> Iterator[Row]:
    pq = _pyarrow_parquet()
    number = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
        for record in batch.to_pylist():
            number += 1
            yield Row(number, record)


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise RuntimeError("reading parquet needs pyarrow: pip install 'rewardsmith[parquet]'") from exc
    return pq
