"""rewardsmith.sandbox: run untrusted programs with limits, in Docker or locally.

``run(files, command, stdin, limits)`` is the whole surface most callers need; it
uses the process-wide default backend (``auto``: Docker when an engine answers and
the image is present, else local with a one-time warning).
"""

from rewardsmith.sandbox.backend import Backend, get_backend, run, run_batch
from rewardsmith.sandbox.job import ExecResult, ExecStatus, Job, Peer
from rewardsmith.sandbox.limits import Limits

__all__ = ["Backend", "ExecResult", "ExecStatus", "Job", "Limits", "Peer", "get_backend", "run", "run_batch"]
