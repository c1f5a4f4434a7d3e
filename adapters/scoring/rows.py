"""Read dataset rows as the ecosystem stores them, without losing the bad ones.

One reader for every file a scoring job (or ``calibrate``) is pointed at:

* JSONL, one object per line (any name not listed below), and ``-`` for JSONL on stdin;
* ``.gz``: the same, gzip-compressed (``rows.jsonl.gz``, ``rows.json.gz``);
* ``.json``: a JSON array of objects, or JSON lines under a ``.json`` name (both exist in
  the wild; the first character decides);
* ``.parquet`` / ``.pq``;
* a Hugging Face ``datasets`` folder written by ``save_to_disk`` (a ``DatasetDict``'s split
  chosen with ``split``).

A malformed line is not an exception: it is a row with an ``error`` and its raw text, so
the scoring job can report it by number, write it through, and go on. An input that cannot
be read at all raises :class:`InputError` with what would work.

A source also knows its identity (path, size, content fingerprint), which the scoring job
records beside its output so that a resume can tell whether it is reading the same rows.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rewardsmith.verifiers import RewardsmithError

PARQUET_SUFFIXES = (".parquet", ".pq")
STDIN = "-"
# Parquet files this package writes list, in their schema metadata, the (dotted) columns that
# hold JSON text because Parquet has no type for them (``verdict.details``); reading decodes them.
JSON_COLUMNS_KEY = b"rewardsmith.json_columns"

# Content fingerprint: files up to FULL_HASH_MAX are hashed whole (~50 ms from the page cache);
# bigger ones by their first and last MiB plus SAMPLES evenly spaced blocks (3 MiB read, ~3 ms),
# so a resume never rereads a 100 GB input.
FULL_HASH_MAX = 64 << 20
EDGE = 1 << 20
SAMPLES, SAMPLE_SIZE = 16, 64 << 10
FINGERPRINT_METHOD = "sha256: size + whole file up to 64 MiB, else first and last MiB + 16 blocks of 64 KiB"


class InputError(RewardsmithError, ValueError):
    """The input cannot be read as rows; the message says what would work."""


@dataclass
class Row:
    line: int  # 1-based line number (JSONL) or row number (parquet, JSON array, datasets folder)
    data: dict[str, Any] | None
    error: str | None = None
    raw: str | None = None


@dataclass
class Source:
    """Where a job's rows come from: ``path`` (None for stdin), its ``kind`` and a split."""

    path: Path | None
    kind: str  # jsonl, json, parquet, datasets, stream (stdin, a pipe: read once)
    compressed: bool = False
    split: str | None = None
    _array: list[Any] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return "stdin" if self.path is None else str(self.path)

    def rows(self) -> Iterator[Row]:
        """Every row in order; blank JSONL lines are not rows."""
        if self.kind == "stream" and self.path is None:
            yield from _jsonl_rows(sys.stdin.buffer, self.name)
        elif self.kind == "stream":
            with self._require_path().open("rb") as handle:
                yield from _jsonl_rows(handle, self.name)
        elif self.kind == "parquet":
            yield from _parquet_rows(self._require_path())
        elif self.kind == "datasets":
            yield from _datasets_rows(self._load_dataset())
        elif self.kind == "json" and self._is_array():
            yield from _array_rows(self._load_array())
        else:
            with self._open_binary() as handle:
                yield from _jsonl_rows(handle, self.name)

    def count(self) -> int | None:
        """How many rows (for the progress bar and messages); None for a stream, which is read once."""
        if self.kind == "stream":
            return None
        if self.kind == "parquet":
            return _pyarrow_parquet().ParquetFile(self._require_path()).metadata.num_rows
        if self.kind == "datasets":
            return self._load_dataset().num_rows
        if self.kind == "json" and self._is_array():
            return len(self._load_array())
        count = 0
        with self._open_binary() as handle:
            try:
                for line in handle:
                    count += bool(line.strip())
            except (OSError, EOFError, zlib.error) as exc:
                raise InputError(f"cannot read {self.name}: {exc}") from exc
        return count

    def identity(self) -> dict[str, Any] | None:
        """What a resume compares: path, size and a content fingerprint; None for a stream (stdin, a
        pipe such as ``<(zcat rows.gz)``), which has no identity to check."""
        if self.kind == "stream":
            return None
        path = self.path.resolve()
        if path.is_dir():
            files = sorted(p for p in _split_dir(path, self.split).rglob("*") if p.is_file())
            digest = hashlib.sha256()
            for file in files:
                digest.update(f"{file.relative_to(path)}\0{fingerprint(file)}\0".encode())
            size = sum(f.stat().st_size for f in files)
            return {"path": str(path), "size": size, "fingerprint": f"sha256:{digest.hexdigest()}",
                    "method": FINGERPRINT_METHOD}
        return {"path": str(path), "size": path.stat().st_size, "fingerprint": fingerprint(path),
                "method": FINGERPRINT_METHOD}

    def _require_path(self) -> Path:
        assert self.path is not None
        return self.path

    def _open_binary(self) -> IO[bytes]:
        path = self._require_path()
        return gzip.open(path, "rb") if self.compressed else path.open("rb")

    def _open_text(self) -> IO[str]:
        return io.TextIOWrapper(self._open_binary(), encoding="utf-8", errors="replace")

    def _is_array(self) -> bool:
        """A ``.json`` file whose first non-blank character opens an array."""
        with self._open_binary() as handle:
            try:
                while chunk := handle.read(4096):
                    if stripped := chunk.lstrip():
                        return stripped[:1] == b"["
            except (OSError, EOFError, zlib.error) as exc:
                raise InputError(f"cannot read {self.name}: {exc}") from exc
        return False

    def _load_array(self) -> list[Any]:
        if self._array is None:
            try:
                with self._open_text() as handle:
                    self._array = json.load(handle)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{self.name} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); a .json "
                    "input holds a JSON array of objects, or one object per line"
                ) from exc
            except (OSError, EOFError, zlib.error) as exc:
                raise InputError(f"cannot read {self.name}: {exc}") from exc
        return self._array

    def _load_dataset(self) -> Any:
        try:
            from datasets import load_from_disk
        except ImportError as exc:
            raise RuntimeError("reading a datasets folder needs the datasets package: "
                               "pip install 'rewardsmith[hf]'") from exc
        loaded = load_from_disk(str(self._require_path()))
        return loaded[self.split] if self.split is not None else loaded


