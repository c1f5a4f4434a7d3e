"""Choosing a backend: ``docker``, ``local``, or ``auto`` (Docker when it answers)."""

from __future__ import annotations

import atexit
import os
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from rewardsmith.sandbox.job import ExecResult, Job
from rewardsmith.sandbox.limits import Limits

DEFAULT_IMAGE = "rewardsmith-sandbox:latest"
# What the image holds, as its label rewardsmith.sandbox.version says (sandbox/image/build_offline.sh's
# image_version; ensure_docker.sh rebuilds an older image).
IMAGE_VERSION = 2
# Where the sandbox finds the third-party scorers of sandbox/image/scorers.txt (in the image; on this
# machine for the local backend, installed by sandbox/image/install_scorers.sh).
SCORER_SITE = "/opt/rewardsmith/scorers"


class Backend(Protocol):
    name: str

    def run(self, job: Job) -> ExecResult: ...

    def python(self) -> str:
        """The interpreter a job runs for a third-party scorer (see :data:`SCORER_SITE`)."""
        ...

    def run_batch(self, jobs: Sequence[Job]) -> list[ExecResult]: ...

    def close(self) -> None: ...


class ConcurrentBatches(ABC):
    """``run_batch`` for a backend whose ``run`` is thread-safe and bounded by ``concurrency``."""

    concurrency: int

    @abstractmethod
    def run(self, job: Job) -> ExecResult: ...

    def run_batch(self, jobs: Sequence[Job]) -> list[ExecResult]:
        if len(jobs) <= 1:
            return [self.run(job) for job in jobs]
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(jobs))) as executor:
            return list(executor.map(self.run, jobs))


_backends: dict[str, Backend] = {}
_lock = threading.Lock()
_warned = False


def image_name() -> str:
    return os.environ.get("REWARDSMITH_SANDBOX_IMAGE", DEFAULT_IMAGE)


def docker_available(image: str | None = None) -> str | None:
    """None when Docker can run our image, else a sentence saying what is missing."""
    try:
        import docker
    except ImportError:
        return "the docker SDK is not installed (pip install 'rewardsmith[sandbox]')"
    try:
        client = docker.from_env(timeout=5)
        client.ping()
    except Exception as exc:  # the SDK raises DockerException, requests errors, FileNotFoundError…
        return f"no Docker engine answers ({type(exc).__name__}); start one or run sandbox/image/ensure_docker.sh"
    try:
        client.images.get(image or image_name())
    except Exception:
        return f"image {image or image_name()!r} is missing; build it with sandbox/image/build_offline.sh"
    finally:
        client.close()
    return None


def get_backend(kind: str = "auto", concurrency: int | None = None) -> Backend:
    """The shared backend of a kind (``auto``, ``docker``, ``local``), started on first use."""
    global _warned
    if kind == "auto":
        kind = os.environ.get("REWARDSMITH_SANDBOX", "auto")
    with _lock:
        if kind == "auto":
            if "docker" in _backends:
                return _backends["docker"]
            problem = docker_available()
            if problem is None:
                kind = "docker"
            else:
                kind = "local"
                if not _warned:
                    warnings.warn(f"sandbox: using the local backend (weaker isolation): {problem}", stacklevel=2)
                    _warned = True
        if kind not in _backends:
            _backends[kind] = _make(kind, concurrency)
        return _backends[kind]


def _make(kind: str, concurrency: int | None) -> Backend:
    if kind == "local":
        from rewardsmith.sandbox.local import LocalBackend

        return LocalBackend(concurrency=concurrency)
    if kind == "docker":
        from rewardsmith.sandbox.docker_pool import DockerBackend

        return DockerBackend(concurrency=concurrency)
    raise ValueError(f"unknown sandbox backend {kind!r}; choose auto, docker or local")


def run(
    files: Mapping[str, str | bytes] | None = None,
    command: Sequence[str] = ("python3", "main.py"),
    stdin: str | bytes = b"",
    limits: Limits | None = None,
    backend: str = "auto",
) -> ExecResult:
    """Write ``files`` into a fresh work directory, run ``command`` there, return the result."""
    job = Job(command=list(command), files=dict(files or {}), stdin=stdin, limits=limits or Limits())
    return get_backend(backend).run(job)


def run_batch(jobs: Sequence[Job], backend: str = "auto") -> list[ExecResult]:
    return get_backend(backend).run_batch(jobs)


@atexit.register
def _close_all() -> None:
    for backend in list(_backends.values()):
        backend.close()
    _backends.clear()
