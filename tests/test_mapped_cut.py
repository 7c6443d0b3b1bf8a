"""Mapped files cut under live writers: nobody dies of SIGBUS, nothing acknowledged is lost.

``combine`` and ``index`` are mapped by every writer and ``view.idx`` was mapped by a
fresh one; truncating any of them under live writers killed the writers by SIGBUS (a
touch of a mapped page past the end of its file). Now a cut shared mapping is extended
back by the process that touches it (swarmlog/file/view/mapguard.py: the index is then
rebuilt, the slots are free) and ``view.idx`` is read into memory. docs/faults.md, "The
writer index lost, replaced or cut".
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swarmlog import Event
from swarmlog.file.log import FileLog

ROOT = Path(__file__).resolve().parent.parent

WRITER = """
import sys, time
from swarmlog import Event
from swarmlog.errors import SwarmlogError
from swarmlog.file.log import FileLog
root, name, stop = sys.argv[1], sys.argv[2], sys.argv[3]
import os
with FileLog(root, notify=False) as log:
    i = 0
    while not os.path.exists(stop):
        ev = Event(agent=name, type="t", id=f"{name}-{i}", key=f"k{i % 5}", body={"i": i})
        if i % 7 == 3:
            evs = [ev, Event(agent=name, type="t", id=f"{name}-{i}b")]
        for attempt in range(100):
            try:
                if i % 7 == 3:
                    got = log.append_many(evs)
                    sys.stdout.write("".join(f"{e.id} {e.seq}\\n" for e in got))
                else:
                    got1 = log.append(ev)
                    if i % 11 == 0:  # a retry of an id stored already: the stored one
                        assert log.append(ev).seq == got1.seq
                    sys.stdout.write(f"{got1.id} {got1.seq}\\n")
                break
            except SwarmlogError as e:
                sys.stderr.write(f"retry: {e}\\n")
                time.sleep(0.01)
        else:
            raise SystemExit("gave up")
        sys.stdout.flush()
        i += 1
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_truncating_mapped_files_under_eight_writers_kills_none(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:  # (a view snapshot to cut, too)
        for i in range(3000):
            log.append(Event(agent="seed", type="t", id=f"seed-{i}"))
    stop = tmp_path / "stop"
    procs = [
        subprocess.Popen(
            [sys.executable, "-X", "faulthandler", "-c", WRITER, str(root), f"w{n}", str(stop)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n in range(8)
    ]
    rnd = random.Random(7)
    cuts = 0
    try:
        time.sleep(1.0)
        for k in range(20):
            name = ("combine", "index", "view.idx")[k % 3]
            path = root / name
            if path.exists():
                size = path.stat().st_size
                os.truncate(path, rnd.choice([0, 100, size // 2]))
                cuts += 1
            time.sleep(0.15)
        time.sleep(0.5)
    finally:
        stop.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, (p.returncode, err.decode()[-2000:])
    assert cuts >= 14
    acked: dict[str, int] = {}
    for out, _ in outs:
        for line in out.decode().splitlines():
            eid, seq = line.split()
            acked[eid] = int(seq)
    assert len(acked) > 100
    with FileLog(root, notify=False) as log:
        stored = [(e.seq, e.id) for e in log.read()]
        assert log.verify().ok
    assert [s for s, _ in stored] == list(range(1, len(stored) + 1))  # gapless
    by_id = {i: s for s, i in stored}
    assert len(by_id) == len(stored)  # no id stored twice
    assert all(by_id.get(eid) == seq for eid, seq in acked.items())
