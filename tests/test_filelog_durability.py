"""Durability: fsync group commit across processes, fatal fsync errors, network-fs refusal."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import pytest

from swarmlog import DurabilityError, Event, FileLog, LogUnavailable
from swarmlog.file import fsguard
from tests import logworkers as w

SPAWN = mp.get_context("spawn")


@pytest.mark.slow
def test_group_commit_four_processes(tmp_path: Path) -> None:
    root = tmp_path / "log"
    FileLog(root).close()
    n = 150
    start = SPAWN.Barrier(4)
    out = SPAWN.Queue()
    procs = [
        SPAWN.Process(target=w.fsync_writer, args=(str(root), i, n, start, out)) for i in range(4)
    ]
    for p in procs:
        p.start()
    res = [out.get(120) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    syncs = sum(r[1] for r in res)
    with FileLog(root, notify=False) as log:
        assert [e.seq for e in log.read()] == list(range(1, 4 * n + 1))
        assert log.verify().ok
    assert 0 < syncs <= 4 * n  # at most one fdatasync per append; covered ones skip theirs


def test_fsync_single_writer_counts(tmp_path: Path) -> None:
    with FileLog(tmp_path / "log", durability="fsync", notify=False) as log:
        for _ in range(5):
            log.append(Event(agent="a", type="test.event"))
        log.append_many([Event(agent="a", type="test.event") for _ in range(10)])
        assert log.sync_count == 6  # one per append call, not per event
        assert log.last_seq == 15


def test_fsync_error_is_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An fdatasync failure poisons the handle: no retry, every later append refuses."""
    log = FileLog(tmp_path / "log", durability="fsync", notify=False)
    log.append(Event(agent="a", type="test.event"))

    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", broken)
    with pytest.raises(DurabilityError):
        log.append(Event(agent="a", type="test.event"))
    monkeypatch.undo()
    with pytest.raises(DurabilityError):
        log.append(Event(agent="a", type="test.event"))
    log.close()


def test_bad_durability_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        FileLog(tmp_path / "log", durability="sometimes")  # type: ignore[arg-type]


MOUNTS = """\
/dev/vda / ext4 rw,relatime 0 0
server:/export {nfs} nfs4 rw,relatime 0 0
//host/share {smb} cifs rw 0 0
tmpfs {tmp} tmpfs rw 0 0
"""


def test_network_filesystems_refused(tmp_path: Path) -> None:
    nfs, smb, tmp = tmp_path / "nfs", tmp_path / "smb", tmp_path / "tmp"
    for d in (nfs, smb, tmp):
        d.mkdir()
    mounts = tmp_path / "mounts"
    mounts.write_text(MOUNTS.format(nfs=nfs, smb=smb, tmp=tmp))
    assert fsguard.filesystem_type(nfs / "log", str(mounts)) == "nfs4"
    assert fsguard.filesystem_type(smb, str(mounts)) == "cifs"
    assert fsguard.filesystem_type(tmp / "x", str(mounts)) == "tmpfs"
    assert fsguard.filesystem_type(tmp_path / "elsewhere", str(mounts)) == "ext4"
    with pytest.raises(LogUnavailable, match="network file system"):
        fsguard.check_local(nfs / "log", mounts=str(mounts))
    with pytest.raises(LogUnavailable):
        fsguard.check_local(smb, mounts=str(mounts))
    with pytest.warns(RuntimeWarning, match="network file system"):
        fsguard.check_local(nfs / "log", allow_network=True, mounts=str(mounts))
    fsguard.check_local(tmp, mounts=str(mounts))  # local: silent
    assert fsguard.filesystem_type(tmp_path, str(tmp_path / "missing")) is None


def test_filelog_refuses_a_network_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FileLog consults the guard before touching anything (mount table from the env)."""
    nfs = tmp_path / "nfs"
    nfs.mkdir()
    mounts = tmp_path / "mounts"
    mounts.write_text(MOUNTS.format(nfs=nfs, smb="/nowhere", tmp="/nowhere2"))
    monkeypatch.setenv("SWARMLOG_MOUNTS", str(mounts))
    with pytest.raises(LogUnavailable, match="network file system"):
        FileLog(nfs / "log")
    assert not (nfs / "log").exists()
    with pytest.warns(RuntimeWarning):
        FileLog(nfs / "log2", allow_network_fs=True).close()
    FileLog(tmp_path / "local").close()
