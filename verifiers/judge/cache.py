"""An on-disk cache of judge outputs, so re-scoring a dataset makes no model calls.

Keyed by a hash of the canonical JSON of everything that can change the output: the
backend's kind and model, the full prompt (chat messages), the rubric and the sampling
parameters. sqlite gives atomic writes and is shared safely by threads (one lock) and by
processes (sqlite's own locking); a pickled cache reopens its file in the new process.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.judge.backends import cache_root


def cache_key(backend: dict[str, Any], messages: Any, rubric: Any, params: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the four key parts (sorted keys, no whitespace)."""
    payload = {"backend": backend, "messages": messages, "rubric": rubric, "params": params}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    # surrogatepass: a completion may hold a lone surrogate, which must not fail the key (nor the batch)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def default_cache_path() -> Path:
    return cache_root() / "judge_cache.sqlite"


class JudgeCache:
    """Thread-safe sqlite key → JSON value store with hit/miss counters."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            if str(self.path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS judge (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.commit()
            self._conn = conn
        return self._conn

    def get(self, key: str) -> Any | None:
        with self._lock:
            row = self._connect().execute("SELECT value FROM judge WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
            return json.loads(row[0])

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            conn = self._connect()
            conn.execute("INSERT OR REPLACE INTO judge (key, value) VALUES (?, ?)", (key, json.dumps(value)))
            conn.commit()

    def put_many(self, items: list[tuple[str, Any]]) -> None:
        if not items:
            return
        with self._lock:
            conn = self._connect()
            conn.executemany("INSERT OR REPLACE INTO judge (key, value) VALUES (?, ?)",
                             [(k, json.dumps(v)) for k, v in items])
            conn.commit()

    def delete_many(self, keys: list[str]) -> None:
        if not keys:
            return
        with self._lock:
            conn = self._connect()
            conn.executemany("DELETE FROM judge WHERE key = ?", [(k,) for k in keys])
            conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._connect().execute("SELECT COUNT(*) FROM judge").fetchone()[0])

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses}

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "hits": 0, "misses": 0}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]
