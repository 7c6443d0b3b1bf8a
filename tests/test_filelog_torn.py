"""Acceptance 3: torn tails are cut back to the complete-record prefix; rot is fail-stop."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from swarmlog import CorruptionError, Event, FileLog
from swarmlog.envelope import check_crc


def ev(i: int, **kw: object) -> Event:
    return Event(agent="a", type="test.event", id=f"e{i}", body={"i": i}, **kw)  # type: ignore[arg-type]


def only_segment(root: Path) -> Path:
    (p,) = sorted((root / "segments").iterdir())
    return p


def build(root: Path, n: int, tail_batch: int = 0) -> bytes:
    with FileLog(root, notify=False) as log:
        for i in range(1, n + 1):
            log.append(ev(i))
        if tail_batch:
            log.append_many([ev(n + 1 + i) for i in range(tail_batch)])
    return only_segment(root).read_bytes()


def record_starts(data: bytes) -> list[int]:
    starts = [0]
    starts += [i + 1 for i, b in enumerate(data) if b == 10][:-1]
    return starts


@pytest.mark.slow
def test_truncation_at_every_byte_of_last_three_records(tmp_path: Path) -> None:
    src = tmp_path / "src"
    data = build(src, 12)
    starts = record_starts(data)
    assert len(starts) == 12
    cut_from = starts[-3]
    work = tmp_path / "work"
    for cut in range(cut_from, len(data)):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(src, work)
        seg = only_segment(work)
        with open(seg, "r+b") as f:
            f.truncate(cut)
        complete = sum(1 for s in starts[1:] if s <= cut)  # records wholly before the cut
        with FileLog(work, notify=False) as log:
            assert [e.id for e in log.read()] == [f"e{i}" for i in range(1, complete + 1)], cut
            assert log.last_seq == complete
            rep = log.verify()
            assert rep.ok, rep.problems
            if cut > starts[complete] if complete < len(starts) else False:
                assert any("torn" in n for n in rep.notes)
            new = log.append(Event(agent="a", type="test.event", id="after"))
            assert new.seq == complete + 1
        raw = seg.read_bytes()
        assert all(check_crc(line) for line in raw.splitlines())
        with FileLog(work, notify=False) as log:
            assert [e.seq for e in log.read()] == list(range(1, complete + 2))
            rep = log.verify()
            assert rep.ok and not any("torn final" in n for n in rep.notes)
            if cut != starts[complete] if complete < len(starts) else False:
                assert any(n.startswith("repaired") for n in rep.notes)


def test_torn_batch_is_dropped_whole(tmp_path: Path) -> None:
    src = tmp_path / "src"
    data = build(src, 3, tail_batch=4)
    starts = record_starts(data)
    work = tmp_path / "work"
    for cut in range(starts[3] + 1, len(data), 7):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(src, work)
        with open(only_segment(work), "r+b") as f:
            f.truncate(cut)
        with FileLog(work, notify=False) as log:
            assert [e.seq for e in log.read()] == [1, 2, 3]
            assert log.append(ev(99)).seq == 4
            assert [e.seq for e in log.read()] == [1, 2, 3, 4]


@pytest.mark.parametrize("victim", [1, 5, 9])
def test_flipped_byte_names_the_seq(tmp_path: Path, victim: int) -> None:
    root = tmp_path / "log"
    data = build(root, 10)
    starts = record_starts(data)
    seg = only_segment(root)
    lo, hi = starts[victim - 1], starts[victim] - 1  # the record's bytes, newline excluded
    for pos in range(lo, hi, max(1, (hi - lo) // 25)):
        bad = bytearray(data)
        bad[pos] ^= 0x20 if bad[pos] != 0x2A else 0x01
        seg.write_bytes(bytes(bad))
        with FileLog(root, notify=False) as log:
            with pytest.raises(CorruptionError) as ei:
                list(log.read())
            err = ei.value
            assert err.seq == victim and err.segment == seg.name and err.offset == lo, str(err)
            assert f"seq {victim}" in str(err) and seg.name in str(err)
            rep = log.verify()
            assert not rep.ok and any(f"seq {victim}" in p for p in rep.problems)
            with pytest.raises(CorruptionError):
                log.append(ev(100))
        assert seg.read_bytes() == bytes(bad)  # fail-stop: nothing was cut or written
    seg.write_bytes(data)


def test_reader_never_cuts_and_verify_never_modifies(tmp_path: Path) -> None:
    root = tmp_path / "log"
    data = build(root, 5)
    seg = only_segment(root)
    torn = data + b'{"seq":6,"id":"x'
    seg.write_bytes(torn)
    with FileLog(root, notify=False) as log:
        assert [e.seq for e in log.read()] == [1, 2, 3, 4, 5]
        assert log.version("nope") == 0
        assert log.last_seq == 5
        rep = log.verify()
        assert rep.ok and any("torn" in n for n in rep.notes)
    assert seg.read_bytes() == torn
    os.truncate(seg, len(data))
