"""Checkpoints written off the decision path (``synthesizer.checkpoints.writer``): a forked child
writes the frozen state while the worker keeps deciding; what it writes equals a replay
from the start; a child killed with SIGKILL leaves the previous checkpoint in use."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.checkpoints import vectors, writer
from synthesizer.config import SynthConfig, SynthSettings
from synthesizer.replay import load_checkpoint_info, state_at
from synthesizer.search.factindex import FactIndex
from synthesizer.state import payload
from synthesizer.worker.synth import Synthesizer, facts_digest

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _share(log: object, lo: int, hi: int) -> None:
    log.append_many(  # type: ignore[attr-defined]
        [
            Event(
                agent=f"a{i % 3}",
                type=T.MEMORY_SHARED,
                body={"content": f"the {i % 7} service note {i} mentions zq{i} and kx{i * 3}"},
            )
            for i in range(lo, hi)
        ]
    )


def _worker(path: Path) -> Synthesizer:
    log = open_log(path)
    cfg = SynthConfig(synthesizer=SynthSettings(checkpoint_every=1))
    return Synthesizer(log, config=cfg, background_checkpoints=True)


def test_background_checkpoint_while_deciding_equals_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = _worker(tmp_path / "s")
    log = w.log
    _share(log, 0, 300)
    monkeypatch.setenv(writer.STALL_ENV, "5")  # the child sleeps before writing (past
    # the second pass below, on a loaded machine too: its checkpoint is the one settled)
    assert w.run_once() == 300
    assert w.bg_checkpoint.running  # the pass returned; the child is writing
    at = w.last_checkpoint
    assert at == log.last_seq and log.checkpoints.latest() is None
    # the worker keeps deciding while the child writes
    _share(log, 300, 400)
    assert w.run_once() == 100
    assert w.bg_checkpoint.running and log.last_seq > at
    monkeypatch.delenv(writer.STALL_ENV)
    done = writer.settle(w, wait=True)
    assert done is not None and done.kind == "ok" and done.seq == at
    ck = log.checkpoints.latest()
    assert ck is not None and ck.seq == at
    info = ck.info
    # the checkpoint loads and equals a replay from the start to its seq, byte for byte
    loaded, got = load_checkpoint_info(log) or (None, None)
    assert loaded is not None and got is not None and got.seq == at
    ref = state_at(log, at, from_start=True)
    assert loaded.digest() == ref.digest()
    assert facts_digest(loaded) == facts_digest(ref)
    assert bytes(ck.data) == payload.encode(ref)
    # its vector file maps and holds the replayed facts' vectors
    index = FactIndex(w.index.embedder)
    assert vectors.attach(log, info, index)
    ref_index = FactIndex(w.index.embedder)
    ref_index.sync(ref)
    ids, mat = index.default.matrix()
    ref_ids, ref_mat = ref_index.default.matrix()
    assert sorted(ids) == sorted(ref_ids) and len(ids) == len(ref.facts)
    order = np.argsort(ids)
    ref_order = np.argsort(ref_ids)
    assert np.array_equal(np.asarray(mat)[order], np.asarray(ref_mat)[ref_order])
    # and the worker's state after the run is a replay of the whole log from the checkpoint
    assert facts_digest(w.state) == facts_digest(state_at(log))
    log.close()


@pytest.mark.slow
def test_kill_9_during_background_checkpoint_keeps_the_previous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = _worker(tmp_path / "s")
    log = w.log
    _share(log, 0, 100)
    assert w.run_once() == 100
    writer.settle(w, wait=True)  # the first checkpoint, complete
    first = log.checkpoints.latest()
    assert first is not None and first.seq == log.last_seq
    _share(log, 100, 200)
    monkeypatch.setenv(writer.STALL_ENV, "60")
    assert w.run_once() == 100
    pid = w.bg_checkpoint.pid
    assert pid > 0
    time.sleep(0.2)  # the child is in its stall (or writing): a real SIGKILL either way
    os.kill(pid, signal.SIGKILL)
    done = writer.settle(w, wait=True)
    assert done is not None and done.kind == "killed"
    # the previous checkpoint is the one in use, and it still loads and verifies
    latest = log.checkpoints.latest()
    assert latest is not None and latest.seq == first.seq
    state, info = load_checkpoint_info(log) or (None, None)
    assert state is not None and info is not None and info.seq == first.seq
    assert state.digest() == state_at(log, first.seq, from_start=True).digest()
    # a fresh worker opens from it and folds the rest: same state as a replay from the start
    w2 = Synthesizer(open_log(tmp_path / "s"))
    w2.catch_up()
    assert w2.state.digest() == state_at(log, from_start=True).digest()
    w2.log.close()
    # the next due checkpoint is written (the killed one's temporary file is no obstacle)
    monkeypatch.delenv(writer.STALL_ENV)
    _share(log, 200, 210)
    assert w.run_once() == 10
    done = writer.settle(w, wait=True)
    assert done is not None and done.kind == "ok"
    latest = log.checkpoints.latest()
    assert latest is not None and latest.seq == log.last_seq
    log.close()


def test_forced_checkpoint_waits_for_the_child_then_writes_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = _worker(tmp_path / "s")
    log = w.log
    _share(log, 0, 50)
    monkeypatch.setenv(writer.STALL_ENV, "0.3")
    assert w.run_once() == 50
    assert w.bg_checkpoint.running
    _share(log, 50, 60)
    w.catch_up()
    assert w.maybe_checkpoint(force=True)
    assert not w.bg_checkpoint.running
    seqs = [i.seq for i in log.checkpoints.list()]
    assert seqs[-1] == log.last_seq and len(seqs) == 2  # the child's, then the forced one
    log.close()


def test_without_background_the_checkpoint_is_inline(tmp_path: Path) -> None:
    log = open_log(tmp_path / "s")
    w = Synthesizer(log, config=SynthConfig(synthesizer=SynthSettings(checkpoint_every=1)))
    _share(log, 0, 20)
    assert w.run_once() == 20
    assert not w.bg_checkpoint.running
    latest = log.checkpoints.latest()
    assert latest is not None and latest.seq == log.last_seq
    log.close()


FREEZE_PROBE = """
import gc, sys
from swarmlog import Event, open_log
from synthesizer.worker.synth import Synthesizer
log = open_log(sys.argv[1])
log.append(Event(agent="a", type="memory.shared", body={"content": "the probe note zq1"}))
w = Synthesizer(log, background_checkpoints=sys.argv[2] == "1")
checks = iter(range(3))
w.run(stop=lambda: next(checks) >= 2, poll=0.01)  # two passes
print(w.decisions, gc.get_freeze_count())
"""


@pytest.mark.parametrize("own", [True, False])
def test_a_worker_of_its_own_freezes_its_heap_after_the_first_pass(
    tmp_path: Path, own: bool
) -> None:
    """The CLI's worker (``background_checkpoints``) moves its state out of the GC's reach
    after its first pass (``heapfreeze``: full collections cost 65-160 ms at 50k facts);
    a library caller's worker leaves its process's GC alone."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", FREEZE_PROBE, str(tmp_path / "s"), "1" if own else "0"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    assert out[0] == "1"  # the memory was decided
    assert (int(out[1]) > 10_000) is own
