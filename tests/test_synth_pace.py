"""A following worker decides a stream in batches (write-path work item 2, ``worker/pace``):
the next pass waits out the gather window only after a pass that decided something,
a gathering pass leaves newer raws (fewer than a batch) to the next pass's one batch,
and a log written so replays to one digest from the start and from a checkpoint."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.replay import save_checkpoint, state_at
from synthesizer.worker.pace import Pace
from synthesizer.worker.synth import Synthesizer

DECISIONS = (T.FACT_CREATED, T.FACT_CORROBORATED, T.FACT_REVIVED)


def _share(log: object, lo: int, hi: int) -> None:
    for i in range(lo, hi):
        log.append(  # type: ignore[attr-defined]
            Event(agent=f"a{i % 3}", type=T.MEMORY_SHARED, body={"content": f"note {i} zq{i}"})
        )


def _marks(log: object, after: int = 0) -> list[int]:
    return [
        e.body["upto"]
        for e in log.read(after + 1)  # type: ignore[attr-defined]
        if e.type == T.SYNTH_PROGRESS
    ]


def test_pace_waits_only_after_a_pass_that_decided() -> None:
    now = [100.0]
    pace = Pace(0.05, clock=lambda: now[0])
    pace.begin()
    now[0] += 0.01
    assert pace.rest(0) == 0.0  # quiet: wait for the log to change, then decide at once
    assert pace.rest(3) == pytest.approx(0.04)  # busy: the rest of the window
    pace.begin()
    now[0] += 0.2
    assert pace.rest(5) == 0.0  # a pass longer than the window: the next one at once
    assert Pace(0.0, clock=lambda: now[0]).rest(1) == 0.0
    with pytest.raises(ValueError, match="gather_s"):
        Pace(-1.0)


def test_a_gathering_pass_leaves_newer_raws_to_the_next_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path / "s")
    other = open_log(tmp_path / "s")  # another agent's handle: appends the worker has not seen
    w = Synthesizer(log, batch_size=4)
    _share(log, 0, 3)
    w.catch_up()  # three raws pending when the pass begins
    _share(other, 3, 6)  # three more arrive during the pass (found by its catch-up)
    assert w.decide_pending(gather=True) == 3
    assert sorted(w.state.pending) == [s for s in range(4, 7)]  # left for the next pass
    at = log.last_seq
    assert w.run_once(gather=True) == 3  # the next pass: one batch, one mark
    assert _marks(log, at) == [6]
    # without gathering (a one-off ``run_once``) the newer raws are decided in the pass
    _share(log, 6, 8)
    w.catch_up()
    _share(other, 8, 10)
    assert w.decide_pending() == 4 and not w.state.pending
    # a backlog of a full batch or more that arrived meanwhile is not left waiting
    _share(log, 10, 11)
    w.catch_up()
    _share(other, 11, 20)
    assert w.decide_pending(gather=True) == 9  # 1, then 4 + 4 newer; the last 1 waits
    assert len(w.state.pending) == 1
    other.close()
    log.close()


def test_a_following_worker_under_a_stream_decides_each_once_and_replays(
    tmp_path: Path, replays_to: Callable[[str, str], None]
) -> None:
    root = str(tmp_path / "s")
    log = open_log(root)
    w = Synthesizer(log, gather_s=0.02)
    done = threading.Event()
    t = threading.Thread(target=w.run, kwargs={"stop": done.is_set, "poll": 0.05})
    t.start()
    agent = open_log(root)
    try:
        _share(agent, 0, 150)  # a stream: the worker decides it while it grows
        save_checkpoint(agent, state_at(agent))  # (a checkpoint in the middle of it)
        _share(agent, 150, 300)
        _share(agent, 0, 30)  # repeats: corroborations
    finally:
        for _ in range(600):
            if not w.state.pending and w.state.last_seq == agent.last_seq:
                break
            done.wait(0.05)
        done.set()
        t.join(30)
    decided = [e.body["evidence"] for e in agent.read(1) if e.type in DECISIONS]
    shared = [e.seq for e in agent.read(1) if e.type == T.MEMORY_SHARED]
    assert sorted(decided) == shared  # every memory decided exactly once
    assert len(_marks(agent)) <= len(decided)
    digest = state_at(agent, from_start=True).digest()
    agent.close()
    log.close()
    replays_to(root, digest)
