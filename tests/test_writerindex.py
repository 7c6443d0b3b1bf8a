"""The write-path work: the shared writer index stays equal to a rebuild from the segments, and a
torn, stale or foreign index is detected and rebuilt (docs/architecture.md, "The shared
writer index (FileLog)")."""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog import Event, VersionConflict
from swarmlog.file.log import FileLog
from swarmlog.file.view.writerindex import NAME

from .indexworkers import index_view, run_ops, segment_view


def ev(i: str, key: str | None = None) -> Event:
    return Event(agent="a", type="t", id=i, key=key)


def assert_equal_to_rebuild(root: Path) -> None:
    got = index_view(str(root))
    assert got is not None, "index not trusted"
    assert got == segment_view(str(root))


def test_one_writer_index_equals_rebuild(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False, segment_bytes=4096) as log:
        for i in range(60):  # several segments
            log.append(ev(f"e{i}", key=f"k{i % 4}"))
        log.append_many([ev(f"m{i}", key=f"k{i % 5}") for i in range(30)])
        assert log.append(ev("e3", key="k3")).seq == 4  # a retry gets the stored event
        assert [e.seq for e in log.append_many([ev("m1", key="k1"), ev("new")])] == [62, 91]
    assert_equal_to_rebuild(root)


def test_two_handles_take_the_end_from_the_index(tmp_path: Path) -> None:
    """A second handle appends after the first without parsing its records, and CAS
    and idempotency see the other handle's events."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a, FileLog(root, notify=False) as b:
        a.append(ev("x0"))
        b.append(ev("y0"))
        for i in range(1, 50):
            a.append(ev(f"x{i}", key="k"))
            assert b.version("k") == a.version("k")
            b.append(ev(f"y{i}"))
        assert b.append(ev("x7", "k")).seq == a.append(ev("x7", "k")).seq
        v = a.version("k")
        c = b.append(ev("cas", key="k"), expect={"k": v})
        try:
            a.append(ev("cas2", key="k"), expect={"k": v})
            raise AssertionError("stale expectation accepted")
        except VersionConflict as e:
            assert e.actual == c.seq
        assert a.index_rebuilds + b.index_rebuilds == 1  # (the first append built it)
    assert_equal_to_rebuild(root)


def test_tables_grow(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a, FileLog(root, notify=False) as b:
        for i in range(0, 6000, 100):
            (a if i % 200 else b).append_many([ev(f"g{j}", key=f"k{j}") for j in range(i, i + 100)])
        assert a.append(ev("g17", "k17")).seq == 18 and b.append(ev("g5999", "k5999")).seq == 6000
    assert_equal_to_rebuild(root)
    assert os.path.getsize(root / NAME) > 4096 + 24 * 8192


def _damage(root: Path, how: str) -> None:
    p = root / NAME
    data = bytearray(p.read_bytes())
    if how == "gen-odd":  # a writer died inside an update
        data[8] |= 1
    elif how == "crc":  # (both end records: one of them is the committed one)
        data[100] ^= 0x40
        data[300] ^= 0x40
    elif how == "boot":  # written before a reboot: pages may be any mix
        data[40] ^= 0xFF
    elif how == "truncated":
        data = data[:2000]
    elif how == "zeros":
        data = bytearray(len(data))
    p.write_bytes(bytes(data))


def test_torn_or_stale_index_is_detected_and_rebuilt(tmp_path: Path) -> None:
    """``gen`` odd (a writer died inside an update) is recovered from the committed end
    record and the slots; anything else untrusted is rebuilt from the segments."""
    for how in ("gen-odd", "crc", "boot", "truncated", "zeros"):
        root = tmp_path / how
        with FileLog(root, notify=False) as a, FileLog(root, notify=False) as b:
            for i in range(20):
                a.append(ev(f"a{i}", key="k"))
                b.append(ev(f"b{i}"))
            _damage(root, how)
            before = a.index_rebuilds
            assert a.append(ev("b3")).seq == 8  # a retry across the damage: the original
            assert a.append(ev("after", key="k")).seq == 41
            assert a.index_rebuilds == before + (how != "gen-odd"), how
            assert b.version("k") == 41
        assert_equal_to_rebuild(root)


def test_records_written_without_the_index_are_caught_up(tmp_path: Path) -> None:
    """A writer that wrote but never updated the index (killed in between, or without
    one): the next writer reads just those records and enters them (no rebuild)."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a, FileLog(root, notify=False) as old:
        a.append(ev("a0"))
        old.append(ev("o0"))
        old._wix_off = True
        old._wix = None
        old._ix_ready = False
        old._partial = False
        old._ids.clear()
        old._versions.clear()
        old._end.last, old._end.seg_end, old._end.seg_first = 0, 0, 1
        if old._end.seg_fd >= 0:
            os.close(old._end.seg_fd)
        old._end.seg_fd = -1
        for i in range(1, 10):
            old.append(ev(f"o{i}", key="k"))
        rebuilt = a.index_rebuilds
        assert a.append(ev("o4", key="k")).seq == 6
        assert a.version("k") == 11
        assert a.append(ev("a1")).seq == 12
        assert a.index_rebuilds == rebuilt
    assert_equal_to_rebuild(root)


