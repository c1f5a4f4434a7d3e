"""Third-party scorers run in the sandbox: no answer text is evaluated on the scoring host.

A third-party scorer (reasoning-gym's ``score_answer``, a plugin's) is code we did not write that
receives the completion's text, and some hand it to ``eval`` or sympy's ``parse_expr``. So it never
runs in a process of ours: :func:`score_isolated` sends a batch to the sandbox (Docker, or local
bubblewrap; :mod:`rewardsmith.sandbox`) as a few jobs of :mod:`.sandboxed.scorer`, which builds
each scorer once per job and scores every answer in a fresh process forked from a parent that never
evaluated one, behind the evaluation boundary of :mod:`.sandboxed.guard`. Nothing an answer does
reaches the host's files (the sandbox's filesystem is read-only but for a scratch directory) or
another answer's verdict (its process dies with it; each job is fresh).

An answer that makes its scorer raise, time out or die scores 0 (kinds ``raised``, ``timeout``,
``crash``); a row its scorer cannot read even for its gold is ``bad_row``; the scorer's package
missing in the sandbox is ``missing``, and the sandbox failing is ``error`` — the last two are not
the completion's doing. If a job ends early (its parent killed), the answer it was scoring is
charged with a ``crash`` and the answers after it go to a new job.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KINDS = ("score", "raised", "bad_row", "timeout", "crash", "missing", "error")
IMPORT_ALLOWANCE_S = 120.0  # a job's time to import the scorer's package and build its scorers
_PARENT_MB = 768  # the job's parent (the package imported) besides each child's own allowance
_RETRIES = 3  # new jobs after one ended early without an answer to charge it to
_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class ScoreItem:
    """One answer to score: the scorer ``name`` (built under ``config``), the row's ``entry``."""

    name: str
    answer: str
    entry: dict[str, Any]
    config: dict[str, Any] | None = None
    tuples: tuple[str, ...] = ()  # dotted paths in ``entry`` the scorer compares as tuples (JSON has none)
    marker: str | None = None  # a path the survey's payloads would create (see .sandboxed.scorer)


@dataclass(frozen=True)
class Scored:
    """What one item came to: ``kind`` (one of :data:`KINDS`) and its ``value`` (a float for ``score``,
    else a reason); ``marker`` when the item carried one."""

    kind: str
    value: Any
    marker: bool | None = None


@functools.cache
def scorer_program() -> str:
    """The job's ``-c`` program, built on first use."""
    from rewardsmith.sandbox.program import bootstrap, program_source

    return bootstrap(program_source(Path(__file__).with_name("sandboxed"), "guard.py", "scorer.py"), "<scorer>")


def score_isolated(
    items: Sequence[ScoreItem],
    factory: str,
    backend: Any,
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    guard: bool = True,
    jobs: int | None = None,
) -> list[Scored]:
    """Score ``items`` with the scorers ``factory`` builds, in sandbox jobs of ``backend``."""
    results: list[Scored | None] = [None] * len(items)
    pending = list(range(len(items)))
    retries = 0
    while pending:
        parts = _split(pending, jobs or getattr(backend, "concurrency", 1))
        job_list = [_job(items, part, factory, backend, timeout_s, memory_mb, guard) for part in parts]
        try:
            outcomes = list(backend.run_batch(job_list))
        except Exception as exc:  # the backend itself failed: not the completion's doing
            outcomes = [exc] * len(job_list)
        pending = []
        for part, outcome in zip(parts, outcomes, strict=True):
            left, charged = _read(part, outcome, results)
            pending += left
            if left and not charged:
                retries += 1
        if retries > _RETRIES:
            for i in pending:
                results[i] = Scored("error", "the sandboxed scorer keeps failing before it scores anything")
            break
    return [r if r is not None else Scored("error", "no result (a rewardsmith bug)") for r in results]


def _split(indices: list[int], jobs: int) -> list[list[int]]:
    """At most ``jobs`` contiguous parts (each job pays for the package's import once)."""
    size = max(1, math.ceil(len(indices) / max(1, jobs)))
    return [indices[k : k + size] for k in range(0, len(indices), size)]


def _job(items: Sequence[ScoreItem], part: list[int], factory: str, backend: Any, timeout_s: float,
         memory_mb: int, guard: bool) -> Any:
    from rewardsmith.sandbox import Job, Limits
    from rewardsmith.sandbox.backend import SCORER_SITE

    request = {
        "factory": factory,
        "site": SCORER_SITE,
        "guard": guard,
        "timeout_s": timeout_s,
        "memory_mb": memory_mb,
        "items": [
            {"key": [items[i].name, items[i].config], "answer": items[i].answer, "entry": items[i].entry,
             "tuples": list(items[i].tuples), **({"marker": items[i].marker} if items[i].marker else {})}
            for i in part
        ],
    }
    # Each answer may take timeout_s, and its gold as long again when the answer raised.
    wall = IMPORT_ALLOWANCE_S + len(part) * (2 * timeout_s + 1.0)
    limits = Limits(wall_s=wall, cpu_s=wall, memory_mb=memory_mb + _PARENT_MB,
                    output_bytes=max(1 << 20, 1024 * len(part)))
    python = backend.python() if hasattr(backend, "python") else "python3"
    package = factory.partition(":")[0].split(".")[0]  # what the job imports first
    return Job(command=[python, "-I", "-c", scorer_program()], stdin=json.dumps(request),
               limits=limits, env=dict(_THREADS), packages=(package,))


def _read(part: list[int], outcome: Any, results: list[Scored | None]) -> tuple[list[int], bool]:
    """Record what a job reported; return the indices still to score, and whether the job's early end
    was charged to an answer (it died while scoring one)."""
    if isinstance(outcome, Exception) or outcome.status == "error":
        reason = outcome if isinstance(outcome, Exception) else outcome.error
        for i in part:
            results[i] = Scored("error", f"the sandbox failed: {reason}")
        return [], True
    started: int | None = None
    done: set[int] = set()
    for line in outcome.stdout.splitlines():
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(message, dict):
            continue
        if "missing" in message:
            for i in part:
                results[i] = Scored("missing", f"the sandbox cannot load the scorer: {message['missing']}")
            return [], True
        if isinstance(message.get("start"), int) and 0 <= message["start"] < len(part):
            started = message["start"]
        elif isinstance(message.get("i"), int) and 0 <= message["i"] < len(part):
            k = message["i"]
            results[part[k]] = _scored(message)
            done.add(k)
    left = [part[k] for k in range(len(part)) if k not in done]
    if not left:
        return [], True
    if started is not None and started not in done:  # it died on this answer: the answer's doing
        why = "timeout" if outcome.status == "timeout" else "crash"
        results[part[started]] = Scored(why, f"the scoring job ended while scoring this answer ({outcome.status})")
        return [part[k] for k in range(len(part)) if k not in done and k != started], True
    return left, False


def _scored(message: dict) -> Scored:
    kind, value = message.get("kind"), message.get("value")
    marker = message.get("marker") if isinstance(message.get("marker"), bool) else None
    if kind == "score" and isinstance(value, int | float) and not isinstance(value, bool):
        return Scored("score", float(value), marker)
    if kind in ("raised", "bad_row", "timeout", "crash") and isinstance(value, str):
        return Scored(kind, value, marker)
    return Scored("crash", f"the scorer sent a malformed result: {str(message)[:200]}", marker)
