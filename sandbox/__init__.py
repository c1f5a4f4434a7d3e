"""rewardsmith.sandbox: run untrusted programs with limits, in Docker or locally.

``run(files, command, stdin, limits)`` is the whole surface most callers need; it
uses the process-wide default backend (``auto``: Docker when an engine answers and
the image is present, else local with a one-time warning).

The names below are imported on first use: every layer imports
``rewardsmith.sandbox.errors`` (the base of rewardsmith's errors), and that must not load
the backends for a math reward that never runs a sandbox.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rewardsmith.sandbox.backend import Backend, get_backend, run, run_batch
    from rewardsmith.sandbox.job import ExecResult, ExecStatus, Job, Peer
    from rewardsmith.sandbox.limits import Limits

__all__ = ["Backend", "ExecResult", "ExecStatus", "Job", "Limits", "Peer", "get_backend", "run", "run_batch"]

_HOMES = {"Backend": "backend", "get_backend": "backend", "run": "backend", "run_batch": "backend",
          "ExecResult": "job", "ExecStatus": "job", "Job": "job", "Peer": "job", "Limits": "limits"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
