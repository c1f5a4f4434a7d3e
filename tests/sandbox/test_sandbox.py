"""The sandbox against hostile programs, on both backends.

Docker tests need a running engine and the sandbox image (tests/run.sh starts and
builds them); they skip when those are missing, unless REWARDSMITH_REQUIRE_DOCKER=1
(set by tests/run.sh, so CI cannot pass by skipping them).
"""

from __future__ import annotations

import glob
import os
import socket
import stat
import subprocess
import tempfile
import time

import pytest
from conftest import require_docker

from rewardsmith.sandbox.job import Job
from rewardsmith.sandbox.limits import Limits

pytestmark = pytest.mark.slow


def _docker_backend():
    require_docker()
    from rewardsmith.sandbox.docker_pool import DockerBackend

    return DockerBackend(concurrency=2)


@pytest.fixture(scope="module", params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request):
    if request.param == "docker":
        b = _docker_backend()
    else:
        from rewardsmith.sandbox.local import LocalBackend

        b = LocalBackend(concurrency=2)
    yield b
    b.close()


def py(code: str, stdin: str = "", **limits) -> Job:
    return Job(command=["python3", "main.py"], files={"main.py": code}, stdin=stdin, limits=Limits(**limits))


def assert_next_job_is_normal(backend) -> None:
    """After a hostile job, the pool serves a normal one: clean directory, no stray process."""
    probe = py(
        "import os\n"
        "print(sorted(os.listdir('.')))\n"
        "mine = {os.getpid()}\n"
        "others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in mine]\n"
        "print(len(others))\n"
    )
    result = backend.run(probe)
    assert result.status == "ok" and result.exit_code == 0, result
    listing, _ = result.stdout.splitlines()
    assert listing == "['main.py']"  # nothing left over from the previous job
    assert result.details.get("clean") is True


def test_normal_program_with_stdin_and_files(backend):
    job = Job(command=["python3", "main.py"], stdin="abc\n",
              files={"main.py": "import data\nprint(input()[::-1], data.X)", "data.py": "X = 42"})
    result = backend.run(job)
    assert (result.status, result.exit_code, result.stdout) == ("ok", 0, "cba 42\n")
    assert result.wall_s > 0 and not result.stdout_truncated


def test_exit_code_and_stderr_are_reported(backend):
    result = backend.run(py("import sys\nprint('bad', file=sys.stderr)\nsys.exit(3)"))
    assert (result.status, result.exit_code, result.stderr) == ("ok", 3, "bad\n")
    assert not result.ok


def test_infinite_loop_times_out(backend):
    result = backend.run(py("while True: pass", wall_s=1.0))
    assert result.status == "timeout" and result.wall_s < 3.0
    assert_next_job_is_normal(backend)


def test_cpu_limit_is_a_timeout(backend):
    result = backend.run(py("while True: pass", wall_s=5.0, cpu_s=1.0))
    assert result.status == "timeout" and result.cpu_s >= 0.9 and result.wall_s < 4.5


def test_fork_bomb_is_contained(backend):
    bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    result = backend.run(py(bomb, wall_s=2.0, processes=32))
    assert result.status in ("timeout", "memory") and not result.ok
    assert_next_job_is_normal(backend)


def test_memory_bomb_hits_the_memory_limit(backend):
    result = backend.run(py("x = bytearray(2_000_000_000)\nprint('allocated')", memory_mb=256))
    assert result.status == "memory" and "allocated" not in result.stdout
    assert_next_job_is_normal(backend)


def test_100_mb_of_stdout_is_cut_off(backend):
    result = backend.run(py("import sys\nfor _ in range(1600):\n    sys.stdout.write('x' * 65536)", wall_s=10))
    assert result.status == "output_limit" and result.stdout_truncated
    assert len(result.stdout) == Limits().output_bytes
    assert_next_job_is_normal(backend)


def test_file_size_limit(backend):
    result = backend.run(py("open('big', 'wb').write(b'x' * (8 << 20))", file_size_mb=1))
    assert result.status == "output_limit" and not result.ok


