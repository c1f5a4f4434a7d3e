"""``rewardsmith sandbox doctor``: is the sandbox usable here, and if not, what to do.

Every check runs the real thing (an engine ping, the image, a job per limit) rather
than reading configuration, because a limit that is configured but not enforced is
the failure that matters.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from rewardsmith.sandbox.backend import image_name
from rewardsmith.sandbox.job import ExecResult, Job
from rewardsmith.sandbox.limits import Limits


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


SELF_TESTS: list[tuple[str, str, Limits, Callable[[ExecResult], bool]]] = [
    ("runs a program", "print(6 * 7)", Limits(), lambda r: r.ok and r.stdout == "42\n"),
    ("wall-clock limit", "while True: pass", Limits(wall_s=1.0), lambda r: r.status == "timeout"),
    ("memory limit", "x = bytearray(1 << 30)", Limits(memory_mb=256), lambda r: r.status == "memory"),
    ("output limit", "print('x' * (4 << 20))", Limits(output_bytes=1 << 16), lambda r: r.status == "output_limit"),
    ("root is read-only", "open('/usr/rewardsmith-probe', 'w')", Limits(), lambda r: r.exit_code not in (0, None)),
    (
        "no network",
        "import socket\nsocket.create_connection(('8.8.8.8', 53), timeout=2)",
        Limits(),
        lambda r: r.exit_code not in (0, None),
    ),
    (
        "no POSIX message queue",
        "import ctypes, os\nlibc = ctypes.CDLL('librt.so.1', use_errno=True)\n"
        "name = ('/rewardsmith-doctor-%d' % os.getpid()).encode()\n"
        "fd = libc.mq_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600, None)\n"
        "if fd >= 0:\n    libc.mq_unlink(name)\nprint('created' if fd >= 0 else 'blocked')\n",
        Limits(),
        lambda r: r.ok and r.stdout == "blocked\n",
    ),
    (
        "leaves no process behind",
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(30)\n",
        Limits(),
        lambda r: r.details.get("clean") is True,
    ),
]


def self_test(backend) -> Iterator[Check]:
    for name, code, limits, passed in SELF_TESTS:
        start = time.monotonic()
        result = backend.run(Job(command=["python3", "main.py"], files={"main.py": code}, limits=limits))
        took = f"{1000 * (time.monotonic() - start):.0f} ms"
        detail = f"status={result.status} exit={result.exit_code} ({took})"
        if result.error:
            detail += f": {result.error}"
        yield Check(f"{backend.name}: {name}", passed(result), detail,
                    "" if passed(result) else "this limit is not enforced here; do not train on untrusted code")


def docker_checks() -> Iterator[Check]:
    try:
        import docker
    except ImportError:
        yield Check("docker SDK", False, "not installed", "pip install 'rewardsmith[sandbox]'")
        return
    yield Check("docker SDK", True, f"version {docker.__version__}")
    try:
        client = docker.from_env(timeout=10)
        version = client.version()
    except Exception as exc:  # the SDK raises many types for "no engine"
        yield Check("docker engine", False, f"does not answer ({type(exc).__name__})",
                    "run `bash sandbox/image/ensure_docker.sh` (as root), or start dockerd yourself")
        return
    yield Check("docker engine", True, f"server {version.get('Version')} (API {version.get('ApiVersion')})")
    image = image_name()
    try:
        client.images.get(image)
    except Exception:
        yield Check("sandbox image", False, f"{image} is missing",
                    "run `bash sandbox/image/build_offline.sh` (no registry needed) or "
                    "`docker build -t rewardsmith-sandbox sandbox/image` (with a registry); "
                    "another name: set REWARDSMITH_SANDBOX_IMAGE")
        return
    finally:
        client.close()
    yield Check("sandbox image", True, image)
    from rewardsmith.sandbox.docker_pool import DockerBackend

    with DockerBackend(concurrency=1) as backend:
        yield from self_test(backend)


def local_checks() -> Iterator[Check]:
    from rewardsmith.sandbox.local import UNSAFE_ENV, LocalBackend

    with LocalBackend(concurrency=1) as backend:
        isolation = backend.isolation
        if isolation == "refused":
            yield Check("local isolation", False, "no usable bubblewrap: the local backend refuses every job",
                        backend.refusal or "")
            return
        if isolation == "rlimits":
            yield Check("local isolation", False,
                        f"rlimits only (opted in with {UNSAFE_ENV}=1 or allow_unsafe=True): jobs can reach the "
                        "network, read host files and leave files in shared directories",
                        "install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces, "
                        "or use the Docker backend; do not train on untrusted code this way")
        else:
            yield Check("local isolation", True, isolation)
        for check in self_test(backend):
            if check.name.endswith("no network") and isolation != "bwrap":
                check = Check(check.name, True, "not isolated without bubblewrap (expected)")
            yield check


def run_doctor(backends: tuple[str, ...] = ("docker", "local")) -> list[Check]:
    checks: list[Check] = []
    if "docker" in backends:
        checks.extend(docker_checks())
    if "local" in backends:
        checks.extend(local_checks())
    return checks
