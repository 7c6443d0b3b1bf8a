"""A rotted *terminated* last record (or last batch) is corruption, not a torn tail.

Only the unterminated bytes after the last newline (a prefix of a write) are torn and may
be cut; a whole record that fails its CRC is fail-stop wherever it is: reads, appends and
``verify`` report segment, offset and seq, and nothing is cut or overwritten.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import CorruptionError, Event, FileLog

from .cli_util import run_cli


def ev(i: int) -> Event:
    return Event(agent="a", type="test.event", id=f"e{i}", body={"i": i})


def only_segment(root: Path) -> Path:
    (p,) = sorted((root / "segments").iterdir())
    return p


def line_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each record line, newline excluded."""
    spans, pos = [], 0
    for line in data.split(b"\n")[:-1]:
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def flip(data: bytes, pos: int) -> bytes:
    bad = bytearray(data)
    bad[pos] ^= 0x20 if bad[pos] != 0x2A else 0x01
    return bytes(bad)


def assert_fail_stop(root: Path, seg: Path, rotted: bytes, seq: int, offset: int) -> None:
    with FileLog(root, notify=False) as log:
        with pytest.raises(CorruptionError) as ei:
            list(log.read())
        assert (ei.value.seq, ei.value.segment, ei.value.offset) == (seq, seg.name, offset)
        rep = log.verify()
        assert not rep.ok and any(f"seq {seq}" in p and seg.name in p for p in rep.problems)
        with pytest.raises(CorruptionError):
            log.append(ev(100))
        with pytest.raises(CorruptionError):
            log.append_many([ev(101), ev(102)])
    assert seg.read_bytes() == rotted  # nothing cut, nothing overwritten
    res = run_cli("--root", str(root), "verify")
    assert res.code == 1 and "CORRUPT" in res.out and f"seq {seq}" in res.out, res
    res = run_cli("--root", str(root), "append", "-a", "x", "new memory")
    assert res.code == 1 and "corrupt record" in res.err and "Traceback" not in res.err
    assert seg.read_bytes() == rotted


def test_rotted_last_record_is_fail_stop(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        for i in (1, 2, 3):
            log.append(ev(i))
    seg = only_segment(root)
    data = seg.read_bytes()
    lo, hi = line_spans(data)[2]
    for pos in (lo + 3, (lo + hi) // 2, hi - 2):
        rotted = flip(data, pos)
        seg.write_bytes(rotted)
        assert_fail_stop(root, seg, rotted, 3, lo)
    seg.write_bytes(data)


@pytest.mark.parametrize("victim", [0, 1, 2])
def test_rotted_last_batch_is_fail_stop(tmp_path: Path, victim: int) -> None:
    """Any record of a complete final batch rotted: the batch is not dropped as torn."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        log.append(ev(1))
        log.append(ev(2))
        log.append_many([ev(3), ev(4), ev(5)])
    seg = only_segment(root)
    data = seg.read_bytes()
    lo, hi = line_spans(data)[2 + victim]
    rotted = flip(data, (lo + hi) // 2)
    seg.write_bytes(rotted)
    assert_fail_stop(root, seg, rotted, 3 + victim, lo)


def test_truncated_batch_is_still_torn(tmp_path: Path) -> None:
    """A batch whose terminated records are whole but whose end is missing is a torn write."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        log.append(ev(1))
        log.append_many([ev(2), ev(3), ev(4)])
    seg = only_segment(root)
    data = seg.read_bytes()
    spans = line_spans(data)
    seg.write_bytes(data[: spans[2][1] + 1])  # records 2 and 3 terminated, 4 missing
    with FileLog(root, notify=False) as log:
        rep = log.verify()
        assert rep.ok and any("incomplete batch" in n for n in rep.notes), rep.notes
        assert log.append(ev(9)).seq == 2
        assert [e.id for e in log.read()] == ["e1", "e9"]


def test_zero_filled_tail_is_torn_and_said_so(tmp_path: Path) -> None:
    """Zeros after the last synced byte (power loss under fsync) are a torn tail."""
    root = tmp_path / "log"
    with FileLog(root, notify=False, durability="fsync") as log:
        for i in (1, 2, 3):
            log.append(ev(i))
    seg = only_segment(root)
    data = seg.read_bytes()
    seg.write_bytes(data + b"\0" * 4096)
    with FileLog(root, notify=False) as log:
        assert [e.seq for e in log.read()] == [1, 2, 3]
        rep = log.verify()
        assert rep.ok and any("zero-filled" in n for n in rep.notes), rep.notes
        assert log.append(ev(4)).seq == 4
    with FileLog(root, notify=False) as log:
        assert [e.seq for e in log.read()] == [1, 2, 3, 4]
        rep = log.verify()
        assert rep.ok and any("zero-filled" in n and "repaired" in n for n in rep.notes)
