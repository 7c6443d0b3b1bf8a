"""JetStreamLog.read never ends inside an atomic batch (contract R5), whatever the timing.

nats-server stores a committed batch's messages one by one, so the stream's last seq, asked
while a commit runs, can fall inside the batch. These tests give a reader that view of the
log's end (the last seq a mid-commit stream info reports) on a real server, deterministically.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from typing import Any

import pytest

from swarmlog import Event, LogUnavailable
from swarmlog.jetstream import JetStreamLog

_n = itertools.count(1)


class StaleEnd(JetStreamLog):
    """A reader whose ``last_seq`` is the one it saw at an earlier moment (``seen``)."""

    seen = 0

    @property
    def last_seq(self) -> int:
        return self.seen or super().last_seq


def ev(**kw: Any) -> Event:
    return Event(agent="a1", type="test.event", **kw)


@pytest.fixture
def target(nats_url: str) -> Iterator[str]:
    """A stream holding seq 1 (single), 2..6 (one batch of 5), 7 (single)."""
    t = f"{nats_url}/R{os.getpid()}x{next(_n)}"
    with JetStreamLog(t) as w:
        w.append(ev(body={"i": 1}))
        w.append_many([ev(body={"i": i}) for i in range(2, 7)])
        w.append(ev(body={"i": 7}))
    yield t


@pytest.mark.parametrize("read_batch", [2, 100])
@pytest.mark.parametrize("seen", [2, 3, 5])
def test_read_to_a_mid_batch_end_reads_the_whole_batch(
    target: str, seen: int, read_batch: int
) -> None:
    with StaleEnd(target, read_batch=read_batch) as r:
        r.seen = seen
        assert [e.seq for e in r.read()] == [1, 2, 3, 4, 5, 6]
        assert [e.seq for e in r.read(seen)] == list(range(seen, 7))
        assert [d["seq"] for c in r.read_batches(1) for d in c] == [1, 2, 3, 4, 5, 6]
        assert [e.seq for e in r.read(1, 9)] == [1, 2, 3, 4, 5, 6]


def test_read_stops_at_the_last_seq_seen_between_batches(target: str) -> None:
    with StaleEnd(target) as r:
        r.seen = 6
        assert [e.seq for e in r.read()] == [1, 2, 3, 4, 5, 6]
        r.seen = 1
        assert [e.seq for e in r.read()] == [1]


def test_explicit_to_seq_is_the_cut_and_the_read_reaches_it(target: str) -> None:
    with StaleEnd(target) as r:
        assert [e.seq for e in r.read(1, 4)] == [1, 2, 3, 4]
        r.seen = 3
        assert [e.seq for e in r.read(1, 5)] == [1, 2, 3, 4, 5]


def test_records_that_never_show_up_raise_rather_than_end_the_read(target: str) -> None:
    with StaleEnd(target, timeout=0.5) as r:
        r.seen = 9  # the stream holds 7: seqs 8 and 9 cannot be fetched
        with pytest.raises(LogUnavailable, match="seq 8 cannot be read"):
            list(r.read())
