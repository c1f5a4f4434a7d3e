"""The local backend: resident runner subprocesses on this machine.

Weaker isolation than Docker, and documented as such. It runs jobs only inside bubblewrap
(``bwrap``) unless the user opts in to the weaker ``rlimits`` isolation knowingly (below).

What is guaranteed, with bubblewrap (the default):

* When we are root, each runner's jobs run as a uid of their own and a paired job's judge
  as another (both from a range no account uses), so a job cannot write the host's files,
  fork-bomb past its process limit or into another runner's, or signal, trace or read the
  runner or the judge (the runner is root and non-dumpable; the judge's directory is
  0700). When we are not root, every job and judge runs as our own uid: the runner still
  ignores terminal signals and is non-dumpable, but a job could SIGKILL it; a paired job
  then says ``details["judge_isolation"] == "same-uid"``.
* Every job has rlimits (no POSIX message queue memory among them), its own session, a
  scratch directory (its TMPDIR), a scrubbed environment; every process a job starts is
  killed when it ends; its directories are emptied after it.
* Each command runs in fresh namespaces (``--unshare-all``: no network, own PIDs, own SysV
  and POSIX IPC, private /tmp, all of which die with the command) and sees only what it
  needs of the host: /usr and the /bin, /sbin, /lib* links or directories, the few /etc
  entries the dynamic loader and Python read, the interpreter's prefix, and its own
  directories. The candidate and the judge of a paired job run in separate bwrap
  invocations: the candidate cannot see the judge's processes or directory at all. Both
  see the runner's shared directory (``REWARDSMITH_SHARED_DIR``, bound into both; the
  judge's, mode 0711, emptied after every job; unpaired jobs do not see it). So nothing a
  job writes outside its directories survives it, and nothing it writes inside them
  survives the emptying.

Without bubblewrap (not installed, or it cannot create namespaces here: unprivileged user
namespaces disabled), or with ``use_bwrap=False``, the backend REFUSES to run jobs: each
job's result is ``status="error"`` with a message saying what to do (the ``code`` verifier
turns it into an error verdict, never a 0). Opting in: ``LocalBackend(allow_unsafe=True)``
or ``REWARDSMITH_UNSAFE_LOCAL_SANDBOX=1`` in the environment. The opted-in ``rlimits``
isolation keeps the guarantees of the first two points and adds, after every job:
SysV IPC objects and POSIX message queues its uids created are removed (POSIX queues
cannot be created at all: RLIMIT_MSGQUEUE is 0), and, as root, whatever the job's uids own
in the host's world-writable directories (``SHARED_TMP_DIRS`` and one level down in their
world-writable subdirectories) is removed, and the runner replaced. As root, runners'
directories live in ``ROOT_BASE`` (root-owned, outside /tmp), so no ancestor of a job's or
a judge's directory is writable by a job: a ``pytest.ini``/``conftest.py`` planted in /tmp
is not on the judge's search path. It does NOT guarantee:

* anything against the network: a job can open connections;
* privacy of the host: a job can read every world-readable file (home directories,
  datasets, reference solutions);
* that files written outside its directories never reach another job: a job running at the
  same time on another runner can see what this one writes to /tmp before it is removed,
  including a ``pytest.ini``/``conftest.py`` there, which pytest reads when it searches a
  test directory's ancestors; world-writable directories other than those swept keep what
  a job writes;
* when we are not root, any of the removal above: jobs run as our own uid, so they can
  write wherever we can (their runner's parent directory, /tmp, our home) and nothing tells
  their files from ours. Do not train on untrusted code this way.
"""

from __future__ import annotations

import contextlib
import glob
import os
import queue
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rewardsmith.sandbox.backend import SCORER_SITE, ConcurrentBatches
from rewardsmith.sandbox.errors import RewardsmithError
from rewardsmith.sandbox.job import ExecResult, Job
from rewardsmith.sandbox.limits import Limits
from rewardsmith.sandbox.runner import POST_JOB_S, SAFE_PATH, SHARED_MODE, read_frame, write_frame

RUNNER_SOURCE = Path(__file__).with_name("runner.py")
# When we are root, each runner gets a uid pair of its own from a range no account uses:
# RLIMIT_NPROC counts the processes of a uid machine-wide, so with one shared uid a fork bomb
# in one runner's job would make fork() (and bwrap's namespace set-up) fail in the jobs of
# every other runner, and an IPC sweep could remove another runner's objects.
UID_RANGE = range(3_000_000, 4_000_000, 2)  # candidate uid; the judge's is the next one
_taken: set[int] = set()
_taken_lock = threading.Lock()


def _uid_pair() -> tuple[int, int]:
    with _taken_lock:
        while True:
            uid = secrets.choice(UID_RANGE)
            if uid not in _taken:
                _taken.add(uid)
                return uid, uid + 1
