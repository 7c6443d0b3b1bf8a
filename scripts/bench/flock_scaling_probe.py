"""How far 16 processes sharing one flock fall behind one, with no log at all.

Usage: ``.venv/bin/python scripts/bench/flock_scaling_probe.py [--writers 1,2,16]
[--inside 6] [--outside 8] [--seconds 3]``.

A control for the write-path work's 2-core line (16 writers >= 0.8x one writer). Each process runs
a loop of pure-Python work: ``--outside`` microseconds unlocked, then ``--inside``
microseconds holding an exclusive ``flock`` on one shared file (the append lock's
primitive), the same counts for every writer count. Also measured: the same loop with a
process-shared semaphore (``multiprocessing.Lock``, futex-based, wakes one waiter) in
place of the flock (it does not survive its holder's death), a robust process-shared
pthread mutex in a mapped file (``ctypes``; the kernel releases it when its holder
dies, as it does a flock: the kill-safe futex lock a log could take instead), the
semaphore taken before the flock (a gate in front of it: the flock then never has a
waiter), and no lock (the ceiling: cores over the work). If the flock
rows hold up at 16 processes, the fall of swarmlog's own 16-writer rows comes from the
work it does while holding the lock, not from the lock or from 16 processes on 2 cores.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import fcntl
import mmap
import multiprocessing as mp
import os
import tempfile
import time
from typing import Any

FORK = mp.get_context("fork")
_LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_EOWNERDEAD = 130  # (Linux: the holder died; the next locker makes the mutex consistent)


def _robust_mutex(path: str) -> tuple[mmap.mmap, int]:
    """A process-shared robust pthread mutex in a mapped file: (the map, its address).
    The kernel releases it when its holder dies (the next locker gets EOWNERDEAD), as
    it does a flock: the kill-safe futex lock a log could take in place of the flock."""
    fd = os.open(path + ".mutex", os.O_RDWR | os.O_CREAT, 0o600)
    os.ftruncate(fd, mmap.PAGESIZE)
    m = mmap.mmap(fd, mmap.PAGESIZE)
    os.close(fd)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    attr = ctypes.create_string_buffer(64)
    _LIBC.pthread_mutexattr_init(attr)
    _LIBC.pthread_mutexattr_setpshared(attr, 1)  # PTHREAD_PROCESS_SHARED
    _LIBC.pthread_mutexattr_setrobust(attr, 1)  # PTHREAD_MUTEX_ROBUST
    if _LIBC.pthread_mutex_init(ctypes.c_void_p(addr), attr):
        raise OSError("pthread_mutex_init failed")
    return m, addr


def _spin(n: int) -> int:
    """Pure-Python work of ``n`` steps (no system calls, no allocation)."""
    x = 0
    for i in range(n):
        x += i
    return x


def _steps_per_us() -> float:
    """Steps of ``_spin`` per microsecond on this machine (best of five)."""
    best = 0.0
    for _ in range(5):
        t = time.perf_counter()
        _spin(200_000)
        best = max(best, 200_000 / ((time.perf_counter() - t) * 1e6))
    return best


def _worker(
    kind: str,
    path: str,
    sem: Any,
    mutex: int,
    go: Any,
    seconds: float,
    out: Any,
    inner: int,
    outer: int,
) -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    lock, unlock = _LIBC.pthread_mutex_lock, _LIBC.pthread_mutex_unlock
    consistent = _LIBC.pthread_mutex_consistent
    for f in (lock, unlock, consistent):
        f.argtypes = [ctypes.c_void_p]
    go.wait()
    end = time.monotonic() + seconds
    n = 0
    t0 = os.times()
    while True:
        _spin(outer)
        if kind == "flock":
            fcntl.flock(fd, fcntl.LOCK_EX)
            _spin(inner)
            fcntl.flock(fd, fcntl.LOCK_UN)
        elif kind == "semaphore":
            sem.acquire()
            _spin(inner)
            sem.release()
        elif kind == "robust mutex":
            if lock(mutex) == _EOWNERDEAD:
                consistent(mutex)
            _spin(inner)
            unlock(mutex)
        elif kind == "semaphore+flock":
            sem.acquire()
            fcntl.flock(fd, fcntl.LOCK_EX)
            _spin(inner)
            fcntl.flock(fd, fcntl.LOCK_UN)
            sem.release()
        else:
            _spin(inner)
        n += 1
        if n % 64 == 0 and time.monotonic() > end:
            break
    t1 = os.times()
    out.put((n, (t1.user - t0.user) + (t1.system - t0.system)))
    os.close(fd)


def _run(kind: str, writers: int, seconds: float, inner: int, outer: int) -> tuple[float, float]:
    """(operations/s over all processes, CPU us per operation)."""
    path = os.path.join(tempfile.mkdtemp(prefix="flock-probe-"), "lock")
    sem, go, out = FORK.Lock(), FORK.Event(), FORK.Queue()
    m, mutex = _robust_mutex(path)
    procs = [
        FORK.Process(target=_worker, args=(kind, path, sem, mutex, go, seconds, out, inner, outer))
        for _ in range(writers)
    ]
    for p in procs:
        p.start()
    time.sleep(0.3)
    go.set()
    got = [out.get() for _ in procs]
    for p in procs:
        p.join()
    m.close()
    n = sum(g[0] for g in got)
    return n / seconds, 1e6 * sum(g[1] for g in got) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", default="1,2,16")
    ap.add_argument("--inside", type=float, default=6.0, help="us of work holding the lock")
    ap.add_argument("--outside", type=float, default=8.0, help="us of work outside it")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args()
    rate = _steps_per_us()
    inner, outer = int(args.inside * rate), int(args.outside * rate)
    counts = [int(w) for w in args.writers.split(",")]
    print(
        f"{os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}; "
        f"{args.inside:g} us inside the lock, {args.outside:g} us outside"
    )
    print("| lock | writers | operations/s | x one writer | CPU per operation |")
    print("|---|---|---|---|---|")
    for kind in ("none", "flock", "robust mutex", "semaphore", "semaphore+flock"):
        one = 0.0
        for w in counts:
            ops, cpu = _run(kind, w, args.seconds, inner, outer)
            one = one or ops
            print(f"| {kind} | {w} | {ops:,.0f} | {ops / one:.2f}x | {cpu:.1f} us |")


if __name__ == "__main__":
    main()
