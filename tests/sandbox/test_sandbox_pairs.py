"""Paired jobs (a judge beside the candidate) and the sandbox's residue and crash paths.

Each hostile case is followed by an honest job in the same pool, which must be served
correctly. Docker cases need an engine (see tests/sandbox/test_sandbox.py); they fail instead of
skipping under REWARDSMITH_REQUIRE_DOCKER=1.
"""

from __future__ import annotations

import ast
import json
import os
import secrets
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import REPO, require_docker
from test_sandbox import assert_next_job_is_normal, py

from rewardsmith.sandbox.job import Job, Peer
from rewardsmith.sandbox.limits import Limits

pytestmark = pytest.mark.slow

BACKENDS = ["local", "local-plain", pytest.param("docker", marks=pytest.mark.docker)]


def _make(kind: str):
    if kind == "docker":
        require_docker()
        from rewardsmith.sandbox.docker_pool import DockerBackend

        return DockerBackend(concurrency=1)
    from rewardsmith.sandbox.local import LocalBackend

    return LocalBackend(concurrency=1, use_bwrap=kind == "local", allow_unsafe=kind == "local-plain")


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request):
    b = _make(request.param)
    b.kind = request.param
    yield b
    b.close()


def pair(candidate: str, judge: str, judge_files: dict | None = None, judge_stdin: str = "", **limits) -> Job:
    return Job(command=["python3", "cand.py"], files={"cand.py": candidate}, limits=Limits(**limits),
               judge=Peer(command=["python3", "judge.py"], files={"judge.py": judge, **(judge_files or {})},
                          stdin=judge_stdin))


OPEN_FDS = (
    "def open_fds():\n"
    "    found = []\n"
    "    for fd in range(256):\n"
    "        try:\n"
    "            os.fstat(fd)\n"
    "        except OSError:\n"
    "            continue\n"
    "        found.append(fd)\n"
    "    return found\n"
)


WAIT_FOR_CANDIDATE = "import socket\nsocket.socket(fileno=3).recv(1)\n"  # returns when the candidate has exited


def assert_next_pair_is_normal(backend) -> None:
    """After a hostile job, a paired job is served correctly: fresh directories, a live channel."""
    candidate = (
        "import os, socket, sys\n" + OPEN_FDS +
        "print(sorted(os.listdir('.')), open_fds())\n"
        "s = socket.socket(fileno=3)\n"
        "s.sendall(s.recv(4).upper())\n"
        "sys.stdout.flush()\n"
        "os._exit(0)\n"  # gone before the judge's exit ends the job (which kills what is left)
    )
    judge = (
        "import os, socket\n" + OPEN_FDS +
        "print(sorted(os.listdir('.')), open_fds())\n"
        "s = socket.socket(fileno=3)\n"
        "s.sendall(b'ping')\n"
        "print(s.recv(4).decode())\n"
        "assert s.recv(1) == b''\n"  # the candidate has exited
    )
    result = backend.run(pair(candidate, judge))
    assert (result.status, result.exit_code) == ("ok", 0), result
    assert result.stdout == "['judge.py'] [0, 1, 2, 3]\nPING\n", result
    assert result.details["candidate"]["stdout"] == "['cand.py'] [0, 1, 2, 3]\n", result
    assert result.details["candidate"]["exit_code"] == 0 and result.details["clean"] is True


def _bwrap(backend) -> bool:
    return getattr(backend, "isolation", None) == "bwrap"


def _killed(code: int | None) -> bool:
    return code in (-signal.SIGKILL, 128 + signal.SIGKILL)  # directly, or through bwrap


def _runner_pid(backend) -> int:
    """The runner's pid as a job of this backend would name it (PID 1 in a container)."""
    if backend.kind == "docker":
        return 1
    backend.run(py("pass"))
    (runner,) = backend._all
    return runner.proc.pid


# -- the channel -------------------------------------------------------------------------------


def test_judge_and_candidate_talk_over_fd_3_and_hold_no_other_fd(backend):
    assert_next_pair_is_normal(backend)  # ping/pong, fds exactly 0-3 on both sides, own directories


