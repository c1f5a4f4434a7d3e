"""Where a scoring job's rows go: a JSONL file it can resume, another format, or a stream.

The job always appends JSONL lines to one *work file*, because only an append-only text
file can be resumed exactly after a kill (whole lines, a torn last one cut). The output's
extension picks what the user gets at the end:

* ``.jsonl`` (or any other name): the work file is the output itself;
* ``.parquet`` / ``.pq``, ``.jsonl.gz`` / ``.json.gz``, ``.json`` (a JSON array): the job
  scores into ``OUTPUT.part.jsonl`` beside it and converts that into OUTPUT when every
  row is in, atomically (a temporary file renamed over OUTPUT). The part file stays while
  input rows remain unscored (a ``--limit`` run), so a later run resumes from it;
* ``-``, a pipe, a terminal or a device (``/dev/stdout``): written once, never read back,
  so no resume.

Whatever text a row holds is written: every line is JSON made by :func:`json_text`, which keeps
non-ASCII text as it is and escapes what UTF-8 cannot carry (a lone surrogate such as the
``"\\ud800"`` a JSON input may hold) the way JSON does, so every format reads back the row it
was given. What still cannot be written (a parquet column name UTF-8 cannot hold, a full disk)
raises :class:`WriteError` naming the row.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Any

from rewardsmith.adapters.scoring.rows import JSON_COLUMNS_KEY, PARQUET_SUFFIXES, open_source
from rewardsmith.verifiers import RewardsmithError
from rewardsmith.verifiers.json_text import json_text

STDOUT = "-"
PART_SUFFIX = ".part.jsonl"
# Verdict keys whose values vary in shape from row to row: stored as JSON text in parquet.
VERDICT_JSON_KEYS = ("details", "components", "parts")
# The verdict's text keys: JSON text too in a file where one holds what UTF-8 cannot (a lone surrogate).
VERDICT_TEXT_KEYS = ("status", "feedback")
CHUNK_ROWS = 8192
# Lone surrogates: Python strings may hold them (JSON's "\ud800" escape decodes to one), UTF-8 cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


class OutputError(RewardsmithError, ValueError):
    """OUTPUT cannot be written as asked; the message says what to do instead."""


class WriteError(RewardsmithError):
    """A row was scored but could not be written (the message names its line): the CLI's exit 5.
    The rows before it are kept, so a rerun resumes from it."""


def utf8_ok(text: str) -> bool:
    """Whether ``text`` can be stored as UTF-8 (holds no lone surrogate)."""
    return _SURROGATE.search(text) is None


@dataclass(frozen=True)
class Target:
    path: Path | None  # None: stdout
    format: str  # jsonl, jsonl.gz, json, parquet
    stream: bool  # written once and never read: stdout, a pipe, a terminal, a device

    @property
    def name(self) -> str:
        return "stdout" if self.path is None else str(self.path)

    @property
    def work(self) -> Path:
        """The JSONL file the job appends to (and resumes from)."""
        assert self.path is not None
        return self.path if self.format == "jsonl" else self.path.with_name(self.path.name + PART_SUFFIX)

    @property
    def converted(self) -> bool:
        return self.format != "jsonl"


def resolve_target(output: str | Path) -> Target:
    """What ``-o OUTPUT`` means, refusing what cannot work before any row is scored."""
    if str(output) == STDOUT:
        return Target(None, "jsonl", stream=True)
    path = Path(output)
    if is_stream(path):
        return Target(path, "jsonl", stream=True)
    if path.is_dir():
        raise OutputError(f"output {str(path)!r} is a directory; give a file inside it, "
                          f"e.g. -o {path / 'scored.jsonl'}")
    parent = path.parent
    if not parent.exists():
        raise OutputError(f"the folder of output {str(path)!r} does not exist; create it (mkdir -p {parent}) "
                          "or choose another -o")
    if not parent.is_dir():
        raise OutputError(f"output {str(path)!r}: {str(parent)!r} is not a folder")
    return Target(path, output_format(path), stream=False)


def output_format(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(".gz"):
        return "jsonl.gz"
    if name.endswith(".json"):
        return "json"
    return "jsonl"


def is_stream(path: Path) -> bool:
    """A pipe, terminal, socket or device (``/dev/stdout``): never to be read, truncated or resumed."""
    if str(path).startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = path.stat().st_mode
    except OSError:  # does not exist (yet): a file to create
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


@contextlib.contextmanager
def open_stream(target: Target) -> Iterator[IO[str]]:
    """The stream to write lines to: stdout itself for ``-``, else the path opened for appending
    (never truncating: ``/dev/stdout`` may be a file the shell redirected to)."""
    if target.path is None:
        raw = getattr(sys.stdout, "buffer", None)
        if raw is None:  # a replaced sys.stdout (a StringIO): text as it is
            yield sys.stdout
            sys.stdout.flush()
            return
        sys.stdout.flush()
        # UTF-8 whatever the locale's encoding (a latin-1 terminal cannot take every row)
        out = io.TextIOWrapper(raw, encoding="utf-8", newline="\n", write_through=True)
        try:
            yield out
        finally:
            with contextlib.suppress(BrokenPipeError, ValueError):
                out.flush()
            out.detach()  # sys.stdout keeps its buffer
        return
    handle = target.path.open("a", encoding="utf-8")
    try:
        yield handle
    except BaseException:  # what failed is reported; closing must not raise over it (a full /dev/full)
        with contextlib.suppress(OSError):
            handle.close()
        raise
    with contextlib.suppress(BrokenPipeError):
        handle.close()


def remove_all(target: Target, *extra: Path) -> None:
    """Delete OUTPUT, its part file and ``extra`` (the provenance record): ``--overwrite``."""
    assert target.path is not None
    for path in (target.path, target.work, *extra):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` that replaces it, durably (file and folder synced), when the
    block succeeds, and is removed when it does not: readers see the old file or the whole new one."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
        sync_file(tmp)
        os.replace(tmp, path)
        sync_dir(path.parent)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def finalize(target: Target) -> None:
    """Convert the part file into OUTPUT's format through a temporary file renamed over OUTPUT."""
    assert target.path is not None and target.converted
    with replacing(target.path) as tmp:
        if target.format == "parquet":
            write_parquet(lambda: _records(target.work), tmp)
        elif target.format == "jsonl.gz":
            with tmp.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as out, \
                    target.work.open("rb") as src:
                while chunk := src.read(1 << 20):
                    out.write(chunk)
        else:
            with tmp.open("w", encoding="utf-8") as out, target.work.open("r", encoding="utf-8") as src:
                out.write("[")
                for n, line in enumerate(src):
                    out.write(("\n" if n == 0 else ",\n") + line.rstrip("\n"))
                out.write("\n]\n")


