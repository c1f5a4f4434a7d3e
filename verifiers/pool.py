"""A pool of killable worker processes with a hard time limit per item.

Why not ``multiprocessing.Pool`` or ``concurrent.futures``: neither can stop one task
that hangs in C (sympy evaluating ``5^{5^{5^{5^5}}}`` never returns to the
interpreter, so math-verify's ``signal.alarm`` never fires, and it only works on the
main thread anyway). Here each worker is a plain ``python`` subprocess fed over a
pipe; the parent watches a deadline per item, SIGKILLs a worker that overruns,
reports that item as ``timeout``, re-queues the rest of its chunk and starts a
replacement. Workers are started with ``subprocess`` rather than fork, so the pool
is safe to use from any thread of any program (trainers, servers, notebooks), and
they die with the parent (``PR_SET_PDEATHSIG`` on Linux).

Items travel in chunks to amortise the pipe round trip, but each result comes back
as soon as it is ready, so the deadline applies to one item, not to the chunk. Each
worker holds up to two chunks (the next waits in its pipe, so it never idles for a
round trip through the parent), chunks shrink towards the end of a batch so that the
workers finish together, and the parent never blocks writing to a busy worker: it
keeps watching every deadline.

Each item gets one :class:`Outcome`, in order, of one of four kinds:

* ``ok``: the task returned; ``value`` is what it returned.
* ``error``: the task raised (a ``MemoryError`` from the memory cap included);
  ``value`` is ``"TypeName: message"``. The worker lives on.
* ``timeout``: no result within ``timeout_s``; the worker was killed and replaced.
* ``crash``: the worker process died while on this item (a segfault, ``os._exit``, an
  abort in C, a SIGKILL) and died again when the item was retried once in a fresh
  worker. A worker killed once from outside (the OOM killer, a stray ``kill``) thus
  costs the item nothing; an item that kills its worker twice is one that breaks the
  task, which a grader should score as a failure, not report as an infrastructure error.

Memory: every worker runs under ``RLIMIT_AS`` (``memory_mb``, default
:data:`DEFAULT_MEMORY_MB`; ``None`` lifts it), so a runaway allocation inside a task
usually raises ``MemoryError`` there (an ``error`` the task may also catch itself)
instead of swapping the machine; C code that aborts when an allocation fails makes a
``crash`` instead. sympy and math-verify import and grade well within the default.

Start-up: ``preload`` names modules each worker imports as soon as it starts, before
its first item arrives, and :meth:`WorkerPool.start` returns once the processes are
spawned, without waiting for them: a program that starts its pool first (as
``rewardsmith score`` does) overlaps the workers' imports with its own start-up.
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
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

_HEADER = struct.Struct("!I")
# Time a worker may take to start and load a task (imports) before its first item's
# clock starts; only a worker that never gets there is counted against that item.
LOAD_GRACE_S = 60.0
# Address-space cap per worker: far above what grading needs (a warm math worker maps
# well under 1 GiB), far below what a runaway allocation would take from the machine.
DEFAULT_MEMORY_MB = 4096
# Smallest chunk the guided schedule sends (unless the batch itself is smaller).
MIN_CHUNK = 4
# Workers in a row that may die before loading a task before its items are failed as ``error``.
STARTUP_DEATHS = 3
OutcomeKind = Literal["ok", "timeout", "error", "crash"]


@dataclass
class Outcome:
    kind: OutcomeKind
    value: Any = None  # the task's return value, or a message for timeout/error/crash


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


# -- the worker process ----------------------------------------------------------------


def _worker_main(memory_mb: int | None = None, preload: Sequence[str] = ()) -> None:
    """Child side: read chunks, run the task on each item, answer item by item."""
    _die_with_parent()
    _limit_memory(memory_mb)
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints from task code go to stderr, not into the protocol
    proto_in = sys.stdin.buffer
    _preload(preload)  # while the parent is still starting up or reading its input
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
            try:
                tasks[key] = pickle.loads(task_blob)  # may import heavy modules: sympy, …
            except BaseException as exc:  # every item then fails with this reason; the worker lives
                tasks[key] = _Unloadable(f"could not load the task: {type(exc).__name__}: {exc}")
            _warm_up(tasks[key])
            _send(proto_out, ("loaded", -1, None))  # the parent starts the item clock now
        task = tasks[key]
        for index, item in enumerate(items):
            try:
                message: tuple[str, int, Any] = ("ok", index, task(item))
            except BaseException as exc:
                message = ("error", index, f"{type(exc).__name__}: {exc}")
            _send(proto_out, message)


@dataclass(frozen=True)
class _Unloadable:
    reason: str

    def __call__(self, item: Any) -> Any:
        raise RuntimeError(self.reason)


def _die_with_parent() -> None:
    # A worker stuck in C would otherwise outlive a parent killed with SIGKILL.
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError):  # no libc.so.6 (musl): live without the safety net
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _limit_memory(memory_mb: int | None) -> None:
    if memory_mb is None:
        return
    try:
        import resource
    except ImportError:  # not POSIX: no cap
        return
    limit = int(memory_mb) * 1024 * 1024
    with contextlib.suppress(ValueError, OSError):  # a platform that refuses RLIMIT_AS: no cap
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _warm_up(task: Any) -> None:
    """A task's ``warm_up()`` runs once per worker before its first item, outside any item's
    time limit (first calls that fill a parser's caches are slow)."""
    warm = getattr(task, "warm_up", None)
    if callable(warm):
        with contextlib.suppress(Exception):  # only a head start; a real fault shows on the items
            warm()


def _preload(modules: Iterable[str]) -> None:
    import importlib

    for name in modules:
        # Only a head start: a module that fails here fails again, properly reported,
        # when the task itself imports it.
        with contextlib.suppress(Exception):
            importlib.import_module(name)


# -- the parent side -------------------------------------------------------------------


@dataclass
class _Worker:
    proc: subprocess.Popen[bytes]
    buffer: bytearray = field(default_factory=bytearray)  # read, not yet a whole message
    outbox: bytearray = field(default_factory=bytearray)  # to write, not yet taken by the pipe
    writing: bool = False  # registered for EVENT_WRITE until the outbox is empty
    tasks_sent: set[str] = field(default_factory=set)
    tasks_loaded: set[str] = field(default_factory=set)  # acknowledged: the worker runs items of these
    inflight: deque[int] = field(default_factory=deque)  # items sent and not answered yet, in order
    chunks: deque[int] = field(default_factory=deque)  # unanswered items of each chunk sent
    deadline: float = 0.0  # for the item at the head of ``inflight``

    @property
    def read_fd(self) -> int:
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    @property
    def write_fd(self) -> int:
        assert self.proc.stdin is not None
        return self.proc.stdin.fileno()


@dataclass
class _Job:
    """The state of one ``map`` call."""

    key: str
    blob: bytes
    items: Sequence[Any]
    timeout_s: float
    selector: selectors.BaseSelector
    pending: deque[int]  # items not yet sent, in order; a killed worker's unfinished ones go back in front
    results: list[Outcome | None]
    remaining: int
    died_once: dict[int, str] = field(default_factory=dict)  # item -> how its first worker died
    startup_deaths: int = 0  # workers that died before they could run the task: not an item's doing

    def settle(self, index: int, outcome: Outcome) -> None:
        self.results[index] = outcome
        self.remaining -= 1


class WorkerPool:
    """``map(task, items, timeout_s)`` over killable worker processes.

    ``workers``: pool size (default: the CPUs this process may use, :func:`available_cpus`).
    ``task`` must be picklable; it is sent once per worker and cached there, so
    per-process caches (parsed gold answers, say) live as long as the worker does.
    ``memory_mb``: address-space cap per worker (``None``: none). ``preload``: modules
    each worker imports right after it starts; a task may name more in a ``preload``
    attribute (workers started after it was first mapped import them too, so a worker
    that replaces a killed one does not spend its first item's time limit on imports).
    """

    def __init__(self, workers: int | None = None, chunk_size: int = 16,
                 memory_mb: int | None = DEFAULT_MEMORY_MB, preload: Iterable[str] = ()) -> None:
        if memory_mb is not None and memory_mb < 1:
            raise ValueError(f"memory_mb must be a positive number of MiB or None, not {memory_mb!r}")
        self.size = max(1, workers or available_cpus())
        self.chunk_size = max(1, chunk_size)
        self.memory_mb = memory_mb
        self.preload: tuple[str, ...] = tuple(preload)
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self.restarts = 0

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> WorkerPool:
        """Spawn every worker now (otherwise the first ``map`` does) and return at once:
        the workers start up and preload in the background. Returns self."""
        with self._lock:
            self._fill()
        return self

    def add_preload(self, modules: Iterable[str]) -> None:
        """Also preload ``modules`` in workers started from now on."""
        self.preload = tuple(dict.fromkeys((*self.preload, *modules)))  # one atomic assignment

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
        # A worker that died while idle (the OOM killer, a stray kill) is replaced
        # before it is given work: no item is charged for it.
        for worker in [w for w in self._workers if w.proc.poll() is not None]:
            self._replace(worker)
        while len(self._workers) < self.size:
            self._workers.append(_spawn(self.memory_mb, self.preload))

    def _replace(self, worker: _Worker, job: _Job | None = None) -> _Worker:
        if job is not None:
            self._detach(worker, job)
        _kill(worker)
        fresh = _spawn(self.memory_mb, self.preload)
        self._workers[self._workers.index(worker)] = fresh
        self.restarts += 1
        if job is not None:
            job.selector.register(fresh.read_fd, selectors.EVENT_READ, (fresh, "in"))
        return fresh

    # -- work ------------------------------------------------------------------------

    def map(self, task: Callable[[Any], Any], items: Sequence[Any], timeout_s: float) -> list[Outcome]:
        """Run ``task`` on every item; each gets ``timeout_s`` seconds of wall time."""
        if not items:
            return []
        modules = getattr(task, "preload", ())
        if modules and not set(modules) <= set(self.preload):
            self.add_preload(modules)  # for workers started from now on (replacements)
        blob = pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL)
        key = hashlib.blake2b(blob, digest_size=16).hexdigest()
        with self._lock:
            self._fill()
            return self._run(key, blob, items, timeout_s)

    def _run(self, key: str, blob: bytes, items: Sequence[Any], timeout_s: float) -> list[Outcome]:
        pending = deque(range(len(items)))
        job = _Job(key, blob, items, timeout_s, selectors.DefaultSelector(), pending, [None] * len(items), len(items))
        try:
            for worker in self._workers:
                job.selector.register(worker.read_fd, selectors.EVENT_READ, (worker, "in"))
            while job.remaining:
                self._feed(job)
                busy = [w for w in self._workers if w.inflight]
                if not busy:
                    raise RuntimeError("worker pool: items remain but none is pending or in flight")
                wait = max(0.0, min(w.deadline for w in busy) - time.monotonic())
                for event, _ in job.selector.select(wait):
                    worker, side = event.data
                    if worker not in self._workers:  # replaced earlier in this round
                        continue
                    if side == "out":
                        self._flush(worker, job)
                    else:
                        self._collect(worker, job)
                now = time.monotonic()
                for worker in [w for w in self._workers if w.inflight and w.deadline <= now]:
                    self._timeout(worker, job)
        finally:
            for worker in self._workers:
                self._detach(worker, job)
            job.selector.close()
        missing = [i for i, r in enumerate(job.results) if r is None]
        if missing:  # a bug here must not pass as a shorter result list
            raise RuntimeError(f"worker pool lost the results of items {missing[:10]}")
        return job.results  # type: ignore[return-value]

    def _feed(self, job: _Job) -> None:
        # Each worker holds up to two chunks: it starts the next as soon as it finishes
        # one, without waiting for a round trip through this process.
        # Idle workers first, so that a small batch spreads over all of them, and warm
        # ones (task loaded) before fresh ones, whose first item also pays for imports.
        workers = sorted(self._workers, key=lambda w: job.key not in w.tasks_loaded)
        for depth in (0, 1):
            for worker in workers:
                if job.pending and len(worker.chunks) == depth and not worker.outbox:
                    self._dispatch(worker, job, self._next_chunk(job))

    def _next_chunk(self, job: _Job) -> list[int]:
        # Guided: full chunks while plenty is left, smaller ones towards the end so that
        # the workers finish together, but not below a few items (each chunk costs a
        # message); a small batch still spreads over every worker.
        floor = min(MIN_CHUNK, -(-len(job.items) // self.size))
        size = min(self.chunk_size, max(floor, len(job.pending) // (2 * self.size)))
        return [job.pending.popleft() for _ in range(min(size, len(job.pending)))]

    def _dispatch(self, worker: _Worker, job: _Job, chunk: list[int]) -> None:
        send_blob = None if job.key in worker.tasks_sent else job.blob
        data = pickle.dumps((job.key, send_blob, [job.items[i] for i in chunk]), protocol=pickle.HIGHEST_PROTOCOL)
        if not worker.inflight:  # idle until now: the clock of its first item starts here
            grace = LOAD_GRACE_S if send_blob is not None else 0.0
            worker.deadline = time.monotonic() + job.timeout_s + grace
        worker.tasks_sent.add(job.key)
        worker.inflight.extend(chunk)
        worker.chunks.append(len(chunk))
        worker.outbox += _HEADER.pack(len(data)) + data
        self._flush(worker, job)

    def _flush(self, worker: _Worker, job: _Job) -> None:
        """Hand the pipe what it takes now; never block on a worker that is not reading."""
        try:
            written = os.write(worker.write_fd, worker.outbox)
        except BlockingIOError:
            written = 0
        except OSError:  # the worker is gone; its read side reports that
            written = len(worker.outbox)
        del worker.outbox[:written]
        if worker.outbox and not worker.writing:
            job.selector.register(worker.write_fd, selectors.EVENT_WRITE, (worker, "out"))
            worker.writing = True
        elif not worker.outbox and worker.writing:
            job.selector.unregister(worker.write_fd)
            worker.writing = False

    def _detach(self, worker: _Worker, job: _Job) -> None:
        with contextlib.suppress(KeyError, ValueError):
            job.selector.unregister(worker.read_fd)
        if worker.writing:
            with contextlib.suppress(KeyError, ValueError):
                job.selector.unregister(worker.write_fd)
            worker.writing = False

    def _collect(self, worker: _Worker, job: _Job) -> None:
        data = os.read(worker.read_fd, 1 << 20)
        if not data:
            self._died(worker, job)
            return
        worker.buffer.extend(data)
        while len(worker.buffer) >= _HEADER.size:
            (length,) = _HEADER.unpack_from(worker.buffer)
            if len(worker.buffer) < _HEADER.size + length:
                break
            kind, _, value = pickle.loads(bytes(worker.buffer[_HEADER.size:_HEADER.size + length]))
            del worker.buffer[:_HEADER.size + length]
            worker.deadline = time.monotonic() + job.timeout_s  # the next item's clock
            if kind == "loaded":
                worker.tasks_loaded.add(job.key)
                continue
            job.settle(worker.inflight.popleft(), Outcome(kind, value))
            worker.chunks[0] -= 1
            if not worker.chunks[0]:
                worker.chunks.popleft()

    def _release(self, worker: _Worker, job: _Job) -> int:
        """Take ``worker``'s items back: its current one is returned, the rest re-queued in front."""
        current, *rest = worker.inflight
        job.pending.extendleft(reversed(rest))
        worker.inflight.clear()
        worker.chunks.clear()
        worker.outbox.clear()
        return current

    def _timeout(self, worker: _Worker, job: _Job) -> None:
        current = self._release(worker, job)
        job.settle(current, Outcome("timeout", f"no result within {job.timeout_s:g}s; worker killed"))
        self._replace(worker, job)

    def _died(self, worker: _Worker, job: _Job) -> None:
        """The worker died on its current item: retry the item once in a fresh worker; a
        second death makes it a ``crash``. A worker that dies before it has loaded the task
        (start-up, preload, unpickling) charges no item; if that keeps happening the job's
        remaining items are ``error``: the pool, not the input, is broken."""
        try:  # the pipe closes a moment before the process can be reaped
            code = worker.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        how = _death(code)
        if not worker.inflight:  # died while idle: nobody's item
            self._replace(worker, job)
            return
        current = self._release(worker, job)
        if job.key not in worker.tasks_loaded:
            job.pending.appendleft(current)
            self._replace(worker, job)
            job.startup_deaths += 1
            if job.startup_deaths >= STARTUP_DEATHS:
                reason = (f"worker processes die before they can run the task ({how}, {job.startup_deaths} times); "
                          f"check that it loads in a fresh interpreter within memory_mb={self.memory_mb}")
                while job.pending:
                    job.settle(job.pending.popleft(), Outcome("error", reason))
            return
        fresh = self._replace(worker, job)
        first = job.died_once.get(current)
        if first is None:
            job.died_once[current] = how
            self._dispatch(fresh, job, [current])
        else:
            message = f"worker process died on this item twice ({first}; retried in a fresh worker: {how})"
            job.settle(current, Outcome("crash", message))


def _death(code: int | None) -> str:
    if code is None:
        return "exit code unknown"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


# Workers are started from one long-lived thread: PR_SET_PDEATHSIG fires when the
# *thread* that forked a worker exits, so a worker started on a short-lived request
# thread would be killed with that thread.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardsmith-pool-spawner")


def _spawn(memory_mb: int | None, preload: Sequence[str]) -> _Worker:
    return _spawner.submit(_spawn_here, memory_mb, tuple(preload)).result()


def _spawn_here(memory_mb: int | None, preload: tuple[str, ...]) -> _Worker:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    code = f"from rewardsmith.verifiers.pool import _worker_main; _worker_main({memory_mb!r}, {preload!r})"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,  # a Ctrl-C in the terminal reaches the parent, which cleans up
    )
    assert proc.stdin is not None
    os.set_blocking(proc.stdin.fileno(), False)  # written with os.write from an outbox, see _flush
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


def available_cpus() -> int:
    """CPUs this process may run on: its affinity mask (taskset, a cpuset, a batch scheduler's
    allocation), which can be far fewer than the machine's ``os.cpu_count()``."""
    with contextlib.suppress(AttributeError, OSError):  # no sched_getaffinity (macOS)
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


_shared: dict[tuple[int, int | None], WorkerPool] = {}
_shared_lock = threading.Lock()
_default_workers: int | None = None


def set_default_workers(workers: int | None) -> None:
    """Pool size for verifiers that do not set their own (``rewardsmith score --workers``)."""
    global _default_workers
    _default_workers = workers


def shared_pool(workers: int | None = None, memory_mb: int | None = DEFAULT_MEMORY_MB,
                preload: Iterable[str] = ()) -> WorkerPool:
    """The process-wide pool of a given size (and memory cap): verifiers share workers
    instead of each starting their own, and the workers' caches stay warm across
    batches. ``preload`` is added to the pool's list for workers started from now on."""
    size = max(1, workers or _default_workers or available_cpus())
    preload = tuple(preload)
    with _shared_lock:
        pool = _shared.get((size, memory_mb))
        if pool is None or pool._closed:
            pool = _shared[(size, memory_mb)] = WorkerPool(size, memory_mb=memory_mb, preload=preload)
        elif preload:
            pool.add_preload(preload)
        return pool


def started_workers() -> int:
    """Workers of the shared pools that have started (what ``Verifier.start`` warmed)."""
    with _shared_lock:
        return sum(pool.size for pool in _shared.values() if not pool._closed and pool._workers)


@atexit.register
def _close_shared() -> None:
    for pool in list(_shared.values()):
        pool.close()
