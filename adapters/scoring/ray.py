"""``rewardsmith score`` on a Ray cluster: the same job as adapters/scoring/job.py, scaled out.

Why plain actors and not ``ray.data.read_json``: Ray Data's readers fail on a malformed
line and drop line numbers and order, and the output contract (line k of OUTPUT belongs
to input row k, malformed lines written through, resume by prefix) lives on the driver
anyway. So the driver reads rows with adapters/scoring/rows.py, ships batches to actors that
each build the verifier once from the spec and return only verdicts, and the local job's
own ``run_job`` does everything else: input formats, ``--field`` mapping, the provenance
check before a resume, output formats, ``--retry-errors``, Ctrl-C. Output files are
identical to the local backend's (only ``elapsed_s`` differs), and resuming works the
same way. The input only has to be readable on the driver; workers never touch files.
"""

from __future__ import annotations

import math
import os
from collections import deque
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from rewardsmith.adapters.scoring.job import (
    Batches,
    Job,
    Scorer,
    Summary,
    describe_spec,
    run_job,
    spec_value,
    verify_rows,
)
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers import Verdict, Verifier, build
from rewardsmith.verifiers.judge.backends import BackendError

Spec = str | Path | Mapping[str, Any] | Verifier

# Batches each actor may have queued or running: one working, one waiting, so no actor
# idles between batches while the driver writes.
IN_FLIGHT_PER_ACTOR = 2


class ScoringActor:
    """Builds the verifier once per actor (pools and caches stay warm) and scores batches."""

    def __init__(self, spec: Any, pool_workers: int | None, fields: dict[str, str] | None = None) -> None:
        from rewardsmith.verifiers.pool import set_default_workers

        # Pool-backed verifiers (math) would otherwise start one process per core of the
        # node in every actor; each actor gets the CPUs it reserved.
        set_default_workers(pool_workers)
        self.verifier = build(spec)
        self.fields = fields

    def score(self, batch: list[Row]) -> list[Verdict | None]:
        return verify_rows(self.verifier, batch, self.fields)


def shippable_spec(spec: Spec) -> Any:
    """What actors build from: a spec file is read here, on the driver, and its content
    shipped (workers may not see the driver's files); names and dicts go as they are.
    Building it once here also fails fast on a bad spec, before any Ray work starts."""
    value = spec_value(spec)
    build(value)
    return value


def score_file_ray(
    input_path: str | Path,
    output_path: str | Path,
    spec: Spec,
    batch_size: int = 256,
    num_actors: int | None = None,
    address: str | None = None,
    progress: bool = True,
    overwrite: bool = False,
    cpus_per_actor: int = 1,
    *,
    fields: Mapping[str, str] | None = None,
    split: str | None = None,
    limit: int | None = None,
    retry_errors: bool = False,
    reward_name: str | None = None,
) -> Summary:
    """Score ``input_path`` into ``output_path`` on Ray; same output, resume and checks as ``score_file``.

    ``address``: None starts a local Ray instance (or uses the one this process already
    has); ``"auto"`` or ``"ray://host:10001"`` joins a cluster. ``num_actors``: default as
    many as the cluster's CPUs allow (``cpus_per_actor`` each), at most one per batch.
    ``cpus_per_actor``: CPUs each actor reserves, and the size of its verifier worker pool.
    """
    ray = _import_ray()
    if batch_size < 1 or cpus_per_actor < 1 or (num_actors is not None and num_actors < 1):
        raise ValueError("batch_size, cpus_per_actor and num_actors must be at least 1")
    shipped = shippable_spec(spec)
    job = Job(input_path, output_path, shipped, reward_name or describe_spec(spec), dict(fields or {}), split, limit,
              batch_size, overwrite, retry_errors, progress)
    started_here = _connect(ray, address, num_actors, cpus_per_actor)  # before --overwrite deletes anything
    try:
        return run_job(job, ray_scorer(ray, shipped, job, num_actors, cpus_per_actor))
    finally:
        if started_here:
            ray.shutdown()


def ray_scorer(ray: Any, spec: Any, job: Job, num_actors: int | None, cpus_per_actor: int) -> Scorer:
    """Batches scored on actors that each build ``spec`` once; verdicts come back in input order."""

    def score(batches: Batches, rows: int | None) -> Iterator[tuple[list[Row], list[Verdict | None]]]:
        first = next(batches, None)
        if first is None:
            return
        n = num_actors or max(1, int(ray.cluster_resources().get("CPU", 1) // cpus_per_actor))
        if rows is not None:
            n = min(n, max(1, math.ceil(rows / job.batch_size)))
        remote = ray.remote(ScoringActor).options(num_cpus=cpus_per_actor, max_restarts=3, max_task_retries=3)
        # The spec goes by value, not ray.put: a restarted actor must still find it.
        actors = [remote.remote(spec, cpus_per_actor, dict(job.fields)) for _ in range(n)]
        try:
            yield from _ordered_results(ray, actors, _chain(first, batches))
        except ray.exceptions.RayError as exc:  # an actor died for good (OOM, missing extra)
            raise BackendError(f"scoring on Ray failed: {exc}") from exc
        finally:
            for actor in actors:
                ray.kill(actor)

    return score


def _chain(first: list[Row], rest: Batches) -> Batches:
    yield first
    yield from rest


def _ordered_results(ray: Any, actors: list[Any], batches: Iterator[list[Row]]
                     ) -> Iterator[tuple[list[Row], list[Verdict | None]]]:
    """Each batch with its verdicts, in input order, keeping every actor busy.

    A batch goes to the actor with the fewest unfinished batches; at most
    ``IN_FLIGHT_PER_ACTOR`` per actor are outstanding (finished but unwritten included),
    so driver memory stays bounded even behind one slow batch.
    """
    pending: deque[tuple[list[Row], Any]] = deque()  # submission (= input) order
    owner: dict[Any, int] = {}  # unfinished ref -> actor index
    load = [0] * len(actors)
    window = IN_FLIGHT_PER_ACTOR * len(actors)
    exhausted = False
    while True:
        while not exhausted and len(pending) < window:
            batch = next(batches, None)
            if batch is None:
                exhausted = True
                break
            index = min(range(len(actors)), key=load.__getitem__)
            ref = actors[index].score.remote(batch)
            owner[ref] = index
            load[index] += 1
            pending.append((batch, ref))
        if not pending:
            return
        # Learn which actors freed up (so new batches go to idle ones), then hand out the
        # finished prefix; ray.get on the oldest re-raises an actor's failure.
        done, _ = ray.wait(list(owner), num_returns=1)
        for ref in done:
            load[owner.pop(ref)] -= 1
        while pending and pending[0][1] not in owner:
            batch, ref = pending.popleft()
            yield batch, ray.get(ref)


def _connect(ray: Any, address: str | None, num_actors: int | None, cpus_per_actor: int) -> bool:
    """Join or start Ray; True when this call started it (and must shut it down)."""
    if ray.is_initialized():
        return False
    try:
        if address is None:
            cpus = max(os.cpu_count() or 1, (num_actors or 1) * cpus_per_actor)
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    except (ConnectionError, ValueError) as exc:  # no cluster at that address, or a bad address
        raise RuntimeError(f"cannot start or join Ray (address={address!r}): {exc}") from exc
    return True


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("the ray backend needs Ray: pip install 'rewardsmith[ray]'") from exc
    return ray