def test_writing_outside_the_work_directory_fails(backend):
    result = backend.run(py("open('/etc/rewardsmith-was-here', 'w').write('x')"))
    assert result.exit_code != 0 and ("Permission" in result.stderr or "Read-only" in result.stderr)
    assert not os.path.exists("/etc/rewardsmith-was-here")


def test_reading_a_private_host_file_fails(backend):
    with tempfile.NamedTemporaryFile("w", delete=False, dir="/tmp", prefix="rewardsmith-secret-") as handle:
        handle.write("s3cret")
    os.chmod(handle.name, stat.S_IRUSR | stat.S_IWUSR)
    try:
        result = backend.run(py(f"print(open({handle.name!r}).read())"))
        assert result.exit_code != 0 and "s3cret" not in result.stdout
    finally:
        os.unlink(handle.name)


def test_network_is_unreachable(backend):
    if backend.name == "local" and backend.isolation != "bwrap":
        pytest.skip("the local backend without bubblewrap does not isolate the network (documented)")
    server = socket.create_server(("127.0.0.1", 0))  # a real listener the job would reach without isolation
    port = server.getsockname()[1]
    try:
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')"
        result = backend.run(py(code))
        assert "connected" not in result.stdout and result.exit_code != 0
    finally:
        server.close()


def test_local_job_sees_a_private_tmp(backend):
    if backend.name == "local" and backend.isolation != "bwrap":
        pytest.skip("the local backend without bubblewrap shares /tmp with the host (documented)")
    fd, marker = tempfile.mkstemp(dir="/tmp", prefix="rewardsmith-visible-")
    os.close(fd)
    try:
        result = backend.run(py(f"import os\nprint(os.path.exists({marker!r}))"))
        assert result.stdout == "False\n"
    finally:
        os.unlink(marker)


def test_killing_the_runner_does_not_work(backend):
    code = (
        "import os, signal\n"
        "try:\n    os.kill(os.getppid(), signal.SIGKILL)\nexcept OSError as e:\n    print('denied', e)\n"
    )
    result = backend.run(py(code))
    assert result.status == "ok", result
    assert_next_job_is_normal(backend)


def test_child_sleeping_past_the_timeout_is_killed(backend):
    code = "import subprocess\nsubprocess.run(['sleep', '60'])\n"
    result = backend.run(py(code, wall_s=1.0))
    assert result.status == "timeout" and result.wall_s < 3.0
    assert_next_job_is_normal(backend)


def test_daemon_does_not_outlive_the_job(backend):
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(60)\n"
        "    os._exit(0)\n"
        "print('parent done')\n"
    )
    result = backend.run(py(code))
    assert result.stdout == "parent done\n" and result.details.get("clean") is True
    assert_next_job_is_normal(backend)


def test_path_escape_in_job_files_is_refused(backend):
    result = backend.run(Job(command=["python3", "-c", "print(1)"], files={"../evil.py": "x"}))
    assert result.status == "error" and "leaves the work directory" in result.error


def test_concurrent_jobs_in_a_batch(backend):
    jobs = [py(f"print({n} * {n})") for n in range(12)]
    results = backend.run_batch(jobs)
    assert [r.stdout for r in results] == [f"{n * n}\n" for n in range(12)]


