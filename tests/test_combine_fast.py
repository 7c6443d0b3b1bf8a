"""A combined batch's fused index update (view/_fast.py ``record_many``) against the plain code.

``combine.batch`` enters a batch's ids from the bytes, hashes and slots found before the
write; it must leave exactly what ``IndexedView._ix_record`` leaves: the same segment
bytes, the same index tables (slots and heap, byte for byte), the same seqs for every
post, ids posted twice or already stored included, across index growth and segment
rotation.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog import Event, FileLog
from swarmlog.clock import split_ts
from swarmlog.file.view import _fast as ixfast
from swarmlog.file.view import combine
from swarmlog.file.view import writerindex as wi
from swarmlog.file.view.columns import str_hash

from .indexworkers import index_view, segment_view
from .test_file_fast import Tick, assert_same_logs

K = 4  # poster handles


def _post(log: FileLog, ev: Event) -> None:
    """Post ``ev`` in ``log``'s slot as a writer that found the lock busy does."""
    src = ev._d
    pre, post = split_ts(log._serializer.members(src))
    idk = ixfast.id_key(src["id"])
    slots = log._slots_for(idk)
    assert slots is not None and slots.post(idk[0], idk[1], src.get("key"), pre, post)


def _warm(logs: list[FileLog]) -> None:
    """Two appends by every handle in turn: each has seen the others (none is alone) and
    claimed its combining slot."""
    for rnd in range(2):
        for j, log in enumerate(logs):
            log.append(Event(agent="w", type="t", id=f"warm{rnd}.{j}"))


@contextlib.contextmanager
def _holding(holder: FileLog) -> Iterator[tuple[wi.WriterIndex, int]]:
    """``holder`` holding the append lock, its index current: (the index, last seq)."""
    fcntl.flock(holder._lock_fd, fcntl.LOCK_EX)
    try:
        ix = ixfast.view(holder)
        assert ix is not None
        yield ix, holder._end.last
    finally:
        fcntl.flock(holder._lock_fd, fcntl.LOCK_UN)


def _event(i: int) -> Event:
    """Event ``i`` (the same ``i``, the same event: a retry); ids of 1-3 parts, non-ASCII
    (bytes and characters differ), two in three with a key of six."""
    return Event(
        agent="w",
        type="t",
        id=f"id{i}\u00e9" * (1 + i % 3),
        key=f"k{i % 6}" if i % 3 else None,
        ts=1.0,
    )


def run(root: Path, rounds: list[list[int]], segment_bytes: int) -> list[Any]:
    """Each round: the posters post the events named (poster j the j-th), then the holder
    appends one more, combining them; what every writer learnt (seq, or the stored one)."""
    tick = Tick()
    logs = [
        FileLog(root, name="s", notify=False, clock=tick, segment_bytes=segment_bytes)
        for _ in range(K + 1)
    ]
    holder, posters = logs[0], logs[1:]
    got: list[Any] = []
    try:
        for rnd in (-2, -1):  # (every handle sees the others: none is alone)
            for j, log in enumerate(logs):
                log.append(Event(agent="w", type="t", id=f"warm{rnd}.{j}", ts=1.0))
        for r, posts in enumerate(rounds):
            sent = [_event(i) for i in posts[:K]]
            for log, ev in zip(posters, sent, strict=False):
                _post(log, ev)
            own = holder.append(_event(10_000 + r))
            got.append((own.id, own.seq))
            for log, ev in zip(posters, sent, strict=False):
                slots = log._slots
                assert slots is not None
                done = slots.result()
                if done is None:  # (not combined: its writer clears it and appends itself)
                    slots.clear()
                    got.append(("self", log.append(ev).seq))
                else:
                    slots.ticket = 0
                    got.append(done[:2])
    finally:
        for log in logs:
            log.close()
    return got


ROUNDS = st.lists(
    st.lists(st.integers(0, 40), max_size=K),
    min_size=1,
    max_size=30,
)


def _both(tmp: Any, rounds: list[list[int]], seg: int) -> list[bool]:
    fast, plain = tmp("fast"), tmp("plain")
    calls: list[bool] = []
    record_many = ixfast.record_many

    def counted(*a: Any) -> bool:
        calls.append(record_many(*a))
        return calls[-1]

    mp = pytest.MonkeyPatch()
    try:
        mp.setenv(combine.SWITCH_ENV, "1")
        mp.setattr(ixfast, "record_many", counted)
        a = run(fast, rounds, seg)
        mp.setattr(ixfast, "record_many", lambda *a: False)  # the reference path only
        b = run(plain, rounds, seg)
    finally:
        mp.undo()
    assert a == b
    assert_same_logs(fast, plain)
    return calls


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@pytest.mark.slow
@given(rounds=ROUNDS, small=st.booleans())
def test_a_fused_batch_leaves_what_the_reference_leaves(
    tmp_path_factory: pytest.TempPathFactory,
    rounds: list[list[int]],
    small: bool,
) -> None:
    """Random batches: fresh ids, ids stored before, one id posted twice in a batch, keys."""
    _both(tmp_path_factory.mktemp, rounds, 4096 if small else 1 << 20)


