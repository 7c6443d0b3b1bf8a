"""Segments: rotation, seeking through the sparse index, chunk boundaries, catch-up."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import pytest

from swarmlog import Event, FileLog, Limits
from swarmlog.file import segment as seg
from tests import logworkers as w

SPAWN = mp.get_context("spawn")


def ev(i: int, pad: int = 0) -> Event:
    return Event(agent="a", type="test.event", id=f"e{i}", body={"i": i, "p": "x" * pad})


def segment_files(root: Path) -> list[Path]:
    return sorted((root / "segments").iterdir())


def test_rotation_names_and_reads_across(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, segment_bytes=4096, notify=False) as log:
        for i in range(1, 301):
            log.append(ev(i, pad=i % 50))
        log.append_many([ev(1000 + i, pad=100) for i in range(60)])  # bigger than a segment
        files = segment_files(root)
        assert len(files) > 5
        for f in files:
            first = int(f.name[:20])
            head = f.read_bytes().split(b"\n", 1)[0]
            assert seg.record_seq(head) == first  # named by its first seq
        for f in files[:-1]:
            assert f.stat().st_size >= 4096  # only a full segment is rotated
        assert [e.seq for e in log.read()] == list(range(1, 361))
        for start in (1, 2, 57, 150, 299, 300, 301, 330, 360):
            assert [e.seq for e in log.read(start, start + 40)] == list(
                range(start, min(start + 40, 360) + 1)
            )
        assert log.last_seq == 360
        assert log.verify().ok and log.verify().segments == len(files)
    with FileLog(root, notify=False) as log:  # segment size is fixed at creation
        assert log.segment_bytes == 4096
        assert log.append(ev(5000)).seq == 361


def test_seek_every_seq_and_sparse_hints(tmp_path: Path) -> None:
    root = tmp_path / "log"
    n = 20_000
    with FileLog(root, notify=False) as log:
        log.append_many([ev(i, pad=(i * 7) % 300) for i in range(1, n + 1)])
        (f,) = segment_files(root)
        fd = os.open(f, os.O_RDONLY)
        size = os.fstat(fd).st_size
        data = f.read_bytes()
        offsets = [0, *[i + 1 for i, b in enumerate(data) if b == 10][:-1]]
        hints: dict[int, int] = {}
        for s in [*list(range(1, n + 1, 97)), n, n - 1, 2]:
            assert seg.seek_seq(fd, size, 1, s, hints) == offsets[s - 1]
        assert seg.seek_seq(fd, size, 1, n + 1, hints) == size
        assert len(hints) < n // 20  # sparse
        os.close(fd)
        for s in (1, 5000, 12345, n):
            assert next(iter(log.read(s))).seq == s


def test_records_longer_than_a_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunked scanning and seeking across records and batches bigger than a read chunk."""
    monkeypatch.setattr(seg, "CHUNK", 512)
    root = tmp_path / "log"
    with FileLog(root, notify=False, limits=Limits(max_content=1 << 20)) as log:
        for i in range(1, 41):
            if i % 10 == 0:
                log.append_many([ev(1000 * i + j, pad=100) for j in range(8)])
            else:
                log.append(ev(i, pad=(i * 97) % 2000))
        total = log.last_seq
        assert [e.seq for e in log.read()] == list(range(1, total + 1))
        for s in range(1, total + 1):
            assert [e.seq for e in log.read(s, s + 2)] == list(range(s, min(s + 2, total) + 1))
        assert log.verify().ok
    with FileLog(root, notify=False) as log:  # a fresh writer catches up through chunks
        assert log.append(ev(99999)).seq == total + 1


def test_catch_up_after_another_process_rotated(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with FileLog(root, segment_bytes=4096, notify=False) as log:
        log.append(ev(0))
        assert log.version("k") == 0
        p = SPAWN.Process(target=w.batch_writer, args=(str(root), 1, 40, 10))
        p.start()
        p.join(60)
        assert p.exitcode == 0
        assert len(segment_files(root)) > 3
        got = log.append(Event(agent="a", type="test.event", key="k"))
        assert got.seq == 402
        assert log.version("k") == 402
        assert log.append(ev(0)).seq == 1  # idempotency index caught up too
        body = {"batch": "1-39", "n": 10, "i": 9}  # (a retry: the writer's own content)
        assert log.append(Event(agent="b1", type="test.event", id="b1-39-9", body=body)).seq == 401
        assert [e.seq for e in log.read(395)] == list(range(395, 403))


def test_empty_new_segment_left_by_a_crash(tmp_path: Path) -> None:
    """A writer that died right after creating a segment leaves an empty file: harmless."""
    root = tmp_path / "log"
    with FileLog(root, segment_bytes=4096, notify=False) as log:
        while len(segment_files(root)) < 2:
            log.append(ev(log.last_seq + 1, pad=200))
        last = log.last_seq
    files = segment_files(root)
    # simulate: the last segment filled up, and a writer created the next one and died
    with FileLog(root, segment_bytes=4096, notify=False) as log:
        while os.path.getsize(segment_files(root)[-1]) < 4096:
            log.append(ev(log.last_seq + 1, pad=200))
        last = log.last_seq
    (root / "segments" / seg.segment_name(last + 1)).touch()
    assert len(segment_files(root)) == len(files) + 1
    with FileLog(root, segment_bytes=4096, notify=False) as log:
        assert log.last_seq == last
        assert log.append(ev(77777)).seq == last + 1
        assert [e.seq for e in log.read(last - 2)] == list(range(last - 2, last + 2))
        assert log.verify().ok
