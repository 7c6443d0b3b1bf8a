"""The write-path work: kill -9 at every step of an index update loses nothing acknowledged.

A writer process SIGKILLs itself (a real kill -9) in its Nth index update: after the
batch is written but before the index is touched (step 1), with ``gen`` odd (2), or with
the slots stored and the end not (3). Another writer, already running or fresh, then
appends: every acknowledged event is at the seq it was told, seqs are gapless, the index
equals a rebuild from the segments, and recovery read only the records past the
committed end (no full rebuild).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from swarmlog import Event
from swarmlog.file.log import FileLog
from swarmlog.file.view.index import CRASH_ENV

from .indexworkers import index_view, segment_view

ROOT = Path(__file__).resolve().parent.parent


def killed_writer(root: Path, nth: int, step: int) -> dict[str, int]:
    env = {**os.environ, CRASH_ENV: f"{nth}:{step}"}
    res = subprocess.run(
        [sys.executable, "-m", "tests.indexworkers", str(root), "1000"],
        cwd=ROOT, env=env, capture_output=True, timeout=120,
    )
    assert res.returncode == -9, res.stderr.decode()[-2000:]
    acks = {}
    for line in res.stdout.decode().splitlines():
        i, s = line.split()
        acks[i] = int(s)
    return acks


@pytest.mark.parametrize("step", [1, 2, 3])
@pytest.mark.parametrize("nth", [1, 7])
def test_kill_during_index_update_loses_nothing(tmp_path: Path, nth: int, step: int) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as live:
        live.append(Event(agent="live", type="t", id="before", key="key0"))
        acks = killed_writer(root, nth, step)
        assert len(acks) == nth - 1  # the nth append died before it was acknowledged
        got = live.append(Event(agent="live", type="t", id="after", key="key1"))
        assert got.seq == nth + 2  # after the dead writer's (written, unacknowledged) one
        assert live.version("key0") >= 1
        assert live.index_rebuilds == 1  # (its first append built the index; none since)
    with FileLog(root, notify=False) as fresh:
        fresh.append(Event(agent="fresh", type="t", id="fresh"))
        assert fresh.index_rebuilds == 0
        stored = {e.id: e.seq for e in fresh.read()}
        seqs = [e.seq for e in fresh.read()]
    assert seqs == list(range(1, len(seqs) + 1))
    for i, s in acks.items():
        assert stored[i] == s
    assert index_view(str(root)) == segment_view(str(root))