def test_fused_batches_across_index_growth(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Enough full batches that the index grows under them (a new file: the reference
    path for that batch), and segments rotate."""
    rounds = [[r * K + j + 100 for j in range(K)] for r in range(700)]
    calls = _both(tmp_path_factory.mktemp, rounds, 1 << 16)
    assert calls.count(True) > 600  # (nearly every batch took the fused update)
    assert False in calls or len(calls) < 700  # (and growth took the reference path)


def test_ids_of_one_home_slot_in_one_batch(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Posts whose ids probe from the same home slot: ``find`` gave each the same empty
    slot, so every one after the first must probe on past the ones entered before it."""
    with FileLog(tmp_path, notify=False) as a, FileLog(tmp_path, notify=False) as b:
        for _ in range(3):
            a.append(Event(agent="w", type="t"))
            b.append(Event(agent="w", type="t"))
        ix = b._wview()
        assert ix is not None
        cap = ix.id_cap  # (a fresh index's: the batch below runs on one)
    by_home: dict[int, list[int]] = {}
    for i in range(1_000_000):
        h = str_hash(_event(i).id) or 1
        home = by_home.setdefault(((h * wi._GOLD) & wi._M64) >> (65 - cap.bit_length()), [])
        home.append(i)
        if len(home) == K + 1:
            break
    assert len(home) == K + 1
    calls = _both(tmp_path_factory.mktemp, [home[:K], home[K:]], 1 << 20)
    assert calls[:1] == [True]


def test_a_sticky_holder_appends_the_posts_made_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``combine.more`` (``SWARMLOG_COMBINE_STICKY``): a holder that has combined looks
    again, up to its rounds, and appends what was posted while it held the lock; with no
    rounds it leaves the posts to their writers."""
    monkeypatch.setenv(combine.SWITCH_ENV, "1")
    logs = [FileLog(tmp_path, notify=False) for _ in range(3)]
    holder, p1, p2 = logs
    try:
        _warm(logs)
        assert holder._slots is not None and p1._slots is not None and p2._slots is not None
        with _holding(holder) as (ix, end):
            _post(p1, _event(1))
            assert combine.more(holder, ix, holder._slots, 0, 0) == 0  # (no rounds)
            assert p1._slots.result() is None
            assert combine.more(holder, ix, holder._slots, 0, 3) == end + 1
            assert p1._slots.result() == (end + 1, False, ANY, ANY)
            _post(p1, _event(2))
            _post(p2, _event(1))  # (a retry of the id appended above)
            assert combine.more(holder, ix, holder._slots, 7, 1) == end + 2
            assert p1._slots.result()[:2] == (end + 2, False)  # type: ignore[index]
            assert p2._slots.result()[:2] == (end + 1, True)  # type: ignore[index]
            assert combine.more(holder, ix, holder._slots, 7, 3) == 7  # (nothing posted)
        for log in (p1, p2):
            log._slots.ticket = 0  # type: ignore[union-attr]
        assert holder.append(Event(agent="w", type="t", id="after")).seq == end + 3
        stored = {e.id: e.seq for e in holder.read()}
        assert stored[_event(1).id] == end + 1 and stored[_event(2).id] == end + 2
        assert holder.verify().ok
    finally:
        for log in logs:
            log.close()
    assert index_view(str(tmp_path)) == segment_view(str(tmp_path))


def test_a_staying_holder_stops_when_its_time_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``combine.more`` begins no round once ``for_s`` seconds have passed: with posts
    arriving at every look (a writer re-posting as soon as its record is done), a holder
    given no time appends one more batch and lets go; given time, all its rounds."""
    monkeypatch.setenv(combine.SWITCH_ENV, "1")
    logs = [FileLog(tmp_path, notify=False) for _ in range(2)]
    holder, poster = logs
    try:
        _warm(logs)
        slots, mine = holder._slots, poster._slots
        assert slots is not None and mine is not None
        posted = iter(range(100, 200))
        look = slots.others

        def busy() -> list[combine.Posted]:  # (a post made meanwhile, before every look)
            if mine.ticket == 0 or mine.result() is not None:
                mine.ticket = 0
                _post(poster, _event(next(posted)))
            return look()

        monkeypatch.setattr(slots, "others", busy)
        with _holding(holder) as (ix, end):
            assert combine.more(holder, ix, slots, 0, 5, 0.0) == end + 1  # (one round)
            assert combine.more(holder, ix, slots, 0, 5, 60.0) == end + 6  # (five)
        assert combine.STICKY_FOR == 0.01
        assert holder.verify().ok
    finally:
        for log in logs:
            log.close()
    assert index_view(str(tmp_path)) == segment_view(str(tmp_path))
