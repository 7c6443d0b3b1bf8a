"""swarmlog/file/view/_fast.py (the fused indexed append) and view/ixsnap.py against the plain code.

The fused critical section must leave exactly what the reference methods leave: the same
segment bytes, the same index tables (slots and heap, byte for byte), the same end, the
same acknowledged seqs; and a view snapshot built from the index's raw tables after the
lock must be the one a dict-built snapshot is.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog import Event, FileLog, VersionConflict
from swarmlog.file.view import _fast as ixfast
from swarmlog.file.view import ixsnap, snapshot
from swarmlog.file.view import writerindex as wi

from .indexworkers import index_view, segment_view


class Tick:
    """A deterministic clock (both runs stamp the same ts)."""

    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        self.t += 0.001
        return self.t


OPS = st.lists(
    st.tuples(
        st.sampled_from(["a", "a", "a", "k", "r", "m", "c"]),
        st.integers(0, 2),  # which handle
        st.integers(0, 60),
    ),
    min_size=1,
    max_size=60,
)


def run(root: Path, ops: list[tuple[str, int, int]], segment_bytes: int) -> list[Any]:
    """Run ``ops`` over three handles of one log; what each call returned."""
    tick = Tick()
    logs = [
        FileLog(root, name="s", notify=False, clock=tick, segment_bytes=segment_bytes)
        for _ in range(3)
    ]
    got: list[Any] = []
    sent: list[Event] = []
    n = 0
    try:
        for op, h, x in ops:
            log = logs[h]
            n += 1
            if op == "a":
                e = log.append(Event(agent="w", type="t", id=f"id{n}", ts=1.0))
            elif op == "k":
                e = log.append(Event(agent="w", type="t", id=f"id{n}", key=f"k{x % 4}", ts=1.0))
            elif op == "r":  # a retry of an event sent before (or a fresh one)
                e = log.append(
                    sent[x % len(sent)] if sent else Event(agent="w", type="t", ts=1.0, id=f"id{n}")
                )
            elif op == "m":
                evs = [Event(agent="w", type="t", id=f"id{n}.{i}", ts=1.0) for i in range(3)]
                got.append([(e.id, e.seq) for e in log.append_many(evs)])
                continue
            else:
                key = f"k{x % 4}"
                try:
                    e = log.append(
                        Event(agent="w", type="t", id=f"id{n}", key=key, ts=1.0),
                        expect={key: log.version(key)},
                    )
                except VersionConflict as c:
                    got.append(str(c))
                    continue
            sent.append(Event(agent="w", type="t", id=e.id, key=e.key, ts=1.0))
            got.append((e.id, e.seq, e.ts))
    finally:
        for log in logs:
            log.close()
    return got


def tables(root: Path) -> bytes:
    """The index's slot tables and used heap, byte for byte."""
    ix = wi.WriterIndex.open(str(root))
    try:
        assert ix.load(wi.swarm_key(FileLog(root, create=False, notify=False).swarm_id))
        return bytes(ix.m[wi.PAGE : ix.keys_at + wi.SLOT * ix.key_cap + ix.heap_used])
    finally:
        ix.close()


def segments(root: Path) -> list[bytes]:
    d = root / "segments"
    return [(d / n).read_bytes() for n in sorted(os.listdir(d))]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS, small=st.booleans())
def test_fused_append_leaves_what_the_reference_leaves(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int, int]], small: bool
) -> None:
    seg = 4096 if small else 1 << 20
    fast, plain = tmp_path_factory.mktemp("fast"), tmp_path_factory.mktemp("plain")
    hits = []
    view = ixfast.view

    def counted(log: FileLog) -> Any:
        ix = view(log)
        hits.append(ix is not None)
        return ix

    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(ixfast, "view", counted)
        a = run(fast, ops, seg)
        mp.setattr(ixfast, "view", lambda log: None)  # the reference path only
        b = run(plain, ops, seg)
    finally:
        mp.undo()
    assert a == b
    assert_same_logs(fast, plain)


def assert_same_logs(fast: Path, plain: Path) -> None:
    """The two logs hold the same segment bytes, index tables and view, equal to a
    rebuild from the segments."""
    assert segments(fast) == segments(plain)
    assert tables(fast) == tables(plain)
    assert index_view(str(fast)) == index_view(str(plain)) == segment_view(str(fast))


def test_the_fused_path_is_taken_between_writers(tmp_path: Path) -> None:
    """Two handles taking turns: past the first appends, every append is the fused one."""
    taken = []
    view = ixfast.view

    def counted(log: FileLog) -> Any:
        ix = view(log)
        taken.append(ix is not None)
        return ix

    mp = pytest.MonkeyPatch()
    mp.setattr(ixfast, "view", counted)
    try:
        a, b = FileLog(tmp_path, notify=False), FileLog(tmp_path, notify=False)
        for i in range(200):
            (a, b)[i % 2].append(Event(agent="w", type="t", id=f"x{i}"))
        a.close()
        b.close()
    finally:
        mp.undo()
    assert taken[-190:] == [True] * 190
    assert index_view(str(tmp_path)) == segment_view(str(tmp_path))


