"""The killable worker pool: hard per-item limits from any thread, and it survives."""

from __future__ import annotations

import os
import threading
import time

import pytest
from pool_tasks import Behave, DiesOnLoad, Preloading, SlowImport, Unloadable

from rewardsmith.verifiers.pool import DEFAULT_MEMORY_MB, WorkerPool

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


def test_a_big_item_queued_behind_a_hang_does_not_block_the_deadline():
    """The next chunk (1 MB, more than a pipe holds) is queued for a worker that hangs: the
    parent must not block writing it, or the hang's deadline would wait for the write."""
    big = "x" * (1 << 20)
    with WorkerPool(workers=1, chunk_size=1) as one:
        start = time.monotonic()
        outcomes = one.map(Behave(), [("sleep", 30), ("len", big), ("square", 3)], timeout_s=1.0)
        elapsed = time.monotonic() - start
    assert [(o.kind, o.value) for o in outcomes][1:] == [("ok", 1 << 20), ("ok", 9)]
    assert outcomes[0].kind == "timeout"
    assert elapsed < 1.0 + 1.0 + 1.5  # the limit, plus a worker restart, plus slack


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


def test_a_worker_that_dies_on_an_item_twice_is_a_crash_not_an_error(pool):
    restarts = pool.restarts
    outcomes = pool.map(Behave(), [("square", 1), ("crash", 3), ("square", 2)], timeout_s=10)
    assert [o.kind for o in outcomes] == ["ok", "crash", "ok"]
    assert "exit code 3" in outcomes[1].value and "twice" in outcomes[1].value
    assert [outcomes[0].value, outcomes[2].value] == [1, 4]
    assert pool.restarts == restarts + 2  # the first death, then the retry's
    assert [o.value for o in pool.map(Behave(), [("square", n) for n in range(8)], timeout_s=10)] == [
        n * n for n in range(8)
    ]


def test_a_sigkilled_worker_is_a_crash_and_the_rest_of_its_chunk_is_scored(pool):
    items = [("square", 2), ("kill",), ("square", 3), ("square", 4), ("square", 5)]
    outcomes = pool.map(Behave(), items, timeout_s=10)
    assert [o.kind for o in outcomes] == ["ok", "crash", "ok", "ok", "ok"]
    assert "SIGKILL" in outcomes[1].value
    assert [o.value for i, o in enumerate(outcomes) if i != 1] == [4, 9, 16, 25]


def test_a_worker_killed_once_costs_the_item_nothing(pool, tmp_path):
    """The OOM killer or a stray kill takes a worker once: the item is retried in a fresh one."""
    restarts = pool.restarts
    items = [("square", 6), ("kill_once", str(tmp_path / "marker")), ("square", 7)]
    outcomes = pool.map(Behave(), items, timeout_s=10)
    assert [(o.kind, o.value) for o in outcomes] == [("ok", 36), ("ok", "survived"), ("ok", 49)]
    assert pool.restarts == restarts + 1


def test_a_worker_that_died_idle_is_replaced_without_charging_an_item(pool):
    victim = pool._workers[0].proc
    victim.kill()
    victim.wait()
    outcomes = pool.map(Behave(), [("square", n) for n in range(6)], timeout_s=10)
    assert [(o.kind, o.value) for o in outcomes] == [("ok", n * n) for n in range(6)]


def test_a_task_that_cannot_load_is_an_error_per_item_and_the_worker_lives():
    with WorkerPool(workers=1) as fresh:
        outcomes = fresh.map(Unloadable(), [("square", 1), ("square", 2)], timeout_s=10)
        assert [o.kind for o in outcomes] == ["error", "error"]
        assert "could not load the task" in outcomes[0].value and "only_in_the_parent" in outcomes[0].value
        assert [o.value for o in fresh.map(Behave(), [("square", 3)], timeout_s=10)] == [9]
        assert fresh.restarts == 0


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


def test_workers_that_die_before_loading_the_task_are_an_error_not_a_crash():
    """A pool that cannot run the task at all is an infrastructure failure: never a score of 0."""
    with WorkerPool(workers=1) as fresh:
        outcomes = fresh.map(DiesOnLoad(), [("square", n) for n in range(5)], timeout_s=10)
        assert [o.kind for o in outcomes] == ["error"] * 5
        assert "before they can run the task" in outcomes[0].value and "exit code 7" in outcomes[0].value
        assert fresh.restarts == 3  # it gave up after three, rather than two per item
        assert [o.value for o in fresh.map(Behave(), [("square", 3)], timeout_s=10)] == [9]


# -- the memory cap and preloading --------------------------------------------------------------


def test_an_allocation_beyond_the_memory_cap_is_a_memory_error_not_a_dead_worker():
    with WorkerPool(workers=1, memory_mb=256) as capped:
        items = [("alloc", 1024), ("catch_alloc", 1024), ("alloc", 16), ("square", 3)]
        outcomes = capped.map(Behave(), items, timeout_s=10)
        assert outcomes[0].kind == "error" and "MemoryError" in outcomes[0].value
        assert [(o.kind, o.value) for o in outcomes[1:]] == [("ok", "caught"), ("ok", 16 * 1024 * 1024), ("ok", 9)]
        assert capped.restarts == 0


def test_the_memory_cap_defaults_on_and_can_be_lifted():
    import resource

    mib = 1024 * 1024
    with WorkerPool(workers=1) as default:
        assert default.map(Behave(), [("rlimit",)], 10)[0].value == (DEFAULT_MEMORY_MB * mib,) * 2
    with WorkerPool(workers=1, memory_mb=None) as lifted:
        assert lifted.map(Behave(), [("rlimit",)], 10)[0].value == resource.getrlimit(resource.RLIMIT_AS)
    with pytest.raises(ValueError, match="memory_mb"):
        WorkerPool(workers=1, memory_mb=0)


def test_preloaded_modules_are_imported_before_the_first_item():
    module = "xml.dom.minidom"  # imported by nothing else in a worker
    with WorkerPool(workers=1, preload=["no_such_module_anywhere", module]) as warm:
        assert [o.value for o in warm.map(Behave(), [("imported", module), ("square", 2)], 10)] == [True, 4]
    with WorkerPool(workers=1) as cold:
        assert cold.map(Behave(), [("imported", module)], 10)[0].value is False


def test_a_task_can_name_modules_that_replacement_workers_preload():
    module = Preloading.preload[0]
    with WorkerPool(workers=1) as p:
        assert p.map(Preloading(), [("imported", module)], 10)[0].value is False  # started before the task
        assert p.map(Preloading(), [("sleep", 30)], timeout_s=0.5)[0].kind == "timeout"
        assert p.map(Preloading(), [("imported", module)], 10)[0].value is True  # the replacement
        assert module in p.preload


def test_after_a_timeout_the_next_item_goes_to_a_warm_worker_not_the_fresh_one():
    """The replacement's first item would also pay for its imports within the time limit."""
    with WorkerPool(workers=2) as p:
        warm = {o.value for o in p.map(Behave(), [("pid",), ("pid",)], 10)}
        assert len(warm) == 2
        assert p.map(Behave(), [("sleep", 30)], timeout_s=0.5)[0].kind == "timeout"
        survivor = warm & {w.proc.pid for w in p._workers}
        assert len(survivor) == 1
        assert {p.map(Behave(), [("pid",)], 10)[0].value for _ in range(3)} == survivor
