"""A sandboxed job and what came of it: the request and result types every backend shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.sandbox.limits import Limits

ExecStatus = Literal["ok", "timeout", "memory", "output_limit", "error"]


@dataclass
class ExecResult:
    """The outcome of one job. ``status`` is about the sandbox's verdict on the run
    (``ok`` means it ran to completion within the limits, whatever its exit code);
    ``error`` means the sandbox itself failed and says nothing about the program."""

    status: ExecStatus
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    error: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.exit_code == 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExecResult:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass
class Peer:
    """The trusted side of a paired job: the judge that decides pass or fail.

    It runs as a different user from the candidate, in its own private directory (its
    ``files`` are never readable by the candidate), started after the candidate. The two
    processes share exactly one channel: an AF_UNIX stream socket on file descriptor 3 in
    each. The judge's stdout, stderr and exit code are the job's; the candidate's are in
    ``ExecResult.details["candidate"]``. The job ends when the judge exits (the candidate's
    processes are then killed) or at the job's wall-clock limit.

    The candidate's output in the result is what it had written to its pipes when the job ended:
    what a killed program still held in its own buffers (Python's ``print`` to a pipe, before the
    exit flush) is lost with it, however soon after its last message the judge exits. So a judge
    that reports on the candidate's output waits for it first: end-of-file on fd 3 comes once
    every process holding the candidate's end has closed it, at the latest at its exit (Python
    flushes its streams before it closes its sockets), and whatever the candidate wrote before is
    then in the result. Its exit code is its own when it had exited by the end of the job, else
    that of the kill. Only the judge decides: no grace period, however long, would hold on a
    machine starved of CPU.
    """

    command: list[str]
    files: dict[str, str | bytes] = field(default_factory=dict)
    stdin: str | bytes = b""
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class Job:
    """One program run: ``files`` (relative path → text or bytes) written into a fresh work
    directory, then ``command`` run there with ``stdin``. With a ``judge``, ``command`` is the
    candidate's side of a paired job (see :class:`Peer`)."""

    command: list[str]
    files: dict[str, str | bytes] = field(default_factory=dict)
    stdin: str | bytes = b""
    limits: Limits = field(default_factory=Limits)
    env: dict[str, str] = field(default_factory=dict)
    judge: Peer | None = None
    # Third-party packages the job's Python imports (a sandboxed scorer's, see SCORER_SITE): Docker runs
    # the job in a container whose template imported them already (only the start-up time changes);
    # the local backend shows the job the Python installations that hold them, read-only. Other jobs
    # see neither.
    packages: tuple[str, ...] = ()

    def to_wire(self) -> dict[str, Any]:
        """The JSON-able form the runner reads (bytes travel base64-encoded)."""
        import base64

        def enc(value: str | bytes) -> dict[str, str]:
            if isinstance(value, bytes):
                return {"b64": base64.b64encode(value).decode("ascii")}
            return {"text": value}

        def side(run: Job | Peer) -> dict[str, Any]:
            return {"command": list(run.command), "files": {path: enc(content) for path, content in run.files.items()},
                    "stdin": enc(run.stdin), "env": dict(run.env)}

        wire = {**side(self), "limits": self.limits.as_dict()}
        if self.judge is not None:
            wire["judge"] = side(self.judge)
        return wire
