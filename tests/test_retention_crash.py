"""Retention under fire (retention work): kill -9 during compaction, and compaction under load.

Real processes throughout: the compaction runs in a child killed with SIGKILL at random
moments; appenders and a follower are children writing and reading while it runs.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, EventIdReused, FileLog
from swarmlog.file.archive import RetentionError
from swarmlog.file.compact import compact, eligible

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parent.parent


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.retentionworkers", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
    )


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["archive", "delete"])
def test_kill_during_compaction_at_random_points(tmp_path: Path, mode: str) -> None:
    rng = random.Random(17)
    log = FileLog(tmp_path, segment_bytes=4096)
    acked: list[str] = []
    mid = 0
    for round_ in range(20):
        for i in range(250):  # ~8 segments a round
            acked.append(log.append(Event(agent="a", type="t", body={"r": round_, "i": i})).id)
        point = log.last_seq - 30
        log.checkpoints.save(point, b"state", "test/1")
        before = len(os.listdir(tmp_path / "segments"))
        steps = rng.randint(1, max(1, len(eligible(log, point)) - 1))
        p = _spawn("compact", str(tmp_path), str(point), mode)
        assert p.stdout is not None and p.stdout.readline() == b"ready\n"
        for _ in range(steps):  # a random point of its own progress, then a little more
            p.stdout.readline()
        time.sleep(rng.uniform(0.0, 0.005))
        p.send_signal(signal.SIGKILL)
        p.wait()
        # mid-compaction: it removed segments but left some it would still take
        progress = len(os.listdir(tmp_path / "segments")) < before
        mid += p.returncode == -signal.SIGKILL and progress and bool(eligible(log, point))
        rep = FileLog(tmp_path).verify()
        assert rep.ok, (round_, rep.problems)
        # writers keep working on a log left mid-compaction
        acked.append(log.append(Event(agent="a", type="t", body={"after": round_})).id)
    print(f"{mode}: {mid} of 20 kills mid-compaction")
    assert mid >= 5  # the others land before its first unlink (also crash points)
    res = compact(FileLog(tmp_path), log.last_seq, mode)  # the re-run completes
    fresh = FileLog(tmp_path)
    assert fresh.verify().ok
    assert eligible(fresh, fresh.last_seq) == [] and res.first_seq > 1
    # no acknowledged event lost: readable (archive) or known to the id index (both)
    for eid in rng.sample(acked, 200):
        try:
            again = fresh.append_many([Event(agent="a", type="t", id=eid, body={})])
            assert again[0].id == eid
        except EventIdReused as e:  # known (other content than this probe's): not stored
            assert e.event_id == eid and e.seq >= 1
        except RetentionError:  # its original was deleted: known, so not stored again
            assert mode == "delete"
    assert fresh.last_seq == len(acked)
    if mode == "archive":
        assert [e.id for e in fresh.read(1)] == acked


def test_kill_points_total_at_least_30(tmp_path: Path) -> None:
    """Acceptance 3 counts kills across both modes: 16 + 16 rounds, plus this many more
    kills right after "ready" (before or during the first archive write)."""
    log = FileLog(tmp_path, segment_bytes=4096)
    for i in range(2000):
        log.append(Event(agent="a", type="t", body={"i": i}))
    log.checkpoints.save(1900, b"state", "test/1")
    for k in range(4):
        p = _spawn("compact", str(tmp_path), "1900", "archive")
        assert p.stdout is not None and p.stdout.readline() == b"ready\n"
        time.sleep(0.002 * k)
        p.kill()
        p.wait()
        assert FileLog(tmp_path).verify().ok
    compact(log, 1900)
    assert [e.seq for e in FileLog(tmp_path).read(1)] == list(range(1, 2001))


def test_appenders_and_follower_keep_working_while_compacting(tmp_path: Path) -> None:
    log = FileLog(tmp_path, segment_bytes=4096)
    n, writers = 1500, 2
    outs = [tmp_path / f"w{w}.json" for w in range(writers)]
    fout = tmp_path / "follow.json"
    follower = _spawn("follow", str(tmp_path), str(n * writers), str(fout))
    procs = [_spawn("append", str(tmp_path), str(w), str(n), str(outs[w])) for w in range(writers)]
    reader = _spawn("readall", str(tmp_path), "40", str(tmp_path / "reads.json"))
    compactions = 0
    while any(p.poll() is None for p in procs):
        last = log.last_seq
        if last > 200:
            log.checkpoints.save(last - 100, b"state", "test/1")
            compactions += bool(compact(log, last - 100).segments)
        time.sleep(0.05)
    assert all(p.wait() == 0 for p in procs)
    assert follower.wait() == 0 and reader.wait() == 0
    reads = orjson.loads((tmp_path / "reads.json").read_bytes())
    assert len(reads) == 40 and all(reads)
    assert compactions >= 1
    fresh = FileLog(tmp_path)
    assert fresh.verify().ok
    stored = {e.id: e.seq for e in fresh.read(1)}
    assert len(stored) == n * writers == fresh.last_seq
    for w, out in enumerate(outs):
        seqs = orjson.loads(out.read_bytes())
        assert [stored[f"w{w}-{i}"] for i in range(n)] == seqs
    seen = orjson.loads(fout.read_bytes())
    assert [s for s, _ in seen] == list(range(1, n * writers + 1))
    assert {i for _, i in seen} == set(stored)
