"""Picklable tasks for the worker-pool tests (workers import this module by name)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Behave:
    """Item ("square", n) → n*n; ("sleep", s) sleeps; ("crash", code) exits; ("raise", msg) raises; ("pid",) → pid."""

    def __call__(self, item):
        kind, *args = item
        if kind == "square":
            return args[0] * args[0]
        if kind == "sleep":
            time.sleep(args[0])
            return "slept"
        if kind == "crash":
            os._exit(args[0])
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
