"""A writer alone leaves the shared index lagging (swarmlog/file/view/alone.py).

While no other writer appends, a handle appends on its own dicts and does not touch the
index (the cost of one writer alone is main's old fast path). The lag is entered by the
next other writer from the segment (ids, key versions and the swarm clock's ceiling,
no rebuild) or by the handle itself when it closes; a kill -9 while lagging loses
nothing acknowledged.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

from swarmlog import Event, FileLog, VersionConflict
from swarmlog.file.view.index import CRASH_ENV
from swarmlog.file.view.writerindex import WriterIndex

from .indexworkers import index_view, segment_view

ROOT = Path(__file__).resolve().parent.parent


def ev(i: str, key: str | None = None) -> Event:
    return Event(agent="a", type="t", id=i, key=key)


def index_end(root: Path) -> int:
    """The next seq the index's committed end record says (the file read as it is)."""
    ix = WriterIndex.open(str(root))
    try:
        gen = struct.unpack_from("<Q", ix.m, 8)[0]
        return int(struct.unpack_from("<Q", ix.m, (64, 256)[gen // 2 % 2])[0])
    finally:
        ix.close()


def test_a_writer_alone_does_not_update_the_index_per_append(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a:
        a.append(ev("a0", key="k"))
        assert index_end(root) == 2
        for i in range(1, 40):
            a.append(ev(f"a{i}", key="k"))
        a.append_many([ev(f"m{i}", key=f"j{i}") for i in range(5)])
        assert index_end(root) == 2  # the index lags: no probe, no update per append
        assert a.append(ev("a7", key="k")).seq == 8  # idempotency on the handle's own dicts
        assert a.version("k") == 40
    assert_index_current(root)  # the close entered the lag


def assert_index_current(root: Path) -> None:
    got = index_view(str(root))
    assert got is not None, "index not trusted"
    assert got == segment_view(str(root))


def test_another_writer_catches_the_lag_up_without_a_rebuild(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a, FileLog(root, notify=False) as b:
        b.append(ev("b0"))  # (b's first append: it reads the log and builds the index)
        for i in range(30):
            a.append(ev(f"a{i}", key=f"k{i % 3}"))
        assert index_end(root) < 30  # a lagged
        rebuilt = a.index_rebuilds + b.index_rebuilds
        assert b.append(ev("a17", key="k2")).seq == 19  # a retry of a lagged id: the stored one
        assert b.version("k2") == 31
        c = b.append(ev("cas", key="k1"), expect={"k1": 30})
        try:  # a no longer alone: its stale expectation is refused
            a.append(ev("cas2", key="k1"), expect={"k1": 30})
            raise AssertionError("stale expectation accepted")
        except VersionConflict as e:
            assert e.actual == c.seq
        assert a.append(ev("a31")).seq == c.seq + 1
        assert a.index_rebuilds + b.index_rebuilds == rebuilt
    assert_index_current(root)


def test_a_lag_partly_caught_up_is_completed_on_close(tmp_path: Path) -> None:
    """Another handle reads through the index (entering the lag so far) without
    appending; the lone writer goes on, and its close enters the rest."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a, FileLog(root, notify=False) as b:
        b.append(ev("b0"))
        a.append(ev("a0"))
        b.append(ev("b1", key="x"))
        for i in range(1, 10):
            a.append(ev(f"a{i}", key="k"))
        assert b.version("k") == 12  # (b: through the index, which catches a's lag up)
        assert b.append(ev("a3", key="k")).seq == 6
        for i in range(10, 20):
            a.append(ev(f"a{i}", key="k"))  # a still alone: nobody else appended
    assert_index_current(root)


def test_kill_9_while_alone_loses_nothing(tmp_path: Path) -> None:
    """A real kill -9 of a lone writer in its 40th append (written, not acknowledged, the
    index 38 records behind): the next writer finds every acknowledged event at its
    seq, catches the lag up from the segment (no rebuild), and the index equals a
    rebuild."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as live:
        live.append(Event(agent="live", type="t", id="before", key="key0"))
        env = {**os.environ, CRASH_ENV: "40:4"}
        res = subprocess.run(
            [sys.executable, "-m", "tests.indexworkers", str(root), "1000"],
            cwd=ROOT, env=env, capture_output=True, timeout=120,
        )  # fmt: skip
        assert res.returncode == -9, res.stderr.decode()[-2000:]
        acks = dict(line.split() for line in res.stdout.decode().splitlines())
        assert len(acks) == 39
        assert index_end(root) == 3  # (the killed writer's first append updated it)
        got = live.append(Event(agent="live", type="t", id="after", key="key1"))
        assert got.seq == 42  # after the dead writer's 40 (the last unacknowledged)
        assert live.version("key0") == 41  # (the unacknowledged 40th: written, key0)
        assert live.index_rebuilds == 1  # its first append built it; none since
    with FileLog(root, notify=False) as fresh:
        stored = {e.id: e.seq for e in fresh.read()}
        seqs = [e.seq for e in fresh.read()]
    assert seqs == list(range(1, 43))
    for i, s in acks.items():
        assert stored[i] == int(s)
    assert_index_current(root)


def test_the_clock_ceiling_of_a_writer_alone_reaches_the_next_writer(tmp_path: Path) -> None:
    """A lone writer whose clock stands still keeps lowering the ceiling to its reading
    + MAX_STEP; a writer 1 h ahead that comes after it is held to that ceiling, not to
    the one of the lag's start grown at SLEW for the whole lag (the clock hint)."""
    root = tmp_path / "log"
    t = time.time()
    with FileLog(root, notify=False, clock=lambda: t) as still:
        still.append(ev("s0"))
        for i in range(4):
            time.sleep(0.4)
            still.append(ev(f"s{i + 1}"))
        with FileLog(root, notify=False, clock=lambda: t + 3600) as ahead:
            got = ahead.append(ev("x"))
    # with the ceiling of the lag's start: t + 60 + 2 * 1.6 s
    assert got.ts <= t + 60 + 1.0, got.ts - t


def test_a_cas_loop_beside_another_writer_takes_the_index(tmp_path: Path) -> None:
    """A handle that reads ``version`` and appends with that expectation while another
    writer appends in between: once the other's records show up it leaves the mode
    (its unlocked read must not keep its dicts whole by parsing them, leaving the index
    to lag and the other writer to parse its records at every append)."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a, FileLog(root, notify=False) as b:
        a.append(ev("a0", key="k"))
        b.append(ev("b0"))
        for i in range(1, 6):
            v = a.version("k")
            got = a.append(ev(f"a{i}", key="k"), expect={"k": v})
            assert index_end(root) == got.seq + 1  # a's append went through the index
            b.append(ev(f"b{i}"))
        assert a.version("k") == got.seq
    assert_index_current(root)


def test_a_segment_replaced_under_a_lagging_writer(tmp_path: Path) -> None:
    """The segment a lone writer lags in is replaced the way erasure does it (a byte
    appended to the old inode first): the writer leaves the mode and the index follows
    the new file (no record lost, ids and seqs as stored)."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a:
        for i in range(10):
            a.append(ev(f"e{i}", key="k"))
        assert index_end(root) == 2
        (seg,) = (root / "segments").iterdir()
        tmp = seg.with_suffix(".tmp")
        shutil.copy(seg, tmp)
        with open(seg, "ab") as f:
            f.write(b"\0")
        os.replace(tmp, seg)
        assert a.append(ev("e3", key="k")).seq == 4
        assert a.append(ev("e10", key="k")).seq == 11
        assert a.version("k") == 11
    assert_index_current(root)
    with FileLog(root, notify=False) as fresh:
        assert [e.seq for e in fresh.read()] == list(range(1, 12))
