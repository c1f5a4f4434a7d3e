"""Issue 24, item 2: clean-up the candidate cannot break. A chain of directories thousands of levels
deep (past any recursive walk, past PATH_MAX) or a flood of them is removed within a bounded time on
both backends, and the next job, an honest one, runs normally in an empty directory. Whatever cannot
be removed in time makes the runner unclean, and an unclean runner, or one whose result was an
error, is retired, never reused."""

from __future__ import annotations

import os
import time

import pytest
from conftest import require_docker

from rewardsmith.sandbox.job import ExecResult, Job
from rewardsmith.sandbox.limits import Limits
from rewardsmith.sandbox.runner import empty_directory

pytestmark = pytest.mark.slow

DEEP = ("import os\n"
        "for _ in range({n}):\n"
        "    os.mkdir('d')\n"
        "    os.chdir('d')\n"
        "open('leaf', 'w').write('x')\n"
        "print('deep')\n")
FLOOD = ("import os\n"
         "for i in range({n}):\n"
         "    os.mkdir(f'f{{i}}')\n"
         "    os.mkdir(f'f{{i}}/g')\n"
         "print('flood')\n")


@pytest.fixture(scope="module", params=["local", "local-plain", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request):
    """Docker, the local backend with bubblewrap, and its fallback without it (opted in)."""
    if request.param == "docker":
        require_docker()
        from rewardsmith.sandbox.docker_pool import DockerBackend

        b = DockerBackend(concurrency=1)
    else:
        from rewardsmith.sandbox.local import LocalBackend

        plain = request.param == "local-plain"
        b = LocalBackend(concurrency=1, use_bwrap=not plain, allow_unsafe=plain)
    yield b
    b.close()


def py(code: str, **limits) -> Job:
    return Job(command=["python3", "main.py"], files={"main.py": code}, limits=Limits(**limits))


def honest_job_runs_in_an_empty_directory(backend) -> None:
    result = backend.run(py("import os\nprint(sorted(os.listdir('.')))\nprint(sum(1 for _ in range(10)))\n"))
    assert (result.status, result.exit_code) == ("ok", 0), result
    assert result.stdout.splitlines() == ["['main.py']", "10"]
    assert result.details.get("clean") is True


@pytest.mark.parametrize("depth", [1500, 5000])
def test_a_deep_chain_of_directories_is_removed(backend, depth: int) -> None:
    start = time.monotonic()
    made = backend.run(py(DEEP.format(n=depth), wall_s=30, cpu_s=30))
    assert (made.status, made.stdout) == ("ok", "deep\n"), made
    assert made.details.get("clean") is True, made.details  # removed, so the runner stays in service
    assert time.monotonic() - start < 60
    honest_job_runs_in_an_empty_directory(backend)


def test_a_flood_of_directories_is_removed(backend) -> None:
    made = backend.run(py(FLOOD.format(n=5000), wall_s=30, cpu_s=30))
    assert (made.status, made.stdout) == ("ok", "flood\n"), made
    honest_job_runs_in_an_empty_directory(backend)


def test_removal_stops_at_its_deadline_and_leaves_the_rest(tmp_path) -> None:
    """The clean-up is bounded in time: past its deadline it stops (the runner is then unclean)."""
    for i in range(50):
        (tmp_path / f"d{i}" / "e").mkdir(parents=True)
    empty_directory(str(tmp_path), deadline=time.monotonic() - 1)  # already past: removes nothing more
    assert len(os.listdir(tmp_path)) > 0
    empty_directory(str(tmp_path), deadline=time.monotonic() + 30)
    assert os.listdir(tmp_path) == []


def test_a_deep_tree_left_on_the_host_is_removed(tmp_path) -> None:
    """The same removal works on a tree no recursive walk can (deeper than Python's recursion limit)."""
    here = os.open(str(tmp_path), os.O_RDONLY)
    try:
        for _ in range(3000):
            os.mkdir("d", dir_fd=here)
            inner = os.open("d", os.O_RDONLY, dir_fd=here)
            os.close(here)
            here = inner
    finally:
        os.close(here)
    empty_directory(str(tmp_path), deadline=time.monotonic() + 30)
    assert os.listdir(tmp_path) == []


def test_an_error_result_never_counts_as_clean() -> None:
    from rewardsmith.sandbox.local import LocalBackend

    backend = LocalBackend(concurrency=1)
    try:
        runner = backend._checkout()
        backend._checkin(runner, ExecResult("error", error="the runner failed"))
        assert runner not in backend._all and backend._idle.empty()
    finally:
        backend.close()


@pytest.mark.docker
def test_docker_job_filesystems_cap_inodes() -> None:
    """A flood of empty directories takes no space, so the size cap alone would not stop it."""
    require_docker()
    from rewardsmith.sandbox.docker_pool import DockerBackend

    backend = DockerBackend(concurrency=1)
    try:
        flood = ("import os\nn = 0\ntry:\n    while True:\n        os.mkdir(f'x{n}')\n        n += 1\n"
                 "except OSError as exc:\n    print(n, exc.errno)\n")
        result = backend.run(py(flood, wall_s=60, cpu_s=60))
        assert result.status == "ok", result
        made, errno = map(int, result.stdout.split())
        assert made < 70_000 and errno == 28  # ENOSPC: out of inodes
        honest_job_runs_in_an_empty_directory(backend)
    finally:
        backend.close()
