"""The scale work, acceptance 4: durable group commit across writer processes.

Under ``durability="fsync"`` every acknowledged append is covered by a completed sync:
each writer process records every fdatasync it runs (the file, its size when the sync
began, when it completed) and every append it returned; the test finds, for each
acknowledged record, a sync of its segment that began with the record's bytes in the
file and completed before the append returned — in any process, since writers share
syncs. And kill -9 of writers loses nothing acknowledged: every acked id is in the log at
its acked seq, and the log's shared durable mark covers every acked seq.
"""

from __future__ import annotations

import bisect
import multiprocessing as mp
import os
import signal
import struct
import time
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, FileLog
from tests import durabilityworkers as w

SPAWN = mp.get_context("spawn")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def record_ends(root: Path) -> dict[int, tuple[int, int]]:
    """seq -> (inode of its segment, byte offset where its record ends)."""
    ends: dict[int, tuple[int, int]] = {}
    for seg in sorted((root / "segments").iterdir()):
        ino, at = seg.stat().st_ino, 0
        for line in seg.read_bytes().splitlines(keepends=True):
            at += len(line)
            ends[orjson.loads(line[: line.rindex(b"}") + 1])["seq"]] = (ino, at)
    return ends


def run_counted(
    tmp_path: Path, writers: int, n: int, slow: float = 0.0, segment_bytes: int = 1 << 26
) -> list[dict]:
    """``writers`` processes released together, ``n`` appends each: their reports."""
    root = tmp_path / "log"
    FileLog(root, segment_bytes=segment_bytes).close()
    start = SPAWN.Barrier(writers)
    outs = [tmp_path / f"w{i}.json" for i in range(writers)]
    procs = [
        SPAWN.Process(target=w.counted_writer, args=(str(root), i, n, start, str(outs[i]), slow))
        for i in range(writers)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
        assert p.exitcode == 0
    return [orjson.loads(o.read_bytes()) for o in outs]


def uncovered(root: Path, reports: list[dict]) -> list[int]:
    """Acknowledged seqs with no sync of their segment, in any process, that began with
    the record's bytes in the file and completed before the append returned."""
    syncs: dict[int, list[tuple[int, int]]] = {}  # inode -> [(completed at, size at start)]
    for r in reports:
        assert r["count"] == len(r["syncs"])  # the log's own count: every sync seen here
        for ino, size, done in r["syncs"]:
            syncs.setdefault(ino, []).append((done, size))
    for v in syncs.values():
        v.sort()
    ends = record_ends(root)
    missing = []
    for r in reports:
        for seq, acked_at in r["acks"]:
            ino, end = ends[seq]
            done = syncs.get(ino, [])
            before = done[: bisect.bisect_right(done, (acked_at, 1 << 62))]
            if not any(size >= end for _, size in before):
                missing.append(seq)
    return missing


def test_every_acknowledged_append_is_covered_by_a_completed_sync(tmp_path: Path) -> None:
    writers, n = 6, 120
    reports = run_counted(tmp_path, writers, n)
    acks = sorted(seq for r in reports for seq, _ in r["acks"])
    assert acks == list(range(1, writers * n + 1))
    missing = uncovered(tmp_path / "log", reports)
    assert not missing, f"{len(missing)} acknowledged appends with no completed sync"
    total = sum(r["count"] for r in reports)
    assert 0 < total <= writers * n  # a writer whose record a sync already covered skips its own


def test_coverage_holds_across_segment_rotations(tmp_path: Path) -> None:
    """4 KB segments: the log rotates every few records, so leaders find the end in a
    newer segment than the one they wrote to (and sync that one), and records in a
    segment rotated out rely on the sync made when it was closed."""
    writers, n = 6, 60
    reports = run_counted(tmp_path, writers, n, segment_bytes=4096)
    assert len(list((tmp_path / "log" / "segments").iterdir())) > 10
    acks = sorted(seq for r in reports for seq, _ in r["acks"])
    assert acks == list(range(1, writers * n + 1))
    missing = uncovered(tmp_path / "log", reports)
    assert not missing, f"{len(missing)} acknowledged appends with no completed sync"
    with FileLog(tmp_path / "log", notify=False) as log:
        assert log.verify().ok


def test_concurrent_writers_share_syncs(tmp_path: Path) -> None:
    """8 writers released together on a slow disk (30 ms added to every fdatasync): while
    one leader syncs, the others write and queue, and the next sync covers them all. A
    writer syncing for itself alone (no sharing) would make syncs == appends; the
    leader protocol gives about half the writers per sync, so at least 2 appends each."""
    writers, n = 8, 25
    reports = run_counted(tmp_path, writers, n, slow=0.03)
    appends = writers * n
    syncs = sum(r["count"] for r in reports)
    assert sorted(seq for r in reports for seq, _ in r["acks"]) == list(range(1, appends + 1))
    assert not uncovered(tmp_path / "log", reports)
    assert 0 < syncs * 2 <= appends, f"{syncs} fdatasyncs for {appends} appends: not shared"
    # every process's syncs: more than one writer led (no writer syncs for all forever)
    assert sum(1 for r in reports if r["count"]) > 1


def test_kill_9_of_fsync_writers_loses_nothing_acknowledged(tmp_path: Path) -> None:
    root = tmp_path / "log"
    FileLog(root).close()
    acks_dir = tmp_path / "acks"
    acks_dir.mkdir()
    kills = 0
    wid = 0
    live: dict[int, mp.process.BaseProcess] = {}
    deadline = time.monotonic() + 60
    while kills < 12 and time.monotonic() < deadline:
        while len(live) < 4:
            wid += 1
            p = SPAWN.Process(
                target=w.acking_writer, args=(str(root), wid, str(acks_dir / f"{wid}.ack"))
            )
            p.start()
            live[wid] = p
        writing = [i for i in sorted(live) if (acks_dir / f"{i}.ack").exists()]
        if not writing:  # spawned writers still importing: kill only ones mid-append
            time.sleep(0.05)
            continue
        time.sleep(0.02 * (1 + kills % 5))
        p = live.pop(writing[kills % len(writing)])
        assert p.pid is not None
        os.kill(p.pid, signal.SIGKILL)
        p.join(10)
        kills += 1
    for p in live.values():
        assert p.pid is not None
        os.kill(p.pid, signal.SIGKILL)
        p.join(10)
    acked: dict[str, int] = {}
    for f in acks_dir.iterdir():
        for line in f.read_bytes().split(b"\n")[:-1]:  # an unfinished last line: not acked
            seq, eid = line.split(b" ")
            acked[eid.decode()] = int(seq)
    assert len(acked) > 50
    with FileLog(root, notify=False) as log:
        by_id = {e.id: e.seq for e in log.read()}
        assert log.verify().ok
    lost = {i: s for i, s in acked.items() if by_id.get(i) != s}
    assert not lost, f"{len(lost)} acknowledged appends lost, e.g. {list(lost.items())[:3]}"
    mark = struct.unpack_from("<Q", (root / "sync").read_bytes(), 16)[0]
    assert mark >= max(acked.values())  # the durable mark covers every acknowledged seq


def sync_lock_holder(root: Path) -> int | None:
    """The pid holding ``sync.lock`` exclusively (the leader mid-sync), from /proc/locks."""
    ino = (root / "sync.lock").stat().st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        f = line.split()
        if "->" in f or len(f) < 6 or f[1] != "FLOCK" or f[3] != "WRITE":
            continue  # (a blocked request, another kind of lock, a shared holder)
        if int(f[5].rsplit(":", 1)[1]) == ino:
            return int(f[4])
    return None


def read_acks(acks_dir: Path) -> dict[str, int]:
    """id -> seq of every append a writer saw return (an unfinished last line: not acked)."""
    acked: dict[str, int] = {}
    for f in acks_dir.iterdir():
        for line in f.read_bytes().split(b"\n")[:-1]:
            seq, eid = line.split(b" ")
            acked[eid.decode()] = int(seq)
    return acked


def durable_mark(root: Path) -> int:
    return int(struct.unpack_from("<Q", (root / "sync").read_bytes(), 16)[0])


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks (Linux)")
def test_a_leader_stopped_then_killed_mid_sync_lets_nothing_through(tmp_path: Path) -> None:
    """The writer holding ``sync.lock`` (the leader) is stopped (SIGSTOP) while it holds
    it, then killed (SIGKILL), several times over. While it is stopped the durable mark
    cannot move and no append above the mark is acknowledged (every writer waits for a
    completed sync); once it is dead the others go on (the lock died with it, the next
    leader syncs again); and nothing acknowledged is lost."""
    root = tmp_path / "log"
    FileLog(root).close()
    acks_dir = tmp_path / "acks"
    acks_dir.mkdir()
    live: dict[int, mp.process.BaseProcess] = {}
    wid = 0
    stopped_leaders = 0
    deadline = time.monotonic() + 120
    while stopped_leaders < 4 and time.monotonic() < deadline:
        while len(live) < 5:
            wid += 1
            p = SPAWN.Process(
                target=w.acking_writer, args=(str(root), wid, str(acks_dir / f"{wid}.ack"))
            )
            p.start()
            assert p.pid is not None
            live[p.pid] = p
        if not (root / "sync.lock").exists() or len(read_acks(acks_dir)) < 20:
            time.sleep(0.05)  # writers still starting
            continue
        pid = sync_lock_holder(root)
        if pid not in live:
            continue
        os.kill(pid, signal.SIGSTOP)
        if sync_lock_holder(root) != pid:  # it let go before it stopped: not mid-sync
            os.kill(pid, signal.SIGCONT)
            continue
        mark = durable_mark(root)
        before = set(read_acks(acks_dir))
        time.sleep(0.3)  # the others write and queue behind the stopped leader
        during = {i: s for i, s in read_acks(acks_dir).items() if i not in before}
        assert durable_mark(root) == mark  # only the holder of sync.lock raises it
        above = {i: s for i, s in during.items() if s > mark}
        assert not above, f"acknowledged while the leader was stopped, above the mark: {above}"
        os.kill(pid, signal.SIGKILL)
        live.pop(pid).join(10)
        stopped_leaders += 1
    assert stopped_leaders == 4
    grown = len(read_acks(acks_dir))
    while len(read_acks(acks_dir)) < grown + 20 and time.monotonic() < deadline:
        time.sleep(0.05)  # the survivors go on past the dead leaders
    assert len(read_acks(acks_dir)) >= grown + 20
    for p in live.values():
        assert p.pid is not None
        os.kill(p.pid, signal.SIGKILL)
        p.join(10)
    acked = read_acks(acks_dir)
    with FileLog(root, notify=False) as log:
        by_id = {e.id: e.seq for e in log.read()}
        assert log.verify().ok
    lost = {i: s for i, s in acked.items() if by_id.get(i) != s}
    assert not lost, f"{len(lost)} acknowledged appends lost, e.g. {list(lost.items())[:3]}"
    assert durable_mark(root) >= max(acked.values())


@pytest.mark.parametrize("many", [False, True])
def test_a_retry_of_a_stored_record_returns_once_it_is_durable(tmp_path: Path, many: bool) -> None:
    """Session 7: an fsync append whose id is already stored (a retry, or the same event
    sent by two writers) returns only once a completed fdatasync covers the stored
    record, as a fresh one does: the writer that stored it may not have synced it yet."""
    root = tmp_path / "log"
    ev = Event(agent="a", type="t", id="same")
    with FileLog(root, notify=False) as fast:  # (page cache only: written, not synced)
        fast.append(Event(agent="a", type="t"))
        stored = fast.append(ev)
        with FileLog(root, notify=False, durability="fsync") as durable:
            assert durable._sync._words()[2] < stored.seq  # (nobody synced it)
            got = durable.append_many([ev])[0] if many else durable.append(ev)
            assert got.seq == stored.seq
            assert durable._sync._words()[2] >= stored.seq  # (a sync covered it before the return)
