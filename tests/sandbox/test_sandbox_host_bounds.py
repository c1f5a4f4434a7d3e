"""What a job's output costs the host (issue 35, section 5): nothing that outlives the job.

Every result crosses a container's stdout, its attached socket. With the engine's default log driver
(json-file) each one was also written to the host's disk, for the life of a pooled container: about
2 MB for a job that prints 1 MiB per stream, every time. Containers now keep no log at all (driver
``none``; the attached socket works the same). The results themselves arrive whole.
"""

from __future__ import annotations

import os

import pytest
from conftest import require_docker

from rewardsmith.sandbox.job import Job, Peer
from rewardsmith.sandbox.limits import Limits

pytestmark = [pytest.mark.slow, pytest.mark.docker]

MIB = 1 << 20
LOUD = "import sys\nsys.stdout.write('o' * (1 << 20))\nsys.stderr.write('e' * (1 << 20))\n"


@pytest.fixture(scope="module")
def docker_backend():
    require_docker()
    from rewardsmith.sandbox.docker_pool import DockerBackend

    backend = DockerBackend(concurrency=1)
    yield backend
    backend.close()


def _inspect(container_id: str) -> dict:
    import docker

    client = docker.from_env()
    try:
        return client.api.inspect_container(container_id)
    finally:
        client.close()


def _loud_jobs() -> list[Job]:
    alone = Job(command=["python3", "loud.py"], files={"loud.py": LOUD}, limits=Limits(output_bytes=MIB))
    paired = Job(
        command=["python3", "loud.py"],
        files={"loud.py": LOUD},
        limits=Limits(output_bytes=MIB),
        judge=Peer(command=["python3", "loud.py"], files={"loud.py": LOUD + WAIT}),
    )
    return [alone, paired]


WAIT = "import socket\nsocket.socket(fileno=3).recv(1)\n"


def test_a_loud_job_leaves_no_log_on_the_host(docker_backend):
    for _ in range(3):
        for job in _loud_jobs():
            result = docker_backend.run(job)
            assert (result.status, result.exit_code) == ("ok", 0), result
            # The honest side: every byte of every stream arrives, untruncated.
            sides = [vars(result)] + ([result.details["candidate"]] if job.judge else [])
            for side in sides:
                assert (side["stdout"], side["stderr"]) == ("o" * MIB, "e" * MIB), (
                    len(side["stdout"]),
                    len(side["stderr"]),
                )
                assert not side["stdout_truncated"] and not side["stderr_truncated"]
            assert result.details["clean"] is True
    (container_id,) = docker_backend.container_ids()  # one pooled container served all six jobs
    info = _inspect(container_id)
    assert info["HostConfig"]["LogConfig"]["Type"] == "none", info["HostConfig"]["LogConfig"]
    path = info.get("LogPath") or ""
    assert not path or not os.path.exists(path) or os.path.getsize(path) == 0, (path, os.path.getsize(path))


def test_every_container_of_the_pool_is_created_without_a_log(docker_backend):
    docker_backend.warm(2)
    ids = docker_backend.container_ids()
    assert len(ids) >= 2
    for container_id in ids:
        assert _inspect(container_id)["HostConfig"]["LogConfig"]["Type"] == "none"