def open_source(path: str | Path, split: str | None = None) -> Source:
    """The rows at ``path`` (``-``: stdin), checked enough to fail before any work starts."""
    stdin = str(path) == STDIN
    path = Path(path)
    if not stdin and not path.exists():
        raise InputError(f"input file {str(path)!r} does not exist")
    if not stdin and path.is_dir():
        return Source(path, "datasets", split=_choose_split(path, split))
    if stdin or not path.is_file():  # a pipe (`<(zcat rows.gz)`), a FIFO, a device: JSON lines, read once
        if split is not None:
            raise InputError("--split applies only to a Hugging Face datasets folder, not to a stream")
        return Source(None if stdin else path, "stream")
    if split is not None:
        raise InputError(f"--split applies only to a Hugging Face datasets folder (save_to_disk); {str(path)!r} "
                         "is a file: drop --split")
    name = path.name.lower()
    compressed = name.endswith(".gz")
    if compressed:
        name = name[: -len(".gz")]
    if name.endswith(PARQUET_SUFFIXES):
        if compressed:
            raise InputError(f"{str(path)!r}: a gzip'd parquet file cannot be read in place; gunzip it first")
        return Source(path, "parquet")
    return Source(path, "json" if name.endswith(".json") else "jsonl", compressed=compressed)


def read_rows(path: str | Path, split: str | None = None) -> Iterator[Row]:
    """Every row of ``path`` in order (any format :func:`open_source` reads)."""
    return open_source(path, split).rows()


