"""A crowd of writer processes, SIGKILLed at random moments while they append singles,
batches, shared ids and compare-and-swaps under both durabilities: nothing acknowledged
is lost or changed, every seq is used once, every CAS held, and the shared writer index
equals the log read back. With more live writers than two per core the writers post
their records for the lock's holder (flat combining), so kills also land in posts, in
combined batches and in the group commit's waits (test_filelog_crash keeps two writers
at a time: it never combines)."""

from __future__ import annotations

import bisect
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from swarmlog import Event
from swarmlog.file.log import FileLog

from .indexworkers import index_view

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("writers", "env"),
    [
        (12, {}),  # crowded on 2 cores: the waiters post
        (6, {"SWARMLOG_POST_CROWD": "0", "SWARMLOG_POST_WAIT": "16384"}),  # as on many cores
        (6, {"SWARMLOG_POST_CROWD": "0", "SWARMLOG_COMBINE_STICKY": "8"}),  # (combine.more)
    ],
    ids=["crowded", "posting-awake", "sticky"],
)
def test_a_killed_crowd_loses_nothing(tmp_path: Path, writers: int, env: dict[str, str]) -> None:
    rnd = random.Random(writers)
    root = str(tmp_path / "log")
    FileLog(root, notify=False).close()
    acks: list[list[str]] = []
    guard = threading.Lock()
    procs: list[tuple[subprocess.Popen[str], threading.Thread]] = []
    penv = {**os.environ, **env, "PYTHONPATH": str(ROOT)}

    def read(p: subprocess.Popen[str]) -> None:
        assert p.stdout is not None
        for line in p.stdout:
            with guard:
                acks.append(line.split())

    def spawn() -> None:
        name = f"w{len(procs)}"
        durability = rnd.choice(["process", "fsync"])
        cmd = [sys.executable, "-m", "tests.swarmkillworkers", root, name, durability]
        p = subprocess.Popen(
            [*cmd, str(rnd.randrange(1 << 30))], stdout=subprocess.PIPE, text=True, env=penv
        )
        t = threading.Thread(target=read, args=(p,), daemon=True)
        t.start()
        procs.append((p, t))

    for _ in range(writers):
        spawn()
    started = time.monotonic()
    while len(acks) < 200:  # (the writers started: interpreters are slow on a busy host)
        assert time.monotonic() - started < 120, "the writers did not start appending"
        assert any(p.poll() is None for p, _ in procs), "every writer exited"
        time.sleep(0.05)
    kills = 0
    end = time.monotonic() + 6.0
    while time.monotonic() < end:
        time.sleep(rnd.uniform(0.01, 0.15))
        live = [p for p, _ in procs if p.poll() is None]
        assert live, f"every writer exited: {[p.returncode for p, _ in procs]}"
        rnd.choice(live).send_signal(signal.SIGKILL)
        kills += 1
        spawn()
    for p, _ in procs:
        p.send_signal(signal.SIGKILL)
    for p, t in procs:
        p.wait()
        t.join()
    assert {p.returncode for p, _ in procs} == {-signal.SIGKILL}  # (no worker's check failed)

    with FileLog(root, notify=False) as log:
        stored = list(log.read())
        assert log.verify().ok
        after = log.append(Event(agent="after", type="t"))
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert after.seq == len(stored) + 1
    by_id = {e.id: e for e in stored}
    assert len(by_id) == len(stored)  # (every id once: retries got the stored event)
    assert kills >= 20 and len(acks) > 1000
    keyed: dict[str, list[int]] = {}
    for x in stored:
        if x.key is not None:
            keyed.setdefault(x.key, []).append(x.seq)
    cas = 0
    for a in acks:
        e = by_id.get(a[1])
        assert e is not None and e.seq == int(a[2]), a
        if a[0] == "C":  # the key's latest version before this record was the expected one
            key, expected = a[3], int(a[4])
            seqs = keyed[key]
            at = bisect.bisect_left(seqs, e.seq)
            assert seqs[at] == e.seq and (seqs[at - 1] if at else 0) == expected, a
            cas += 1
    assert cas > 20
    view = index_view(root)
    assert view is not None, "index not trusted"
    assert view[1] == {e.id: e.seq for e in [*stored, after]}
    assert view[0][0] == after.seq + 1