def test_docker_container_is_locked_down():
    backend = _docker_backend()
    try:
        code = (
            "import os\n"
            "print(os.getuid(), os.getgid())\n"
            "status = open('/proc/self/status').read()\n"
            "print(status.split('CapEff:')[1].split()[0], status.split('CapPrm:')[1].split()[0])\n"
            "print(status.split('NoNewPrivs:')[1].split()[0])\n"
            "print(os.getcwd(), os.getgroups())\n"
        )
        for job in (py(code), Job(command=["env", "python3", "-c", code])):  # forked, then exec'd
            result = backend.run(job)
            uid_gid, caps, no_new_privs, cwd = result.stdout.split("\n")[:4]
            uid, gid = map(int, uid_gid.split())
            assert uid == gid and uid >= 1000 and caps == "0000000000000000 0000000000000000", result
            assert no_new_privs == "1" and cwd == "/work []", result  # no supplementary group
        inspect = backend.client.api.inspect_container(backend.container_ids()[0])
        assert inspect["Config"]["User"] == "0:0"  # the runner: root with SETUID and SETGID only
        host = inspect["HostConfig"]
        assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True and host["CapDrop"] == ["ALL"]
        assert sorted(host["CapAdd"]) == ["SETGID", "SETUID"]
        assert host["PidsLimit"] > 0 and host["Memory"] > 0
        assert set(host["Tmpfs"]) == {"/work", "/tmp", "/judge", "/shared"}
        for options in host["Tmpfs"].values():  # every job filesystem is capped in size and inodes
            assert "size=" in options and "nr_inodes=" in options and "nosuid" in options, host["Tmpfs"]
        assert host["Sysctls"] == {"kernel.shm_rmid_forced": "1"}
    finally:
        backend.close()


def test_docker_close_leaves_no_container():
    backend = _docker_backend().warm(2)
    ids = backend.container_ids()
    assert len(ids) == 2
    backend.run(py("print(1)"))
    backend.close()
    listed = subprocess.run(["docker", "ps", "-aq", "--no-trunc"], capture_output=True, text=True, check=True)
    assert not set(ids) & set(listed.stdout.split())


def test_docker_strict_mode_uses_a_fresh_container_per_job():
    from rewardsmith.sandbox.docker_pool import DockerBackend

    require_docker()
    with DockerBackend(concurrency=1, strict=True) as backend:
        first = backend.run(py("import socket; print(socket.gethostname())"))
        second = backend.run(py("import socket; print(socket.gethostname())"))
        assert first.stdout != second.stdout and backend.container_ids() == []


def test_local_close_leaves_no_runner_or_directory():
    from rewardsmith.sandbox.local import LocalBackend, runner_base

    pattern = os.path.join(runner_base(), "rewardsmith-local-*")
    before = set(glob.glob(pattern))
    backend = LocalBackend(concurrency=2)
    backend.run_batch([py("print(1)"), py("print(2)")])
    procs = [runner.proc for runner in backend._all]
    assert procs and all(runner.root.startswith(runner_base() + os.sep) for runner in backend._all)
    backend.close()
    assert all(proc.poll() is not None for proc in procs)
    assert set(glob.glob(pattern)) <= before