def test_another_swarms_index_is_not_used(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for root, tag in ((one, "x"), (two, "y")):
        with FileLog(root, notify=False) as log:
            for i in range(5):
                log.append(ev(f"{tag}{i}"))
    shutil.copy(one / NAME, two / NAME)
    with FileLog(two, notify=False) as log:
        assert log.append(ev("x1")).seq == 6  # not "stored at seq 2" (that was swarm one)
    assert_equal_to_rebuild(two)


def test_segment_replaced_as_erasure_does(tmp_path: Path) -> None:
    """A segment replaced by another file the way erasure does it (a byte appended to
    the old inode first, so writers holding it look again): the index follows."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a, FileLog(root, notify=False) as b:
        for i in range(5):
            a.append(ev(f"e{i}"))
        b.append(ev("b0"))
        (seg,) = (root / "segments").iterdir()
        tmp = seg.with_suffix(".tmp")
        shutil.copy(seg, tmp)
        with open(seg, "ab") as f:
            f.write(b"\0")
        os.replace(tmp, seg)
        assert a.append(ev("e9")).seq == 7
        assert b.append(ev("e2")).seq == 3
        assert b.append(ev("b1")).seq == 8
    assert_equal_to_rebuild(root)


IDS = [f"id{i}" for i in range(24)]
KEYS = ["k0", "k1", "k2"]
OP = st.one_of(
    st.tuples(st.just("a"), st.sampled_from(IDS)),
    st.tuples(st.just("r"), st.sampled_from(IDS)),
    st.tuples(st.just("m"), st.lists(st.sampled_from(IDS), min_size=1, max_size=6, unique=True)),
    st.tuples(st.just("c"), st.sampled_from(KEYS)),
)


@pytest.mark.slow
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(plans=st.lists(st.lists(OP, min_size=1, max_size=25), min_size=8, max_size=8))
def test_index_equals_rebuild_under_eight_writer_processes(
    tmp_path_factory: object, plans: list[list[tuple[str, object]]]
) -> None:
    root = Path(tmp_path_factory.mktemp("ix"))  # type: ignore[attr-defined]
    ctx = mp.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=run_ops, args=(str(root), w, p, out)) for w, p in enumerate(plans)]
    for p in procs:
        p.start()
    acked = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert_equal_to_rebuild(root)
    with FileLog(root, notify=False) as log:
        stored = {e.id: e.seq for e in log.read()}
        seqs = [e.seq for e in log.read()]
    assert seqs == list(range(1, len(seqs) + 1))  # gapless
    for got in acked:  # exactly once: every acknowledged id at the seq it was told
        for i, s in got.items():
            assert stored[i] == s


def test_header_layout_matches_the_docs(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        log.append(ev("one"))
    head = (root / NAME).read_bytes()[:400]
    assert head[:8] == b"SWLIDX01"
    gen, retired = struct.unpack_from("<QQ", head, 8)
    assert gen % 2 == 0 and retired == 0
    at = (64, 256)[gen // 2 % 2]  # the committed one of the two end records
    nxt, seg, off = struct.unpack_from("<QQQ", head, at)
    assert (nxt, seg, off) == (2, 1, os.path.getsize(root / "segments" / f"{1:020d}.jsonl"))
