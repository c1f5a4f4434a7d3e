"""The resident runner: runs jobs one at a time, each in fresh child processes.

Standard library only, because the Docker backend hands this very file to
``python3 -c`` inside the sandbox image (the image stays generic and read-only), and
the local backend runs it as a subprocess on the host. Both talk to it the same way:
length-prefixed JSON frames on stdin/stdout.

Per job: empty the job's directories, write the job's files (as the user that will
own them), start the command in its own session with rlimits (CPU, address space,
file size, processes, no core dumps), feed stdin, read stdout/stderr up to a cap,
and when the job's main process exits, at the wall-clock deadline, or on an output
overflow, kill everything the job started. "Everything" is what makes the runner
safe to reuse: in a container it is PID 1 and kills every process but itself and
its template (below); on the host it is a child subreaper, so orphaned daemons are
reparented to it and found through /proc. It then reaps, removes every SysV IPC
object the job left (shared memory, message queues, semaphore sets) and every POSIX
message queue (listed in /dev/mqueue where the namespace's mqueue filesystem is
mounted there, as in every Docker container), removes what the job's uids own in the
host's shared temporary directories (``--shared-tmp``, the local backend as root),
empties the directories, and reports whether anything survived (``details["clean"]``;
the backend replaces a runner that is not clean).

POSIX message queues: job processes get RLIMIT_MSGQUEUE 0 (hard), so ``mq_open`` with
O_CREAT fails with EMFILE; the runner probes that at start-up as the job's uid. A
runner that can neither list the queues nor rely on that limit reports every job not
clean (``details["mqueue_unconfirmed"]``), so the backend never reuses it.

What is guaranteed, given the flags the backends pass:

* Jobs never run as the runner's user when the runner is root: ``--run-as`` names the
  candidate's uid, ``--judge-as`` the judge's. Children drop to their uid
  (``setgroups([])``, ``setgid``, ``setuid``) before running anything, so they hold no
  capability and cannot signal, trace or read the memory of the runner (which is also
  non-dumpable) or of a process of the other uid. The runner ignores SIGINT, SIGTERM,
  SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE and SIGQUIT; its children get the defaults back.
* A root runner needs no capability but SETUID and SETGID: it touches a job's files and
  kills or cleans up a job's processes and IPC objects with its effective uid switched
  to the job's (``_as_user``), so it needs no DAC_OVERRIDE, FOWNER, CHOWN or KILL.
* Paired jobs (a ``judge`` in the job, see ``rewardsmith.sandbox.limits.Peer``): the
  candidate starts first, then the judge, as another uid, in its own directory
  (``--judge-dir``, emptied like the work directory); one AF_UNIX stream socketpair
  joins them as fd 3 in each (no other fd beyond stdio). The job is the judge's: its
  exit ends the job; the candidate's output and exit code go to
  ``details["candidate"]`` (what it had written by then: a judge that reads them waits
  for end-of-file on fd 3 first, see ``rewardsmith.sandbox.job.Peer``).
* A paired job's shared directory (``--shared-dir``): both sides see it at the same path and
  get it as ``REWARDSMITH_SHARED_DIR``. At the job's start it is empty, owned by the judge's
  uid, mode 0711: the candidate can reach what the judge opens to it (a subdirectory chmod'ed
  0777, say pytest's ``tmp_path``) but cannot list or create anything at the top. After every
  job it is emptied, whatever either uid left there (see ``Runner._empty_shared``); what
  cannot be removed in time makes the job not clean.
* Python jobs (``--fork-python``) are forked from a *template*: a process forked from
  the runner at start-up, before any job arrived, that only ever receives "fork" and
  the child's file descriptors. The runner reads every job's files and stdin; a job
  forked from the runner would inherit that memory. A template child reads its own
  spec from a socket, then drops to its uid.
* Processes get ``oom_score_adj`` 1000 (candidate) and 500 (judge), so a job that fills
  the container's memory is what the kernel's OOM killer takes, not the runner.
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
import signal
import socket
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
# What the runner ignores, so that nothing that reaches it (a job of its own uid on a
# non-root host, a stray terminal signal) can stop it; children get the defaults back.
IGNORED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
                   signal.SIGPIPE, signal.SIGQUIT)
PEER_FD = 3  # each side of a paired job finds its end of the socketpair here
OOM_CANDIDATE, OOM_JUDGE = 1000, 500
IPC_RMID = 0
_LIBC = ctypes.CDLL(None, use_errno=True)
# Where a container (Docker mounts one in every container) or a host lists the POSIX message
# queues of its IPC namespace.
MQUEUE_DIR = "/dev/mqueue"
# A paired job's shared directory: its path is in this variable on both sides; its mode lets the
# candidate traverse it but not list it or create anything at its top (the judge's alone).
SHARED_ENV = "REWARDSMITH_SHARED_DIR"
SHARED_MODE = 0o711
# After a job's end (its judge's exit, or its deadline), the most the runner spends before it answers:
# killing every process of the job (they may fork while it scans), waiting for their exit statuses, and
# removing what the job left in all of its directories together. A backend waits this long (and a
# little more) past a job's wall-clock limit before it calls a runner dead: a starved runner that
# keeps within its own bounds is never mistaken for a broken one.
KILL_S = 1.0
REAP_S = 5.0
CLEANUP_S = 10.0
POST_JOB_S = KILL_S + REAP_S + CLEANUP_S


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(OSError, AttributeError):
        _LIBC.prctl(option, value, 0, 0, 0)


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
    # surrogatepass: text a completion wrote may hold a lone surrogate (JSON's "\\ud800" decodes to
    # one); the file gets its bytes as they are, and the program fails or runs on them as it would
    # anywhere, instead of the job failing as a sandbox error the completion caused.
    return value.get("text", "").encode("utf-8", "surrogatepass")


@contextlib.contextmanager
def _as_user(uid: int | None):
    """Run the block with effective uid/gid ``uid`` (a root runner without DAC_OVERRIDE or
    KILL reaches a job's files, processes and IPC objects this way); a no-op otherwise."""
    if uid is None or uid == 0 or os.geteuid() != 0:
        yield
        return
    os.setegid(uid)
    os.seteuid(uid)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def _kill_all_of(uid: int) -> None:
    """SIGKILL every process of ``uid`` in one call (kill(-1)): real and effective uid become
    ``uid`` for the call (a real uid of 0 would make the template a target too), the saved
    uid stays 0 to come back."""
    os.setresuid(uid, uid, 0)
    try:
        with contextlib.suppress(OSError):
            os.kill(-1, signal.SIGKILL)
    finally:
        os.setresuid(0, 0, 0)


# -- processes the runner starts ------------------------------------------------------


class _Exec:
    """A job process started with exec (``subprocess.Popen``), reaped with its rusage."""

    forked = False

    def __init__(self, popen: subprocess.Popen, uid: int | None) -> None:
        self.popen, self.pid, self.uid = popen, popen.pid, uid
        self.stdin, self.stdout, self.stderr = popen.stdin, popen.stdout, popen.stderr
        self.returncode: int | None = None
        self.cpu_s = 0.0

    def done(self, status: int, usage) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)
        self.cpu_s = usage.ru_utime + usage.ru_stime
        self.popen.returncode = self.returncode  # Popen must not wait for it again

    def poll(self) -> int | None:
        if self.returncode is None:
            with contextlib.suppress(ChildProcessError):
                pid, status, usage = os.wait4(self.pid, os.WNOHANG)
                if pid:
                    self.done(status, usage)
        return self.returncode

    def wait(self, timeout: float) -> int | None:
        give_up = time.monotonic() + timeout
        while self.poll() is None and time.monotonic() < give_up:
            time.sleep(0.0005)
        return self.returncode


