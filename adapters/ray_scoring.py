"""``rewardsmith score`` on a Ray cluster: the same job as adapters/scoring.py, scaled out.

Why plain actors and not ``ray.data.read_json``: Ray Data's readers fail on a malformed
line and drop line numbers and order, and the output contract (line k of OUTPUT belongs
to input row k, malformed lines written through, resume by prefix) lives on the driver
anyway. So the driver reads rows with adapters/rows.py, ships batches to actors that
each build the verifier once from the spec and return only verdicts, and writes the
batches in input order with the local job's own ``write_batch``. Output files are
identical to the local backend's (only ``elapsed_s`` differs), and resuming works the
same way. The input only has to be readable on the driver; workers never touch files.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections import deque
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from rewardsmith.adapters.rows import Row, count_rows
from rewardsmith.adapters.scoring import Summary, _batched, _progress, resume_rows, verify_rows, write_batch
from rewardsmith.verifiers import Verdict, Verifier, build
from rewardsmith.verifiers.registry import load_spec_file, looks_like_file

Spec = str | Path | Mapping[str, Any] | Verifier

# Batches each actor may have queued or running: one working, one waiting, so no actor
# idles between batches while the driver writes.
IN_FLIGHT_PER_ACTOR = 2


class ScoringActor:
    """Builds the verifier once per actor (pools and caches stay warm) and scores batches."""

    def __init__(self, spec: Any, pool_workers: int | None) -> None:
        from rewardsmith.verifiers.pool import set_default_workers

        # Pool-backed verifiers (math) would otherwise start one process per core of the
        # node in every actor; each actor gets the CPUs it reserved.
        set_default_workers(pool_workers)
        self.verifier = build(spec)

    def score(self, batch: list[Row]) -> list[Verdict | None]:
        return verify_rows(self.verifier, batch)


def shippable_spec(spec: Spec) -> Any:
    """What actors build from: a spec file is read here, on the driver, and its content
    shipped (workers may not see the driver's files); names and dicts go as they are.
    Building it once here also fails fast on a bad spec, before any Ray work starts."""
    if isinstance(spec, Path) or (isinstance(spec, str) and looks_like_file(spec)):
        spec = load_spec_file(Path(spec))
    if isinstance(spec, Mapping):
        spec = dict(spec)
    build(spec)
    return spec


def score_file_ray(
    input_path: Path,
    output_path: Path,
    spec: Spec,
    batch_size: int = 256,
    num_actors: int | None = None,
    address: str | None = None,
    progress: bool = True,
    overwrite: bool = False,
    cpus_per_actor: int = 1,
    log: IO[str] | None = None,
) -> Summary:
    """Score ``input_path`` into ``output_path`` on Ray; same output and resume as ``score_file``.

    ``address``: None starts a local Ray instance (or uses the one this process already
    has); ``"auto"`` or ``"ray://host:10001"`` joins a cluster. ``num_actors``: default as
    many as the cluster's CPUs allow (``cpus_per_actor`` each), at most one per batch.
    ``cpus_per_actor``: CPUs each actor reserves, and the size of its verifier worker pool.
    """
    ray = _import_ray()
    log = log or sys.stderr
    input_path, output_path = Path(input_path), Path(output_path)
    if batch_size < 1 or cpus_per_actor < 1 or (num_actors is not None and num_actors < 1):
        raise ValueError("batch_size, cpus_per_actor and num_actors must be at least 1")
    shipped = shippable_spec(spec)
    started_here = _connect(ray, address, num_actors, cpus_per_actor)  # before --overwrite deletes anything
    actors: list[Any] = []
    bar = None
    try:
        summary = Summary()
        rows = resume_rows(input_path, output_path, summary, overwrite)
        total = count_rows(input_path)
        batches_left = math.ceil(max(0, total - summary.resumed) / batch_size)
        bar = _progress(total, summary.resumed, progress)
        start = time.perf_counter()
        with output_path.open("a", encoding="utf-8") as out:
            if batches_left:
                n = num_actors or max(1, int(ray.cluster_resources().get("CPU", 1) // cpus_per_actor))
                remote = ray.remote(ScoringActor).options(
                    num_cpus=cpus_per_actor, max_restarts=3, max_task_retries=3
                )
                # The spec goes by value, not ray.put: a restarted actor must still find it.
                actors = [remote.remote(shipped, cpus_per_actor) for _ in range(min(n, batches_left))]
                try:
                    for batch, verdicts in _ordered_results(ray, actors, _batched(rows, batch_size)):
                        write_batch(out, batch, verdicts, summary, log, bar)
                except ray.exceptions.RayError as exc:  # an actor died for good (OOM, missing extra)
                    raise RuntimeError(
                        f"scoring on Ray failed after {summary.rows} rows: {exc}; the rows written to "
                        f"{output_path} are kept, rerun the same command to resume"
                    ) from exc
        summary.seconds = time.perf_counter() - start
    finally:
        if bar is not None:
            bar.close()
        for actor in actors:
            ray.kill(actor)
        if started_here:
            ray.shutdown()
    return summary


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
