"""A crowd of writer processes, SIGKILLed at random moments while they append singles,
batches, shared ids and compare-and-swaps under both durabilities: nothing acknowledged
is lost or changed, every seq is used once, every CAS held, and the shared writer index
equals the log read back. With more live writers than two per core the writers post
their records for the lock's holder (flat combining), so kills also land in posts, in
combined batches and in the group commit's waits (test_filelog_crash keeps two writers
at a time: it never combines). With ``operators``, compactions (SIGKILLed half the time)
and an erasure of one writer (SIGKILLed once, then run to its end) go on beside them:
this found a compaction removing a growing index's temporary, and an opening process
removing a ``forget``'s checkpoint temporary (tests/test_compact_tmp.py,
tests/test_checkpoint_trust.py pin each)."""

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

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("writers", "env", "operators"),
    [
        (12, {}, False),  # crowded on 2 cores: the waiters post
        (6, {"SWARMLOG_POST_CROWD": "0", "SWARMLOG_POST_WAIT": "16384"}, False),  # many cores
        (6, {"SWARMLOG_POST_CROWD": "0", "SWARMLOG_COMBINE_STICKY": "8"}, False),  # (more)
        # a many-core machine's defaults: awake tries, a holder that stays, posters that nap
        (
            6,
            {
                "SWARMLOG_POST_CROWD": "0",
                "SWARMLOG_POST_WAIT": "16384",
                "SWARMLOG_COMBINE_STICKY": "64",
                "SWARMLOG_POST_NAP": "20",
            },
            False,
        ),
        (8, {}, True),  # compactions and an erasure beside the crowd, killed at times too
    ],
    ids=["crowded", "posting-awake", "sticky", "many-cores", "operators"],
)
def test_a_killed_crowd_loses_nothing(
    tmp_path: Path, writers: int, env: dict[str, str], operators: bool
) -> None:
    rnd = random.Random(writers + operators)
    root = str(tmp_path / "log")
    FileLog(root, notify=False, segment_bytes=1 << 16).close()
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
    forgotten: set[str] = set()
    compactions: list[int] = []
    ops = threading.Thread(
        target=_operate, args=(root, end, rnd.random(), forgotten, compactions, len(procs))
    )
    if operators:
        ops.start()
    while time.monotonic() < end:
        time.sleep(rnd.uniform(0.01, 0.15))
        live = [p for p, _ in procs if p.poll() is None]
        assert live, f"every writer exited: {[p.returncode for p, _ in procs]}"
        rnd.choice(live).send_signal(signal.SIGKILL)
        kills += 1
        spawn()
    if operators:
        ops.join()
        assert forgotten  # (an erasure ran to its end, beside the writers)
        assert 0 in compactions  # (and at least one compaction did)
    for p, _ in procs:
        p.send_signal(signal.SIGKILL)
    for p, t in procs:
        p.wait()
        t.join()
    assert {p.returncode for p, _ in procs} == {-signal.SIGKILL}  # (no worker's check failed)

    with FileLog(root, notify=False) as log:
        stored = list(log.read(1))  # (from seq 1: the archives of compactions too)
        assert log.verify().ok
        after = log.append(Event(agent="after", type="t"))
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    assert after.seq == len(stored) + 1
    by_id = {e.id: e for e in stored}
    assert len(by_id) == len(stored)  # (every id once: retries got the stored event)
    assert kills >= 20 and len(acks) > 1000
    erased = "~erased-"  # (an erasure renames its agent's ids and keys: redaction.py)
    keyed: dict[str, list[int]] = {}
    for x in stored:
        if x.key is not None:
            keyed.setdefault(erased if x.key.startswith(erased) else x.key, []).append(x.seq)
    cas = 0
    for a in acks:
        e = by_id.get(a[1])
        if e is None and a[1].split("-")[0] in forgotten:  # (its record, erased in place)
            assert stored[int(a[2]) - 1].id.startswith(erased), a
            continue
        assert e is not None and e.seq == int(a[2]), a
        if a[0] == "C":  # the key's latest version before this record was the expected one
            key, expected = a[3], int(a[4])
            seqs = sorted(keyed[key] + keyed.get(erased, []))
            at = bisect.bisect_left(seqs, e.seq)
            prev = seqs[at - 1] if at else 0
            if prev and str(stored[prev - 1].key).startswith(erased):
                continue  # (erased since: no longer this key's)
            assert seqs[at] == e.seq and prev == expected, a
            cas += 1
    assert cas > 20
    view = index_view(root)
    assert view is not None, "index not trusted"
    assert view[1] == {e.id: e.seq for e in [*stored, after]}
    assert view[0][0] == after.seq + 1


def _operate(
    root: str, end: float, seed: float, forgotten: set[str], compactions: list[int], first: int
) -> None:
    """An operator beside the writers until ``end``: compactions (a checkpoint, then
    ``compact`` in a child, SIGKILLed half the time once one has run to its end), and
    once an erasure (``swarmlog forget`` of a writer killed by then, itself SIGKILLed
    once and run again to its end)."""
    rnd = random.Random(seed)
    cmd = [sys.executable, "-m", "tests.retentionworkers", "compact", root]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with FileLog(root, notify=False) as log:
        while time.monotonic() < end:
            time.sleep(rnd.uniform(0.1, 0.3))
            last = log.last_seq
            if last < 2000:
                continue
            point = last - rnd.randrange(100, 1000)
            log.checkpoints.save(point, b"state", "test/1")
            c = subprocess.Popen([*cmd, str(point), "archive"], env=env, stdout=subprocess.PIPE)
            assert c.stdout is not None
            c.stdout.readline()  # ("ready")
            if 0 in compactions and rnd.random() < 0.5:  # (the first one runs to its end)
                time.sleep(rnd.uniform(0, 0.02))
                c.kill()
            compactions.append(c.wait())
            assert compactions[-1] in (0, -signal.SIGKILL)
            if not forgotten:
                victim = f"w{rnd.randrange(first)}"  # (killed by now, or soon)
                forget = ["swarmlog", "--root", root, "forget", "--agent", victim, "--force"]
                f = subprocess.Popen([sys.executable, "-m", "dashboards", *forget[1:]], env=env)
                time.sleep(rnd.uniform(0.05, 0.3))
                f.kill()  # (mid-way, or after it ended)
                f.wait()
                r = subprocess.run(
                    [sys.executable, "-m", "dashboards", *forget[1:]],
                    env=env,
                    capture_output=True,
                    text=True,
                )
                assert r.returncode == 0, r.stderr
                forgotten.add(victim)
