"""What the shared writer index held must not be lost with it, nor taken from a stranger.

Fault injection found two holes (docs/faults.md, "The writer index lost or replaced"):

* the swarm clock's ceiling lived only in ``index``: with it deleted, dropped by an
  erasure, or after every writer was killed and the file removed, a writer whose clock
  is 10 h ahead rebuilt it with no ceiling and stamped +36,000 s, dragging every later
  event along. Now a rebuild without a kept ceiling derives one from the log (the newest
  record's ts and the real time since its segment was written);
* another swarm's index written over this one's in place with an equal update counter
  was trusted without a look at its swarm or CRC: a retried id was stored again and
  ``verify`` reported the duplicate. Now every load checks whose the file is.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from swarmlog import Event, FileLog
from swarmlog.clock import MAX_STEP, SLEW

AHEAD = 10 * 3600.0
ROOT = Path(__file__).resolve().parent.parent


def bound(t0: float) -> float:
    """The most swarm time may be ahead of real time, for a run that began at ``t0``."""
    return MAX_STEP + SLEW * (time.time() - t0) + 1.0


def honest_log(root: Path, n: int = 5) -> None:
    with FileLog(root, notify=False) as log:
        for i in range(n):
            log.append(Event(agent="h", type="clock.test", body={"i": i}))


def rogue_stamps(root: Path, t0: float, n: int = 20) -> None:
    """A writer 10 h ahead appends ``n`` events, then an honest one: all bounded."""
    with FileLog(root, notify=False, clock=lambda: time.time() + AHEAD) as rogue:
        for _ in range(n):
            assert rogue.append(Event(agent="r", type="clock.test")).ts - time.time() <= bound(t0)
        got = rogue.append_many([Event(agent="r", type="clock.test") for _ in range(3)])
        assert all(e.ts - time.time() <= bound(t0) for e in got)
    with FileLog(root, notify=False) as log:
        after = log.append(Event(agent="h", type="clock.test"))
        assert after.ts - time.time() <= bound(t0)
        ts = [e.ts for e in log.read()]
        assert log.verify().ok
    assert ts == sorted(ts)


def test_a_writer_ahead_stays_bounded_with_the_index_deleted(tmp_path: Path) -> None:
    root = tmp_path / "log"
    honest_log(root)
    (root / "index").unlink()
    rogue_stamps(root, time.time())


def test_a_writer_ahead_stays_bounded_after_forget(tmp_path: Path) -> None:
    from synthesizer.swarm import Swarm

    root = tmp_path / "log"
    with Swarm.open(root) as sw:
        sw.agent("victim").share("a note about the garage door", importance=0.6)
        sw.agent("other").share("a note about the billing job", importance=0.6)
        sw.forget(agent="victim")
    assert not (root / "index").exists()
    rogue_stamps(root, time.time())


WRITER = """
import sys
from swarmlog import Event, FileLog
with FileLog(sys.argv[1], notify=False) as log:
    print("ready", flush=True)
    i = 0
    while True:
        log.append(Event(agent="w", type="clock.test", body={"i": i}))
        i += 1
"""


def test_a_writer_ahead_stays_bounded_after_kill_9_of_all_writers(tmp_path: Path) -> None:
    root = tmp_path / "log"
    honest_log(root)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root)], cwd=ROOT, stdout=subprocess.PIPE
        )
        for _ in range(3)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline() == b"ready\n"
    time.sleep(0.5)
    for p in procs:
        os.kill(p.pid, signal.SIGKILL)
    for p in procs:
        p.wait(30)
        assert p.stdout is not None
        p.stdout.close()
    (root / "index").unlink()
    rogue_stamps(root, time.time())


def test_an_old_log_reopened_later_is_bounded_from_its_last_write(tmp_path: Path) -> None:
    """The derived ceiling grows with the real time since the newest record was written
    (not frozen at its ts): an honest writer of a log idle for a day stamps its reading."""
    root = tmp_path / "log"
    honest_log(root)
    day = 86400.0
    seg = next((root / "segments").glob("*.jsonl"))
    st = seg.stat()
    os.utime(seg, (st.st_atime - day, st.st_mtime - day))  # (written a day ago)
    (root / "index").unlink()
    with FileLog(root, notify=False, clock=lambda: time.time()) as log:
        now = time.time()
        got = log.append(Event(agent="h", type="clock.test"))
    assert abs(got.ts - now) < 5


def ev(i: str) -> Event:
    return Event(agent="a", type="t", id=i)


def test_a_foreign_index_written_in_place_with_an_equal_counter_is_rebuilt(
    tmp_path: Path,
) -> None:
    mine, theirs = tmp_path / "mine", tmp_path / "theirs"
    with FileLog(theirs, notify=False) as a, FileLog(theirs, notify=False) as b:
        for i in range(6):
            (a if i % 2 else b).append(ev(f"t{i}"))
    with FileLog(mine, notify=False) as a, FileLog(mine, notify=False) as b:
        for i in range(6):  # two handles: neither alone, both go through the index
            (a if i % 2 else b).append(ev(f"m{i}"))
        path = mine / "index"
        data = bytearray((theirs / "index").read_bytes())
        gen = path.read_bytes()[8:16]
        data[8:16] = gen  # (the same update counter as the file it replaces)
        with open(path, "r+b") as f:  # in place: the same inode the handles map
            f.write(bytes(data))
        assert a.append(ev("m2")).seq == 3  # a retry answers with the stored event
        assert b.append(ev("m3")).seq == 4
        assert a.append(ev("new")).seq == 7
        assert a.verify().ok
    with FileLog(mine, notify=False) as log:
        assert [e.id for e in log.read()] == [f"m{i}" for i in range(6)] + ["new"]
        assert log.verify().ok
