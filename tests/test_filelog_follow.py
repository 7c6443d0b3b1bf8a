"""Acceptance 6: a follower in another process, across segment rotation, both wake-up paths."""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from tests import logworkers as w

SPAWN = mp.get_context("spawn")


@pytest.mark.parametrize(
    "opts",
    [
        # timeout path only: no notifications, short poll
        {"notify": False, "poll_interval": 0.05},
        # notification path: the poll interval is far longer than the test may take
        {"notify": True, "poll_interval": 30.0},
    ],
    ids=["notify-off", "notify-on"],
)
def test_follower_across_rotation(tmp_path: Path, opts: dict[str, object]) -> None:
    root = tmp_path / "log"
    total = 400
    with FileLog(root, segment_bytes=4096, notify=False) as log:
        log.append(Event(agent="a", type="test.event", id="pre"))
        q = SPAWN.Queue()
        p = SPAWN.Process(target=w.follower, args=(str(root), 1, total + 1, 60.0, q), kwargs=opts)
        p.start()
        assert q.get(30)[0] == "ready"
        for i in range(total // 4):
            log.append(Event(agent="a", type="test.event", id=f"s{i}", body={"p": "z" * 80}))
            if i % 10 == 0:
                log.append_many(
                    [Event(agent="a", type="test.event", id=f"b{i}-{j}") for j in range(30)]
                )
            time.sleep(0.002)
        left = total + 1 - log.last_seq
        for i in range(left):
            log.append(Event(agent="a", type="test.event", id=f"t{i}"))
        # notify-on: the 30 s poll net alone could not deliver ~100 wake-ups within this
        # bound, so arriving at all shows the notifications woke the follower
        seen, _ = q.get(60)
        p.join(30)
        assert p.exitcode == 0
        stored = [(e.seq, e.id) for e in log.read()]
        assert len(list((root / "segments").iterdir())) > 5
    assert seen == stored  # every event, once, in order, across the rotations


def test_follow_starts_past_the_end_and_waits(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False, poll_interval=0.02) as log:
        log.append(Event(agent="a", type="test.event"))
        q = SPAWN.Queue()
        p = SPAWN.Process(
            target=w.follower,
            args=(str(root), 3, 2, 30.0, q),
            kwargs={"notify": False, "poll_interval": 0.02},
        )
        p.start()
        assert q.get(30)[0] == "ready"
        for _ in range(4):
            log.append(Event(agent="a", type="test.event"))
        seen, _ = q.get(30)
        p.join(10)
        assert [s for s, _ in seen] == [3, 4]


def test_follow_past_a_torn_batch_that_is_cut_and_rewritten(tmp_path: Path) -> None:
    """A batch bigger than a read chunk, torn by a dead writer, then cut by the next writer.

    The follower scans the torn batch (it spans several chunks) while it is on disk; the
    next append cuts it and writes new records over the same bytes. The follower must
    neither take any of the torn records nor lose its place (it used to keep an offset
    inside the torn batch and, after the cut, spin forever on what looked like corruption).
    """
    import threading

    root = tmp_path / "log"
    scratch = tmp_path / "scratch"
    pad = "p" * 3000
    with FileLog(scratch, notify=False, clock=lambda: 1.0) as s:
        s.append_many(
            [Event(agent="a", type="test.event", id=f"pre{i}", ts=1.0, swarm="t") for i in range(3)]
        )
        s.append_many(
            [
                Event(
                    agent="a", type="test.event", id=f"big{i}", ts=1.0, swarm="t", body={"pad": pad}
                )
                for i in range(300)
            ]
        )
    (seg_file,) = (scratch / "segments").iterdir()
    data = seg_file.read_bytes()
    cut = data.index(b'"id":"big0"')
    cut = data.rindex(b"\n", 0, cut) + 1  # start of the big batch
    with FileLog(root, notify=False, clock=lambda: 1.0) as log:
        log.append_many(
            [Event(agent="a", type="test.event", id=f"pre{i}", ts=1.0, swarm="t") for i in range(3)]
        )
    (mine,) = (root / "segments").iterdir()
    assert mine.read_bytes() == data[:cut]
    # a writer died after ~700 KB of its 900 KB batch: complete lines, batch unfinished
    torn = data[cut : cut + 700_000]
    torn = torn[: torn.rindex(b"\n") + 1]
    with open(mine, "ab") as f:
        f.write(torn)

    seen: list[str] = []
    follower = FileLog(root, notify=False, poll_interval=0.02)

    def run() -> None:
        for ev in follower.follow(1, timeout=1.0):
            seen.append(ev.id)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.monotonic() + 30
    while len(seen) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # the follower has scanned the torn batch (and found it unfinished)
    with FileLog(root, notify=False) as log:
        log.append_many([Event(agent="a", type="test.event", id=f"new{i}") for i in range(5)])
        # the writer cut the whole torn batch (not just its last read chunk)
        assert [e.id for e in log.read()] == [f"pre{i}" for i in range(3)] + [
            f"new{i}" for i in range(5)
        ]
        rep = log.verify()
        assert rep.ok, rep.problems
        assert any(f"cut {len(torn)} bytes" in n for n in rep.notes), rep.notes
    t.join(60)
    alive = t.is_alive()
    follower.close()
    assert not alive, "the follower never finished (it lost its place after the cut)"
    assert seen == [f"pre{i}" for i in range(3)] + [f"new{i}" for i in range(5)]
