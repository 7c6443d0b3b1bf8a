"""Bounded checkpoints (small-items work, acceptance 3): the newest K plus pinned ones, crash-safe.

After 40 checkpoints written by the synthesizer at ``checkpoint_every=200`` at most K
(+ pinned) files remain and a replay from the newest equals one from the start; a saver
SIGKILLed at 30 random points (mid-write, mid-prune, between) always leaves a loadable
checkpoint at least as new as the newest one before the kill, and no temporary file
survives the next open.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swarmlog import Event, FileLog, open_log
from synthesizer.config import SynthConfig, SynthSettings
from synthesizer.replay import load_checkpoint, save_checkpoint, state_at
from synthesizer.worker.synth import Synthesizer

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)

REPO = Path(__file__).resolve().parent.parent
KEEP = 3


def _shares(n: int, round_: int) -> list[Event]:
    return [
        Event(
            agent=f"agent-{i % 5}",
            type="memory.shared",
            body={"content": f"round {round_} finding {i} on component {i % 40}"},
        )
        for i in range(n)
    ]


def test_forty_checkpoints_keep_k_plus_pinned(tmp_path: Path) -> None:
    cfg = SynthConfig(synthesizer=SynthSettings(checkpoint_every=200, checkpoint_keep=KEEP))
    root = tmp_path / "s"
    log = open_log(root, notify=False)
    worker = Synthesizer(log, cfg)
    written: set[int] = set()
    pinned = 0
    for r in range(44):
        log.append_many(_shares(110, r))
        worker.run_once()  # decides, and checkpoints every 200 events
        written.update(i.seq for i in log.checkpoints.list())
        if r == 12:
            pinned = save_checkpoint(log, worker.state, pinned=True)
        files = list((root / "checkpoints").glob("ckpt-*.bin"))
        assert len(files) <= KEEP + (1 if pinned else 0)
    assert len(written) >= 40
    infos = log.checkpoints.list()
    assert [i.seq for i in infos if i.pinned] == [pinned]
    assert len(infos) == KEEP + 1
    assert [i.seq for i in infos if not i.pinned] == sorted(written)[-KEEP:]
    newest = load_checkpoint(log)
    assert newest is not None and newest.last_seq == infos[-1].seq
    assert state_at(log).digest() == state_at(log, from_start=True).digest()
    at_pin = state_at(log, at_seq=pinned)
    assert at_pin.digest() == state_at(log, at_seq=pinned, from_start=True).digest()
    log.close()


SAVER = (
    "import os, sys\n"
    "from swarmlog import Event, open_log\n"
    "log = open_log(sys.argv[1], notify=False)\n"
    "data = os.urandom(int(sys.argv[2]))\n"
    "while True:\n"
    "    ev = log.append(Event(agent='w', type='note', body={}))\n"
    "    log.checkpoints.save(ev.seq, data, 'blob/1', keep=int(sys.argv[3]))\n"
)


def test_kill_9_during_write_or_prune_leaves_a_loadable_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "s"
    size = 3 << 20
    with FileLog(root, notify=False) as log:
        ev = log.append(Event(agent="w", type="note", body={}))
        log.checkpoints.save(ev.seq, os.urandom(size), "blob/1", keep=KEEP)
    rng = random.Random(11)
    newest_before = 1
    mid_write = 0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for _ in range(30):
        p = subprocess.Popen(
            [sys.executable, "-c", SAVER, str(root), str(size), str(KEEP)], env=env, cwd=REPO
        )
        time.sleep(rng.uniform(0.3, 1.6))
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)
        ckdir = root / "checkpoints"
        mid_write += any(n.endswith(".tmp") for n in os.listdir(ckdir))
        with FileLog(root, notify=False) as log:  # opening cleans the dead saver's tmp
            assert not [n for n in os.listdir(ckdir) if n.endswith(".tmp")]
            ck = log.checkpoints.latest(format="blob/1")
            assert ck is not None and len(ck.data) == size
            assert ck.seq >= newest_before  # never older than what existed before
            newest_before = ck.seq
            # a kill between the rename and the prune may leave one extra, never more
            assert len(log.checkpoints.list()) <= KEEP + 1
    assert newest_before > 1
    print(f"kills that left a partial tmp file (mid-write): {mid_write} of 30")