def test_judge_runs_as_another_user_in_its_own_directory(backend):
    code = "import os\nprint(os.getuid(), os.getcwd(), os.environ['HOME'], os.environ['TMPDIR'], os.environ['X'])\n"
    job = pair(code, code + "import sys; print(sys.stdin.read())\n" + WAIT_FOR_CANDIDATE, judge_stdin="for the judge")
    job.judge.env["X"] = "judge-env"
    job.env["X"] = "candidate-env"
    result = backend.run(job)
    judge_uid, judge_cwd, home, tmp, x = result.stdout.splitlines()[0].split()
    cand_uid, cand_cwd, _, _, cand_x = result.details["candidate"]["stdout"].split()
    assert judge_uid != cand_uid and result.details["judge_isolation"] == "uid"
    assert judge_cwd == home == tmp != cand_cwd and (x, cand_x) == ("judge-env", "candidate-env")
    assert result.stdout.splitlines()[1] == "for the judge"


def test_judge_files_and_stdin_are_out_of_the_candidates_reach(backend):
    secret = "s3cret-" + secrets.token_hex(8)
    candidate = (
        "import os, socket\n"
        "s = socket.socket(fileno=3)\n"
        "where = s.recv(4096).decode()\n"  # the judge tells where it lives: the worst case
        "for path in (where, where + '/tests.py', '/judge', '/judge/tests.py'):\n"
        "    try:\n"
        "        print(path, os.listdir(path) if os.path.isdir(path) else open(path).read())\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__)\n"
        "s.sendall(b'done')\n"
    )
    judge = (
        "import os, socket, sys\n"
        "data = sys.stdin.read()\n"
        "s = socket.socket(fileno=3)\n"
        "s.sendall(os.getcwd().encode())\n"
        "print(s.recv(4).decode(), data == open('tests.py').read())\n"
    ) + WAIT_FOR_CANDIDATE
    result = backend.run(pair(candidate, judge, {"tests.py": secret}, judge_stdin=secret))
    assert result.stdout == "done True\n", result
    seen = result.details["candidate"]["stdout"]
    assert secret not in seen and "tests.py" not in seen.replace("/tests.py", ""), seen
    for line in seen.splitlines():
        assert line.split()[-1] in ("PermissionError", "FileNotFoundError"), seen
    assert_next_pair_is_normal(backend)


# -- the candidate against the judge and the runner --------------------------------------------

HOSTILE = r"""
import ctypes, json, os, signal, socket
s = socket.socket(fileno=3)
judge_pid, judge_uid = map(int, s.recv(64).split())
me = os.getuid()

def ruid(pid):
    try:
        with open(f'/proc/{pid}/status') as handle:
            return int(next(l for l in handle if l.startswith('Uid:')).split()[1])
    except (OSError, StopIteration):
        return None

pids = [int(p) for p in os.listdir('/proc') if p.isdigit()]
judges = [p for p in pids if ruid(p) == judge_uid]
targets = set(judges) | {RUNNER} | ({judge_pid} if judge_pid in judges else set())
if DOCKER:  # in a container every root process is the runner or its template
    targets |= {p for p in pids if ruid(p) == 0}
libc = ctypes.CDLL(None, use_errno=True)
report = {'judges': judges, 'targets': sorted(targets), 'done': {}}
for pid in sorted(targets):
    done = report['done'][str(pid)] = {}
    for sig in ('SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2', 'SIGQUIT', 'SIGSTOP', 'SIGKILL'):
        try:
            os.kill(pid, getattr(signal, sig))
            done[sig] = 'OK'
        except OSError as exc:
            done[sig] = type(exc).__name__
    for request, name in ((16, 'PTRACE_ATTACH'), (0x4206, 'PTRACE_SEIZE')):
        ok = libc.ptrace(request, pid, None, None) == 0
        done[name] = 'OK' if ok else os.strerror(ctypes.get_errno())
    for path in ('environ', 'mem', 'maps', 'fd', 'cwd', 'root'):
        try:
            full = f'/proc/{pid}/{path}'
            if path in ('fd', 'cwd', 'root'):
                os.listdir(full)
            else:
                with open(full, 'rb') as handle:
                    handle.read(1)
            done[path] = 'OK'
        except OSError as exc:
            done[path] = type(exc).__name__
print(json.dumps(report))
s.sendall(b'over')
"""
JUDGE_WAITS = (
    "import os, socket\n"
    "s = socket.socket(fileno=3)\n"
    "s.sendall(f'{os.getpid()} {os.getuid()}'.encode())\n"
    "print('judge alive after', s.recv(4).decode())\n"
    "s.recv(1)\n"  # until the candidate has exited (its output flushed)
)


