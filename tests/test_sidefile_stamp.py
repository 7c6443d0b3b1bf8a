"""A side file is hashed once, not once per process: the verified stamp (swarmlog/sidefile.py).

A file whose identity (device, inode, size, mtime, ctime) matches this user's stamp is
not hashed again; a tampered, zeroed or swapped file, even one whose mtime was set back,
has another ctime or inode and is hashed (and refused). A stamp file another user could
have written, or one taken in the clock tick of the file's last change on a file system
with coarse timestamps, is not trusted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest

from swarmlog import sidefile
from tests.test_side_trust import answers, build, put_rows, rows, vec_file

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files ``sidefile`` hashes from here on (the real hash runs; it is counted), with
    this process's memory of verified files cleared, as in a fresh process."""
    seen: list[Path] = []
    real = sidefile.file_digest

    def counted(path: Path) -> str:
        seen.append(Path(path))
        return real(path)

    monkeypatch.setattr(sidefile, "file_digest", counted)
    monkeypatch.setattr(sidefile, "_verified", {})
    return seen


def written(tmp_path: Path, data: bytes = b"side file bytes " * 4096) -> tuple[Path, str]:
    with sidefile.write(tmp_path, "vec-7-", ".f32") as w:
        w.file.write(data)
    return tmp_path / w.name, w.digest


def test_a_written_file_is_stamped_and_not_hashed_again(
    tmp_path: Path, hashes: list[Path]
) -> None:
    path, digest = written(tmp_path)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    stamps = json.loads((tmp_path / sidefile.STAMPS.format(uid=os.getuid())).read_text())
    assert stamps[path.name]["digest"] == digest
    hashes.clear()
    sidefile._verified.clear()  # a fresh process: only the stamp remembers
    if sidefile._fine_ctime(tmp_path):
        assert sidefile.problem(path, digest) is None
        assert hashes == []
    # a reader's own check (or a coarse clock's writer stamp once racy) stamps it anew
    assert sidefile.problem(path, digest, full=True) is None
    assert hashes[-1] == path
    hashes.clear()
    sidefile._verified.clear()
    assert sidefile.problem(path, digest) is None
    assert hashes == []  # the stamp: no second hash
    assert sidefile.problem(path, digest, full=True) is None
    assert hashes == [path]  # verify still hashes every byte


@pytest.mark.parametrize("damage", ["rewritten, mtime set back", "zeroed", "swapped"])
def test_a_changed_file_is_hashed_and_refused_despite_its_stamp(
    tmp_path: Path, hashes: list[Path], damage: str
) -> None:
    path, digest = written(tmp_path)
    assert sidefile.problem(path, digest, full=True) is None  # stamped by this check
    st = path.stat()
    size = st.st_size
    if damage == "rewritten, mtime set back":
        with open(path, "r+b") as f:
            f.seek(100)
            f.write(b"X")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif damage == "zeroed":
        with open(path, "r+b") as f:
            f.truncate(0)
            f.truncate(size)
    else:
        (tmp_path / "o").mkdir()
        other, _ = written(tmp_path / "o", b"other bytes, same size!" * (size // 23 + 1))
        with open(other, "r+b") as f:
            f.truncate(size)
        os.replace(other, path)
    assert path.stat().st_size == size
    hashes.clear()
    sidefile._verified.clear()
    why = sidefile.problem(path, digest)
    assert why is not None and "checksum mismatch" in why
    assert hashes == [path]


def test_a_stamp_others_may_write_is_not_trusted(tmp_path: Path, hashes: list[Path]) -> None:
    path, digest = written(tmp_path)
    assert sidefile.problem(path, digest, full=True) is None
    stamps = tmp_path / sidefile.STAMPS.format(uid=os.getuid())
    stamps.chmod(0o666)
    hashes.clear()
    sidefile._verified.clear()
    assert sidefile.problem(path, digest) is None
    assert hashes == [path]  # hashed: the stamp could be anyone's


def test_a_racy_stamp_on_a_coarse_clock_is_not_trusted(
    tmp_path: Path, hashes: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, digest = written(tmp_path)
    monkeypatch.setattr(sidefile, "_fine", {path.stat().st_dev: False})
    key = sidefile._key(path)
    assert key is not None
    ident = list(key[1:])
    sidefile.stamp(path, digest, ident, at=ident[4] + 1000)  # checked in the change's tick
    assert not sidefile.stamped(path, digest, ident)
    sidefile.stamp(path, digest, ident, at=ident[4] + sidefile.RACY_NS + 1)
    assert sidefile.stamped(path, digest, ident)
    assert not sidefile.stamped(path, "0" * 64, ident)  # another digest: never


@pytest.mark.slow
def test_stamped_vectors_rewritten_with_their_mtime_are_never_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """End to end: a swarm read once (its side files stamped), its vector rows then
    reversed in place with the mtime set back: the next reader hashes, refuses the file
    and answers as from the intact one."""
    path = tmp_path / "s"
    build(path)
    want = answers(path)
    assert all(want)
    vec = vec_file(path)
    st = vec.stat()
    _, live = rows(vec)
    put_rows(vec, np.ascontiguousarray(live[::-1]))
    os.utime(vec, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert vec.stat().st_mtime_ns == st.st_mtime_ns and vec.stat().st_size == st.st_size
    sidefile._verified.clear()
    with caplog.at_level(logging.WARNING, logger="swarmlog.checkpoint"):
        assert answers(path) == want
    assert any(vec.name in r.getMessage() for r in caplog.records)
    assert not vec.exists()
