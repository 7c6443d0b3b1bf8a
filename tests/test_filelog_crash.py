"""Acceptance 2: writers SIGKILLed at random moments lose nothing they acknowledged.

A helper process (spawned, single-threaded) forks writer children and kills them with
SIGKILL at random moments, 200+ times; the writers append singles and batches (some big
enough that a kill lands inside ``write()``) and ack every append that returned. A
follower in a third process watches the whole time. Afterwards: every acked append is in
the log with its seq, no torn record survives the next append, the follower only ever
saw the final log's prefix (never a record that was later cut), and batches are whole.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from swarmlog.envelope import check_crc
from tests import logworkers as w

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)

SPAWN = mp.get_context("spawn")


def test_sigkill_writers(tmp_path: Path) -> None:
    root = tmp_path / "log"
    FileLog(root).close()
    q = SPAWN.Queue()
    # the follower stops after 8 s without a new record (1.5 s was too short on a loaded host)
    fol = SPAWN.Process(target=w.follower, args=(str(root), 1, 10**9, 8.0, q))
    fol.start()
    assert q.get(30)[0] == "ready"
    crasher = SPAWN.Process(target=w.crash_run, args=(str(root), 220, 7))
    crasher.start()
    crasher.join(120)
    assert crasher.exitcode == 0
    seen, _ = q.get(60)
    fol.join(30)

    acks = w.read_acks(str(root))
    with FileLog(root, notify=False) as log:
        log.append(Event(agent="after", type="test.event"))  # cuts any torn tail
        stored = list(log.read())
        rep = log.verify()
    assert rep.ok, rep.problems
    assert not any("torn final" in n for n in rep.notes)
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    by_id = {e.id: e.seq for e in stored}
    lost = {i: s for i, s in acks.items() if by_id.get(i) != s}
    assert not lost, f"{len(lost)} acknowledged appends lost, e.g. {list(lost.items())[:3]}"
    assert len(acks) > 1000
    # the follower saw exactly a prefix of the final log: no record it saw was ever cut
    assert seen == [(e.seq, e.id) for e in stored[: len(seen)]]
    assert len(seen) >= len(stored) - 1
    # batches are whole in the log
    sizes: dict[str, int] = {}
    for e in stored:
        b = e.body.get("batch")
        if b is not None:
            sizes[b] = sizes.get(b, 0) + 1
            assert sizes[b] <= e.body["n"]
    for e in stored:
        b = e.body.get("batch")
        if b is not None:
            assert sizes[b] == e.body["n"], b
    for seg in sorted((root / "segments").iterdir()):
        assert all(check_crc(line) for line in seg.read_bytes().splitlines())


def test_sigkill_spawned_subprocess_writers(tmp_path: Path) -> None:
    """The same promise with writers started as fresh interpreters (no fork)."""
    root = tmp_path / "log"
    FileLog(root).close()
    code = (
        "import sys, os\n"
        "from swarmlog import FileLog, Event\n"
        "log = FileLog(sys.argv[1])\n"
        "pad = 'y' * 4000\n"
        "n = 0\n"
        "while True:\n"
        "    n += 1\n"
        "    out = log.append_many([Event(agent='p', type='test.event', "
        "id=f'{sys.argv[2]}-{n}-{i}', body={'pad': pad}) for i in range(50)])\n"
        "    sys.stdout.write(f'{out[0].seq} {out[-1].id}\\n'); sys.stdout.flush()\n"
    )
    acked: dict[str, int] = {}
    for k in range(4):
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, str(root), f"p{k}{j}"], stdout=subprocess.PIPE
            )
            for j in range(2)
        ]
        # Readiness handshake instead of a fixed delay: each writer's first acknowledged
        # batch is awaited (a slow interpreter start no longer means nothing to check),
        # then the writers run on a little before the kill lands mid-work.
        first = [p.stdout.readline() if p.stdout else b"" for p in procs]
        time.sleep(0.05 * (k + 1))
        for p, head in zip(procs, first, strict=True):
            p.send_signal(signal.SIGKILL)
            out, _ = p.communicate()
            for line in (head + out).decode().splitlines():
                parts = line.split()
                if len(parts) == 2:
                    acked[parts[1]] = int(parts[0]) + 49
    with FileLog(root, notify=False) as log:
        log.append(Event(agent="after", type="test.event"))
        by_id = {e.id: e.seq for e in log.read()}
        assert log.verify().ok
    assert acked and all(by_id.get(i) == s for i, s in acked.items())
    assert list(by_id.values()) == list(range(1, len(by_id) + 1))
