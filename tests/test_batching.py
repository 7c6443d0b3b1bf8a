"""Batches follow the backlog: what is pending is decided in batches of up to
``batch_size`` (one lease mark each), and a lone memory after a quiet spell is decided
in a batch of its own at once (no waiting to fill a batch)."""

from __future__ import annotations

from pathlib import Path

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.worker.synth import Synthesizer


def _share(log: object, lo: int, hi: int) -> None:
    log.append_many(  # type: ignore[attr-defined]
        [
            Event(agent="a", type=T.MEMORY_SHARED, body={"content": f"note {i} on zq{i}"})
            for i in range(lo, hi)
        ]
    )


def _marks(log: object, after: int) -> list[int]:
    """The ``upto`` of each progress mark after seq ``after``."""
    return [
        e.body["upto"]
        for e in log.read(after + 1)  # type: ignore[attr-defined]
        if e.type == T.SYNTH_PROGRESS
    ]


def test_batches_grow_with_the_backlog_one_mark_each(tmp_path: Path) -> None:
    log = open_log(tmp_path / "s")
    w = Synthesizer(log, batch_size=100)
    _share(log, 0, 1)  # a quiet swarm, one memory: decided alone, at once
    at = log.last_seq
    assert w.run_once() == 1
    assert _marks(log, at) == [at]
    _share(log, 1, 31)  # a backlog below the batch size: one batch
    at = log.last_seq
    assert w.run_once() == 30
    assert _marks(log, at) == [at]
    first = log.last_seq + 1
    _share(log, 31, 281)  # 250 pending: batches of 100, 100, 50, one mark each
    at = log.last_seq
    assert w.run_once() == 250
    assert _marks(log, at) == [first + 99, first + 199, at]
    log.close()