class _Forked:
    """A Python job forked by the template: the job pays for a fork (about a millisecond),
    not an interpreter start (tens of milliseconds). The template reports its exit."""

    forked = True

    def __init__(self, template: Template, pid: int, uid: int | None, pipes: list[tuple[int, int]]) -> None:
        self.template, self.pid, self.uid = template, pid, uid
        self.stdin = os.fdopen(pipes[0][1], "wb", buffering=0)
        self.stdout = os.fdopen(pipes[1][0], "rb", buffering=0)
        self.stderr = os.fdopen(pipes[2][0], "rb", buffering=0)
        self.returncode: int | None = None
        self.cpu_s = 0.0

    def poll(self) -> int | None:
        if self.returncode is None:
            self.template.collect(0)
            if self.pid in self.template.exits:
                self.returncode, self.cpu_s = self.template.exits.pop(self.pid)
            elif not self.template.alive:
                self.returncode = -signal.SIGKILL  # its reaper is gone: it cannot be told apart
        return self.returncode

    def wait(self, timeout: float) -> int | None:
        give_up = time.monotonic() + timeout
        while self.poll() is None and time.monotonic() < give_up:
            self.template.collect(max(0.0, give_up - time.monotonic()))
        return self.returncode


class Template:
    """The pristine process Python jobs are forked from.

    Forked from the runner at start-up, before the first job, so its memory holds no job's
    files, stdin or expected output, ever: it receives only the word "fork" and the new
    child's file descriptors (a spec socket, stdin, stdout, stderr, and fd 3 of a paired
    job) over a SOCK_SEQPACKET socketpair, forks, answers the child's pid, reaps the child
    and reports its exit code and CPU time. The child reads its own spec from the spec
    socket (the runner sends it there), then sets itself up and runs the job.

    ``preload``: modules the template imports first (from ``preload_path``, a read-only folder of the
    image), so that the jobs forked from it find them imported: a sandboxed scorer's package costs
    seconds to import, once per container instead of once per job. Only the image's own code runs
    in the template; a module that fails to import is left for the job to import (and fail on).
    """

    def __init__(self, preload: tuple[str, ...] = (), preload_path: str | None = None) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            ours.close()
            _template_main(theirs, preload, preload_path)  # never returns
        theirs.close()
        self.sock = ours
        self.alive = True
        self.exits: dict[int, tuple[int, float]] = {}

    def spawn(self, spec: dict, fds: list[int]) -> int:
        """Fork a child that runs ``spec`` with ``fds`` as [stdin, stdout, stderr, (peer)];
        its pid. OSError when the template cannot fork (or is gone)."""
        spec_ours, spec_theirs = socket.socketpair()
        try:
            try:
                socket.send_fds(self.sock, [b"fork"], [spec_theirs.fileno(), *fds])
            except OSError:
                self.alive = False
                raise
            spec_theirs.close()
            reply = self._reply()
            if "pid" not in reply:
                raise OSError(reply.get("error", "the template did not fork"))
            spec_ours.sendall(json.dumps(spec).encode("utf-8"))
            return reply["pid"]
        finally:
            spec_ours.close()
            spec_theirs.close()

    def _reply(self) -> dict:
        while True:
            message = self._receive(None)
            if message is None:
                self.alive = False
                return {"error": "the template exited"}
            if "exit" not in message:
                return message

    def _receive(self, timeout: float | None) -> dict | None:
        """One message (exit reports are filed in ``exits``); None on EOF or timeout."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(4096)
        except (BlockingIOError, TimeoutError):
            return {}
        except OSError:
            data = b""
        if not data:
            self.alive = False
            return None
        message = json.loads(data)
        if "exit" in message:
            self.exits[message["exit"]] = (message["code"], message["cpu"])
        return message

    def collect(self, timeout: float) -> None:
        """File every exit report waiting (waiting up to ``timeout`` for the first)."""
        if not self.alive:
            return
        message = self._receive(timeout)
        while message:
            message = self._receive(0)


def _template_main(sock: socket.socket, preload: tuple[str, ...] = (), preload_path: str | None = None) -> None:
    code = 0
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)  # hold none of the runner's protocol pipes
        os.dup2(null, 1)
        os.close(null)
        _preload(preload, preload_path)
        selector = selectors.DefaultSelector()
        selector.register(sock, selectors.EVENT_READ, None)
        waiting: dict[int, int] = {}  # pid -> pidfd (or -1 where pidfd_open is missing)
        while True:
            polling = any(fd < 0 for fd in waiting.values())
            for key, _ in selector.select(timeout=0.002 if polling else None):
                if key.data is None:
                    message, fds, _flags, _addr = socket.recv_fds(sock, 64, 8)
                    if not message:
                        return
                    pid = _template_fork(sock, selector, waiting, fds)
                    if pid:
                        waiting[pid] = _watch(selector, pid)
                else:
                    _report(sock, selector, waiting, key.data)
            if polling:
                for pid in [pid for pid, fd in waiting.items() if fd < 0]:
                    _report(sock, selector, waiting, pid, block=False)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


PRELOAD_HOME = "/var/cache/rewardsmith"  # the template's own writable folder (a root-only tmpfs in Docker)


def _preload(modules: tuple[str, ...], path: str | None) -> None:
    """Import ``modules`` (from ``path``) in the template, single-threaded: numerical libraries start
    thread pools on import, and a process with threads forks badly. Libraries that want a writable
    config or cache folder at import (matplotlib) get the template's own, which no job can read."""
    if not modules:
        return
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    if os.path.isdir(PRELOAD_HOME):
        for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMPDIR"):
            os.environ[name] = PRELOAD_HOME
    if path and os.path.isdir(path) and path not in sys.path:
        sys.path.append(path)
    for module in modules:
        before = set(sys.modules)
        try:
            __import__(module)
        except Exception:  # the job imports it again, and fails there with the reason
            traceback.print_exc()  # the container's stderr: the backend keeps its tail
            for name in set(sys.modules) - before:  # no half-imported module for the jobs to find
                del sys.modules[name]
    import gc

    gc.collect()
    gc.freeze()  # every job shares these pages: a collection there would copy them


