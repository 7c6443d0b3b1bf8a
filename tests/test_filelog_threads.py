"""One FileLog handle shared by threads: appends and point reads at once stay correct."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

from swarmlog import Event, FileLog


def test_threads_append_and_read_points_on_one_handle(tmp_path: Path) -> None:
    log = FileLog(tmp_path / "log", segment_bytes=64 << 10, notify=False)
    log.append_many([Event(agent="seed", type="test.event", id=f"seed{i}") for i in range(300)])
    errors: list[BaseException] = []
    got: dict[str, int] = {}

    def writer(w: int) -> None:
        try:
            for i in range(400):
                ev = log.append(Event(agent=f"w{w}", type="test.event", id=f"w{w}-{i}"))
                got[ev.id] = ev.seq or 0
        except BaseException as e:
            errors.append(e)

    def reader(r: int) -> None:
        rnd = random.Random(r)
        try:
            for _ in range(400):
                top = log.last_seq
                s = rnd.randint(1, top)
                (ev,) = list(log.read(s, s))  # seeks through the shared hints
                assert ev.seq == s
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    threads += [threading.Thread(target=reader, args=(r,)) for r in range(2)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: races show up
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[:3]
    stored = {e.id: e.seq for e in log.read()}
    assert list(stored.values()) == list(range(1, 1101))
    assert all(stored[i] == s for i, s in got.items()) and len(got) == 800
    assert log.verify().ok
    log.close()