def parse_line(number: int, line: str) -> Row:
    """One JSONL line as a row; a line that is not JSON, or whose JSON Python cannot hold (an integer of
    more than 4,300 digits, nesting deeper than the recursion limit), is a malformed row, never a crash."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return Row(number, None, f"not valid JSON ({exc.msg} at column {exc.colno})", line.rstrip("\n"))
    except ValueError as exc:  # int_max_str_digits
        return Row(number, None, f"holds a number too long to read ({short_reason(exc)})", line.rstrip("\n"))
    except RecursionError:
        return Row(number, None, "nested too deeply to read", line.rstrip("\n"))
    return _as_row(number, data, line.rstrip("\n"))


def short_reason(exc: Exception) -> str:
    return str(exc).split(";")[0]


def fingerprint(path: Path) -> str:
    """A content fingerprint cheap for any size (see ``FINGERPRINT_METHOD``).

    Why sampled: a resume must not read a whole 100 GB rollout file again just to check it.
    Size plus the first and last MiB catch appended, truncated and regenerated files (and a
    parquet footer, with its row-group statistics, lies in the last MiB); the spread blocks catch
    most rewrites in between. A same-size edit between the samples goes unseen, which is why the
    scoring job also checks that the last row it wrote is the input's row at that place.
    """
    size = path.stat().st_size
    digest = hashlib.sha256(f"{size}\0".encode())
    with path.open("rb") as handle:
        for offset, length in fingerprint_spans(size):
            handle.seek(offset)
            while length > 0 and (chunk := handle.read(min(length, 1 << 20))):
                digest.update(chunk)
                length -= len(chunk)
    return f"sha256:{digest.hexdigest()}"


def fingerprint_spans(size: int) -> list[tuple[int, int]]:
    """The (offset, length) spans :func:`fingerprint` reads of a file of ``size`` bytes."""
    if size <= FULL_HASH_MAX:
        return [(0, size)]
    step = (size - 2 * EDGE - SAMPLE_SIZE) // (SAMPLES + 1)
    return [(0, EDGE), *((EDGE + step * (k + 1), SAMPLE_SIZE) for k in range(SAMPLES)), (size - EDGE, EDGE)]


def _as_row(number: int, data: Any, raw: str) -> Row:
    if not isinstance(data, dict):
        return Row(number, None, f"expected a JSON object, got {type(data).__name__}", raw)
    return Row(number, data)


def _jsonl_rows(handle: IO[bytes], name: str) -> Iterator[Row]:
    number = 0
    try:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield parse_line(number, line.decode("utf-8", errors="replace"))
    except (OSError, EOFError, zlib.error) as exc:  # a truncated or corrupt .gz
        raise InputError(f"cannot read {name} after line {number}: {exc}") from exc


def _array_rows(items: list[Any]) -> Iterator[Row]:
    for number, item in enumerate(items, start=1):
        yield _as_row(number, item, json.dumps(item, ensure_ascii=False, default=str))


def _parquet_rows(path: Path) -> Iterator[Row]:
    pq = _pyarrow_parquet()
    handle = pq.ParquetFile(path)
    metadata = handle.schema_arrow.metadata or {}
    json_columns = json.loads(metadata[JSON_COLUMNS_KEY]) if JSON_COLUMNS_KEY in metadata else []
    number = 0
    for batch in handle.iter_batches(batch_size=1024):
        for record in batch.to_pylist():
            number += 1
            yield Row(number, decode_json_columns(record, json_columns))


def decode_json_columns(record: dict[str, Any], columns: list[str]) -> dict[str, Any]:
    """Undo what the parquet writer did to values Parquet cannot type: JSON text back to values
    (a null there means the key was absent), so a parquet output reads back as its JSONL rows."""
    for column in columns:
        *parents, key = column.split(".")
        holder: Any = record
        for parent in parents:
            holder = holder.get(parent) if isinstance(holder, dict) else None
        if not isinstance(holder, dict) or key not in holder:
            continue
        if holder[key] is None:
            del holder[key]
        elif isinstance(holder[key], str):
            holder[key] = json.loads(holder[key])
    return record


def _datasets_rows(dataset: Any) -> Iterator[Row]:
    number = 0
    for table in dataset.with_format("arrow").iter(batch_size=1024):
        for record in table.to_pylist():
            number += 1
            yield Row(number, record)


def _choose_split(path: Path, split: str | None) -> str | None:
    """The split to read from a datasets folder: ``split``, or the only one a DatasetDict has."""
    index = path / "dataset_dict.json"
    if index.is_file():
        try:
            splits = list(json.loads(index.read_text(encoding="utf-8"))["splits"])
        except (ValueError, KeyError, TypeError, OSError) as exc:
            raise InputError(f"{str(path)!r} has an unreadable dataset_dict.json ({exc})") from exc
        if split is None:
            if len(splits) == 1:
                return str(splits[0])
            raise InputError(f"{str(path)!r} holds the splits {', '.join(splits)}: choose one with --split")
        if split not in splits:
            raise InputError(f"{str(path)!r} has no split {split!r}; its splits: {', '.join(splits)}")
        return split
    if (path / "state.json").is_file():
        if split is not None:
            raise InputError(f"{str(path)!r} holds a single dataset, not a DatasetDict: drop --split {split}")
        return None
    raise InputError(
        f"{str(path)!r} is a folder but not a Hugging Face datasets folder (save_to_disk writes state.json or "
        "dataset_dict.json); give a JSONL, JSON or parquet file, or such a folder"
    )


def _split_dir(path: Path, split: str | None) -> Path:
    return path / split if split is not None and (path / split).is_dir() else path


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise RuntimeError("reading parquet needs pyarrow: pip install 'rewardsmith[parquet]'") from exc
    return pq
