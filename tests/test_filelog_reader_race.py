"""A lock-free reader that races a writer's repair must not report false corruption.

A writer that finds a torn tail cuts it and appends over it while holding the lock; a
reader reading at that moment can see bytes that never coexisted on disk (a bad record
followed by a good one). Readers confirm such a finding under the lock before failing.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from swarmlog import CorruptionError, Event, FileLog


def _segment(root: Path) -> Path:
    return next((root / "segments").glob("*.jsonl"))


def test_reader_confirms_corruption_under_the_lock(tmp_path: Path) -> None:
    root = tmp_path / "log"
    log = FileLog(root)
    for i in range(5):
        log.append(Event(agent="a", type="x.y", body={"n": i}))
    seg = _segment(root)
    good = seg.read_bytes()
    lines = good.splitlines(keepends=True)
    # on disk for a moment: record 4 garbled, record 5 intact after it
    garbled = b"".join(lines[:3]) + b'{"seq":4,"garbage' + b"\n" + lines[4]
    lock = os.open(root / "lock", os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)  # as a writer repairing the tail would hold it
    seg.write_bytes(garbled)
    seen: list[int] = []
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            with FileLog(root) as r:
                seen.extend(ev.seq or 0 for ev in r.read())
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=reader)
    t.start()
    time.sleep(0.5)  # let the reader see the garbled bytes and wait for the lock
    seg.write_bytes(good)  # the "repair": the state the lock holder leaves behind
    fcntl.flock(lock, fcntl.LOCK_UN)
    os.close(lock)
    t.join(30)
    assert not errors, errors
    assert seen == [1, 2, 3, 4, 5]


def test_real_corruption_is_still_reported(tmp_path: Path) -> None:
    root = tmp_path / "log"
    log = FileLog(root)
    for i in range(5):
        log.append(Event(agent="a", type="x.y", body={"n": i}))
    seg = _segment(root)
    lines = seg.read_bytes().splitlines(keepends=True)
    seg.write_bytes(b"".join(lines[:3]) + b'{"seq":4,"garbage\n' + lines[4])
    with FileLog(root) as r, pytest.raises(CorruptionError, match="seq 4"):
        list(r.read())
    with FileLog(root) as r, pytest.raises(CorruptionError, match="seq 4"):
        r.version("k")
