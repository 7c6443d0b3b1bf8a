"""Group commit: a finished sync's waiters wake whoever leads the next one (write-path work).

The two leaders here are played by the test itself, through the lock files and the
``sync`` words as ``swarmlog/file/sync.py`` lays them out, around one real writer process
that waits for the first leader's sync. The second leader takes ``sync.lock`` as the first
lets go and then stalls holding it (as a leader descheduled mid-sync would). The waiter,
covered by the first sync, must return all the same: it sleeps on the first sync's done
lock, not on ``sync.lock``. (With one lock for both, the waiter slept through the second
leader's whole sync whenever that leader took the lock first.)
"""

from __future__ import annotations

import fcntl
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from tests import durabilityworkers as w

SPAWN = mp.get_context("spawn")
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks (Linux)"),
]


def _blocked_on(path: Path) -> int:
    """How many lock requests wait on ``path`` (``->`` lines of /proc/locks)."""
    ino = path.stat().st_ino
    n = 0
    for line in Path("/proc/locks").read_text().splitlines():
        f = line.split()
        if "->" in f and int(f[f.index("->") + 5].rsplit(":", 1)[1]) == ino:
            n += 1
    return n


def _until(cond: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _fd(root: Path, name: str) -> int:
    return os.open(root / name, os.O_RDWR)


def test_a_finished_syncs_waiter_wakes_while_the_next_leader_holds_sync_lock(
    tmp_path: Path,
) -> None:
    root = tmp_path / "log"
    with FileLog(root, durability="fsync", notify=False) as log:
        log.append(Event(agent="setup", type="test.event"))  # (the sync files exist)
    words = memoryview(bytearray(32))
    sync_fd = _fd(root, "sync")

    def word(i: int) -> int:
        os.preadv(sync_fd, [words], 0)
        return int(words.cast("Q")[i])

    def set_word(i: int, v: int) -> None:
        os.pwrite(sync_fd, v.to_bytes(8, "little"), 8 * i)

    # leader 1 claims sync.next: the writer to come finds it held and waits for its sync
    nxt1, lock1 = _fd(root, "sync.next"), _fd(root, "sync.lock")
    fcntl.flock(nxt1, fcntl.LOCK_EX)
    ack = tmp_path / "ack"
    waiter = SPAWN.Process(target=w.one_durable_append, args=(str(root), str(ack)))
    waiter.start()
    _until(lambda: _blocked_on(root / "sync.next") == 1, "the writer to wait on sync.next")
    mine = word(0)  # (its record is written: the end it noted)

    # leader 1 starts its sync as sync.py's leader does, and lets the writer queue
    fcntl.flock(lock1, fcntl.LOCK_EX)
    k1 = word(3) + 1
    done1 = _fd(root, f"sync.done.{k1 % 2}")
    fcntl.flock(done1, fcntl.LOCK_EX)
    set_word(3, k1)
    fcntl.flock(nxt1, fcntl.LOCK_UN)
    _until(lambda: _blocked_on(root / f"sync.done.{k1 % 2}") == 1, "the writer to wait for sync 1")

    # leader 2 claims sync.next and waits for sync.lock; once it has it, it stalls
    nxt2, lock2 = _fd(root, "sync.next"), _fd(root, "sync.lock")
    fcntl.flock(nxt2, fcntl.LOCK_EX)
    holding, release = threading.Event(), threading.Event()

    def leader2() -> None:
        fcntl.flock(lock2, fcntl.LOCK_EX)
        holding.set()
        release.wait(60)
        fcntl.flock(lock2, fcntl.LOCK_UN)

    t = threading.Thread(target=leader2)
    t.start()
    _until(lambda: _blocked_on(root / "sync.lock") == 1, "leader 2 to wait on sync.lock")

    # leader 1's sync completes: a real fdatasync of the segment, the mark raised
    seg = next((root / "segments").iterdir())
    fd = os.open(seg, os.O_RDONLY)
    os.fdatasync(fd)
    os.close(fd)
    set_word(2, mine)
    fcntl.flock(lock1, fcntl.LOCK_UN)  # leader 2 takes it ...
    assert holding.wait(30)
    fcntl.flock(done1, fcntl.LOCK_UN)  # ... and sync 1's waiter wakes all the same
    try:
        _until(ack.exists, "the covered writer to return while leader 2 holds sync.lock")
        assert int(ack.read_text()) == mine
        assert not release.is_set()  # (leader 2 still held it)
    finally:
        release.set()
        t.join(30)
        waiter.join(30)
        for fd in (nxt1, lock1, done1, nxt2, lock2, sync_fd):
            os.close(fd)
    assert waiter.exitcode == 0
