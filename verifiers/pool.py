"""A pool of killable worker processes with a hard time limit per item.

Why not ``multiprocessing.Pool`` or ``concurrent.futures``: neither can stop one task
that hangs in C (sympy evaluating ``5^{5^{5^{5^5}}}`` never returns to the
interpreter, so math-verify's ``signal.alarm`` never fires, and it only works on the
main thread anyway). Here each worker is a plain ``python`` subprocess fed over a
pipe; the parent watches a deadline per item, SIGKILLs a worker that overruns,
reports that item as ``timeout``, re-queues the rest of its chunk and starts a
replacement. Workers are started with ``subprocess`` rather than fork, so the pool
is safe to use from any thread of any program (trainers, servers, notebooks).

Items travel in chunks to amortise the pipe round trip, but each result comes back
as soon as it is ready, so the deadline applies to one item, not to the chunk.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import pickle
import selectors
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

_HEADER = struct.Struct("!I")
# Time a worker may take to start and load a task (imports) before its first item's
# clock starts; only a worker that never gets there is counted against that item.
LOAD_GRACE_S = 60.0
OutcomeKind = Literal["ok", "timeout", "error"]


@dataclass
class Outcome:
    kind: OutcomeKind
    value: Any = None  # the task's return value, or a message for timeout/error


def _send(stream: Any, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _recv_exact(stream: Any, size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _worker_main() -> None:
    """Child side: read chunks, run the task on each item, answer item by item."""
    _die_with_parent()
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from task code go to stderr, not into the protocol
    proto_in = sys.stdin.buffer
    tasks: dict[str, Callable[[Any], Any]] = {}
    while True:
        header = _recv_exact(proto_in, _HEADER.size)
        if header is None:
            return
        payload = _recv_exact(proto_in, _HEADER.unpack(header)[0])
        if payload is None:
            return
        key, task_blob, items = pickle.loads(payload)
        if task_blob is not None:
            tasks[key] = pickle.loads(task_blob)  # may import heavy modules: sympy, …
            _send(proto_out, ("loaded", -1, None))  # the parent starts the item clock now
        task = tasks[key]
        for index, item in enumerate(items):
            try:
                message: tuple[str, int, Any] = ("ok", index, task(item))
            except BaseException as exc:
                message = ("error", index, f"{type(exc).__name__}: {exc}")
            _send(proto_out, message)


def _die_with_parent() -> None:
    # A worker stuck in C would otherwise outlive a parent killed with SIGKILL.
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError):  # no libc.so.6 (musl): live without the safety net
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@dataclass
class _Worker:
    proc: subprocess.Popen[bytes]
    buffer: bytearray = field(default_factory=bytearray)
    tasks_sent: set[str] = field(default_factory=set)
    chunk: list[int] | None = None  # item indices of the chunk in flight
    cursor: int = 0  # position in ``chunk`` of the item being worked on
    deadline: float = 0.0

    @property
    def fd(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()


class WorkerPool:
    """``map(task, items, timeout_s)`` over killable worker processes.

    ``task`` must be picklable; it is sent once per worker and cached there, so
    per-process caches (parsed gold answers, say) live as long as the worker does.
    """

    def __init__(self, workers: int | None = None, chunk_size: int = 16) -> None:
        self.size = max(1, workers or os.cpu_count() or 1)
        self.chunk_size = max(1, chunk_size)
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self.restarts = 0

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> WorkerPool:
        """Start every worker now (otherwise the first ``map`` does); returns self."""
        with self._lock:
            self._fill()
        return self

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for worker in self._workers:
                _kill(worker)
            self._workers.clear()

    def __enter__(self) -> WorkerPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fill(self) -> None:
        if self._closed:
            raise RuntimeError("worker pool is closed")
        while len(self._workers) < self.size:
            self._workers.append(_spawn())

    # -- work ------------------------------------------------------------------------

    def map(self, task: Callable[[Any], Any], items: Sequence[Any], timeout_s: float) -> list[Outcome]:
        """Run ``task`` on every item; each gets ``timeout_s`` seconds of wall time."""
        if not items:
            return []
        blob = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        key = hashlib.blake2b(blob, digest_size=16).hexdigest()
        with self._lock:
            self._fill()
            return self._run(key, blob, items, timeout_s)

    def _run(self, key: str, blob: bytes, items: Sequence[Any], timeout_s: float) -> list[Outcome]:
        results: list[Outcome | None] = [None] * len(items)
        size = self._chunk_size_for(len(items))
        queue = deque(list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size))
        remaining = len(items)
        selector = selectors.DefaultSelector()
        try:
            while remaining:
                for worker in self._workers:
                    if worker.chunk is None and queue:
                        self._dispatch(worker, key, blob, items, queue.popleft(), timeout_s)
                        selector.register(worker.fd, selectors.EVENT_READ, worker)
                busy = [w for w in self._workers if w.chunk is not None]
                wait = max(0.0, min(w.deadline for w in busy) - time.monotonic())
                for event, _ in selector.select(wait):
                    worker = event.data
                    remaining -= self._collect(worker, results, timeout_s, queue, selector)
                now = time.monotonic()
                for worker in [w for w in self._workers if w.chunk is not None and w.deadline <= now]:
                    message = f"no result within {timeout_s:g}s; worker killed"
                    remaining -= self._fail(worker, "timeout", message, results, queue, selector)
        finally:
            selector.close()
        return [r for r in results if r is not None]

    def _chunk_size_for(self, n: int) -> int:
        # Small batches still spread over every worker; big ones use full chunks.
        return max(1, min(self.chunk_size, -(-n // self.size)))

    def _dispatch(self, worker: _Worker, key: str, blob: bytes, items: Sequence[Any],
                  chunk: list[int], timeout_s: float) -> None:
        send_blob = None if key in worker.tasks_sent else blob
        assert worker.proc.stdin is not None
        with contextlib.suppress(OSError):  # a dead worker's EOF is noticed by the read side
            _send(worker.proc.stdin, (key, send_blob, [items[i] for i in chunk]))
        worker.tasks_sent.add(key)
        worker.chunk, worker.cursor = chunk, 0
        worker.deadline = time.monotonic() + timeout_s + (LOAD_GRACE_S if send_blob is not None else 0.0)

    def _collect(self, worker: _Worker, results: list[Outcome | None], timeout_s: float,
                 queue: deque[list[int]], selector: selectors.BaseSelector) -> int:
        data = os.read(worker.fd, 1 << 20)
        if not data:
            try:  # the pipe closes a moment before the process can be reaped
                code = worker.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            message = f"worker process died (exit code {code})"
            return self._fail(worker, "error", message, results, queue, selector)
        worker.buffer.extend(data)
        done = 0
        while len(worker.buffer) >= _HEADER.size:
            (length,) = _HEADER.unpack_from(worker.buffer)
            if len(worker.buffer) < _HEADER.size + length:
                break
            kind, index, value = pickle.loads(bytes(worker.buffer[_HEADER.size:_HEADER.size + length]))
            del worker.buffer[:_HEADER.size + length]
            assert worker.chunk is not None
            if kind == "loaded":
                worker.deadline = time.monotonic() + timeout_s
                continue
            results[worker.chunk[index]] = Outcome(kind, value)
            worker.cursor = index + 1
            worker.deadline = time.monotonic() + timeout_s
            done += 1
            if worker.cursor == len(worker.chunk):
                worker.chunk = None
                selector.unregister(worker.fd)
                break
        return done

    def _fail(self, worker: _Worker, kind: OutcomeKind, message: str, results: list[Outcome | None],
              queue: deque[list[int]], selector: selectors.BaseSelector) -> int:
        """Kill ``worker``: its current item gets ``kind``, the rest of its chunk is re-queued."""
        assert worker.chunk is not None
        selector.unregister(worker.fd)
        current, rest = worker.chunk[worker.cursor], worker.chunk[worker.cursor + 1:]
        results[current] = Outcome(kind, message)
        if rest:
            queue.appendleft(rest)
        _kill(worker)
        self._workers[self._workers.index(worker)] = _spawn()
        self.restarts += 1
        return 1


# Workers are started from one long-lived thread: PR_SET_PDEATHSIG fires when the
# *thread* that forked a worker exits, so a worker started on a short-lived request
# thread would be killed with that thread.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardsmith-pool-spawner")


def _spawn() -> _Worker:
    return _spawner.submit(_spawn_here).result()


def _spawn_here() -> _Worker:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from rewardsmith.verifiers.pool import _worker_main; _worker_main()"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,  # a Ctrl-C in the terminal reaches the parent, which cleans up
    )
    return _Worker(proc)


def _kill(worker: _Worker) -> None:
    proc = worker.proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


_shared: dict[int, WorkerPool] = {}
_shared_lock = threading.Lock()
_default_workers: int | None = None


def set_default_workers(workers: int | None) -> None:
    """Pool size for verifiers that do not set their own (``rewardsmith score --workers``)."""
    global _default_workers
    _default_workers = workers


def shared_pool(workers: int | None = None) -> WorkerPool:
    """The process-wide pool of a given size: verifiers share workers instead of each
    starting their own, and the workers' caches stay warm across batches."""
    size = max(1, workers or _default_workers or os.cpu_count() or 1)
    with _shared_lock:
        pool = _shared.get(size)
        if pool is None or pool._closed:
            pool = _shared[size] = WorkerPool(size)
        return pool


@atexit.register
def _close_shared() -> None:
    for pool in list(_shared.values()):
        pool.close()
