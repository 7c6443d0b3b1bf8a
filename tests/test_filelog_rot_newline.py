"""The faults work, item 1: a complete, CRC-valid final record whose newline rotted is not torn.

A write that stops early leaves a prefix of ``record\\n``; no prefix ends in a byte that
is not the newline. So a segment whose last record is whole and CRC-valid but ends in
another byte was written whole and changed later: fail-stop naming the seq, never cut
(on main, ``verify`` exited 0 with "torn final record" and the next append cut the 50
acknowledged events of the final batch and reused their seqs).
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


@pytest.mark.parametrize("byte", [0x0B, ord("X"), ord(" "), 0x8A])
def test_rotted_final_newline_of_a_batch_is_fail_stop(tmp_path: Path, byte: int) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        for i in range(1, 4):
            log.append(ev(i))
        log.append_many([ev(i) for i in range(4, 54)])  # seqs 4..53, acknowledged
    seg = only_segment(root)
    data = seg.read_bytes()
    assert data.endswith(b"}\n")
    rotted = data[:-1] + bytes([byte])
    seg.write_bytes(rotted)
    last_start = data.rindex(b"\n", 0, len(data) - 1) + 1
    with FileLog(root, notify=False) as log:
        with pytest.raises(CorruptionError) as ei:
            list(log.read())
        assert (ei.value.seq, ei.value.segment, ei.value.offset) == (53, seg.name, last_start)
        rep = log.verify()
        assert not rep.ok and any("seq 53" in p for p in rep.problems), rep
        with pytest.raises(CorruptionError):
            log.append(ev(100))
        with pytest.raises(CorruptionError):
            log.append_many([ev(101), ev(102)])
    assert seg.read_bytes() == rotted  # nothing cut, no seq reused
    res = run_cli("--root", str(root), "verify")
    assert res.code == 1 and "seq 53" in res.out, res
    res = run_cli("--root", str(root), "append", "-a", "x", "new memory")
    assert res.code == 1 and "corrupt record" in res.err and "Traceback" not in res.err
    assert seg.read_bytes() == rotted


def test_rotted_final_newline_of_a_single_record_is_fail_stop(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        for i in range(1, 6):
            log.append(ev(i))
    seg = only_segment(root)
    data = seg.read_bytes()
    seg.write_bytes(data[:-1] + b"\x0b")
    with FileLog(root, notify=False) as log:
        rep = log.verify()
        assert not rep.ok and rep.corruption and rep.corruption["seq"] == 5, rep
        assert rep.last_seq == 4
        with pytest.raises(CorruptionError):
            log.append(ev(100))


@pytest.mark.parametrize("tail", [b"", b"\0"])
def test_missing_or_zeroed_final_newline_stays_torn(tmp_path: Path, tail: bytes) -> None:
    """A record missing only its newline is a prefix of a write (a short write, or a
    power loss's zero fill over it): torn, cut by the next append as before."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        for i in range(1, 6):
            log.append(ev(i))
    seg = only_segment(root)
    data = seg.read_bytes()
    seg.write_bytes(data[:-1] + tail)
    with FileLog(root, notify=False) as log:
        rep = log.verify()
        assert rep.ok and any("torn" in n for n in rep.notes), rep
        assert log.append(ev(100)).seq == 5
