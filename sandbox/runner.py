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

import atexit
import base64
import builtins
import contextlib
import ctypes
import io
import json
import os
import resource
import runpy  # imported here, not in a forked job: the import alone costs milliseconds
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import time
import traceback
import types

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
    def __init__(self, workdir: str, kill_all: bool, run_as: int | None = None, scratch: list[str] | None = None,
                 fork_python: bool = False):
        self.fork_python = fork_python  # only where job's python3 is the interpreter running us
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
            give_up = time.monotonic() + 1.0
            while True:  # until no live descendant is left (one may fork while we scan)
                pids = self._live_descendants()
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                self._reap()
                if not pids or time.monotonic() > give_up:
                    break
                time.sleep(0.002)

    def _live_descendants(self) -> list[int]:
        return [pid for pid in self._descendants() if _state(str(pid)) not in ("Z", "X", "")]

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
        fast = python_fast_path(job["command"]) if self.fork_python else None
        try:
            if fast is not None:
                proc = ForkedPython(fast, self.workdir, env, self._preexec(limits))
            else:
                proc = subprocess.Popen(
                    job["command"], cwd=self.workdir, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, start_new_session=True, close_fds=True,
                    preexec_fn=self._preexec(limits),
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
        result["details"] = {"clean": self._clean(), "forked": fast is not None}
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
        alive = self._others_alive() if self.kill_all else self._live_descendants()
        leftovers = any(os.listdir(d) for d in [self.workdir, *self.scratch] if os.path.isdir(d))
        return not alive and not leftovers


_PYTHON_FLAGS = ("-I", "-u", "-B", "-E", "-s", "-S", "-P")


def python_fast_path(command: list[str]) -> tuple[str, str, list[str], bool] | None:
    """(kind, target, argv, add_script_dir) when ``command`` runs Python code we can run in a
    fork of this interpreter instead of starting a new one; None otherwise."""
    if not command or command[0] not in ("python3", "python", "/usr/bin/python3"):
        return None
    i, flags = 1, set()
    while i < len(command) and command[i] in _PYTHON_FLAGS:
        flags.add(command[i])
        i += 1
    if i >= len(command):
        return None
    isolated = bool(flags & {"-I", "-P"})
    if command[i] == "-c" and i + 1 < len(command):
        return "code", command[i + 1], ["-c", *command[i + 2 :]], False
    if command[i] == "-m" and i + 1 < len(command):
        return "module", command[i + 1], [command[i + 1], *command[i + 2 :]], not isolated
    if command[i].startswith("-"):
        return None
    return "path", command[i], command[i:], not isolated


class ForkedPython:
    """A Popen look-alike for Python code run in a fork of the runner: the job pays for a
    fork (about a millisecond), not an interpreter start (tens of milliseconds)."""

    def __init__(self, fast: tuple[str, str, list[str], bool], workdir: str, env: dict, preexec) -> None:
        pipes = [os.pipe() for _ in range(3)]
        self.returncode: int | None = None
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            _run_forked(fast, workdir, env, preexec, pipes)
        os.close(pipes[0][0])
        os.close(pipes[1][1])
        os.close(pipes[2][1])
        self.stdin = os.fdopen(pipes[0][1], "wb", buffering=0)
        self.stdout = os.fdopen(pipes[1][0], "rb", buffering=0)
        self.stderr = os.fdopen(pipes[2][0], "rb", buffering=0)

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("python", timeout or 0)
            time.sleep(0.001)
        return self.returncode


def _run_forked(fast, workdir: str, env: dict, preexec, pipes) -> None:
    code = 1
    try:
        os.setsid()
        preexec()
        os.dup2(pipes[0][0], 0)
        os.dup2(pipes[1][1], 1)
        os.dup2(pipes[2][1], 2)
        for fd in [int(name) for name in os.listdir("/proc/self/fd")]:  # closerange(3, 65536) costs ~5 ms
            if fd > 2:
                with contextlib.suppress(OSError):
                    os.close(fd)
        os.chdir(workdir)
        os.environ.clear()
        os.environ.update(env)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r")), encoding="utf-8")
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w")), encoding="utf-8")
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(2, "w")), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        kind, target, argv, add_dir = fast
        sys.argv = argv
        if add_dir:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)) if kind == "path" else workdir)
        try:
            if kind == "module":
                runpy.run_module(target, run_name="__main__", alter_sys=True)
            else:  # what the interpreter does for a script or -c: a fresh __main__ module
                main = types.ModuleType("__main__")
                main.__builtins__ = builtins
                if kind == "path":
                    main.__file__ = target
                    with open(target, "rb") as handle:
                        source = handle.read()
                else:
                    source, target = target, "<string>"
                sys.modules["__main__"] = main
                exec(compile(source, target, "exec"), main.__dict__)
            code = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
        with contextlib.suppress(BaseException):
            atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
    finally:
        os._exit(code)


def _state(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return stat[stat.rindex(b")") + 2 :].split()[0].decode()
    except (OSError, ValueError, IndexError):
        return ""


def serve(argv: list[str]) -> None:
    """``serve WORKDIR [--kill-all] [--fork-python] [--run-as UID] [--scratch DIR]``: answer jobs until EOF."""
    workdir = argv[0]
    kill_all = "--kill-all" in argv
    fork_python = "--fork-python" in argv
    run_as = int(argv[argv.index("--run-as") + 1]) if "--run-as" in argv else None
    scratch = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--scratch"]
    _prctl(PR_SET_DUMPABLE, 0)  # jobs run as our uid; this keeps them out of our memory (ptrace, /proc/mem)
    if not kill_all:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    runner = Runner(workdir, kill_all=kill_all, run_as=run_as, scratch=scratch, fork_python=fork_python)
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