def test_a_snapshot_from_the_raw_index_is_the_dict_built_one(tmp_path: Path) -> None:
    a, b = FileLog(tmp_path, notify=False), FileLog(tmp_path, notify=False)
    for i in range(300):
        key = f"key{i % 7}" if i % 3 else None
        (a, b)[i % 2].append(Event(agent="w", type="t", id=f"e{i}\u00e9", key=key))
    ix = b._wview()
    assert ix is not None
    raw = ixsnap.of_view(b, ixsnap.copy(ix))
    assert ixsnap.save(raw)
    from_raw = (tmp_path / snapshot.NAME).read_bytes()
    by_dict = SimpleNamespace(
        _root_s=str(tmp_path),
        _swarm_id=b._swarm_id,
        _ids=dict(ix.entries(ix.ids_at, ix.id_cap)),
        _versions=dict(ix.entries(ix.keys_at, ix.key_cap)),
        _end=b._end,
        _view_at=0,
    )
    snapshot.save(by_dict)
    assert (tmp_path / snapshot.NAME).read_bytes() == from_raw
    a.close()
    b.close()
    # and a fresh handle starts from it
    with FileLog(tmp_path, notify=False) as c:
        assert snapshot.load(c)  # (the raw-built file is trusted)
        assert c.append(Event(agent="w", type="t", id="e6\u00e9")).seq == 7
        assert c.version("key1") == 296


@settings(max_examples=60, deadline=None)
@given(
    homes=st.lists(st.integers(0, 63), min_size=1, max_size=40),
    salt=st.integers(1, 2**20),
)
def test_vectorized_growth_places_every_entry_where_probing_finds_it(
    homes: list[int], salt: int
) -> None:
    """``writerindex.place`` (numpy, for big tables) against the probing rule: every entry
    sits at or after its home slot with no empty slot between (wrapping past the end)."""
    import mmap
    import struct

    cap = 64
    shift = 65 - cap.bit_length()
    inv = pow(wi._GOLD, -1, 1 << 64)
    # hashes whose home slots are ``homes`` (many equal, some near the end: wrapping)
    hashes = [(((hm << shift) + salt + j) * inv) & wi._M64 or 1 for j, hm in enumerate(homes)]
    src = b"".join(struct.pack("<QQQ", h, j + 1, 7 * j) for j, h in enumerate(hashes))
    src += bytes(wi.SLOT * 5)  # (empty slots are skipped)
    m = mmap.mmap(-1, 64 + wi.SLOT * cap)
    wi.place(src, m, 64, cap)
    got = {}
    for i in range(cap):
        h, seq, soff = struct.unpack_from("<QQQ", m, 64 + wi.SLOT * i)
        if h:
            got[h] = (i, seq, soff)
    assert len(got) == len(set(hashes))
    for j, h in enumerate(hashes):
        i = ((h * wi._GOLD) & wi._M64) >> shift
        while struct.unpack_from("<Q", m, 64 + wi.SLOT * i)[0] != h:
            assert struct.unpack_from("<Q", m, 64 + wi.SLOT * i)[0], "an empty slot first"
            i = (i + 1) % cap
        assert got[h][1:] == (j + 1, 7 * j)
    m.close()


@pytest.mark.slow
def test_a_big_index_grown_with_numpy_holds_every_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "SAVE_AFTER", 10**9)  # (segment_view: the whole dicts)
    import numpy  # noqa: F401  (loaded: growths past 4,096 slots take the numpy path)

    placed = []
    place = wi.place
    monkeypatch.setattr(wi, "place", lambda *a: placed.append(a[3]) or place(*a))
    a, b = FileLog(tmp_path, notify=False), FileLog(tmp_path, notify=False)
    for i in range(72):  # 72,000 ids: the id table grown at 4,096, 8,192 .. 65,536 (numpy)
        (a, b)[i % 2].append_many(
            [Event(agent="w", type="t", id=f"g{i}.{j}", key=f"k{j % 50}") for j in range(1000)]
        )
    ix = b._wview()
    assert ix is not None and ix.id_cap >= 1 << 18
    assert 1 << 18 in placed  # (the last growth's id table)
    a.close()
    b.close()
    assert index_view(str(tmp_path)) == segment_view(str(tmp_path))


def _hold(path: str, ready: Any, secs: float) -> None:
    import fcntl
    import time

    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    ready.set()
    time.sleep(secs)
    fcntl.flock(fd, fcntl.LOCK_UN)


def test_the_spinning_lock_excludes_and_sleeps_when_tries_fail(tmp_path: Path) -> None:
    """lockfile.lock_spinning: free, it takes the lock at once (budget kept); held by
    another process past its tries, it sleeps until that one lets go (budget halved);
    held, no other process gets it."""
    import fcntl
    import multiprocessing as mp

    from swarmlog.file import lockfile

    path = str(tmp_path / "lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    assert lockfile.lock_spinning(fd, 8) == 8
    other = os.open(path, os.O_RDWR)
    with pytest.raises(BlockingIOError):
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (held: excluded)
    fcntl.flock(fd, fcntl.LOCK_UN)
    ctx = mp.get_context("fork")
    ready = ctx.Event()
    p = ctx.Process(target=_hold, args=(path, ready, 0.3))
    p.start()
    assert ready.wait(10)
    assert lockfile.lock_spinning(fd, 8) == 4  # (8 tries failed: asleep until released)
    p.join(10)
    assert p.exitcode == 0
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(other)
    os.close(fd)
