"""POSIX message queues never carry anything from one job to the next (issue item 8).

A writer job creates a queue under a known name (``mq_open`` through ctypes, O_CREAT) and sends a
message; a reader job on the same runner (concurrency 1: the same container, the same local runner)
opens that name: it must not find it. Job processes cannot create a queue at all (RLIMIT_MSGQUEUE 0);
the runner also removes any queue a job left and then reports the job not clean, which the runner
tests below exercise directly, in a private IPC namespace with an mqueue filesystem of its own.
After every attack the code verifier must still pay an honest solution and refuse a wrong one.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import textwrap

import pytest
from conftest import require_docker

import rewardsmith.verifiers.code  # noqa: F401 - registers "code"
from rewardsmith.sandbox.job import Job, Peer
from rewardsmith.sandbox.limits import Limits
from rewardsmith.verifiers import Sample, build

pytestmark = pytest.mark.slow

BACKENDS = ["local", "local-unsafe", pytest.param("docker", marks=pytest.mark.docker)]

MQ = textwrap.dedent("""
    import ctypes, json, os, sys, time
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    rt.mq_open.restype = ctypes.c_int


    class Attr(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long),
                    ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]


    def create(name, small=False):
        attr = ctypes.byref(Attr(0, 1, 1, 0)) if small else None
        fd = rt.mq_open(name.encode("utf-8", "surrogateescape"), os.O_CREAT | os.O_RDWR, 0o666, attr)
        errno = ctypes.get_errno()
        if fd >= 0:
            rt.mq_send(fd, b"s", 1, 0)
        return fd, errno


    def read(name):
        fd = rt.mq_open(name.encode("utf-8", "surrogateescape"), os.O_RDONLY | os.O_NONBLOCK)
        if fd < 0:
            return {"found": False, "errno": ctypes.get_errno()}
        buf = ctypes.create_string_buffer(1 << 16)
        n = rt.mq_receive(fd, buf, len(buf), None)
        return {"found": True, "message": buf.raw[: max(n, 0)].decode("latin-1")}
""")

WRITER = MQ + textwrap.dedent("""
    names = json.loads(sys.argv[1])
    mode = sys.argv[2]
    if mode == "daemon":  # a child that outlives the job's main process creates and holds them
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                results = [create(name) for name in names]
                os.write(w, json.dumps(results).encode())
                os.close(w)
                time.sleep(60)
            os._exit(0)
        os.close(w)
        results = json.loads(os.read(r, 1 << 20) or b"[]")
    else:
        results = [create(name, small=mode == "small") for name in names]
    print(json.dumps({"created": sum(fd >= 0 for fd, _ in results), "errnos": sorted({e for _, e in results})}))
""")

READER = MQ + textwrap.dedent("""
    names = json.loads(sys.argv[1])
    found = [read(name) for name in names]
    listing = sorted(os.listdir("/dev/mqueue")) if os.path.isdir("/dev/mqueue") else None
    print(json.dumps({"found": [f for f in found if f["found"]], "errnos": sorted({f.get("errno") for f in found}),
                      "listing": listing}))