def test_candidate_cannot_signal_trace_or_read_the_judge_or_the_runner(backend):
    runner = _runner_pid(backend)
    code = HOSTILE.replace("RUNNER", str(runner)).replace("DOCKER", str(backend.kind == "docker"))
    result = backend.run(pair(code, JUDGE_WAITS))
    assert (result.status, result.stdout) == ("ok", "judge alive after over\n"), result
    report = json.loads(result.details["candidate"]["stdout"])
    for pid, done in report["done"].items():
        for what, outcome in done.items():
            assert outcome in ("PermissionError", "ProcessLookupError", "FileNotFoundError",
                               "Operation not permitted", "No such process"), (pid, what, outcome)
    if _bwrap(backend):  # the judge is in a PID namespace the candidate cannot see
        assert report["judges"] == []
    else:  # the judge is visible, so the refusals above were tried on it
        assert report["judges"] and set(report["judges"]) <= set(map(int, report["done"]))
        assert report["done"][str(report["judges"][0])]["SIGKILL"] == "PermissionError"
    assert_next_pair_is_normal(backend)


def test_runner_ignores_signals_and_refuses_them_from_a_job(backend):
    runner = _runner_pid(backend)
    code = (
        "import os, signal\n"
        f"pid = {runner}\n"
        "for sig in ('SIGINT', 'SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2', 'SIGQUIT', 'SIGSTOP', 'SIGKILL'):\n"
        "    try:\n"
        "        os.kill(pid, getattr(signal, sig))\n"
        "        print(sig, 'OK')\n"
        "    except OSError as exc:\n"
        "        print(sig, type(exc).__name__)\n"
        "try:\n"
        "    print(open(f'/proc/{pid}/status').read().split('SigIgn:')[1].split()[0])\n"
        "except OSError:\n"
        "    print('-')\n"
    )
    result = backend.run(py(code))
    lines = result.stdout.splitlines()
    for line in lines[:-1]:
        assert line.split()[1] in ("PermissionError", "ProcessLookupError"), result.stdout
    if backend.kind != "docker":  # the runner may be outside the job's PID namespace: read it here
        ignored_hex = Path(f"/proc/{runner}/status").read_text().split("SigIgn:")[1].split()[0]
    else:
        ignored_hex = lines[-1]
    ignored = int(ignored_hex, 16)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGPIPE,
                signal.SIGQUIT):
        assert ignored & (1 << (sig - 1)), (sig, ignored_hex)
    assert_next_job_is_normal(backend)
    assert _runner_pid(backend) == runner  # the same runner served it


def test_jobs_get_default_signal_dispositions_back(backend):
    code = "import os\nprint(open('/proc/self/status').read().split('SigIgn:')[1].split()[0])\n"
    forked = backend.run(py(code))
    execd = backend.run(Job(command=["sh", "-c", "grep SigIgn /proc/self/status"]))
    assert int(forked.stdout, 16) == (1 << (signal.SIGPIPE - 1)) | (1 << (signal.SIGXFSZ - 1))  # as python3 does
    assert int(execd.stdout.split()[1], 16) == 0, execd


# -- who ends a paired job ------------------------------------------------------------------------


def test_judge_exit_ends_the_job_and_kills_a_looping_candidate(backend):
    candidate = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(60)\n"
        "print('looping', flush=True)\n"
        "while True:\n"
        "    pass\n"
    )
    judge = "print('verdict: 0')\n"
    result = backend.run(pair(candidate, judge, wall_s=20))
    assert (result.status, result.exit_code, result.stdout) == ("ok", 0, "verdict: 0\n"), result
    assert _killed(result.details["candidate"]["exit_code"]), result
    assert result.details["clean"] is True
    assert_next_pair_is_normal(backend)


def test_candidate_that_dies_early_leaves_the_judge_to_report_it(backend):
    candidate = "import os, sys\nprint('bye')\nsys.stdout.flush()\nos._exit(3)\n"
    judge = (
        "import socket\n"
        "s = socket.socket(fileno=3)\n"
        "print('candidate gone' if s.recv(1) == b'' else 'candidate spoke')\n"
    )
    result = backend.run(pair(candidate, judge))
    assert (result.status, result.exit_code, result.stdout) == ("ok", 0, "candidate gone\n"), result
    assert {"exit_code": 3, "stdout": "bye\n"}.items() <= result.details["candidate"].items(), result
    assert_next_pair_is_normal(backend)


def test_deadline_kills_both_sides(backend):
    loop = "while True:\n    pass\n"
    result = backend.run(pair(loop, loop, wall_s=1.0, cpu_s=30))
    assert result.status == "timeout", result
    assert _killed(result.exit_code) and _killed(result.details["candidate"]["exit_code"]), result
    assert_next_pair_is_normal(backend)


