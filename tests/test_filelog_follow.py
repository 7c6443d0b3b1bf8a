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
        t0 = time.monotonic()
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
        seen, lat = q.get(60)
        elapsed = time.monotonic() - t0
        p.join(30)
        assert p.exitcode == 0
        stored = [(e.seq, e.id) for e in log.read()]
        assert len(list((root / "segments").iterdir())) > 5
    assert seen == stored  # every event, once, in order, across the rotations
    assert elapsed < 20  # with notify on, no wake-up waited for the 30 s net
    lat.sort()
    assert lat[len(lat) // 2] < 1.0


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