UNSAFE_ENV = "REWARDSMITH_UNSAFE_LOCAL_SANDBOX"  # "1": run jobs without bubblewrap (rlimits only)
# World-writable host directories a job could leave files in for the next: swept after each
# job of an opted-in runner without bubblewrap (as root, where the job's uids are the runner's own).
SHARED_TMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock")
# Beyond a job's wall limit, how long we wait for the runner itself: its own bound on the work after a
# job (POST_JOB_S), and room for its scans and the answer's transfer on a starved machine.
_GRACE_S = POST_JOB_S + 5.0
# Runners are started from one long-lived thread: their PR_SET_PDEATHSIG fires when the
# *thread* that forked them exits, and run_batch's worker threads come and go.
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewardsmith-local-spawner")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What the dynamic loader, Python (Debian's sitecustomize lives in /etc/python3.X) and the
# compilers' alternatives read of /etc; nothing else of it (no hostname, passwd, secrets).
ETC_ENTRIES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime")


def system_binds(packages: bool = False) -> list[str]:
    """bwrap arguments that show a job the host's system directories, read-only, and nothing
    else of the host; with ``packages`` (a job of third-party packages, a sandboxed scorer's), also
    the Python installations that hold them (:func:`interpreter_prefixes`, :data:`SCORER_SITE`)."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):  # merged /usr: /bin -> usr/bin
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in [*ETC_ENTRIES, *sorted(glob.glob("/etc/python3*"))]:
        if os.path.lexists(path):
            args += ["--ro-bind", path, path]
    for prefix in interpreter_prefixes(packages):
        outside = not any(prefix == d or prefix.startswith(d + os.sep) for d in SYSTEM_DIRS)
        if outside and os.path.isdir(prefix) and reachable_by_jobs(prefix):
            args += ["--ro-bind", prefix, prefix]
    return args


def reachable_by_jobs(path: str) -> bool:
    """Whether a job can reach the file or folder at ``path``: as root, jobs run as other users, who
    need it and every folder above it to let anyone through (a Python under /root does not)."""
    if os.getuid() != 0:
        return True
    real = os.path.realpath(path)
    folders = [os.path.dirname(real)]
    while folders[-1] != os.path.dirname(folders[-1]):
        folders.append(os.path.dirname(folders[-1]))
    try:
        return all(os.stat(folder).st_mode & 0o001 for folder in folders) and bool(os.stat(real).st_mode & 0o001)
    except OSError:
        return False


def interpreter_prefixes(packages: bool = False) -> list[str]:
    """The installation folder of the sandbox's ``python3`` (an interpreter outside /usr, e.g.
    /opt/python); with ``packages``, also those of the Python running rewardsmith and the scorer folder,
    whose packages a sandboxed third-party scorer imports (:mod:`rewardsmith.verifiers.isolated`)."""
    found: list[str] = []
    python = shutil.which("python3", path=SAFE_PATH)
    candidates = [os.path.dirname(os.path.dirname(os.path.realpath(python)))] if python else []
    if packages:
        candidates += [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
                       os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))), SCORER_SITE]
    for path in candidates:
        real = os.path.realpath(path)
        if os.path.isdir(real) and real not in found and real != "/":
            found.append(real)
    return found


class LocalSandboxRefused(RewardsmithError, RuntimeError):
    """The local backend will not run jobs here without an explicit opt-in; the message says
    what to do."""


def find_bwrap() -> str | None:
    """The bubblewrap executable, or None (tests replace this to simulate a host without it)."""
    return shutil.which("bwrap")


def refusal_message(problem: str) -> str:
    return (
        f"the local sandbox refuses to run jobs without bubblewrap: {problem}. Without it a job is "
        "isolated by rlimits only: it can leave files where later jobs and their tests read them "
        "(a conftest.py or pytest.ini in /tmp), reach the network and read the host's files. To fix: "
        "install bubblewrap (apt-get install bubblewrap; dnf install bubblewrap; apk add bubblewrap) "
        "and check that unprivileged user namespaces are allowed (`bwrap --unshare-all --bind / / true` "
        "as a normal user must work: sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0, "
        "on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0); or use the Docker backend "
        "(REWARDSMITH_SANDBOX=docker; `rewardsmith sandbox doctor` says what it needs); or, if you accept "
        f"the risk, opt in with {UNSAFE_ENV}=1 (LocalBackend(allow_unsafe=True))"
    )


ROOT_BASE = "/var/lib/rewardsmith-sandbox"


def runner_base() -> str:
    """Where runners' directories go. As root, a root-owned directory outside /tmp: no ancestor
    of a job's directories is then writable by the job's uids (pytest, for one, reads a
    ``pytest.ini`` and ``conftest.py`` from a test directory's ancestors, so a /tmp above the
    judge's directory would let a candidate without bwrap plant hooks in its own judge)."""
    if os.getuid() == 0:
        with contextlib.suppress(OSError):
            os.makedirs(ROOT_BASE, mode=0o755, exist_ok=True)
            info = os.lstat(ROOT_BASE)
            if info.st_uid == 0 and not info.st_mode & 0o022 and os.path.isdir(ROOT_BASE):
                return ROOT_BASE
    return tempfile.gettempdir()


def shared_tmp_dirs() -> list[str]:
    """Those of ``SHARED_TMP_DIRS`` that exist here as world-writable directories."""
    found = []
    for path in SHARED_TMP_DIRS:
        with contextlib.suppress(OSError):
            real = os.path.realpath(path)
            if os.path.isdir(real) and os.stat(real).st_mode & 0o002 and real not in found:
                found.append(real)
    return found


def bwrap_prefix(workdir: str, scratch: str | None = None, shared: str | None = None,
                 packages: bool = False) -> list[str] | None:
    """The bubblewrap command line that isolates a job working in ``workdir`` (and ``scratch``,
    its TMPDIR; and ``shared``, a paired job's shared directory; ``packages``: see :func:`system_binds`),
    or None when bwrap is not installed. (Whether it can create namespaces here is probed by each
    runner, as the job's user.)"""
    bwrap = find_bwrap()
    if bwrap is None:
        return None
    # /tmp first: the job's directories live under it and are bound on top.
    own = ["--bind", workdir, workdir]
    for path in (scratch, shared):
        if path:
            own += ["--bind", path, path]
    return [bwrap, *system_binds(packages), "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", *own,
            "--remount-ro", "/", "--unshare-all", "--die-with-parent", "--new-session", "--chdir", workdir, "--"]


class _LocalRunner:
    """One resident runner process and its private directories."""

    def __init__(self, use_bwrap: bool) -> None:
        self.root = tempfile.mkdtemp(prefix="rewardsmith-local-", dir=runner_base())
        self.workdir = os.path.join(self.root, "work")
        self.scratch = os.path.join(self.root, "tmp")
        self.judge_dir = os.path.join(self.root, "judge")  # a sibling: never inside the candidate's
        # A paired job's shared directory (both sides see it, at this path): the judge's, 0711.
        self.shared_dir = os.path.join(self.root, "shared")
        for path in (self.workdir, self.scratch, self.judge_dir, self.shared_dir):
            os.makedirs(path, mode=0o700)
        root = os.getuid() == 0
        candidate_uid, judge_uid = _uid_pair() if root else (None, None)
        self.run_as, self.judge_as = candidate_uid, judge_uid
        if root:
            os.chmod(self.root, 0o755)
            owners = ((self.workdir, candidate_uid), (self.scratch, candidate_uid), (self.judge_dir, judge_uid),
                      (self.shared_dir, judge_uid))
            for path, uid in owners:
                os.chown(path, uid, uid)
        os.chmod(self.shared_dir, SHARED_MODE)
        self.prefix: list[str] | None = None
        self.pair_prefix: list[str] | None = None  # a paired job's candidate: the shared directory too
        self.judge_prefix: list[str] | None = None
        self.package_prefix: list[str] | None = None  # a job of third-party packages (Job.packages)
        args = [sys.executable, "-I", str(RUNNER_SOURCE), self.workdir, "--scratch", self.scratch,
                "--judge-dir", self.judge_dir, "--shared-dir", self.shared_dir]
        if root:
            args += ["--run-as", str(candidate_uid), "--judge-as", str(judge_uid)]
            # Only used without bwrap (with it, jobs never see the host's /tmp): the runner looks
            # for files of the job's uids, which are this runner's alone, and finds none.
            for path in shared_tmp_dirs():
                args += ["--shared-tmp", path]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"})
        hello = read_frame(self.proc.stdout)
        if not hello or not hello.get("ready"):
            self.close()
            raise RuntimeError("local sandbox runner failed to start")
        self.hello = hello
        self.bwrap_problem = ""  # why jobs do not run in bwrap here
        prefix = bwrap_prefix(self.workdir, self.scratch) if use_bwrap else None
        if not use_bwrap:
            self.bwrap_problem = "bubblewrap is turned off (use_bwrap=False)"
        elif prefix is None:
            self.bwrap_problem = "bwrap is not installed"
        else:
            probe = self.run(Job(command=[*prefix, "/bin/true"], limits=Limits(wall_s=10)))
            if probe.exit_code == 0:
                self.prefix = prefix
                self.pair_prefix = bwrap_prefix(self.workdir, self.scratch, self.shared_dir)
                self.judge_prefix = bwrap_prefix(self.judge_dir, None, self.shared_dir)
                self.package_prefix = bwrap_prefix(self.workdir, self.scratch, packages=True)
            else:
                said = (probe.stderr or probe.error).strip().splitlines()
                self.bwrap_problem = (f"bwrap cannot create its namespaces here (exit code {probe.exit_code}"
                                      + (f": {said[-1][:200]}" if said else "") + ")")

    @property
    def isolation(self) -> str:
        return "bwrap" if self.prefix is not None else "rlimits"

    def run(self, job: Job) -> ExecResult:
        wire = job.to_wire()
        if self.prefix is not None and job.command[:1] != self.prefix[:1]:
            paired = "judge" in wire and self.judge_prefix is not None and self.pair_prefix is not None
            own = self.package_prefix if job.packages and self.package_prefix is not None else self.prefix
            wire["command"] = [*(self.pair_prefix if paired else own), *wire["command"]]
            if paired:  # its own namespaces: apart from the candidate but for the shared directory
                wire["judge"]["command"] = [*self.judge_prefix, *wire["judge"]["command"]]
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
        # Not shutil.rmtree: a job may have left a tree deeper than a recursive walk can go.
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(["rm", "-rf", "--one-file-system", "--", self.root], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)


class LocalBackend(ConcurrentBatches):
    """A pool of local runners; ``run`` is thread-safe and ``run_batch`` fills the pool."""

    name = "local"

    def __init__(self, concurrency: int | None = None, use_bwrap: bool = True,
                 allow_unsafe: bool | None = None) -> None:
        """``allow_unsafe``: run jobs with rlimits only where bubblewrap is missing or broken (or
        turned off with ``use_bwrap=False``); None reads ``REWARDSMITH_UNSAFE_LOCAL_SANDBOX=1``.
        Without it such a backend answers every job with a ``status="error"`` result."""
        self.concurrency = max(1, concurrency or os.cpu_count() or 1)
        self.use_bwrap = use_bwrap
        self.allow_unsafe = os.environ.get(UNSAFE_ENV) == "1" if allow_unsafe is None else allow_unsafe
        self.refusal: str | None = None  # set once a runner found no usable bwrap and we may not go without
        self._idle: queue.LifoQueue[_LocalRunner] = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._all: list[_LocalRunner] = []
        self._lock = threading.Lock()
        self._closed = False
        self._isolation: str | None = None

    def python(self) -> str:
        """The Python running rewardsmith (where the user installed a scorer's package) when jobs can run
        it, else the sandbox's python3 (with what sandbox/image/install_scorers.sh put in SCORER_SITE)."""
        return sys.executable if reachable_by_jobs(sys.executable) else "python3"

    @property
    def isolation(self) -> str:
        """``bwrap`` when jobs run in their own namespaces here, ``rlimits`` when they run without
        (opted in), ``refused`` when they would and we may not (``refusal`` says why)."""
        if self._isolation is None:
            try:
                runner = self._checkout()
            except LocalSandboxRefused:
                return "refused"
            self._isolation = runner.isolation
            self._idle.put(runner)
        return self._isolation

    def run(self, job: Job) -> ExecResult:
        with self._slots:
            try:
                runner = self._checkout()
            except LocalSandboxRefused as exc:
                return ExecResult("error", error=str(exc), details={"backend": "local", "isolation": "refused"})
            start = time.monotonic()
            try:
                result = runner.run(job)
            except Exception as exc:  # a broken runner is replaced, and the job is an infrastructure error
                runner.close()
                result = ExecResult("error", error=f"local sandbox failed: {type(exc).__name__}: {exc}")
            result.details.setdefault("backend", "local")
            result.details.setdefault("isolation", runner.isolation)
            result.details["roundtrip_s"] = time.monotonic() - start
            self._checkin(runner, result)
            return result

    def _checkout(self) -> _LocalRunner:
        if self._closed:
            raise RuntimeError("local sandbox backend is closed")
        if self.refusal is not None:
            raise LocalSandboxRefused(self.refusal)
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            runner = _spawner.submit(_LocalRunner, self.use_bwrap).result()
            if runner.prefix is None and not self.allow_unsafe:
                runner.close()
                self.refusal = refusal_message(runner.bwrap_problem)
                raise LocalSandboxRefused(self.refusal) from None
            with self._lock:
                self._all.append(runner)
            return runner

    def _checkin(self, runner: _LocalRunner, result: ExecResult) -> None:
        # Reused only when the runner confirmed it is clean: an error result confirms nothing.
        if runner.alive and result.status != "error" and result.details.get("clean", False) and not self._closed:
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
