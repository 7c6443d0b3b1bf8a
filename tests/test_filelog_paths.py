"""Nothing inside a log root is followed out of it; files honour the umask.

A symlink planted as a segment, as ``repairs.jsonl``, as ``segments/`` or as
``checkpoints/`` is refused with an error naming it, and the file it points to is left
exactly as it was (the torn-tail repair used to truncate it).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmlog import Event, FileLog, LogUnavailable, SwarmlogError

from .cli_util import run_cli

TORN = b'{"seq":4,"id":"torn'


def ev(i: int, size: int = 0) -> Event:
    return Event(agent="a", type="test.event", id=f"e{i}", body={"i": i, "pad": "x" * size})


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    return tmp_path / "outside"


def make_log(root: Path, n: int = 3, **kw: object) -> None:
    with FileLog(root, notify=False, **kw) as log:  # type: ignore[arg-type]
        for i in range(1, n + 1):
            log.append(ev(i))


def segments(root: Path) -> list[Path]:
    return sorted((root / "segments").iterdir())


def test_planted_segment_symlink_is_not_truncated(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "log"
    make_log(root)
    (seg,) = segments(root)
    content = seg.read_bytes() + TORN  # a torn tail: a repair would truncate it
    outside.write_bytes(content)
    seg.unlink()
    seg.symlink_to(outside)
    with FileLog(root, notify=False) as log:
        with pytest.raises(LogUnavailable, match="symlink") as ei:
            log.append(ev(9))
        assert str(seg) in str(ei.value)
        with pytest.raises(LogUnavailable, match="symlink"):
            list(log.read())
        rep = log.verify()
        assert not rep.ok and any("symlink" in p and seg.name in p for p in rep.problems)
    res = run_cli("--root", str(root), "append", "-a", "x", "hello")
    assert res.code == 1 and "symlink" in res.err and "Traceback" not in res.err
    assert len(res.err.strip().splitlines()) == 1
    assert outside.read_bytes() == content


def test_planted_next_segment_symlink_is_not_written(tmp_path: Path, outside: Path) -> None:
    """A symlink where the next segment will be created: the rotation refuses it."""
    root = tmp_path / "log"
    with FileLog(root, notify=False, segment_bytes=4096) as log:
        log.append(ev(1, 3000))
        log.append(ev(2, 3000))  # the segment is full now: seq 3 starts a new one
        outside.write_bytes(b"precious\n")
        planted = root / "segments" / f"{3:020d}.jsonl"
        planted.symlink_to(outside)
        with pytest.raises(LogUnavailable, match="symlink"):
            log.append(ev(3))
    assert outside.read_bytes() == b"precious\n"


def test_planted_repairs_symlink_is_refused(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "log"
    make_log(root)
    (seg,) = segments(root)
    data = seg.read_bytes()
    seg.write_bytes(data + TORN)
    outside.write_bytes(b"not a log\n")
    (root / "repairs.jsonl").symlink_to(outside)
    with FileLog(root, notify=False) as log:
        with pytest.raises(LogUnavailable, match="symlink") as ei:
            log.append(ev(9))
        assert "repairs.jsonl" in str(ei.value)
        rep = log.verify()  # reads the notes without following the link either
        assert not rep.ok and any("repairs.jsonl" in p for p in rep.problems)
    assert outside.read_bytes() == b"not a log\n"
    assert seg.read_bytes() == data + TORN  # nothing was cut without its note


@pytest.mark.parametrize("sub", ["segments", "checkpoints"])
def test_symlinked_directory_is_refused(tmp_path: Path, outside: Path, sub: str) -> None:
    root = tmp_path / "log"
    make_log(root)
    real = root / sub
    if real.exists():
        real.rename(outside)
    else:
        outside.mkdir()
    before = sorted((p.name, p.read_bytes()) for p in outside.iterdir())
    real.symlink_to(outside, target_is_directory=True)
    with pytest.raises(LogUnavailable, match="symlink") as ei:
        FileLog(root, notify=False)
    assert str(real) in str(ei.value)
    for cmd in (["tail"], ["append", "-a", "x", "hi"], ["verify"]):
        res = run_cli("--root", str(root), *cmd)
        assert res.code == 1 and "symlink" in res.err and str(real) in res.err, (cmd, res)
    assert sorted((p.name, p.read_bytes()) for p in outside.iterdir()) == before


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.mark.parametrize("mask", [0o002, 0o077])
def test_files_honour_the_umask(tmp_path: Path, umask: None, mask: int) -> None:
    os.umask(mask)
    root = tmp_path / "log"
    make_log(root, durability="fsync")
    (seg,) = segments(root)
    files = ("lock", "sync", "sync.lock", "sync.next", "sync.done.0", "sync.done.1", "swarm.json")
    for p in (seg, *(root / f for f in files)):
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~mask, p
    for d in (root, root / "segments"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o777 & ~mask, d


def test_errors_are_swarmlog_errors_with_the_path(tmp_path: Path) -> None:
    root = tmp_path / "log"
    make_log(root)
    (root / "swarm.json").chmod(0)
    if os.access(root / "swarm.json", os.R_OK):
        (root / "swarm.json").chmod(0o644)
        (root / "swarm.json").write_bytes(b"{not json")
    with pytest.raises(SwarmlogError) as ei:
        FileLog(root, notify=False)
    assert str(root / "swarm.json") in str(ei.value)
