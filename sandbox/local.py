"""The local backend: resident runner subprocesses on this machine.

Weaker isolation than Docker, and documented as such: jobs run as ``nobody`` when we
are root (so they cannot write the host's files or fork-bomb past their process
limit), with rlimits, in their own session, in a scratch directory, with a scrubbed
environment; every process a job starts is killed when it ends. When ``bwrap``
(bubblewrap) is installed and works, each command also runs in fresh namespaces:
no network, a read-only view of the host, private /tmp. Without bwrap a job can
still open network connections and read world-readable host files.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rewardsmith.sandbox.backend import ConcurrentBatches
from rewardsmith.sandbox.limits import ExecResult, Job, Limits
from rewardsmith.sandbox.runner import read_frame, write_frame

RUNNER_SOURCE = Path(__file__).with_name("runner.py")
NOBODY = 65534
_GRACE_S = 5.0  # beyond a job's wall limit, how long we wait for the runner itself
# Runners are started from one long-lived thread: their PR_SET_PDEATHSIG fires when the
# *thread* that forked them exits, and run_batch's worker threads come and go.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardsmith-local-spawner")


def bwrap_prefix(workdir: str, scratch: str) -> list[str] | None:
    """The bubblewrap command line that isolates a job, or None when bwrap is not installed.
    (Whether it can create namespaces here is probed by each runner, as the job's user.)"""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    # /tmp first: the work and scratch directories live under it and are bound on top.
    return [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--bind", workdir, workdir, "--bind", scratch, scratch, "--unshare-all", "--die-with-parent",
            "--new-session", "--chdir", workdir, "--"]


class _LocalRunner:
    """One resident runner process and its private directories."""

    def __init__(self, use_bwrap: bool) -> None:
        self.root = tempfile.mkdtemp(prefix="rewardsmith-local-")
        self.workdir = os.path.join(self.root, "work")
        self.scratch = os.path.join(self.root, "tmp")
        os.makedirs(self.workdir)
        os.makedirs(self.scratch)
        self.run_as = NOBODY if os.getuid() == 0 else None
        if self.run_as is not None:
            os.chmod(self.root, 0o755)
            for path in (self.workdir, self.scratch):
                os.chown(path, NOBODY, NOBODY)
        self.prefix = None
        args = [sys.executable, "-I", str(RUNNER_SOURCE), self.workdir, "--scratch", self.scratch]
        if self.run_as is not None:
            args += ["--run-as", str(self.run_as)]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"})
        hello = read_frame(self.proc.stdout)
        if not hello or not hello.get("ready"):
            self.close()
            raise RuntimeError("local sandbox runner failed to start")
        prefix = bwrap_prefix(self.workdir, self.scratch) if use_bwrap else None
        if prefix is not None:
            probe = Job(command=[*prefix, "/bin/true"], limits=Limits(wall_s=10))
            self.prefix = prefix if self.run(probe).exit_code == 0 else None

    @property
    def isolation(self) -> str:
        return "bwrap" if self.prefix is not None else "rlimits"

    def run(self, job: Job) -> ExecResult:
        wire = job.to_wire()
        if self.prefix is not None and job.command[:1] != self.prefix[:1]:
            wire["command"] = [*self.prefix, *wire["command"]]
        answer: queue.Queue[dict | None] = queue.Queue()

        def exchange() -> None:
            try:
                write_frame(self.proc.stdin, wire)
                answer.put(read_frame(self.proc.stdout))
            except (OSError, ValueError):
                answer.put(None)

        threading.Thread(target=exchange, daemon=True).start()
        try:
            result = answer.get(timeout=job.limits.wall_s + _GRACE_S)
        except queue.Empty:
            result = None
        if result is None:
            self.close()
            return ExecResult("error", error="local sandbox runner stopped answering; it was replaced")
        return ExecResult.from_dict(result)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(OSError):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        shutil.rmtree(self.root, ignore_errors=True)


class LocalBackend(ConcurrentBatches):
    """A pool of local runners; ``run`` is thread-safe and ``run_batch`` fills the pool."""

    name = "local"

    def __init__(self, concurrency: int | None = None, use_bwrap: bool = True) -> None:
        self.concurrency = max(1, concurrency or os.cpu_count() or 1)
        self.use_bwrap = use_bwrap
        self._idle: queue.LifoQueue[_LocalRunner] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._all: list[_LocalRunner] = []
        self._lock = threading.Lock()
        self._closed = False
        self._isolation: str | None = None

    @property
    def isolation(self) -> str:
        """``bwrap`` when jobs run in their own namespaces here, else ``rlimits``."""
        if self._isolation is None:
            runner = self._checkout()
            self._isolation = runner.isolation
            self._idle.put(runner)
        return self._isolation

    def run(self, job: Job) -> ExecResult:
        with self._slots:
            runner = self._checkout()
            start = time.monotonic()
            try:
                result = runner.run(job)
            except Exception as exc:  # a broken runner is replaced, and the job is an infrastructure error
                runner.close()
                result = ExecResult("error", error=f"local sandbox failed: {type(exc).__name__}: {exc}")
            result.details.setdefault("backend", "local")
            result.details["roundtrip_s"] = time.monotonic() - start
            self._checkin(runner, result)
            return result

    def _checkout(self) -> _LocalRunner:
        if self._closed:
            raise RuntimeError("local sandbox backend is closed")
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            runner = _spawner.submit(_LocalRunner, self.use_bwrap).result()
            with self._lock:
                self._all.append(runner)
            return runner

    def _checkin(self, runner: _LocalRunner, result: ExecResult) -> None:
        if runner.alive and result.details.get("clean", True) and not self._closed:
            self._idle.put(runner)
            return
        runner.close()
        with self._lock:
            if runner in self._all:
                self._all.remove(runner)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            runners, self._all = list(self._all), []
        for runner in runners:
            runner.close()

    def __enter__(self) -> LocalBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