def test_candidate_output_is_capped_without_ending_the_job(backend):
    candidate = "import sys\nfor _ in range(64):\n    sys.stdout.write('x' * 65536)\nprint('end', file=sys.stderr)\n"
    judge = "import socket\ns = socket.socket(fileno=3)\ns.recv(1)\nprint('judged')\n"
    result = backend.run(pair(candidate, judge, output_bytes=1 << 16))
    assert (result.status, result.stdout) == ("ok", "judged\n"), result
    cand = result.details["candidate"]
    assert len(cand["stdout"]) == 1 << 16 and cand["stdout_truncated"] and cand["stderr"] == "end\n"


def test_candidate_that_fork_bombs_or_fills_memory_does_not_stop_the_judge(backend):
    bomb = (
        "import os\n"
        "while True:\n"
        "    try:\n"
        "        os.fork()\n"
        "    except OSError:\n"
        "        pass\n"
    )
    judge = (  # forks once the bomb has taken what it may: the candidate must have left room
        "import os, time\n"
        "time.sleep(0.5)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0)\n"
        "os.waitpid(pid, 0)\n"
        "print('judge ran')\n"
    )
    # In a container, more than the pids cgroup allows (the runner keeps the judge room to start);
    # on the host, where nothing but RLIMIT_NPROC bounds it, a modest bomb.
    result = backend.run(pair(bomb, judge, wall_s=5, processes=1000 if backend.kind == "docker" else 32))
    assert (result.status, result.stdout) == ("ok", "judge ran\n"), result
    assert_next_pair_is_normal(backend)
    if backend.kind == "docker":  # fill the container's memory (1 GiB), not just the rlimit
        hog = "x = b'1' * (1 << 30)\nx += b'1' * (1 << 30)\n"
        result = backend.run(pair(hog, "import socket\nsocket.socket(fileno=3).recv(1)\nprint('judge ran')\n",
                                  memory_mb=4096))
        assert (result.status, result.stdout) == ("ok", "judge ran\n"), result
        assert_next_pair_is_normal(backend)


# -- SysV IPC ---------------------------------------------------------------------------------------

IPC_LEAVER = r"""
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
key, size = int(sys.argv[1]), int(sys.argv[2])
shm = libc.shmget(key, size, 0o1000 | 0o600)
addr = libc.shmat(shm, None, 0)
ctypes.memset(addr, 1, size)  # charged to the container while the segment lives
msg = libc.msgget(key + 1, 0o1000 | 0o600)
sem = libc.semget(key + 2, 4, 0o1000 | 0o600)
print(shm >= 0, addr not in (None, 2**64 - 1), msg >= 0, sem >= 0)
"""
COUNT_IPC = (
    "counts = []\n"
    "for kind in ('shm', 'msg', 'sem'):\n"
    "    counts.append(len(open('/proc/sysvipc/' + kind).read().splitlines()) - 1)\n"
    "print(counts)\n"
)


def _host_ipc_keys() -> set[int]:
    keys = set()
    for kind in ("shm", "msg", "sem"):
        for line in Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]:
            keys.add(int(line.split()[0]))
    return keys


@pytest.mark.parametrize("kind", BACKENDS)
def test_sysv_ipc_does_not_survive_a_job(kind):
    with _make(kind) as backend:
        backend.kind = kind
        retired = []
        if kind == "docker":  # keep a container that was not clean, to look inside it afterwards
            backend._retire = lambda container: (retired.append(container.id), backend._pool(()).put(container))
        key = secrets.randbelow(1 << 28) + 1000
        size = (200 << 20) if kind == "docker" else (8 << 20)
        only_shm = IPC_LEAVER.split("msg =")[0] + "print(shm >= 0, addr not in (None, 2**64 - 1))\n"
        result = backend.run(Job(command=["python3", "ipc.py", str(key), str(size)], files={"ipc.py": only_shm}))
        assert result.stdout == "True True\n", result
        if kind == "docker":  # kernel.shm_rmid_forced: the segment died with its last user
            assert result.details["clean"] is True and not retired
            full = backend.run(py("x = b'1' * (850 << 20)\nprint(len(x) >> 20)", memory_mb=1000))
            assert (full.status, full.stdout) == ("ok", "850\n"), full  # the container's whole memory
        leaver = Job(command=["python3", "ipc.py", str(key), str(size)], files={"ipc.py": IPC_LEAVER})
        result = backend.run(leaver)
        assert result.stdout == "True True True True\n", result
        if _bwrap(backend):  # its IPC namespace died with it: nothing for the runner to see
            assert result.details["clean"] is True
        else:
            assert result.details["clean"] is False and result.details["ipc_removed"] >= 2, result
        assert not {key, key + 1, key + 2} & _host_ipc_keys()
        after = backend.run(py(COUNT_IPC))
        assert after.stdout == "[0, 0, 0]\n", after
        # the same in a paired job, from both sides
        candidate = IPC_LEAVER.replace("int(sys.argv[1]), int(sys.argv[2])", f"{key}, {size}")
        judge = IPC_LEAVER.replace("int(sys.argv[1]), int(sys.argv[2])", f"{key + 10}, 4096") + WAIT_FOR_CANDIDATE
        result = backend.run(pair(candidate, judge))
        assert result.stdout == "True True True True\n" and result.details["candidate"]["stdout"] == result.stdout
        assert not {key, key + 1, key + 2, key + 10, key + 11, key + 12} & _host_ipc_keys()
        after = backend.run(py(COUNT_IPC))
        assert after.stdout == "[0, 0, 0]\n", after
        if kind == "docker":
            assert len(set(retired)) == 1 and backend.container_ids() == [retired[0]]  # all in one container
        assert_next_pair_is_normal(backend)