def _template_fork(sock: socket.socket, selector, waiting: dict[int, int], fds: list[int]) -> int:
    try:
        pid = os.fork()
    except OSError as exc:
        pid = -1
        sock.send(json.dumps({"error": f"fork failed: {exc}"}).encode())
    if pid == 0:  # the job's process: never returns
        selector.close()
        sock.close()
        for fd in waiting.values():
            if fd >= 0:
                os.close(fd)
        _run_child(fds)
    for fd in fds:
        os.close(fd)
    if pid > 0:
        sock.send(json.dumps({"pid": pid}).encode())
    return max(pid, 0)


def _watch(selector, pid: int) -> int:
    try:
        fd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return -1
    selector.register(fd, selectors.EVENT_READ, pid)
    return fd


def _report(sock: socket.socket, selector, waiting: dict[int, int], pid: int, block: bool = True) -> None:
    got, status, usage = os.wait4(pid, 0 if block else os.WNOHANG)
    if not got:
        return
    fd = waiting.pop(pid)
    if fd >= 0:
        selector.unregister(fd)
        os.close(fd)
    sock.send(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status),
                          "cpu": usage.ru_utime + usage.ru_stime}).encode())


def _rlimits(limits: dict) -> tuple[int, int, int]:
    cpu = max(1, int(limits["cpu_s"] + 0.999))
    return cpu, int(limits["memory_mb"]) << 20, int(limits["file_size_mb"]) << 20


def _no_message_queues() -> None:
    if hasattr(resource, "RLIMIT_MSGQUEUE"):
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))


def _mq_call(name: str):
    """libc's (glibc >= 2.34) or librt's ``mq_*`` function ``name``; None where there is none."""
    for lib in (_LIBC, "librt.so.1"):
        try:
            handle = ctypes.CDLL(lib, use_errno=True) if isinstance(lib, str) else lib
            return getattr(handle, name)
        except (OSError, AttributeError):
            continue
    return None


def mqueue_creation_blocked(uid: int | None) -> bool:
    """Whether a job process (our limits, dropped to ``uid``) fails to create a POSIX message
    queue: probed in a child, because only the kernel can say whether RLIMIT_MSGQUEUE holds."""
    mq_open, mq_unlink = _mq_call("mq_open"), _mq_call("mq_unlink")
    if mq_open is None:
        return True  # no POSIX message queues in this C library: nothing can create one
    name = f"/rewardsmith-probe-{os.getpid()}-{time.monotonic_ns()}".encode()
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            _no_message_queues()
            if uid is not None and os.getuid() == 0:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            fd = mq_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, None)
            if fd >= 0:
                mq_unlink(name)
                code = 1
            else:
                code = 0 if ctypes.get_errno() in (24, 38) else 2  # EMFILE (the limit), ENOSYS (no mqueue)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def mqueue_directory(path: str = MQUEUE_DIR) -> str | None:
    """``path`` when it lists the message queues of OUR IPC namespace (an mqueue filesystem is
    mounted there, and a queue we create shows up in it), else None."""
    mq_open, mq_unlink = _mq_call("mq_open"), _mq_call("mq_unlink")
    if mq_open is None or not os.path.isdir(path):
        return None
    name = f"rewardsmith-probe-{os.getpid()}-{time.monotonic_ns()}"
    fd = mq_open(("/" + name).encode(), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, None)
    if fd < 0:
        return None  # cannot tell (our own limit is 0, the namespace is full)
    try:
        seen = os.path.exists(os.path.join(path, name))
    finally:
        os.close(fd)
        mq_unlink(("/" + name).encode())
    return path if seen else None


def _mqueues(directory: str) -> list[tuple[str, int, int]] | None:
    """(name, inode, owner uid) of every queue in ``directory``; None when it cannot be read."""
    try:
        found = []
        with os.scandir(directory) as listing:
            for entry in listing:
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    found.append((entry.name, info.st_ino, info.st_uid))
        return found
    except OSError:
        return None


def _drop(limits: dict, uid: int | None, nproc: int, oom: int) -> None:
    """In a job's process, before it runs anything of the job: limits, then the job's uid
    (no capability survives), then the per-user process count."""
    cpu, memory, fsize = _rlimits(limits)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # No POSIX message queue memory (the kernel charges every queue to its creator's
    # RLIMIT_MSGQUEUE, whatever its size): mq_open(O_CREAT) fails with EMFILE, so a job cannot
    # leave a queue for the next one. Lowering a hard limit is for good: no job can raise it.
    _no_message_queues()
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w") as handle:
        handle.write(str(oom))  # raising it needs no privilege
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        # Its own uid now: dumpable again, like any process that exec'd, so it can read its own
        # /proc/self/{mem,environ}; only processes of the same uid (its own) may trace it.
        _prctl(PR_SET_DUMPABLE, 1)
    if uid is not None or os.getuid() != 0:
        # Counted per user: only meaningful for a user that runs nothing else.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


