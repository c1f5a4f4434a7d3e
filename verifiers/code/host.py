"""The host's work on a candidate's output, bounded per row in time and memory.

The sandbox bounds what a candidate's program does; this bounds what the host then does with
what came out of it: parse the judge's records, decode a returned value, compare it with the
expected one, check a program's stdout. That work runs in a killable worker process
(:mod:`rewardsmith.verifiers.pool`), one item per row, under the verifier's ``host_timeout_s``
(wall clock) and ``host_memory_mb`` (the worker's address space). A row that hits a bound
scores 0 with feedback that says which; the other rows of the batch are unaffected, and the
verifier's own process never runs it.

Why a worker rather than a cap in front of each parser: the bound holds whatever the work
turns out to cost (a set of ints that all hash alike, the gcd of two megabit numerators, a
comparison someone adds later), not only for the blow-ups someone thought of. What crosses to
the worker is plain data the sandbox already capped (the results' output is at most
``output_bytes`` per stream); what comes back is the per-test results, or a verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.core import Verdict, error
from rewardsmith.verifiers.pool import Outcome, WorkerPool, shared_pool

PRELOAD = ("rewardsmith.verifiers.code",)  # what every item's function lives in, imported at start
# What the candidate's output can cause in the worker, besides running out of time: a 0, not an error.
RESOURCE_ERRORS = ("MemoryError", "RecursionError")


@dataclass(frozen=True)
class HostWork:
    """A check's request to run ``function(*args)`` on a candidate's output, bounded: the check
    yields it and receives the :class:`~rewardsmith.verifiers.pool.Outcome`. ``function`` is a
    module-level function (it travels by name)."""

    function: Callable[..., Any]
    args: tuple[Any, ...]


def _apply(item: tuple[Callable[..., Any], tuple[Any, ...]]) -> Any:
    function, args = item
    return function(*args)


def pool(memory_mb: int) -> WorkerPool:
    """The process-wide pool that runs host work under ``memory_mb``: one worker (the work is a few
    milliseconds a batch — 164 HumanEval rows take 20 ms — and a second worker's start-up would take
    CPU from the sandbox's first round on a small machine; a row that runs long is killed at its bound)."""
    return shared_pool(1, memory_mb=memory_mb, preload=PRELOAD)


def run(works: Sequence[HostWork], timeout_s: float, memory_mb: int) -> list[Outcome]:
    """Every piece of work at once (one per row), each under its own time limit."""
    if not works:
        return []
    try:
        return pool(memory_mb).map(_apply, [(work.function, work.args) for work in works], timeout_s)
    except Exception as exc:  # the pool itself failed (closed, cannot start workers): not the rows' doing
        return [Outcome("error", f"the host's worker pool failed: {type(exc).__name__}: {exc}") for _ in works]


def warm(memory_mb: int) -> None:
    """Run one trivial item per worker, so that the first real batch pays no start-up."""
    workers = pool(memory_mb).start()
    workers.map(_apply, [(len, ((),))] * workers.size, 60.0)


def failure(outcome: Outcome, timeout_s: float, memory_mb: int) -> Verdict | None:
    """None when the work finished; else the verdict of the row: 0 for what the candidate's output
    caused (the time or memory bound, a worker it killed), ``error`` for a fault of ours."""
    if outcome.kind == "ok":
        return None
    if outcome.kind == "timeout":
        reason, limit = f"took longer than {timeout_s:g}s (host_timeout_s)", "timeout"
    elif outcome.kind == "crash":
        reason, limit = f"killed the worker process twice ({outcome.value})", "crash"
    elif str(outcome.value).split(":", 1)[0] in RESOURCE_ERRORS:
        reason, limit = f"ran out of its {memory_mb} MiB (host_memory_mb) or of stack: {outcome.value}", "memory"
    else:
        return error(f"code verifier failed on the host: {outcome.value}", tests=[])
    return Verdict(
        score=0.0,
        correct=False,
        status="ok",
        details={"tests": [], "host_limit": limit},
        feedback=f"the host's work on this completion's output (parsing, comparing) {reason}: scored 0",
    )