# -- crashes the job causes are job results -----------------------------------------------------------


@pytest.mark.parametrize("code", [
    "import os, signal\nos.killpg(0, signal.SIGKILL)\n",
    "import os, time\nos.close(1)\nos.close(2)\ntime.sleep(0.3)\n",
    "import os\nos.close(0)\nos.close(1)\nos.close(2)\nos.close(3)\nprint('x')\n",
    "import os\nos.kill(os.getpid(), 19)\n",  # stops itself: the deadline ends it
], ids=["killpg", "closes-pipes", "closes-all", "stops-itself"])
def test_what_a_job_does_to_itself_is_a_result_not_an_error(backend, code):
    result = backend.run(py(code, wall_s=2.0))
    assert result.status != "error" and not result.error, result
    assert_next_job_is_normal(backend)


@pytest.mark.docker
def test_filling_the_containers_memory_is_a_memory_result():
    with _make("docker") as backend:
        result = backend.run(py("x = b'1' * (1 << 30)\ny = b'2' * (1 << 30)\n", memory_mb=4096))
        assert result.status == "memory", result
        backend.kind = "docker"
        assert_next_job_is_normal(backend)


# -- cross-job leaks ----------------------------------------------------------------------------------

SCAN = r"""
import hashlib, re, sys
held = sys.stdin.read()
marker = b'XYZ' + b'ZY-'
wanted = {bytes.fromhex(h): name for name, h in (a.split('=') for a in sys.argv[1:])}
found = {name: 0 for name in wanted.values()}
with open('/proc/self/maps') as maps, open('/proc/self/mem', 'rb', 0) as mem:
    for line in maps:
        span, perms = line.split()[:2]
        if not perms.startswith('r') or '[vvar' in line or '[vsyscall' in line:
            continue
        lo, hi = (int(x, 16) for x in span.split('-'))
        try:
            mem.seek(lo)
            data = mem.read(hi - lo)
        except (OSError, OverflowError, ValueError):
            continue
        for m in re.finditer(re.escape(marker), data):
            digest = hashlib.sha256(data[m.end():m.end() + 32]).digest()
            if digest in wanted:
                found[wanted[digest]] += 1
print(found)
"""


def _token() -> tuple[str, str]:
    token = secrets.token_hex(16)
    import hashlib

    return token, hashlib.sha256(token.encode()).hexdigest()


