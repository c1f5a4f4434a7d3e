"""Picklable tasks for the worker-pool tests (workers import this module by name)."""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rewardsmith.verifiers.math import GradeTask


@dataclass(frozen=True)
class Behave:
    """Item ("square", n) → n*n; ("len", x) → len(x); ("sleep", s) sleeps; ("crash", code) exits;
    ("raise", msg) raises; ("pid",) → pid.

    Worker-killing and memory items: ("kill",) SIGKILLs its own worker; ("kill_once", path) does so
    only when ``path`` does not exist yet (creating it first), else → "survived"; ("alloc", mib)
    allocates that much; ("catch_alloc", mib) does too but catches the MemoryError → "caught";
    ("rlimit",) → the worker's RLIMIT_AS; ("imported", module) → whether it is in sys.modules.
    """

    def __call__(self, item):
        kind, *args = item
        if kind == "square":
            return args[0] * args[0]
        if kind == "len":
            return len(args[0])
        if kind == "sleep":
            time.sleep(args[0])
            return "slept"
        if kind == "crash":
            os._exit(args[0])
        if kind == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if kind == "kill_once":
            marker = Path(args[0])
            if not marker.exists():
                marker.touch()
                os.kill(os.getpid(), signal.SIGKILL)
            return "survived"
        if kind == "alloc":
            return len(bytearray(args[0] * 1024 * 1024))
        if kind == "catch_alloc":
            try:
                return len(bytearray(args[0] * 1024 * 1024))
            except MemoryError:
                return "caught"
        if kind == "rlimit":
            import resource

            return resource.getrlimit(resource.RLIMIT_AS)
        if kind == "imported":
            return args[0] in sys.modules
        if kind == "raise":
            raise ValueError(args[0])
        if kind == "pid":
            return os.getpid()
        if kind == "spin":  # C-level busy work that signals cannot interrupt
            return pow(5, 5**30)
        raise KeyError(kind)


class SlowImport(Behave):
    """Unpickling takes a second, as importing sympy does on a cold worker."""

    def __reduce__(self):
        return (_slow_load, ())


def _slow_load():
    time.sleep(1.0)
    return SlowImport()


class Unloadable(Behave):
    """Unpickling fails in the worker, as a task whose module is missing there would."""

    def __reduce__(self):
        return (_failed_load, ())


def _failed_load():
    raise ImportError("no module named 'only_in_the_parent'")


class DiesOnLoad(Behave):
    """The worker process dies while unpickling the task (a broken extension, say): no item's fault."""

    def __reduce__(self):
        return (os._exit, (7,))


class Preloading(Behave):
    """Names a module its workers should import at start-up."""

    preload = ("xml.dom.minidom",)


class KillsOnMarker(GradeTask):
    """The math task, except that a gold or completion containing ``KILL-WORKER`` kills its worker,
    as a completion that segfaults sympy or exhausts the machine's memory would."""

    def __call__(self, item):
        if any("KILL-WORKER" in text for text in item[:2]):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().__call__(item)
