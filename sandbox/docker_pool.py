"""The Docker backend: a pool of warm, locked-down containers, each with a resident runner.

A job costs one round trip over the container's attached stdin/stdout (no container
start, no ``docker exec``): the runner (sandbox/runner.py, handed to ``python3 -c``
so the image stays generic) is the container's PID 1 and starts fresh children per
job. A container that misbehaves (its runner stops answering, a process or a SysV IPC
object survives a job, files are left behind, it dies) is replaced. ``strict`` mode
uses one fresh container per job. Containers are removed on close, and are started
with auto-remove so a killed parent leaves none behind (the runner exits on stdin EOF).

What every container guarantees:

* no network, read-only root, tmpfs /work and /tmp (the candidate's, mode 0700),
  /judge (the judge's, mode 0700) and /shared (a paired job's shared directory, the
  judge's, mode 0711: ``REWARDSMITH_SHARED_DIR`` on both sides), each capped in size and
  inodes and emptied after every job; pids, memory and CPU limits;
  no-new-privileges; no log on the host (log driver ``none``: a job's output reaches the host
  only as its result, never the engine's log files); a private IPC namespace with ``kernel.shm_rmid_forced=1``, and the
  runner removes any message queue or semaphore set a job left (the container is then
  replaced).
* uids: the runner is root with every capability dropped except SETUID and SETGID;
  jobs run as the container's candidate uid, drawn at random from ``UID_RANGE`` (so
  RLIMIT_NPROC, counted per uid across the machine, is the container's own); a paired
  job's judge runs as a second random uid. Jobs hold no capability, so a candidate
  cannot signal, trace or read /proc/<pid>/{mem,environ,fd} of the runner, its
  template, or the judge; PID 1 also ignores every signal it has no handler for.
* Python jobs are forked from a template forked before the container's first job, so
  no job's memory holds an earlier job's files, stdin or judge data.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import secrets
import socket
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rewardsmith.sandbox.backend import SCORER_SITE, ConcurrentBatches, image_name
from rewardsmith.sandbox.errors import RewardsmithError
from rewardsmith.sandbox.job import ExecResult, Job
from rewardsmith.sandbox.runner import HEADER, POST_JOB_S, PRELOAD_HOME

RUNNER_SOURCE = Path(__file__).with_name("runner.py").read_text()
# Each container runs as its own unprivileged uid: RLIMIT_NPROC counts processes per uid
# across the whole machine, so with one shared uid a fork bomb in one container would make
# fork() fail in the jobs of every other container. (10001 is the image's named user.)
UID_RANGE = range(20000, 60000)
CAPABILITIES = ("SETUID", "SETGID")  # the runner's, and only the runner's (see _Container)
LABEL = "rewardsmith.sandbox"
# Beyond a job's wall limit, how long we wait for the runner itself: its own bound on the work after a
# job (POST_JOB_S), and room for its scans and the answer's transfer on a starved machine.
_GRACE_S = POST_JOB_S + 5.0
_MUX = struct.Struct(">BxxxL")  # docker's stdout/stderr multiplexing header
LOG_DRIVER = "none"  # the engine keeps no log of a container: what it says is the runner's protocol
STDERR_KEPT = 64 << 10  # bytes of the runner's own stderr kept for error messages


class SandboxUnavailable(RewardsmithError, RuntimeError):
    """Docker cannot run sandboxes here; the message says what to do."""


class _Container:
    """One running container and the attached socket to its runner."""

    def __init__(self, client: Any, image: str, memory_mb: int, pids: int, cpus: float,
                 preload: tuple[str, ...] = ()) -> None:
        api = client.api
        self.preload = preload
        self.uid = uid = secrets.choice(UID_RANGE)
        judge = uid
        while judge == uid:  # the judge's own uid: the candidate cannot signal, trace or read it
            judge = secrets.choice(UID_RANGE)
        self.judge_uid = judge
        host_config = api.create_host_config(
            network_mode="none",
            read_only=True,
            tmpfs={
                # An inode cap besides the size cap: a flood of empty directories takes no space.
                "/work": f"rw,exec,nosuid,nodev,size=256m,nr_inodes=65536,uid={uid},gid={uid},mode=0700",
                "/tmp": f"rw,exec,nosuid,nodev,size=64m,nr_inodes=16384,uid={uid},gid={uid},mode=0700",
                "/judge": f"rw,exec,nosuid,nodev,size=64m,nr_inodes=16384,uid={judge},gid={judge},mode=0700",
                # A paired job's shared directory: the judge's; the candidate may traverse it only.
                "/shared": f"rw,exec,nosuid,nodev,size=64m,nr_inodes=16384,uid={judge},gid={judge},mode=0711",
                # The template's own (root's, 0700): what preloaded libraries write at import. No job reads it.
                **({PRELOAD_HOME: "rw,noexec,nosuid,nodev,size=32m,nr_inodes=4096,uid=0,gid=0,mode=0700"}
                   if preload else {}),
            },
            # The runner is root with only what dropping to a job's uid takes: SETUID and SETGID
            # (setuid/setgid/setgroups([]) in each job process; seteuid/setresuid in the runner,
            # which reaches a job's files, processes and IPC objects as their owner instead of
            # holding DAC_OVERRIDE, FOWNER, CHOWN or KILL). Jobs drop both: they hold none.
            cap_drop=["ALL"],
            cap_add=list(CAPABILITIES),
            security_opt=["no-new-privileges"],
            # A SysV shared memory segment dies with its last user, not with the namespace:
            # the runner removes message queues and semaphore sets itself after each job.
            sysctls={"kernel.shm_rmid_forced": "1"},
            pids_limit=pids,
            mem_limit=f"{memory_mb}m",
            memswap_limit=f"{memory_mb}m",
            nano_cpus=int(cpus * 1e9),
            auto_remove=True,
            ipc_mode="none",
            # Every job's result crosses the container's stdout (the attached socket, which works
            # with any log driver): the default json-file driver would also write each one to the
            # host's disk, for the life of a pooled container. The runner's stderr is kept in memory.
            log_config={"type": LOG_DRIVER, "config": {}},
        )
        created = api.create_container(
            image,
            command=["python3", "-I", "-c", RUNNER_SOURCE, "/work", "--kill-all", "--fork-python", "--scratch", "/tmp",
                     "--run-as", str(uid), "--judge-as", str(judge), "--judge-dir", "/judge",
                     "--shared-dir", "/shared",
                     "--max-procs", str(pids),
                     *[arg for module in preload for arg in ("--preload", module)],
                     *(["--preload-path", SCORER_SITE] if preload else [])],
            user="0:0",
            working_dir="/work",
            stdin_open=True,
            tty=False,
            network_disabled=True,
            labels={LABEL: "1", f"{LABEL}.owner": str(os.getpid())},
            host_config=host_config,
        )
        self.id: str = created["Id"]
        self.api = api
        self.buffer = bytearray()
        self.stderr = bytearray()
        try:
            response = api.attach_socket(self.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
            self.sock: socket.socket = getattr(response, "_sock", response)
            api.start(self.id)
            hello = self._read_frame(deadline=time.monotonic() + 30)
            self.hello = hello or {}
        except Exception:
            self.close()
            raise
        if not hello or not hello.get("ready"):
            self.close()
            raise SandboxUnavailable(f"sandbox runner did not start: {bytes(self.stderr[-500:])!r}")

    def run(self, job: Job) -> ExecResult:
        data = json.dumps(job.to_wire()).encode("utf-8")
        self.sock.sendall(HEADER.pack(len(data)) + data)
        answer = self._read_frame(deadline=time.monotonic() + job.limits.wall_s + _GRACE_S)
        if answer is None:
            raise ConnectionError(f"sandbox runner stopped answering (stderr: {bytes(self.stderr[-300:])!r})")
        return ExecResult.from_dict(answer)

    def _read_frame(self, deadline: float) -> dict | None:
        while True:
            if len(self.buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self.buffer)
                if len(self.buffer) >= HEADER.size + size:
                    payload = bytes(self.buffer[HEADER.size : HEADER.size + size])
                    del self.buffer[: HEADER.size + size]
                    return json.loads(payload)
            stream, chunk = self._read_mux(deadline)
            if chunk is None:
                return None
            if stream == 1:
                self.buffer.extend(chunk)
            else:  # only the tail is ever shown: keep the host's memory bounded
                self.stderr.extend(chunk)
                del self.stderr[:-STDERR_KEPT]

    def _read_mux(self, deadline: float) -> tuple[int, bytes | None]:
        header = self._recv_exact(_MUX.size, deadline)
        if header is None:
            return 0, None
        stream, size = _MUX.unpack(header)
        return stream, self._recv_exact(size, deadline)

    def _recv_exact(self, size: int, deadline: float) -> bytes | None:
        parts, remaining = [], size
        while remaining:
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                return None
            self.sock.settimeout(timeout)
            try:
                chunk = self.sock.recv(remaining)
            except (TimeoutError, OSError):
                return None
            if not chunk:
                return None
            parts.append(chunk)
            remaining -= len(chunk)
        return b"".join(parts)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.sock.close()
        with contextlib.suppress(Exception):  # already gone (auto-remove) is fine
            self.api.remove_container(self.id, force=True)


class DockerBackend(ConcurrentBatches):
    """Warm container pool; ``run`` is thread-safe, ``run_batch`` fills the pool."""

    name = "docker"

    def __init__(
        self,
        concurrency: int | None = None,
        image: str | None = None,
        strict: bool = False,
        memory_mb: int = 1024,
        pids: int = 128,
        cpus: float = 1.0,
    ) -> None:
        try:
            import docker
        except ImportError as exc:
            raise SandboxUnavailable("the docker SDK is missing: pip install 'rewardsmith[sandbox]'") from exc
        try:
            self.client = docker.from_env(timeout=60)
            self.client.ping()
        except Exception as exc:
            raise SandboxUnavailable(
                f"no Docker engine answers ({exc}); run sandbox/image/ensure_docker.sh or use the local backend"
            ) from exc
        self.image = image or image_name()
        self.concurrency = max(1, concurrency or max(2, os.cpu_count() or 1))
        self.strict = strict
        self.memory_mb, self.pids, self.cpus = memory_mb, pids, cpus
        # Idle containers by what their template imported (a job's ``packages``; most jobs: nothing).
        self._idle: dict[tuple[str, ...], queue.LifoQueue[_Container]] = {}
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self._live: set[_Container] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.replaced = 0

    def python(self) -> str:
        """The image's python3 (the scorers of sandbox/image/scorers.txt are in its SCORER_SITE)."""
        return "python3"

    def warm(self, n: int | None = None) -> DockerBackend:
        """Start ``n`` containers now (default: the concurrency), in parallel."""
        n = self.concurrency if n is None else n
        with ThreadPoolExecutor(max_workers=max(1, n)) as executor:
            for container in executor.map(lambda _: self._start(()), range(n)):
                self._pool(()).put(container)
        return self

    def _pool(self, preload: tuple[str, ...]) -> queue.LifoQueue[_Container]:
        with self._lock:
            return self._idle.setdefault(preload, queue.LifoQueue())

    def run(self, job: Job) -> ExecResult:
        with self._slots:
            start = time.monotonic()
            try:
                container = self._checkout(tuple(job.packages))
            except Exception as exc:
                return ExecResult("error", error=f"cannot start a sandbox container: {exc}")
            try:
                result = container.run(job)
            except Exception as exc:
                self._retire(container)
                result = ExecResult("error", error=f"sandbox container failed: {exc}; it was replaced")
            else:
                if self.strict or not result.details.get("clean", False) or result.status == "error":
                    self._retire(container)
                else:
                    self._pool(container.preload).put(container)
            result.details["backend"] = "docker"
            result.details["roundtrip_s"] = time.monotonic() - start
            return result

    def _checkout(self, preload: tuple[str, ...]) -> _Container:
        if self._closed:
            raise RuntimeError("docker sandbox backend is closed")
        if not self.strict:
            with contextlib.suppress(queue.Empty):
                return self._pool(preload).get_nowait()
        return self._start(preload)

    def _start(self, preload: tuple[str, ...]) -> _Container:
        container = _Container(self.client, self.image, self.memory_mb, self.pids, self.cpus, preload)
        with self._lock:
            self._live.add(container)
        return container

    def _retire(self, container: _Container) -> None:
        container.close()
        with self._lock:
            self._live.discard(container)
            self.replaced += 1

    def container_ids(self) -> list[str]:
        with self._lock:
            return [c.id for c in self._live]

    def close(self) -> None:
        self._closed = True
        with self._lock:
            live, self._live = list(self._live), set()
        for container in live:
            container.close()
        with contextlib.suppress(Exception):
            self.client.close()

    def __enter__(self) -> DockerBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