@pytest.mark.docker
def test_a_job_never_sees_an_earlier_jobs_files_or_stdin_in_its_memory():
    with _make("docker") as backend:
        old, old_hash = _token()
        mine, mine_hash = _token()
        secret = "XYZZY-" + old
        holder = f"import sys\nS = {secret!r}\nprint(len(sys.stdin.read()))"
        files = {"main.py": holder, "tests.py": f"EXPECTED = {secret!r}\n" * 50}
        first = backend.run(Job(command=["python3", "main.py"], stdin=secret * 50, files=files))
        assert first.stdout == f"{len(secret) * 50}\n"
        first = backend.run(Job(command=["python3", "main.py"], stdin=secret * 50, files=files,
                                judge=Peer(command=["python3", "main.py"], stdin=secret * 50, files=files)))
        assert first.stdout == f"{len(secret) * 50}\n"
        # Its own stdin is found (the scan works); the earlier jobs' secret is not (no inherited memory).
        scan = ["python3", "scan.py", f"old={old_hash}", f"mine={mine_hash}"]
        alone = Job(command=scan, files={"scan.py": SCAN}, stdin="XYZZY-" + mine)
        paired = Job(command=scan, files={"scan.py": SCAN}, stdin="XYZZY-" + mine,
                     judge=Peer(command=scan, files={"scan.py": SCAN + WAIT_FOR_CANDIDATE}, stdin="XYZZY-" + mine))
        for job in (alone, paired):
            result = backend.run(job)
            outputs = [result.stdout] + ([result.details["candidate"]["stdout"]] if job.judge else [])
            assert result.details["forked"] is True and len(backend.container_ids()) == 1, result
            for output in outputs:
                found = ast.literal_eval(output)
                assert found["mine"] >= 1 and found["old"] == 0, result


# -- the local backend reads only what a job needs of the host -----------------------------------------


def test_local_bwrap_job_sees_no_host_file_it_does_not_need():
    from rewardsmith.sandbox.local import LocalBackend

    with LocalBackend(concurrency=1) as backend:
        if backend.isolation != "bwrap":
            pytest.skip("bubblewrap is not usable here; the local backend then reads the host (documented)")
        secret = "host-secret-" + secrets.token_hex(8)
        with tempfile.NamedTemporaryFile("w", dir="/var/tmp", prefix="rewardsmith-secret-", delete=False) as handle:
            handle.write(secret)
        os.chmod(handle.name, 0o644)
        try:
            paths = [handle.name, "/etc/hostname", "/etc/passwd", str(REPO / "README.md"), "/root",
                     "/var/tmp", "/home", "/opt"]
            code = (
                "import os, sys\n"
                "for path in sys.argv[1:]:\n"
                "    try:\n"
                "        print(path, os.listdir(path) if os.path.isdir(path) else open(path).read()[:40])\n"
                "    except OSError as exc:\n"
                "        print(path, type(exc).__name__)\n"
            )
            result = backend.run(Job(command=["python3", "main.py", *paths], files={"main.py": code}))
            assert secret not in result.stdout
            assert [line.split()[-1] for line in result.stdout.splitlines()] == ["FileNotFoundError"] * len(paths)
        finally:
            os.unlink(handle.name)
        # What honest jobs need still works: Python with pytest, and a C++ compiler.
        tests = {"test_x.py": "from sol import f\n\ndef test_f():\n    assert f() == 2\n",
                 "sol.py": "def f():\n    return 2\n"}
        result = backend.run(Job(command=["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"], files=tests))
        assert result.exit_code == 0 and "1 passed" in result.stdout, result
        cpp = "#include <iostream>\nint main() { std::cout << 6 * 7 << std::endl; }\n"
        result = backend.run(Job(command=["sh", "-c", "g++ -O0 -o a main.cpp && ./a"], files={"main.cpp": cpp},
                                 limits=Limits(wall_s=30, memory_mb=1024)))
        if "not found" in result.stderr:
            pytest.skip("no g++ on this host")
        assert (result.exit_code, result.stdout) == (0, "42\n"), result


def test_local_bwrap_passes_fd_3_and_unshares_ipc():
    """bwrap keeps inherited descriptors (fd 3 reaches the job) and gives each job its own IPC."""
    import ctypes

    from rewardsmith.sandbox.local import bwrap_prefix

    prefix = bwrap_prefix(tempfile.gettempdir())
    if prefix is None:
        pytest.skip("no bwrap here")
    libc = ctypes.CDLL(None, use_errno=True)
    queue = libc.msgget(0, 0o1000 | 0o600)  # one the host has: the job must not see it
    assert queue >= 0
    r, w = os.pipe()
    code = "import os\nos.write(3, b'through')\nprint(open('/proc/sysvipc/msg').read().count('\\n'))\n"
    try:
        done = subprocess.run([*prefix, "/usr/bin/python3", "-c", code], pass_fds=(3,), capture_output=True,
                              text=True, timeout=30, preexec_fn=lambda: os.dup2(w, 3))
        os.close(w)
        if done.returncode != 0 and "namespace" in done.stderr:
            pytest.skip(f"bwrap cannot create namespaces here: {done.stderr.strip()}")
        assert os.read(r, 16) == b"through" and done.stdout == "1\n", done
    finally:
        libc.msgctl(queue, 0, None)
        os.close(r)
