"""Scans shared out across cores: one fork-safe pool per process, whose caller takes
work too (the synthesizer's candidate scan, ``worker/scan.py``, and recall's passes).

Why: at a million facts a recall's passes over every row (the one-bit codes' Hamming
distances and estimates, BM25 beside them) are most of its time, and numpy lets go of
the GIL inside each pass: on an idle machine a second core halves them. On a busy one a
worker thread may wait a scheduler time slice before it starts, so the caller never
only waits: it takes every task no worker has started, and waits only for tasks a
worker is running. The results are those of running the tasks one by one, in order
(each task must touch nothing the others write).

``SWARMLOG_SCAN_THREADS`` sets the width (1: every task in the calling thread).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, cast

__all__ = ["MAX_THREADS", "pool", "run_all", "run_both", "scan_threads"]

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")
MAX_THREADS = 8
_POOL: ThreadPoolExecutor | None = None
_POOL_PID = -1
_POOL_WIDTH = 0
_POOL_LOCK = threading.Lock()


def scan_threads() -> int:
    """How many threads a scan may use, the caller's included: ``SWARMLOG_SCAN_THREADS``
    if set (>= 1), else the cores this process may run on, at most ``MAX_THREADS``."""
    env = os.environ.get("SWARMLOG_SCAN_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(
                f"SWARMLOG_SCAN_THREADS must be a whole number >= 1, got {env!r}"
            ) from None
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_THREADS, cores))


def pool(threads: int) -> ThreadPoolExecutor:
    """The process's pool, at least ``threads`` wide (made anew in a forked child: the
    parent's threads do not exist there, and a pool taken over would never run a task)."""
    global _POOL, _POOL_PID, _POOL_WIDTH
    with _POOL_LOCK:
        if _POOL is None or os.getpid() != _POOL_PID or threads > _POOL_WIDTH:
            _POOL = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="swarmlog-scan")
            _POOL_PID, _POOL_WIDTH = os.getpid(), threads
        return _POOL


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

    workers = pool(threads - 1)
    for _ in range(min(threads - 1, n - 1)):
        workers.submit(drain)
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
