"""The scan threads (``synthesizer.search.threads``): tasks' results in order, errors
raised once every started task is done, the caller's thread alone when asked, a fresh
pool after a fork; and a hybrid recall on the approximate path (BM25 beside the codes'
scan) ranks as when both run in the caller's thread."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from synthesizer.search import threads
from tests.test_quantindex import QUERIES, big_swarm, ids, small_threshold

__all__ = ["small_threshold"]  # (a fixture used below)


def test_results_come_back_in_order_from_several_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "3")
    seen: set[str] = set()

    def task(i: int) -> int:
        seen.add(threading.current_thread().name)
        time.sleep(0.02 if i % 2 else 0.0)  # (a sleep lets go of the GIL: others run)
        return i * i

    got = threads.run_all([lambda i=i: task(i) for i in range(12)])  # type: ignore[misc]
    assert got == [i * i for i in range(12)]
    assert threading.current_thread().name in seen  # the caller took tasks too
    assert any(name.startswith("swarmlog-scan") for name in seen)


def test_one_thread_runs_every_task_in_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "1")
    names = threads.run_all([lambda: threading.current_thread().name for _ in range(5)])
    assert set(names) == {threading.current_thread().name}
    a, b = threads.run_both(lambda: "x", lambda: 2)
    assert (a, b) == ("x", 2)


def test_an_error_is_raised_after_the_other_tasks_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "2")
    done: list[int] = []

    def slow() -> int:
        time.sleep(0.05)
        done.append(1)
        return 1

    def bad() -> int:
        raise ValueError("a task failed")

    with pytest.raises(ValueError, match="a task failed"):
        threads.run_all([slow, bad, slow])
    assert len(done) == 2  # nothing left running behind the caller's back


def test_scan_threads_reads_the_cores_and_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SWARMLOG_SCAN_THREADS", raising=False)
    n = threads.scan_threads()
    assert 1 <= n <= threads.MAX_THREADS
    assert n <= len(os.sched_getaffinity(0))
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "2")
    assert threads.scan_threads() == 2
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "nonsense")
    with pytest.raises(ValueError, match="SWARMLOG_SCAN_THREADS must be a whole number"):
        threads.run_all([lambda: 1, lambda: 2])


def test_the_synthesizers_scan_and_recall_share_one_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    from synthesizer.worker import scan

    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "3")
    assert scan.scan_threads is threads.scan_threads
    assert scan.run_tiles([lambda: 1, lambda: 2, lambda: 3], 3) == [1, 2, 3]
    wide = threads.pool(3)
    assert threads.pool(2) is wide  # (one pool, at least as wide as asked)


@pytest.mark.skipif(sys.platform != "linux", reason="fork")
def test_a_forked_child_gets_a_pool_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent's pool threads do not exist in a fork's child: the child makes its own
    (a pool taken over from the parent would take tasks and never run them)."""
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "2")

    def task() -> int:
        time.sleep(0.01)
        return os.getpid()

    assert threads.run_all([task, task, task]) == [os.getpid()] * 3
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report, leave without pytest's teardown
        try:
            got = threads.run_all([task, task, task])
            os.write(w, b"ok" if got == [os.getpid()] * 3 else b"bad")
        finally:
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    assert os.read(r, 8) == b"ok" and status == 0


def test_hybrid_recall_with_threads_equals_the_callers_thread_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_threshold: None
) -> None:
    with big_swarm(tmp_path / "s", 4000) as sw:
        for q in QUERIES:
            for mode in ("hybrid", "lexical"):
                monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "1")
                alone = ids(sw, q, mode=mode)
                monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "3")
                assert ids(sw, q, mode=mode) == alone and len(alone) == 10


def test_cosines_at_in_parts_equal_one_gather(monkeypatch: pytest.MonkeyPatch) -> None:
    """``VectorIndex.cosines_at`` cut into parts on threads gives each row's cosine bit
    for bit as one gather and one product (each is its own dot product)."""
    import numpy as np

    from synthesizer.search import vindex

    rng = np.random.default_rng(7)
    idx = vindex.VectorIndex("test", 64)
    rows = rng.standard_normal((6000, 64)).astype(np.float32)
    idx.add_many([f"f{i}" for i in range(6000)], rows)
    for _ in range(20):
        q = rng.standard_normal(64).astype(np.float32)
        at = np.sort(rng.choice(6000, size=int(rng.integers(1, 5000)), replace=False))
        with monkeypatch.context() as m:
            m.setattr(vindex, "GATHER_PART", 1 << 30)
            m.setenv("SWARMLOG_SCAN_THREADS", "1")
            whole = idx.cosines_at(q, at)
        monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "3")
        assert np.array_equal(idx.cosines_at(q, at), whole)
        assert np.allclose(whole, idx.cosines(q)[at], atol=1e-5)