def _run_child(fds: list[int]) -> None:
    """A template child: read the spec, take stdio and fd 3, drop privileges, run the job."""
    code = 1
    try:
        spec_fd, *stdio = fds
        chunks = []
        while chunk := os.read(spec_fd, 1 << 16):
            chunks.append(chunk)
        os.close(spec_fd)
        if not chunks:
            os._exit(1)  # the runner gave up on this child
        spec = json.loads(b"".join(chunks))
        os.setsid()
        for target, fd in enumerate(stdio):  # 0, 1, 2 and, in a paired job, 3
            os.dup2(fd, target)
        keep = len(stdio) - 1
        for fd in [int(name) for name in os.listdir("/proc/self/fd")]:  # closerange(3, 65536) costs ~5 ms
            if fd > keep:
                with contextlib.suppress(OSError):
                    os.close(fd)
        _drop(spec["limits"], spec["uid"], spec["nproc"], spec["oom"])
        code = _run_python(spec["fast"], spec["cwd"], spec["env"])
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        os._exit(code)


def _run_python(fast, cwd: str, env: dict) -> int:
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for sig in IGNORED_SIGNALS:
        if sig != signal.SIGPIPE:  # a fresh interpreter ignores SIGPIPE too
            signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r")), encoding="utf-8")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w")), encoding="utf-8")
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w")), encoding="utf-8", errors="backslashreplace", line_buffering=True
    )
    kind, target, argv, add_dir = fast
    sys.argv = argv
    if add_dir:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)) if kind == "path" else cwd)
    code = 1
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
    return code


# -- one side of a job ----------------------------------------------------------------------


class _Side:
    """One process of a job (the job itself, or a paired job's candidate or judge) and what
    it printed."""

    def __init__(self, role: str, spec: dict, cwd: str, env: dict, uid: int | None, oom: int) -> None:
        self.role, self.command, self.cwd, self.env, self.uid, self.oom = role, spec["command"], cwd, env, uid, oom
        self.stdin = _decode(spec.get("stdin"))
        self.proc: _Exec | _Forked | None = None
        self.failed = ""  # why it could not start
        self.out = {"stdout": bytearray(), "stderr": bytearray()}
        self.truncated = {"stdout": False, "stderr": False}

    @property
    def exit_code(self) -> int | None:
        return 127 if self.proc is None else self.proc.returncode

    def text(self, stream: str) -> str:
        text = self.out[stream].decode("utf-8", "replace")
        return text + self.failed if stream == "stderr" else text