@pytest.mark.parametrize("which", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_doctor_runs_every_self_test(which, capsys):
    from rewardsmith.adapters.cli import main

    if which == "docker":
        _docker_backend().close()  # skips (or fails under REWARDSMITH_REQUIRE_DOCKER) without an engine
    code = main(["sandbox", "doctor", "--backend", which])
    out = capsys.readouterr().out
    assert code == 0, out
    for name in ("runs a program", "wall-clock limit", "memory limit", "output limit", "leaves no process behind"):
        assert f"[ok] {which}: {name}" in out
    assert out.rstrip().endswith("sandbox: ready")


def test_doctor_says_what_to_do_when_the_image_is_missing(monkeypatch, capsys):
    from rewardsmith.adapters.cli import main

    require_docker()
    monkeypatch.setenv("REWARDSMITH_SANDBOX_IMAGE", "rewardsmith-no-such-image:0")
    assert main(["sandbox", "doctor", "--backend", "docker"]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] sandbox image" in out and "build_offline.sh" in out


def test_docker_python_jobs_run_in_a_fork_and_behave_like_a_fresh_interpreter():
    """The fast path (a fork of the resident runner) must look like `python3 main.py` to the job."""
    backend = _docker_backend()
    try:
        code = (
            "import sys, helper\n"
            "print(__name__, __file__, sys.argv, helper.X)\n"
            "print(sys.stdin.read().upper(), end='')\n"
            "import atexit\n"
            "atexit.register(lambda: print('bye'))\n"
            "sys.exit(4)\n"
        )
        job = Job(command=["python3", "main.py", "arg"], files={"main.py": code, "helper.py": "X = 7"}, stdin="in\n")
        result = backend.run(job)
        assert result.details["forked"] is True
        assert result.stdout == "__main__ main.py ['main.py', 'arg'] 7\nIN\nbye\n" and result.exit_code == 4
        crash = backend.run(py("def f():\n    raise ValueError('boom')\nf()"))
        assert crash.exit_code == 1 and "ValueError: boom" in crash.stderr and "Traceback" in crash.stderr
        inline = backend.run(Job(command=["python3", "-c", "import sys; print(sys.argv)", "x"]))
        assert inline.stdout == "['-c', 'x']\n" and inline.details["forked"] is True
        other = backend.run(Job(command=["sh", "-c", "echo shell"]))
        assert other.stdout == "shell\n" and other.details["forked"] is False
    finally:
        backend.close()


def test_auto_falls_back_to_local_with_one_warning(monkeypatch):
    from rewardsmith.sandbox import backend as chooser

    monkeypatch.setattr(chooser, "_backends", {})
    monkeypatch.setattr(chooser, "_warned", False)
    monkeypatch.setattr(chooser, "docker_available", lambda image=None: "no Docker engine answers (test)")
    monkeypatch.delenv("REWARDSMITH_SANDBOX", raising=False)
    with pytest.warns(UserWarning, match="local backend.*no Docker engine answers"):
        first = chooser.get_backend("auto")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert chooser.get_backend("auto") is first
    assert first.name == "local"
    result = chooser.run({"main.py": "print('via run')"}, ["python3", "main.py"])
    assert result.stdout == "via run\n"
    first.close()


def test_auto_picks_docker_when_it_answers(monkeypatch):
    from rewardsmith.sandbox import backend as chooser

    require_docker()
    monkeypatch.setattr(chooser, "_backends", {})
    monkeypatch.delenv("REWARDSMITH_SANDBOX", raising=False)
    chosen = chooser.get_backend("auto")
    try:
        assert chosen.name == "docker"
    finally:
        chosen.close()


def test_unknown_backend_name_is_refused(monkeypatch):
    from rewardsmith.sandbox import backend as chooser

    monkeypatch.setattr(chooser, "_backends", {})
    with pytest.raises(ValueError, match="auto, docker or local"):
        chooser.get_backend("podman")


def test_local_runners_outlive_the_batch_threads_that_started_them():
    """Runners are started from a long-lived thread: PDEATHSIG would kill them with a batch thread."""
    import time

    from rewardsmith.sandbox.local import LocalBackend

    with LocalBackend(concurrency=2) as backend:
        for round_ in range(3):
            results = backend.run_batch([py(f"print({round_ * 10 + i})") for i in range(4)])
            assert [r.stdout for r in results] == [f"{round_ * 10 + i}\n" for i in range(4)], results
            time.sleep(0.3)  # the batch's threads are gone by now


def test_docker_containers_do_not_share_a_process_quota():
    """A fork bomb in one container must not make fork() fail in another (RLIMIT_NPROC is per uid)."""
    backend = _docker_backend()
    try:
        backend.warm(2)
        bomb = py("import os, time\nfor _ in range(200):\n    try:\n        os.fork() or time.sleep(3)\n"
                  "    except OSError:\n        pass\ntime.sleep(3)\n", wall_s=3.0, processes=64)
        forker = py("import os\npids = [os.fork() or os._exit(0) for _ in range(20)]\nprint('forked', len(pids))")
        import threading

        box = {}
        thread = threading.Thread(target=lambda: box.setdefault("bomb", backend.run(bomb)))
        thread.start()
        time.sleep(1.0)  # the bomb has used up its quota by now
        box["forker"] = backend.run(forker)
        thread.join()
        assert box["forker"].stdout == "forked 20\n", box["forker"]
    finally:
        backend.close()
