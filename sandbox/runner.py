"""The resident runner: runs jobs one at a time, each in a fresh child process.

Standard library only, because the Docker backend hands this very file to
``python3 -c`` inside the sandbox image (the image stays generic and read-only), and
the local backend runs it as a subprocess on the host. Both talk to it the same way:
length-prefixed JSON frames on stdin/stdout.

Per job: empty the work directory, write the job's files, start the command in its
own session with rlimits (CPU, address space, file size, processes, no core dumps),
feed stdin, read stdout/stderr up to a cap, and on the wall-clock deadline or an
output overflow kill everything the job started. "Everything" is what makes the
runner safe to reuse: in a container it is PID 1 and kills every other process
(``kill(-1)``); on the host it is a child subreaper, so orphaned daemons are
reparented to it and found through /proc. It then reaps, cleans, and reports
whether anything survived (the backend replaces a runner that is not clean).
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import os
import resource
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import time

HEADER = struct.Struct("!I")
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER = 1, 4, 36
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
MEMORY_MARKERS = (b"MemoryError", b"std::bad_alloc", b"Cannot allocate memory", b"out of memory")
FILE_SIZE_MARKERS = (b"File too large",)  # EFBIG: Python ignores SIGXFSZ and raises instead


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(option, value, 0, 0, 0)


def read_frame(stream) -> dict | None:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return json.loads(payload)


def write_frame(stream, message: dict) -> None:
    data = json.dumps(message).encode("utf-8")
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def _decode(value: dict | None) -> bytes:
    if not value:
        return b""
    if "b64" in value:
        return base64.b64decode(value["b64"])
    return value.get("text", "").encode("utf-8")


class Runner:
    def __init__(self, workdir: str, kill_all: bool, run_as: int | None = None, scratch: list[str] | None = None):
        self.workdir = os.path.realpath(workdir)
        self.kill_all = kill_all  # True only where we are PID 1 of our own PID namespace
        self.run_as = run_as
        self.scratch = [os.path.realpath(p) for p in (scratch or [])]
        self.pid = os.getpid()

    # -- files ---------------------------------------------------------------------

    def _empty(self, directory: str) -> None:
        if not os.path.isdir(directory):
            return
        for entry in os.listdir(directory):
            path = os.path.join(directory, entry)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def _write_files(self, files: dict) -> None:
        for relative, content in files.items():
            target = os.path.realpath(os.path.join(self.workdir, relative))
            if not target.startswith(self.workdir + os.sep):
                raise ValueError(f"file path {relative!r} leaves the work directory")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(_decode(content))
            if self.run_as is not None:
                os.chown(target, self.run_as, self.run_as)
        if self.run_as is not None:
            for root, dirs, _ in os.walk(self.workdir):
                for name in dirs:
                    os.chown(os.path.join(root, name), self.run_as, self.run_as)

    # -- processes -----------------------------------------------------------------

    def _descendants(self) -> list[int]:
        """Every process whose parent chain leads to this runner (orphans included: we are
        their subreaper)."""
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    stat = handle.read()
                parents[int(entry)] = int(stat[stat.rindex(b")") + 2 :].split()[1])
            except (OSError, ValueError, IndexError):
                continue
        found, frontier = [], [self.pid]
        while frontier:
            parent = frontier.pop()
            children = [pid for pid, ppid in parents.items() if ppid == parent]
            found.extend(children)
            frontier.extend(children)
        return found

    def _kill_everything(self, proc: subprocess.Popen | None) -> None:
        if proc is not None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            # Collect the main process's own status before any waitpid(-1) below can take it.
            with contextlib.suppress(subprocess.TimeoutExpired, ChildProcessError):
                proc.wait(timeout=5)
        if self.kill_all:
            give_up = time.monotonic() + 1.0
            while True:  # PID 1 of the namespace: every other process, until none is left
                with contextlib.suppress(OSError):
                    os.kill(-1, signal.SIGKILL)
                self._reap()
                if not self._others_alive() or time.monotonic() > give_up:
                    break
                time.sleep(0.002)
        else:
            for _ in range(3):  # a process may fork while we scan
                pids = self._descendants()
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                self._reap()

    def _reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def _preexec(self, limits: dict):
        cpu = max(1, int(limits["cpu_s"] + 0.999))
        memory = int(limits["memory_mb"]) << 20
        fsize = int(limits["file_size_mb"]) << 20
        nproc = int(limits["processes"])
        run_as = self.run_as

        def setup() -> None:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if run_as is not None:
                os.setgroups([])
                os.setgid(run_as)
                os.setuid(run_as)
            if run_as is not None or os.getuid() != 0:
                # Counted per user: only meaningful for a user that runs nothing else.
                with contextlib.suppress(ValueError, OSError):
                    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

        return setup

    # -- one job -------------------------------------------------------------------

    def execute(self, job: dict) -> dict:
        start = time.monotonic()
        limits = job["limits"]
        for directory in [self.workdir, *self.scratch]:
            self._empty(directory)
        try:
            self._write_files(job.get("files", {}))
        except (OSError, ValueError) as exc:
            return {"status": "error", "error": f"cannot write job files: {exc}", "wall_s": 0.0}
        env = {"PATH": SAFE_PATH, "HOME": self.workdir, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               "TMPDIR": self.scratch[0] if self.scratch else self.workdir}
        env.update(job.get("env", {}))
        usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.Popen(
                job["command"], cwd=self.workdir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, close_fds=True, preexec_fn=self._preexec(limits),
            )
        except OSError as exc:
            return {"status": "ok", "exit_code": 127, "stderr": f"cannot start {job['command'][:1]}: {exc}",
                    "wall_s": time.monotonic() - start}
        result = self._communicate(proc, _decode(job.get("stdin")), limits, start)
        self._kill_everything(proc)
        with contextlib.suppress(ChildProcessError):
            proc.wait(timeout=5)
        self._reap()
        usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result["cpu_s"] = round((usage_after.ru_utime - usage_before.ru_utime)
                                + (usage_after.ru_stime - usage_before.ru_stime), 6)
        result["exit_code"] = proc.returncode
        result["wall_s"] = round(time.monotonic() - start, 6)
        for directory in [self.workdir, *self.scratch]:
            self._empty(directory)
        result["details"] = {"clean": self._clean()}
        self._classify(result, limits)
        return result

    def _communicate(self, proc: subprocess.Popen, stdin: bytes, limits: dict, start: float) -> dict:
        cap = int(limits["output_bytes"])
        deadline = start + float(limits["wall_s"])
        out = {"stdout": bytearray(), "stderr": bytearray()}
        truncated = {"stdout": False, "stderr": False}
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ, "stdout")
        selector.register(proc.stderr, selectors.EVENT_READ, "stderr")
        pending = memoryview(stdin)
        if pending:
            os.set_blocking(proc.stdin.fileno(), False)
            selector.register(proc.stdin, selectors.EVENT_WRITE, "stdin")
        else:
            proc.stdin.close()
        reason = None
        exited_at = None
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                reason = "timeout"
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > 0.05:
                break  # the main process is gone; something it left holds the pipes open
            for key, _ in selector.select(timeout=min(0.02, max(0.0, deadline - now))):
                if key.data == "stdin":
                    try:
                        sent = os.write(key.fileobj.fileno(), pending[:65536])
                        pending = pending[sent:]
                    except (BrokenPipeError, OSError):
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(key.fileobj)
                        key.fileobj.close()
                    continue
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                buffer = out[key.data]
                room = cap - len(buffer)
                buffer.extend(chunk[: max(room, 0)])
                if len(chunk) > room:
                    truncated[key.data] = True
                    reason = "output_limit"
            if reason:
                break
        self._kill_everything(proc)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        selector.close()
        return {
            "status": reason or "ok",
            "stdout": out["stdout"].decode("utf-8", "replace"),
            "stderr": out["stderr"].decode("utf-8", "replace"),
            "stdout_truncated": truncated["stdout"],
            "stderr_truncated": truncated["stderr"],
        }

    def _classify(self, result: dict, limits: dict) -> None:
        code = result.get("exit_code")
        if result["status"] != "ok":
            return
        # A signal shows as -N from the process itself, or as 128+N through a wrapper (bwrap, a shell).
        sig = -code if code is not None and code < 0 else (code - 128 if code and 128 < code < 160 else None)
        if sig in (signal.SIGXCPU, signal.SIGKILL) and result["cpu_s"] >= float(limits["cpu_s"]) - 0.05:
            result["status"] = "timeout"
            return
        tail = result["stderr"].encode()[-4096:]
        if sig == signal.SIGXFSZ or (code not in (0, None) and any(m in tail for m in FILE_SIZE_MARKERS)):
            result["status"] = "output_limit"
        elif code not in (0, None) and any(m in tail for m in MEMORY_MARKERS):
            result["status"] = "memory"
        elif sig == signal.SIGKILL:
            result["status"] = "memory"  # killed by the kernel: the OOM killer is the usual culprit

    def _others_alive(self) -> list[str]:
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != self.pid]
        return [p for p in others if _state(p) not in ("Z", "X", "")]

    def _clean(self) -> bool:
        alive = self._others_alive() if self.kill_all else [str(p) for p in self._descendants()]
        leftovers = any(os.listdir(d) for d in [self.workdir, *self.scratch] if os.path.isdir(d))
        return not alive and not leftovers


def _state(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return stat[stat.rindex(b")") + 2 :].split()[0].decode()
    except (OSError, ValueError, IndexError):
        return ""


def serve(argv: list[str]) -> None:
    """``serve WORKDIR [--kill-all] [--run-as UID] [--scratch DIR]``: answer jobs until EOF."""
    workdir = argv[0]
    kill_all = "--kill-all" in argv
    run_as = int(argv[argv.index("--run-as") + 1]) if "--run-as" in argv else None
    scratch = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--scratch"]
    _prctl(PR_SET_DUMPABLE, 0)  # jobs run as our uid; this keeps them out of our memory (ptrace, /proc/mem)
    if not kill_all:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    runner = Runner(workdir, kill_all=kill_all, run_as=run_as, scratch=scratch)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    write_frame(out, {"ready": True, "pid": os.getpid(), "uid": os.getuid()})
    while True:
        job = read_frame(inp)
        if job is None:
            return
        try:
            result = runner.execute(job)
        except Exception as exc:  # report, keep serving: the backend decides whether to replace us
            result = {"status": "error", "error": f"runner failed: {type(exc).__name__}: {exc}"}
        write_frame(out, result)


if __name__ == "__main__":
    serve(sys.argv[1:])