class Runner:
    def __init__(self, workdir: str, kill_all: bool, run_as: int | None = None, scratch: list[str] | None = None,
                 fork_python: bool = False, judge_as: int | None = None, judge_dir: str | None = None,
                 max_procs: int | None = None, template: Template | None = None,
                 shared_tmp: list[str] | None = None, shared_dir: str | None = None) -> None:
        self.template = template if fork_python else None  # only where job's python3 is our interpreter
        self.workdir = os.path.realpath(workdir)
        self.kill_all = kill_all  # True only where we are PID 1 of our own PID namespace
        self.run_as = run_as
        self.judge_as = judge_as if judge_as is not None else run_as
        self.judge_dir = os.path.realpath(judge_dir) if judge_dir else None
        # Seen by both sides of a paired job at this path; owned by the judge's uid (the backend
        # creates it so), SHARED_MODE, emptied around every job.
        self.shared_dir = os.path.realpath(shared_dir) if shared_dir else None
        self.scratch = [os.path.realpath(p) for p in (scratch or [])]
        self.max_procs = max_procs
        # World-writable directories of the host (/tmp, /var/tmp, /dev/shm) where a job of ours
        # could leave files for the next: emptied of whatever our job uids own after each job.
        self.shared_tmp = [os.path.realpath(p) for p in (shared_tmp or [])]
        # POSIX message queues: jobs cannot create any (RLIMIT_MSGQUEUE 0, probed here); those
        # a job left anyway are removed after it where the namespace's queues can be listed.
        self.mqueue_dir = mqueue_directory()
        self.mqueue_blocked = mqueue_creation_blocked(run_as)
        self.pid = os.getpid()
        self._children: dict[int, _Exec] = {}
        self._placeholder = os.open(os.devnull, os.O_RDONLY)

    # -- files ---------------------------------------------------------------------

    def _directories(self) -> list[tuple[str, int | None]]:
        dirs = [(self.workdir, self.run_as)] + [(d, self.run_as) for d in self.scratch]
        if self.judge_dir:
            dirs.append((self.judge_dir, self.judge_as))
        return dirs

    def _empty(self, directory: str, uid: int | None, deadline: float | None = None) -> None:
        """Remove what a job left, bounded in time whatever it left (a chain of directories thousands
        deep, a flood of them), by ``deadline`` (default: CLEANUP_S from now): what is still there
        afterwards makes the runner unclean, and an unclean runner is retired, never reused."""
        with _as_user(uid):
            if not os.path.isdir(directory):
                return
            with contextlib.suppress(OSError):
                os.chmod(directory, 0o700)  # a job may have opened its directory to others
            deadline = time.monotonic() + CLEANUP_S if deadline is None else deadline
            empty_directory(directory, deadline)
            if _listing(directory):  # something resisted (a directory without rwx): open up, retry
                _bounded(["chmod", "-R", "u+rwx", "--", directory], deadline)
                empty_directory(directory, deadline)

    def _empty_shared(self, deadline: float | None = None) -> None:
        """Empty the shared directory and give it back its mode. Both uids may have left trees
        there, of any mode, inside each other's directories, and the runner has no DAC_OVERRIDE:
        it works as each owner in turn. The judge (the owner, so it can list the top and remove
        whatever is left empty there) removes what it can; if anything resists, each uid opens
        its own directories to all (``chmod -R``, which never follows a symbolic link met in the
        walk; only real directories are named to it) and each removes what it can, in rounds
        (each round peels a layer of one uid's closed directories inside the other's). Bounded
        in time like ``_empty``; what is left makes the job not clean (``_shared_clean``). The rm
        of the candidate's uid runs first: it cannot remove entries at the top (no write
        permission there), the judge's rm after it removes them once emptied."""
        directory, owner = self.shared_dir, self.judge_as
        if directory is None:
            return
        with _as_user(owner):
            try:
                info = os.lstat(directory)
                if not stat_is_dir(info):
                    return
                if info.st_mode & 0o7777 != SHARED_MODE:  # the judge owns it: it may have changed it
                    os.chmod(directory, SHARED_MODE)
                with os.scandir(directory) as listing:
                    if next(listing, None) is None:
                        return  # the common case: nothing to do, no process spawned
            except OSError:
                return
            deadline = time.monotonic() + CLEANUP_S if deadline is None else deadline
            empty_directory(directory, deadline)
        uids = [owner] + ([self.run_as] if self.run_as != owner else [])
        for _ in range(4):
            with _as_user(owner):
                left = _entries(directory)
                trees = [path for path, info in left if stat_is_dir(info)]
                for path, info in left:
                    if not stat_is_dir(info):
                        with contextlib.suppress(OSError):
                            os.unlink(path)
            if not trees or time.monotonic() > deadline:
                return
            chunks = [trees[start : start + 512] for start in range(0, len(trees), 512)]
            for step in (["chmod", "-R", "a+rwx,-t", "--"], ["rm", "-rf", "--one-file-system", "--"]):
                for uid in (uids if step[0] == "chmod" else uids[::-1]):
                    with _as_user(uid):
                        for chunk in chunks:
                            _bounded([*step, *chunk], deadline)

    def _shared_clean(self) -> bool:
        """The shared directory is as a job must find it: empty, the judge's, SHARED_MODE."""
        if self.shared_dir is None:
            return True
        owner = self.judge_as if self.judge_as is not None and os.geteuid() == 0 else os.geteuid()
        with _as_user(self.judge_as):
            try:
                info = os.lstat(self.shared_dir)
            except OSError:
                return False
            return (stat_is_dir(info) and info.st_mode & 0o7777 == SHARED_MODE and info.st_uid == owner
                    and not _listing(self.shared_dir))

    @staticmethod
    def _write_files(base: str, files: dict, uid: int | None) -> None:
        with _as_user(uid):  # the files are the job's: created by its uid, no chown needed
            for relative, content in files.items():
                target = os.path.realpath(os.path.join(base, relative))
                if not target.startswith(base + os.sep):
                    raise ValueError(f"file path {relative!r} leaves the work directory")
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as handle:
                    handle.write(_decode(content))

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

    def _job_uids(self) -> set[int]:
        return {uid for uid in (self.run_as, self.judge_as) if uid is not None} or {os.getuid()}

    def _kill_pid(self, pid: int) -> None:
        try:
            os.kill(pid, signal.SIGKILL)
        except PermissionError:  # a job's process, and we have no CAP_KILL: be its user
            with _as_user(_real_uid(pid)), contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

    def _kill_everything(self, procs: list[_Exec | _Forked]) -> None:
        for proc in procs:  # each job process leads its own session and process group
            with _as_user(proc.uid), contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
        give_up = time.monotonic() + KILL_S
        while True:  # until no live process of the job is left (one may fork while we scan)
            if self.kill_all and os.geteuid() == 0:
                for uid in self._job_uids() - {0}:
                    _kill_all_of(uid)
            pids = self._others_alive() if self.kill_all else self._live_descendants()
            for pid in pids:
                self._kill_pid(pid)
            self._reap()
            if not pids or time.monotonic() > give_up:
                break
            time.sleep(0.002)

    def _ours(self) -> set[int]:
        return {self.pid} | ({self.template.pid} if self.template is not None else set())

    def _live_descendants(self) -> list[int]:
        ours = self._ours()
        return [pid for pid in self._descendants() if pid not in ours and _alive(str(pid))]

    def _others_alive(self) -> list[int]:
        ours = self._ours()
        return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in ours and _alive(p)]

    def _reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in self._children:
                self._children.pop(pid).done(status, usage)
            elif self.template is not None and pid == self.template.pid:
                self.template.alive = False

    def _preexec(self, limits: dict, uid: int | None, nproc: int, oom: int, peer: bool, cwd: str):
        def setup() -> None:
            for sig in IGNORED_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            if peer:
                os.set_inheritable(PEER_FD, True)
            _drop(limits, uid, nproc, oom)
            os.chdir(cwd)  # as the job's user: a root runner without DAC_OVERRIDE cannot enter it

        return setup

    def _start(self, side: _Side, limits: dict, peer: socket.socket | None) -> None:
        nproc = int(limits["processes"])
        if self.max_procs and peer is not None and side.role == "candidate":
            nproc = max(1, min(nproc, self.max_procs - 16))  # leave the judge room to start and work
        fast = python_fast_path(side.command) if self.template is not None and self.template.alive else None
        if fast is not None:
            pipes = [os.pipe() for _ in range(3)]
            theirs = [pipes[0][0], pipes[1][1], pipes[2][1]] + ([peer.fileno()] if peer is not None else [])
            spec = {"fast": fast, "cwd": side.cwd, "env": side.env, "limits": limits, "uid": side.uid,
                    "nproc": nproc, "oom": side.oom}
            try:
                pid = self.template.spawn(spec, theirs)
            except OSError:
                for r, w in pipes:
                    os.close(r)
                    os.close(w)
                if self.template.alive:  # it could not fork: like exec failing to
                    side.failed = "cannot start the job: fork failed"
                    return
            else:
                for fd in theirs[:3]:
                    os.close(fd)
                side.proc = _Forked(self.template, pid, side.uid, pipes)
                return
        if peer is not None:
            os.dup2(peer.fileno(), PEER_FD, inheritable=False)  # fd 3 is ours for this moment only
        try:
            popen = subprocess.Popen(
                side.command, env=side.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, close_fds=True,
                pass_fds=(PEER_FD,) if peer is not None else (),
                preexec_fn=self._preexec(limits, side.uid, nproc, side.oom, peer is not None, side.cwd),
            )
        except OSError as exc:
            side.failed = f"cannot start {side.command[:1]}: {exc}"
            return
        finally:
            if peer is not None:
                os.dup2(self._placeholder, PEER_FD, inheritable=False)
        side.proc = _Exec(popen, side.uid)
        self._children[popen.pid] = side.proc

    # -- one job -------------------------------------------------------------------

    def execute(self, job: dict) -> dict:
        start = time.monotonic()
        limits = job["limits"]
        judge = job.get("judge")
        if judge is not None and self.judge_dir is None:
            return {"status": "error", "error": "this runner has no judge directory", "wall_s": 0.0}
        for directory, uid in self._directories():
            self._empty(directory, uid)
        self._empty_shared()
        try:
            self._write_files(self.workdir, job.get("files", {}), self.run_as)
            if judge is not None:
                self._write_files(self.judge_dir, judge.get("files", {}), self.judge_as)
        except (OSError, ValueError) as exc:
            for directory, uid in self._directories():
                self._empty(directory, uid)
            self._empty_shared()
            return {"status": "error", "error": f"cannot write job files: {exc}", "wall_s": 0.0}
        ipc_before = set() if self.kill_all else {obj[:2] for obj in _sysv_objects()}
        mq_before = set() if self.kill_all or self.mqueue_dir is None else {
            q[:2] for q in _mqueues(self.mqueue_dir) or []}
        base_env = {"PATH": SAFE_PATH, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        env = {**base_env, "HOME": self.workdir, "TMPDIR": self.scratch[0] if self.scratch else self.workdir}
        env.update(job.get("env", {}))
        shared = {SHARED_ENV: self.shared_dir} if judge is not None and self.shared_dir else {}
        env.update(shared)
        candidate = _Side("candidate", job, self.workdir, env, self.run_as, OOM_CANDIDATE)
        sides = [candidate]
        usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        if judge is None:
            self._start(candidate, limits, None)
            main, other = candidate, None
        else:
            judge_env = {**base_env, "HOME": self.judge_dir, "TMPDIR": self.judge_dir, **judge.get("env", {}),
                         **shared}
            main = _Side("judge", judge, self.judge_dir, judge_env, self.judge_as, OOM_JUDGE)
            other = candidate
            sides.append(main)
            ends = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                self._start(candidate, limits, ends[0])
                self._start(main, limits, ends[1])
            finally:
                for end in ends:
                    end.close()
        reason = self._communicate(main, other, limits, start) if main.proc is not None else None
        procs = [side.proc for side in sides if side.proc is not None]
        self._kill_everything(procs)
        self._drain(sides, int(limits["output_bytes"]))
        reaped_by = time.monotonic() + REAP_S
        for proc in procs:
            proc.wait(timeout=max(0.0, reaped_by - time.monotonic()))
        if main.proc is not None and any(main.truncated.values()) and reason is None:
            reason = "output_limit"
        usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (usage_after.ru_utime - usage_before.ru_utime) + (usage_after.ru_stime - usage_before.ru_stime)
        cpu += sum(proc.cpu_s for proc in procs if proc.forked)
        ipc_left = self._sweep_ipc(ipc_before)
        mq_left, mq_confirmed = self._sweep_mqueues(mq_before)
        cleaned_by = time.monotonic() + CLEANUP_S  # one budget for everything the job left, wherever
        shared_left, shared_confirmed = self._sweep_shared_tmp(cleaned_by)
        for directory, uid in self._directories():
            self._empty(directory, uid, cleaned_by)
        self._empty_shared(cleaned_by)
        result = {
            "status": reason or "ok",
            "exit_code": main.exit_code,
            "stdout": main.text("stdout"),
            "stderr": main.text("stderr"),
            "stdout_truncated": main.truncated["stdout"],
            "stderr_truncated": main.truncated["stderr"],
            "cpu_s": round(cpu, 6),
            "wall_s": round(time.monotonic() - start, 6),
        }
        clean = (self._clean() and not ipc_left and not mq_left and mq_confirmed and not shared_left
                 and shared_confirmed)
        details: dict = {"clean": clean, "forked": main.proc is not None and main.proc.forked}
        if ipc_left:
            details["ipc_removed"] = ipc_left
        if mq_left:
            details["mqueue_removed"] = mq_left
        if not mq_confirmed:
            details["mqueue_unconfirmed"] = True
        if shared_left:
            details["shared_tmp_removed"] = shared_left
        if other is not None:
            details["candidate"] = {
                "stdout": other.text("stdout"), "stderr": other.text("stderr"), "exit_code": other.exit_code,
                "stdout_truncated": other.truncated["stdout"], "stderr_truncated": other.truncated["stderr"],
                "forked": other.proc is not None and other.proc.forked,
            }
            details["judge_isolation"] = "uid" if self.judge_as != self.run_as else "same-uid"
        result["details"] = details
        judge_cpu = main.proc.cpu_s if (other is not None and main.proc is not None) else cpu
        self._classify(result, limits, judge_cpu)
        return result

    def _communicate(self, main: _Side, other: _Side | None, limits: dict, start: float) -> str | None:
        """Feed stdin, read output, until ``main`` exits, the deadline, or ``main`` overflows its
        output cap (another side's output past the cap is dropped, its truncation noted)."""
        cap = int(limits["output_bytes"])
        deadline = start + float(limits["wall_s"])
        selector = selectors.DefaultSelector()
        pending: dict[int, memoryview] = {}
        main_pipes = set()
        for side in (main, other):
            if side is None or side.proc is None:
                continue
            for stream in ("stdout", "stderr"):
                pipe = getattr(side.proc, stream)
                selector.register(pipe, selectors.EVENT_READ, (side, stream))
                if side is main:
                    main_pipes.add(pipe)
            if side.stdin:
                os.set_blocking(side.proc.stdin.fileno(), False)
                selector.register(side.proc.stdin, selectors.EVENT_WRITE, (side, "stdin"))
                pending[id(side)] = memoryview(side.stdin)
            else:
                side.proc.stdin.close()
        watcher = None  # something that becomes readable when main exits
        if main.proc.forked:
            selector.register(self.template.sock, selectors.EVENT_READ, (None, "template"))
        else:
            with contextlib.suppress(OSError, AttributeError):
                watcher = os.pidfd_open(main.proc.pid)
                selector.register(watcher, selectors.EVENT_READ, (None, "exit"))
        reason = None
        exited_at = None
        try:
            while True:
                now = time.monotonic()
                if now >= deadline:
                    reason = "timeout"
                    break
                if exited_at is None and main.proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and (not main_pipes or now - exited_at > 0.05):
                    break  # main is gone (and what it left holding its pipes had 50 ms)
                wait = deadline - now
                if exited_at is not None or (watcher is None and not main.proc.forked):
                    wait = min(wait, 0.01)
                for key, _ in selector.select(timeout=wait):
                    side, what = key.data
                    if what == "exit":
                        selector.unregister(key.fileobj)
                    elif what == "template":
                        self.template.collect(0)
                        if not self.template.alive:
                            selector.unregister(key.fileobj)
                    elif what == "stdin":
                        data = pending[id(side)]
                        try:
                            data = data[os.write(key.fileobj.fileno(), data[:65536]) :]
                        except OSError:
                            data = data[:0]
                        pending[id(side)] = data
                        if not data:
                            selector.unregister(key.fileobj)
                            key.fileobj.close()
                    else:
                        chunk = os.read(key.fileobj.fileno(), 65536)
                        if not chunk:
                            selector.unregister(key.fileobj)
                            main_pipes.discard(key.fileobj)
                        elif self._keep(side, what, chunk, cap) and side is main:
                            reason = "output_limit"
                if reason:
                    break
        finally:
            selector.close()
            if watcher is not None:
                os.close(watcher)
        return reason

    @staticmethod
    def _keep(side: _Side, stream: str, chunk: bytes, cap: int) -> bool:
        """Store what fits under the cap; True when something did not fit."""
        buffer = side.out[stream]
        room = cap - len(buffer)
        buffer.extend(chunk[: max(room, 0)])
        if len(chunk) > room:
            side.truncated[stream] = True
            return True
        return False

    def _drain(self, sides: list[_Side], cap: int) -> None:
        """Everything is dead: read what is left in the pipes (without blocking), close them."""
        for side in sides:
            if side.proc is None:
                continue
            for stream in ("stdout", "stderr"):
                pipe = getattr(side.proc, stream)
                with contextlib.suppress(OSError, ValueError):
                    os.set_blocking(pipe.fileno(), False)
                    while chunk := os.read(pipe.fileno(), 65536):
                        if len(side.out[stream]) >= cap:
                            side.truncated[stream] = True
                            break
                        self._keep(side, stream, chunk, cap)
            for pipe in (side.proc.stdin, side.proc.stdout, side.proc.stderr):
                with contextlib.suppress(OSError, ValueError):
                    pipe.close()

    def _sweep_ipc(self, before: set) -> int:
        """Remove the SysV IPC objects the job left; how many there were. In a container every
        object is the job's (the namespace is ours); on the host, the new ones of its uids."""
        uids = self._job_uids()
        left = [obj for obj in _sysv_objects()
                if self.kill_all or (obj[:2] not in before and obj[2] in uids)]
        for kind, ident, owner in left:
            with _as_user(owner):  # IPC_RMID needs the creator's euid (or CAP_SYS_ADMIN)
                if kind == "shm":
                    _LIBC.shmctl(ident, IPC_RMID, None)
                elif kind == "msg":
                    _LIBC.msgctl(ident, IPC_RMID, None)
                else:
                    _LIBC.semctl(ident, 0, IPC_RMID)
        return len(left)

    def _sweep_mqueues(self, before: set) -> tuple[int, bool]:
        """Remove the POSIX message queues the job left: (how many, whether none is left). In a
        container every queue is the job's; on the host, the new ones of its uids. Where the
        queues cannot be listed, none is left only if no job could create one."""
        directory = self.mqueue_dir
        queues = _mqueues(directory) if directory is not None else None
        if queues is None:
            return 0, self.mqueue_blocked
        uids = self._job_uids()

        def theirs(found: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
            return [q for q in found if self.kill_all or (q[:2] not in before and q[2] in uids)]

        left = theirs(queues)
        for name, _ino, owner in left:
            with _as_user(owner), contextlib.suppress(OSError):  # a sticky directory: only its owner
                os.unlink(os.path.join(directory, name))
        after = _mqueues(directory)
        return len(left), after is not None and not theirs(after)

    def _sweep_shared_tmp(self, deadline: float) -> tuple[int, bool]:
        """Remove what the job's uids own in the shared temporary directories (and one level
        down, in their world-writable subdirectories such as /tmp/.X11-unix): (how many entries,
        whether none is left). Only meaningful where the job uids are ours alone."""
        if not self.shared_tmp or self.run_as is None:
            return 0, True
        uids = self._job_uids() - {0, os.getuid()}

        def owned() -> list[tuple[str, int, bool]]:
            found = []
            for top in self.shared_tmp:
                for path, info in _entries(top):
                    if info.st_uid in uids:
                        found.append((path, info.st_uid, stat_is_dir(info)))
                    elif stat_is_dir(info) and info.st_mode & 0o002:
                        found += [(p, i.st_uid, stat_is_dir(i)) for p, i in _entries(path) if i.st_uid in uids]
            return found

        left = owned()
        for path, uid, is_dir in left:
            with _as_user(uid):
                if is_dir:
                    _bounded(["rm", "-rf", "--one-file-system", "--", path], deadline)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(path)
        return len(left), not (left and owned())

    def _classify(self, result: dict, limits: dict, cpu: float) -> None:
        code = result.get("exit_code")
        if result["status"] != "ok":
            return
        # A signal shows as -N from the process itself, or as 128+N through a wrapper (bwrap, a shell).
        sig = -code if code is not None and code < 0 else (code - 128 if code and 128 < code < 160 else None)
        # SIGXCPU comes from RLIMIT_CPU (rusage can read a little under the limit on a loaded
        # machine); SIGKILL is the hard limit only when the CPU time says so.
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= float(limits["cpu_s"]) - 0.05):
            result["status"] = "timeout"
            return
        tail = result["stderr"].encode()[-4096:]
        if sig == signal.SIGXFSZ or (code not in (0, None) and any(m in tail for m in FILE_SIZE_MARKERS)):
            result["status"] = "output_limit"
        elif code not in (0, None) and any(m in tail for m in MEMORY_MARKERS):
            result["status"] = "memory"
        elif sig == signal.SIGKILL:
            result["status"] = "memory"  # killed by the kernel: the OOM killer is the usual culprit

    def _clean(self) -> bool:
        alive = self._others_alive() if self.kill_all else self._live_descendants()
        leftovers = False
        for directory, uid in self._directories():
            with _as_user(uid):
                leftovers = leftovers or bool(_listing(directory))
        template_ok = self.template is None or self.template.alive
        return not alive and not leftovers and template_ok and self._shared_clean()


def empty_directory(directory: str, deadline: float) -> None:
    """Remove everything inside ``directory`` with coreutils, which walk a tree iteratively (a
    recursive walk in Python fails past ~1,000 levels, and a path past PATH_MAX cannot be named at
    all) and stay on the directory's filesystem; stopped at ``deadline``."""
    trees = []
    try:
        with os.scandir(directory) as listing:
            for entry in listing:
                if entry.is_dir(follow_symlinks=False):
                    trees.append(entry.path)
                else:  # a file or a link: gone in place, no process spawned (the common case)
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
                if time.monotonic() > deadline:
                    return
    except OSError:
        return
    for start in range(0, len(trees), 512):
        if not _bounded(["rm", "-rf", "--one-file-system", "--", *trees[start : start + 512]], deadline):
            return


def _bounded(command: list[str], deadline: float) -> bool:
    """Run a clean-up command until ``deadline``; False when it could not finish in time."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    try:
        subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=remaining, check=False, env={"PATH": SAFE_PATH, "LANG": "C"})
    except subprocess.TimeoutExpired:
        return False
    except OSError:
        return False
    return True


def stat_is_dir(info: os.stat_result) -> bool:
    return (info.st_mode & 0o170000) == 0o040000


def _entries(directory: str) -> list[tuple[str, os.stat_result]]:
    """(path, lstat) of each entry of ``directory``; empty when it cannot be read."""
    found = []
    with contextlib.suppress(OSError), os.scandir(directory) as listing:
        for entry in listing:
            with contextlib.suppress(OSError):
                found.append((entry.path, entry.stat(follow_symlinks=False)))
    return found


def _listing(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except FileNotFoundError:
        return []
    except OSError:
        return ["?"]  # unreadable counts as not empty


def _sysv_objects() -> list[tuple[str, int, int]]:
    """(kind, id, creator uid) of every SysV IPC object in our IPC namespace."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}", "rb") as handle:
                lines = handle.read().splitlines()
        except OSError:
            continue
        if len(lines) < 2:
            continue
        header = lines[0].split()
        at = header.index(b"cuid")
        for line in lines[1:]:
            fields = line.split()
            with contextlib.suppress(ValueError, IndexError):
                found.append((kind, int(fields[1]), int(fields[at])))
    return found


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