""")

ODD_NAMES = ["/ a queue with spaces ", "/tab\tand\nnewline", "/\u00e9t\u00e9-\u2713-\U0001f600", "/" + "x" * 200,
             "/.hidden", "/-", "/*", "/ends-with-dot."]


def _make(kind: str):
    if kind == "docker":
        require_docker()
        from rewardsmith.sandbox.docker_pool import DockerBackend

        return DockerBackend(concurrency=1)
    from rewardsmith.sandbox.local import LocalBackend

    if kind == "local":
        backend = LocalBackend(concurrency=1)
        if backend.isolation != "bwrap":
            backend.close()
            pytest.skip("bubblewrap is not usable here")
        return backend
    return LocalBackend(concurrency=1, use_bwrap=False, allow_unsafe=True)


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request):
    b = _make(request.param)
    b.kind = request.param
    yield b
    b.close()


@pytest.fixture(scope="module")
def verifier(backend):
    v = build({"type": "code", "timeout_s": 3.0})
    v._backend_override = backend  # the documented test-only hook
    return v


def _token() -> str:
    return "rs-mq-" + secrets.token_hex(6)


def _run(backend, script: str, *args: str) -> tuple[dict, dict]:
    result = backend.run(Job(command=["python3", "main.py", *args], files={"main.py": script},
                             limits=Limits(wall_s=20, cpu_s=20)))
    assert (result.status, result.exit_code) == ("ok", 0), result
    return json.loads(result.stdout), result.details


def attack_then_read(backend, names: list[str], mode: str = "plain") -> None:
    wrote, details = _run(backend, WRITER, json.dumps(names), mode)
    assert wrote["created"] == 0 and wrote["errnos"] == [24], wrote  # EMFILE: RLIMIT_MSGQUEUE is 0
    assert details["clean"] is True and "mqueue_unconfirmed" not in details, details
    seen, details = _run(backend, READER, json.dumps(names))
    assert seen["found"] == [] and seen["errnos"] == [2], seen  # ENOENT: nothing of the writer's is there
    assert not set(seen["listing"] or []) & {name[1:] for name in names}, seen
    assert details["clean"] is True
    honest_and_wrong_are_told_apart(backend)


# -- the code verifier after each attack, in three test forms ----------------------------------------------

ADD = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
FORMS = {
    "check": {"tests": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(20, 22) == 42\n",
              "entry_point": "add"},
    "call": {"tests": [{"args": [1, 2], "expected": 3}, {"args": [20, 22], "expected": 42}], "entry_point": "add"},
    "pytest": {"tests": {"pytest": "from solution import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
                                   "    assert add(20, 22) == 42\n"}},
}


def honest_and_wrong_are_told_apart(backend) -> None:
    verifier = build({"type": "code", "timeout_s": 3.0})
    verifier._backend_override = backend
    samples = [Sample(prompt="", completion=f"```python\n{code}```", fields=fields)
               for fields in FORMS.values() for code in (ADD, WRONG)]
    verdicts = verifier.verify_batch(samples)
    for (form, _), pair in zip(FORMS.items(), zip(verdicts[::2], verdicts[1::2], strict=True), strict=True):
        honest, wrong = pair
        assert (honest.status, honest.score) == ("ok", 1.0), (form, honest)
        assert (wrong.status, wrong.score) == ("ok", 0.0), (form, wrong)


# -- attacks through the sandbox --------------------------------------------------------------------------


def test_a_queue_written_by_one_job_is_not_there_for_the_next(backend):
    attack_then_read(backend, ["/" + _token()])


def test_a_tiny_queue_is_refused_too(backend):
    """One message of one byte: the limit is on queue memory, and every queue takes some."""
    attack_then_read(backend, ["/" + _token()], mode="small")


def test_a_queue_held_by_a_daemon_that_outlives_the_job(backend):
    attack_then_read(backend, ["/" + _token()], mode="daemon")


def test_queues_with_odd_names(backend):
    attack_then_read(backend, ODD_NAMES)


def test_many_queues(backend):
    attack_then_read(backend, ["/" + _token() + f"-{i}" for i in range(300)])


def test_the_candidate_of_a_paired_job_cannot_leave_a_queue(backend):
    name = "/" + _token()
    candidate = WRITER.replace("names = json.loads(sys.argv[1])", f"names = [{name!r}]").replace(
        "mode = sys.argv[2]", "mode = 'daemon'") + "sys.stdout.flush()\nos.write(3, b'x')\n"  # its daemon holds fd 3
    judge = "import socket\nsocket.socket(fileno=3).recv(1)\nprint('judged')\n"
    result = backend.run(Job(command=["python3", "cand.py"], files={"cand.py": candidate},
                             judge=Peer(command=["python3", "judge.py"], files={"judge.py": judge})))
    assert result.stdout == "judged\n" and result.details["clean"] is True, result
    assert json.loads(result.details["candidate"]["stdout"])["created"] == 0, result
    seen, _ = _run(backend, READER, json.dumps([name]))
    assert seen["found"] == [], seen
    honest_and_wrong_are_told_apart(backend)


def test_a_solution_that_stashes_its_answer_in_a_queue_gets_nothing_back(backend, verifier):
    """The RL exploit itself: one sample's code leaves the answer in a queue, a later sample's code
    returns whatever it finds there. The later one must score 0."""
    name = "/" + _token()
    stash = MQ + f"create({name!r})\n" + ADD
    fetch = MQ + f"def add(a, b):\n    got = read({name!r})\n    return a + b if got['found'] else -1\n"
    fields = FORMS["check"]
    first = verifier.verify(Sample(prompt="", completion=f"```python\n{stash}```", fields=fields))
    assert (first.status, first.score) == ("ok", 1.0), first  # an honest add that also tried to stash
    later = verifier.verify(Sample(prompt="", completion=f"```python\n{fetch}```", fields=fields))
    assert (later.status, later.score) == ("ok", 0.0), later


@pytest.mark.docker
def test_docker_runner_lists_the_containers_queues():
    """In a container the runner can list (and so sweep) the namespace's queues, besides the limit."""
    require_docker()
    from rewardsmith.sandbox.docker_pool import DockerBackend

    with DockerBackend(concurrency=1) as backend:
        backend.warm(1)
        (container,) = list(backend._live)
        assert container.hello.get("mqueue") == "/dev/mqueue" and container.hello.get("mqueue_blocked") is True


