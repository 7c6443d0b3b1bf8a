"""Scans shared out across cores: a fork-safe pool whose caller takes work too.

Why: at a million facts a recall's passes over every row (the one-bit codes' Hamming
distances and estimates, BM25 beside them) are most of its time, and numpy lets go of
the GIL inside each pass: on an idle machine a second core halves them. On a busy one a
worker thread may wait a scheduler time slice before it starts, so the caller never
only waits: it takes every task no worker has started, and waits only for tasks a
worker is running. The results are those of running the tasks one by one, in order
(each task must touch nothing the others write).

Set ``SWARMLOG_SCAN_THREADS=1`` to run every task in the calling thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, cast

__all__ = ["run_all", "run_both", "scan_threads"]

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")
MAX_THREADS = 4  # a recall's passes are memory-bound: more threads only contend
_lock = threading.Lock()
_pool: tuple[int, ThreadPoolExecutor] | None = None  # (the pid that made it, the pool)


def scan_threads() -> int:
    """Threads a scan may use, the caller's included (the CPUs this process may run on,
    at most ``MAX_THREADS``; ``SWARMLOG_SCAN_THREADS`` overrides)."""
    env = os.environ.get("SWARMLOG_SCAN_THREADS", "")
    if env.isdigit() and int(env) >= 1:
        return min(int(env), 64)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on this platform)
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def _executor(workers: int) -> ThreadPoolExecutor:
    """The process's pool (a new one after a fork: the parent's threads are not here)."""
    global _pool
    with _lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(workers, "swarmlog-scan"))
        return _pool[1]


def run_all(tasks: Sequence[Callable[[], T]]) -> list[T]:
    """Each task's result, in order: tasks run on the pool's threads and the caller's,
    the caller taking whatever no thread has started (see the module docstring). An
    exception in a task is raised here, after every started task has finished."""
    n = len(tasks)
    threads = scan_threads()
    if n <= 1 or threads <= 1:
        return [t() for t in tasks]
    results: list[object] = [None] * n
    errors: list[BaseException] = []
    state = {"next": 0, "left": n}
    cond = threading.Condition()

    def drain() -> None:
        while True:
            with cond:
                i = state["next"]
                if i >= n:
                    return
                state["next"] = i + 1
            try:
                results[i] = tasks[i]()
            except BaseException as e:  # (raised by the caller once all are done)
                errors.append(e)
            with cond:
                state["left"] -= 1
                if not state["left"]:
                    cond.notify_all()

    pool = _executor(threads - 1)
    for _ in range(min(threads - 1, n - 1)):
        pool.submit(drain)
    drain()
    with cond:
        while state["left"]:
            cond.wait()
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]


def run_both(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """``(first(), second())`` as ``run_all`` runs them: the caller usually takes
    ``first`` (so put the longer task first), a free core ``second``."""
    a, b = run_all([first, second])
    return cast(A, a), cast(B, b)
