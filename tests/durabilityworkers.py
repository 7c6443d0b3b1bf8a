"""Writer processes for tests/test_group_commit.py (importable by spawned children)."""

from __future__ import annotations

import os
import time
from typing import Any

import orjson

from swarmlog import Event, FileLog


def counted_writer(
    root: str, wid: int, n: int, start: Any, out_path: str, slow: float = 0.0
) -> None:
    """Append ``n`` events under durability='fsync', recording every fdatasync (the file,
    its size when the sync began, when it completed) and every acknowledged append (its
    seq, when ``append`` returned); CLOCK_MONOTONIC is one clock for all processes.
    ``slow`` seconds are added to each sync (a slow disk: the real sync still runs)."""
    real = os.fdatasync
    syncs: list[list[int]] = []

    def counting(fd: int) -> None:
        st = os.fstat(fd)
        if slow:
            time.sleep(slow)
        real(fd)  # the real sync: recorded only once it has completed
        syncs.append([st.st_ino, st.st_size, time.monotonic_ns()])

    os.fdatasync = counting  # the log calls os.fdatasync at run time: counted, not replaced
    log = FileLog(root, durability="fsync", notify=False)
    start.wait()
    acks = []
    for i in range(n):
        e = log.append(Event(agent=f"w{wid}", type="test.event", id=f"w{wid}-{i}"))
        acks.append([e.seq, time.monotonic_ns()])
    log.close()
    with open(out_path, "wb") as f:
        f.write(orjson.dumps({"syncs": syncs, "acks": acks, "count": log.sync_count}))


def acking_writer(root: str, wid: int, ack_path: str) -> None:
    """Append forever under durability='fsync', writing ``seq id`` to ``ack_path`` after
    each append returned (the test SIGKILLs this process)."""
    log = FileLog(root, durability="fsync", notify=False)
    ack = os.open(ack_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    i = 0
    while True:
        i += 1
        if i % 5 == 0:
            evs = [
                Event(agent=f"k{wid}", type="test.event", id=f"k{wid}-{i}-{j}") for j in range(3)
            ]
            out = log.append_many(evs)
        else:
            out = [log.append(Event(agent=f"k{wid}", type="test.event", id=f"k{wid}-{i}"))]
        os.write(ack, b"".join(b"%d %s\n" % (e.seq or 0, e.id.encode()) for e in out))


def one_durable_append(root: str, ack_path: str) -> None:
    """Append one event under durability='fsync'; write its seq to ``ack_path`` once
    ``append`` returned (the group commit's waiter in tests/test_group_commit_waiters.py)."""
    log = FileLog(root, durability="fsync", notify=False)
    e = log.append(Event(agent="waiter", type="test.event", id="the-waiter"))
    tmp = ack_path + ".tmp"  # renamed into place: a reader never sees it half written
    with open(tmp, "w") as f:
        f.write(str(e.seq))
    os.replace(tmp, ack_path)
    log.close()