def test_rlimit_msgqueue_breaks_nothing_an_honest_job_does(backend):
    """multiprocessing's locks and queues (POSIX semaphores in /dev/shm, pipes) work under the limit."""
    code = ("import multiprocessing as mp\n"
            "def square(x):\n    return x * x\n"
            "if __name__ == '__main__':\n"
            "    q = mp.Queue()\n    lock = mp.Lock()\n"
            "    with lock:\n        q.put(41)\n"
            "    print(q.get() + 1)\n"
            "    with mp.Pool(2) as pool:\n        print(sum(pool.map(square, range(4))))\n")
    result = backend.run(Job(command=["python3", "main.py"], files={"main.py": code},
                             limits=Limits(wall_s=20, cpu_s=20)))
    if backend.kind == "docker" and "SemLock" in result.stderr and "FileNotFoundError" in result.stderr:
        # Not the limit: containers have no /dev/shm (ipc_mode=none), so sem_open fails with ENOENT.
        pytest.skip("the container has no /dev/shm (ipc_mode=none): multiprocessing locks are unavailable")
    assert (result.status, result.exit_code, result.stdout) == ("ok", 0, "42\n14\n"), result


# -- the runner's sweep, in a namespace of our own --------------------------------------------------------

SWEEP = textwrap.dedent("""
    import ctypes, json, os, subprocess, sys, tempfile
    from rewardsmith.sandbox import runner as r
    from rewardsmith.sandbox.limits import Limits

    mount = tempfile.mkdtemp()
    subprocess.run(["mount", "-t", "mqueue", "none", mount], check=True)
    assert r.mqueue_directory(mount) == mount
    assert r.mqueue_directory(tempfile.mkdtemp()) is None  # a plain directory lists nothing of ours
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    JOB = 3_000_000 + 2 * (os.getpid() % 1000)

    class Attr(ctypes.Structure):  # one message of one byte: RLIMIT_MSGQUEUE (800 KiB) holds hundreds
        _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long),
                    ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]

    def create_as(uid, names):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setgid(uid)
                os.setuid(uid)
                for name in names:
                    fd = rt.mq_open(name.encode(), os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(Attr(0, 1, 1, 0)))
                    assert fd >= 0, (name, ctypes.get_errno())
                code = 0
            finally:
                os._exit(code)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0

    odd = json.loads(sys.argv[1])
    report = {}
    workdir = tempfile.mkdtemp()
    os.chown(workdir, JOB, JOB)
    runner = r.Runner(workdir, kill_all=False, run_as=JOB, judge_as=JOB + 1)
    runner.mqueue_dir = mount
    report["blocked"] = runner.mqueue_blocked
    create_as(0, ["/ours-before"])  # not the job's: stays
    before = {q[:2] for q in r._mqueues(mount)}
    create_as(JOB, odd + [f"/many-{i}" for i in range(100)])
    create_as(JOB + 1, ["/judge-side"])
    report["host"] = runner._sweep_mqueues(before)
    report["left_host"] = sorted(os.listdir(mount))
    create_as(JOB, ["/again"])
    runner.kill_all = True  # as in a container: every queue is the job's
    report["container"] = runner._sweep_mqueues(set())
    report["left_container"] = sorted(os.listdir(mount))
    # A job through execute(): its report, when the queues cannot be listed nor created
    runner.kill_all = False
    job = {"command": ["true"], "limits": Limits().as_dict()}
    report["listed"] = runner.execute(job)["details"]
    runner.mqueue_dir, runner.mqueue_blocked = None, False
    report["unconfirmed"] = runner.execute(job)["details"]
    runner.mqueue_blocked = True
    report["blocked_only"] = runner.execute(job)["details"]
    print(json.dumps(report))
""")


def test_runner_sweeps_what_a_job_left_and_confirms_it():
    if os.geteuid() != 0:
        pytest.skip("needs root (a private IPC and mount namespace with an mqueue filesystem)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # this rewardsmith
    done = subprocess.run(["unshare", "--ipc", "--mount", "--propagation", "private", sys.executable, "-c", SWEEP,
                           json.dumps(ODD_NAMES)], capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0 and "unshare failed" in done.stderr:
        pytest.skip(f"cannot create namespaces here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["blocked"] is True
    assert report["host"] == [len(ODD_NAMES) + 100 + 1, True]  # the job's and its judge's, every one
    assert report["left_host"] == ["ours-before"]  # what was there before the job, and not its uids', stays
    assert report["container"] == [2, True] and report["left_container"] == []
    assert report["listed"]["clean"] is True and "mqueue_unconfirmed" not in report["listed"]
    assert report["unconfirmed"]["clean"] is False and report["unconfirmed"]["mqueue_unconfirmed"] is True
    assert report["blocked_only"]["clean"] is True
