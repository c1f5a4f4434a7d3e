"""The killable worker pool: hard per-item limits from any thread, and it survives."""

from __future__ import annotations

import os
import threading
import time

import pytest
from pool_tasks import Behave, SlowImport

from rewardsmith.verifiers.pool import WorkerPool

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(workers=2, chunk_size=4) as p:
        yield p


def test_results_come_back_in_order(pool):
    items = [("square", n) for n in range(100)]
    outcomes = pool.map(Behave(), items, timeout_s=10)
    assert [o.kind for o in outcomes] == ["ok"] * 100
    assert [o.value for o in outcomes] == [n * n for n in range(100)]


def test_work_is_spread_over_all_workers(pool):
    pids = {o.value for o in pool.map(Behave(), [("pid",)] * 8, timeout_s=10)}
    assert len(pids) == 2 and os.getpid() not in pids


def test_c_level_hang_times_out_and_the_rest_of_the_chunk_is_scored(pool):
    items = [("square", 2), ("spin",), ("square", 3), ("square", 4), ("square", 5)]
    restarts = pool.restarts
    start = time.monotonic()
    outcomes = pool.map(Behave(), items, timeout_s=1.0)
    elapsed = time.monotonic() - start
    assert [o.kind for o in outcomes] == ["ok", "timeout", "ok", "ok", "ok"]
    assert [o.value for i, o in enumerate(outcomes) if i != 1] == [4, 9, 16, 25]
    assert elapsed < 1.0 + 1.0 + 1.5  # the limit, plus a worker restart, plus slack
    assert pool.restarts == restarts + 1
    assert [o.value for o in pool.map(Behave(), [("square", 6)], timeout_s=5)] == [36]


def test_timeout_works_from_a_non_main_thread(pool):
    box = {}

    def run():
        box["outcomes"] = pool.map(Behave(), [("sleep", 30), ("square", 7)], timeout_s=1.0)

    thread = threading.Thread(target=run)
    start = time.monotonic()
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert time.monotonic() - start < 3.5
    assert [o.kind for o in box["outcomes"]] == ["timeout", "ok"] and box["outcomes"][1].value == 49


def test_a_crashing_worker_is_an_error_not_a_result(pool):
    outcomes = pool.map(Behave(), [("square", 1), ("crash", 3), ("square", 2)], timeout_s=10)
    assert outcomes[1].kind == "error" and "exit code 3" in outcomes[1].value
    assert [outcomes[0].value, outcomes[2].value] == [1, 4]


def test_an_exception_is_reported_per_item(pool):
    outcomes = pool.map(Behave(), [("raise", "bad input"), ("square", 3)], timeout_s=10)
    assert outcomes[0].kind == "error" and "ValueError: bad input" in outcomes[0].value
    assert outcomes[1].value == 9


def test_concurrent_callers_each_get_their_own_results(pool):
    results = {}

    def run(offset):
        results[offset] = [o.value for o in pool.map(Behave(), [("square", offset + n) for n in range(30)], 10)]

    threads = [threading.Thread(target=run, args=(k * 100,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert results == {k * 100: [(k * 100 + n) ** 2 for n in range(30)] for k in range(3)}


def test_close_leaves_no_worker_process():
    p = WorkerPool(workers=2).start()
    procs = [w.proc for w in p._workers]
    assert all(proc.poll() is None for proc in procs)
    p.close()
    assert all(proc.poll() is not None for proc in procs)
    with pytest.raises(RuntimeError, match="closed"):
        p.map(Behave(), [("square", 1)], 1)


def test_worker_start_up_does_not_count_against_the_first_item():
    """A fresh worker imports its task's modules before the item clock starts."""
    with WorkerPool(workers=1) as fresh:
        outcomes = fresh.map(SlowImport(), [("square", 3)], timeout_s=0.5)
    assert outcomes[0].kind == "ok" and outcomes[0].value == 9


def test_workers_outlive_the_thread_that_started_them():
    p = WorkerPool(workers=1)
    thread = threading.Thread(target=lambda: p.map(Behave(), [("square", 1)], timeout_s=10))
    thread.start()
    thread.join()
    time.sleep(0.5)  # the OS thread is gone by now; a worker tied to it would be dead
    try:
        assert [o.value for o in p.map(Behave(), [("square", 5)], timeout_s=10)] == [25]
        assert p.restarts == 0
    finally:
        p.close()