def unpack(target: Target) -> None:
    """Write a finished OUTPUT back into its part file (JSONL), to rescore some of its rows."""
    assert target.path is not None and target.converted
    with replacing(target.work) as tmp, tmp.open("w", encoding="utf-8") as out:
        for row in open_source(target.path).rows():
            out.write(json_text(row.data) + "\n")


def read_output(target: Target) -> Iterator[dict[str, Any]]:
    """The rows of a finished OUTPUT, as the job wrote them."""
    assert target.path is not None
    for row in open_source(target.path).rows():
        if row.data is not None:
            yield row.data


def sync_file(path: Path) -> None:
    with path.open("rb+") as handle:
        os.fsync(handle.fileno())


def sync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (POSIX; a no-op where folders cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _records(path: Path) -> Iterator[dict[str, Any]]:
    with path.open("r", encoding="utf-8") as handle:
        for line in handle:
            yield json.loads(line)


# -- parquet ------------------------------------------------------------------------------


def write_parquet(records: Any, path: Path) -> None:
    """Rows to parquet with one schema for the whole file, in bounded memory.

    ``records()`` yields the rows afresh on each call: a first pass settles each column's
    type, a second writes. Input columns keep their inferred types (int, string, struct,
    list…); a column whose values cannot share one Arrow type (an ``id`` that is a number
    here and text there) is written as JSON text instead of failing the job at its end.
    ``reward`` is a double and ``verdict`` a struct of its fixed keys, except ``details``,
    ``components`` and ``parts``, whose shape varies by verifier: JSON text. The JSON columns
    are listed in the file's metadata, so rewardsmith reads the file back into the rows it wrote.

    Parquet strings are UTF-8, so a column (or the verdict's ``status``/``feedback``) holding a
    lone surrogate anywhere is JSON text too, where it is escaped. A column *name* UTF-8 cannot
    hold has no place in Parquet: :class:`WriteError` names the row.

    A typed column must give back exactly what it was given, because the rows' fields are what a
    reward reads when the file is scored or trained on again. Arrow would not for two kinds of
    column, so those are JSON text too: one that some rows lack (a typed column has a null there,
    and a missing field would come back as a None one), and one whose values Arrow reshapes (a
    struct takes the keys of all rows, so ``[{"a": 1}, {}]`` reads back as
    ``[{"a": 1}, {"a": None}]``; ``[1, 2.5]`` as ``[1.0, 2.5]``).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    fixed = {"reward": pa.float64(), "verdict": verdict_type()}
    types: dict[str, Any] = {}  # column -> Arrow type; None: JSON text
    rows, having = 0, {}  # how many rows in all, and how many have each column
    for chunk in _chunks(records()):
        rows += len(chunk)
        for row in chunk:
            for name in row:
                having[name] = having.get(name, 0) + 1
                if name not in types and not utf8_ok(name):
                    raise WriteError(_unnamable(name, row))
        for name in _names(chunk):
            if name in fixed:
                types[name] = fixed[name]
            elif types.get(name, False) is not None:
                found = _column_type(pa, [row.get(name) for row in chunk])
                types[name] = found if name not in types else _unify(pa, types[name], found)
    for name, count in having.items():
        if count < rows and name not in fixed:
            types[name] = None
    verdict_text: tuple[str, ...] = ()  # verdict keys written as JSON text beyond VERDICT_JSON_KEYS
    while True:
        try:
            _write_parquet_pass(pa, pq, records(), path, types, verdict_text)
            return
        except _ColumnMismatch as exc:  # typed in pass one, yet a later value does not fit: JSON text
            if exc.column == "verdict" and not verdict_text:
                verdict_text = VERDICT_TEXT_KEYS
            elif exc.column != "verdict" and types[exc.column] is not None:
                types[exc.column] = None
            else:  # JSON text always fits; a failure there is not the values' doing
                raise WriteError(f"cannot write the parquet column {exc.column!r}: {exc.__cause__}") from exc


def _unnamable(name: str, row: dict[str, Any]) -> str:
    line = (row.get("verdict") or {}).get("line")
    return (f"input line {line}: its field name {json_text(name)} holds a lone surrogate, which a parquet "
            "column name (UTF-8) cannot; write .jsonl, .json or .jsonl.gz instead (JSON escapes it), or rename "
            "the field")


class _ColumnMismatch(Exception):
    def __init__(self, column: str) -> None:
        super().__init__(column)
        self.column = column


def _write_parquet_pass(pa: Any, pq: Any, records: Iterator[dict[str, Any]], path: Path,
                        types: dict[str, Any], verdict_text: tuple[str, ...] = ()) -> None:
    json_columns = [name for name, kind in types.items() if kind is None]
    json_columns += [f"verdict.{key}" for key in (*VERDICT_JSON_KEYS, *verdict_text)]
    schema = pa.schema([pa.field(name, pa.string() if kind is None else kind) for name, kind in types.items()],
                       metadata={JSON_COLUMNS_KEY: json.dumps(json_columns).encode()})
    with pq.ParquetWriter(path, schema) as writer:
        for chunk in _chunks(records):
            arrays = []
            for name, kind in types.items():
                if name == "verdict":
                    try:
                        arrays.append(pa.array([_verdict_record(row.get("verdict") or {}, verdict_text)
                                                for row in chunk], kind))
                    except UnicodeEncodeError as exc:
                        raise _ColumnMismatch(name) from exc
                elif kind is None:
                    texts = [json_text(row[name]) if name in row else None for row in chunk]
                    arrays.append(pa.array(texts, pa.string()))
                else:
                    values = [row.get(name) for row in chunk]
                    try:
                        array = pa.array(values, kind)
                        kept = _kept(array, values)
                    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, UnicodeEncodeError,
                            RecursionError) as exc:
                        raise _ColumnMismatch(name) from exc
                    if not kept:
                        raise _ColumnMismatch(name)
                    arrays.append(array)
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))


def verdict_type() -> Any:
    """The parquet type of ``verdict`` (built on first use: pyarrow is an optional dependency)."""
    import pyarrow as pa

    return pa.struct([
        ("score", pa.float64()), ("correct", pa.bool_()), ("status", pa.string()), ("feedback", pa.string()),
        ("details", pa.string()), ("elapsed_s", pa.float64()), ("components", pa.string()),
        ("parts", pa.string()), ("line", pa.int64()),
    ])


def _verdict_record(verdict: dict[str, Any], text: tuple[str, ...] = ()) -> dict[str, Any]:
    out = {k: verdict.get(k) for k in ("score", "correct", "status", "feedback", "elapsed_s", "line")}
    for key in (*VERDICT_JSON_KEYS, *text):
        out[key] = json_text(verdict[key]) if key in verdict else None
    return out


def _column_type(pa: Any, values: list[Any]) -> Any:
    """The Arrow type these values share, or None (JSON text) when they share none Parquet can store."""
    try:
        array = pa.array(values)
        return array.type if _storable(pa, array.type) and _kept(array, values) else None
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, UnicodeEncodeError, RecursionError):
        return None


def _kept(array: Any, values: list[Any]) -> bool:
    """Whether ``array`` gives back exactly ``values`` (checked where Arrow may reshape them: nested
    values, and scalars of more than one Python type; a scalar column of one type always does)."""
    if not array.type.num_fields and len({type(v) for v in values if v is not None}) <= 1:
        return True
    return all(map(_identical, array.to_pylist(), values))


def _identical(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``1`` is not ``1.0``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_identical, a, b))
    return bool(a == b) or (a != a and b != b)  # NaN is NaN


def _storable(pa: Any, kind: Any) -> bool:
    """Parquet refuses structs without fields (``{}``), at any depth."""
    if pa.types.is_struct(kind):
        return kind.num_fields > 0 and all(_storable(pa, kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _storable(pa, kind.value_type)
    return True


def _unify(pa: Any, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    try:
        kind = pa.unify_schemas([pa.schema([("c", a)]), pa.schema([("c", b)])],
                                promote_options="permissive").field("c").type
    except (pa.ArrowInvalid, pa.ArrowTypeError, NotImplementedError):
        return None
    return kind if _storable(pa, kind) else None


def _names(chunk: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in chunk:
        seen.update(dict.fromkeys(row))
    return list(seen)


def _chunks(records: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    iterator = iter(records)
    while chunk := list(islice(iterator, CHUNK_ROWS)):
        yield chunk