def _state(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return stat[stat.rindex(b")") + 2 :].split()[0].decode()
    except (OSError, ValueError, IndexError):
        return ""


def _alive(pid: str) -> bool:
    """Whether a process may still run code: it exists and is no zombie, or it is a zombie whose
    thread group still has live threads (a leader that ended with ``pthread_exit`` is a zombie while
    its other threads go on writing). The runner empties a job's directories only once none is left."""
    state = _state(pid)
    if state in ("", "X"):
        return False
    if state != "Z":
        return True
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def _real_uid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _option(argv: list[str], name: str) -> int | None:
    return int(argv[argv.index(name) + 1]) if name in argv else None


def serve(argv: list[str]) -> None:
    """``serve WORKDIR [--kill-all] [--fork-python] [--run-as UID] [--judge-as UID]
    [--judge-dir DIR] [--shared-dir DIR] [--max-procs N] [--scratch DIR] [--shared-tmp DIR]
    [--preload MODULE]... [--preload-path DIR]``: answer jobs until EOF."""
    workdir = argv[0]
    kill_all = "--kill-all" in argv
    fork_python = "--fork-python" in argv
    scratch = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--scratch"]
    shared_tmp = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--shared-tmp"]
    judge_dir = argv[argv.index("--judge-dir") + 1] if "--judge-dir" in argv else None
    shared_dir = argv[argv.index("--shared-dir") + 1] if "--shared-dir" in argv else None
    for sig in IGNORED_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    null = os.open(os.devnull, os.O_RDONLY)  # keep fd 3 taken: only a paired job's socket goes there
    if null != PEER_FD:
        os.dup2(null, PEER_FD, inheritable=False)
        os.close(null)
    _prctl(PR_SET_DUMPABLE, 0)  # keeps jobs out of our memory (ptrace, /proc/mem) even at our uid
    if not kill_all:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    preload = tuple(argv[i + 1] for i, arg in enumerate(argv) if arg == "--preload")
    preload_path = argv[argv.index("--preload-path") + 1] if "--preload-path" in argv else None
    # Before any job: it must never hold one.
    template = Template(preload, preload_path) if fork_python else None
    runner = Runner(workdir, kill_all=kill_all, run_as=_option(argv, "--run-as"), scratch=scratch,
                    fork_python=fork_python, judge_as=_option(argv, "--judge-as"), judge_dir=judge_dir,
                    max_procs=_option(argv, "--max-procs"), template=template, shared_tmp=shared_tmp,
                    shared_dir=shared_dir)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    write_frame(out, {"ready": True, "pid": os.getpid(), "uid": os.getuid(),
                      "template": template.pid if template is not None else None,
                      "mqueue": runner.mqueue_dir, "mqueue_blocked": runner.mqueue_blocked})
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
