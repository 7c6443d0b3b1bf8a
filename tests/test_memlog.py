"""MemoryLog specifics: the log's clock, private logs per open, handles, closing.

The contract itself is checked over MemoryLog in ``tests/test_log_contract.py``.
"""

from __future__ import annotations

import threading

import pytest

from swarmlog import Event, InvalidEvent, LogUnavailable, MemoryLog, open_log
from swarmlog.envelope import Limits, encode


def ev(**kw: object) -> Event:
    return Event(agent="a1", type="test.event", **kw)  # type: ignore[arg-type]


def test_open_memory_gives_a_fresh_private_log_each_call() -> None:
    a, b = open_log(":memory:"), open_log(":memory:")
    assert isinstance(a, MemoryLog) and isinstance(b, MemoryLog)
    a.append(ev())
    assert (a.last_seq, b.last_seq) == (1, 0)
    assert open_log(":memory:", name="team").name == "team"


def test_the_log_stamps_ts_never_decreasing_one_per_batch() -> None:
    now = iter([100.0, 50.0, 200.0])
    log = MemoryLog(clock=lambda: next(now))
    a = log.append(ev(ts=999.0))  # a writer's own clock does not count
    b = log.append(ev())  # the clock went back: the log keeps its last time
    c = log.append_many([ev(), ev(), ev()])
    assert (a.ts, b.ts) == (100.0, 100.0)
    assert [e.ts for e in c] == [200.0, 200.0, 200.0]
    assert [e.ts for e in log.read()] == [100.0, 100.0, 200.0, 200.0, 200.0]


def test_a_broken_clock_cannot_move_ts() -> None:
    readings = iter([10.0, float("nan"), float("inf"), 11.0])
    log = MemoryLog(clock=lambda: next(readings))
    stored = [log.append(ev()).ts for _ in range(4)]
    assert stored == [10.0, 10.0, 10.0, 11.0]


def test_records_are_the_encoders_bytes_with_the_batch_countdown() -> None:
    log = MemoryLog(name="s", clock=lambda: 5.0)
    out = log.append_many([ev(id=f"e{i}", body={"i": i}) for i in range(3)])
    want = [encode(e, more=2 - i) for i, e in enumerate(out)]
    assert [encode(e, more=2 - i) for i, e in enumerate(log.read())] == want
    assert b'"more":2' in want[0] and b'"more"' not in want[2]
    assert log.verify().ok and log.verify().events == 3


def test_stored_events_are_what_a_reader_decodes() -> None:
    log = MemoryLog()
    body = {"t": (1, 2), "n": {"b": 1, "a": 2}}
    stored = log.append(ev(body=body))
    body["t"] = "changed later"  # the caller's dict is not the log's
    assert stored.body == {"n": {"a": 2, "b": 1}, "t": [1, 2]}
    assert next(log.read()).body == stored.body and stored.swarm == log.name


def test_size_limit_and_bad_batches_write_nothing() -> None:
    log = MemoryLog(limits=Limits(max_content=100, max_event=400))
    with pytest.raises(InvalidEvent, match="bytes encoded"):
        log.append(ev(body={"x": "y" * 500}))
    with pytest.raises(InvalidEvent, match="twice"):
        log.append_many([ev(id="d"), ev(id="d")])
    with pytest.raises(InvalidEvent, match="finite"):
        log.append_many([ev(), ev(body={"x": float("inf")})])
    assert log.last_seq == 0


def test_handles_share_the_log_and_close_alone() -> None:
    log = MemoryLog()
    other = log.handle()
    other.append(ev(key="k"))
    assert log.last_seq == 1 and log.version("k") == 1
    other.close()
    with pytest.raises(LogUnavailable):
        other.append(ev())
    assert log.append(ev()).seq == 2


def test_closing_ends_a_waiting_follower() -> None:
    log = MemoryLog()
    follower = log.handle()
    got: list[int] = []
    started = threading.Event()

    def run() -> None:
        started.set()
        for e in follower.follow(1):  # no timeout: waits until closed
            got.append(e.seq or 0)

    t = threading.Thread(target=run)
    t.start()
    started.wait(10)
    log.append(ev())
    while not got:  # the follower got its event; now close it while it waits
        threading.Event().wait(0.01)
    follower.close()
    t.join(30)
    assert not t.is_alive() and got == [1]


def test_wait_for_change_is_woken_by_an_append() -> None:
    log = MemoryLog()
    woken: list[bool] = []
    started = threading.Event()

    def run() -> None:
        started.set()
        woken.append(log.wait_for_change(60.0))

    t = threading.Thread(target=run)
    t.start()
    started.wait(10)
    while not woken:
        log.append(ev())
        t.join(0.05)
    assert woken == [True]
