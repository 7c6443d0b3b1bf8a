"""CheckpointStore: atomic saves (even under SIGKILL), newest valid at or below a seq."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest

from swarmlog import FileCheckpointStore, FileLog
from tests import logworkers as w

SPAWN = mp.get_context("spawn")


def test_save_list_latest(tmp_path: Path) -> None:
    st = FileCheckpointStore(tmp_path / "ck")
    assert st.list() == [] and st.latest() is None
    for seq in (10, 30, 20):
        st.save(seq, f"state@{seq}".encode(), "fmt/1", config="c1")
    st.save(25, b"other format", "fmt/2", config="c1")
    st.save(5, b"other config", "fmt/1", config="c2")
    assert [i.seq for i in st.list()] == [5, 10, 20, 25, 30]
    best = st.latest(format="fmt/1", config="c1")
    assert best is not None and best.seq == 30 and best.data == b"state@30"
    best = st.latest(at_or_below=29, format="fmt/1", config="c1")
    assert best is not None and best.seq == 20 and best.data == b"state@20"
    assert st.latest(at_or_below=4) is None
    assert st.latest(at_or_below=25).seq == 25  # type: ignore[union-attr]
    assert st.invalidate_after(20) == 3
    assert [i.seq for i in st.list()] == [5, 10]


def test_corrupt_checkpoints_skipped_with_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    st = FileCheckpointStore(tmp_path / "ck")
    st.save(1, b"one", "f")
    st.save(2, b"two" * 100, "f")
    st.save(3, b"three", "f")
    files = sorted((tmp_path / "ck").iterdir())
    # 3: payload bit rot; 2: truncated payload
    raw = files[2].read_bytes()
    files[2].write_bytes(raw[:-2] + bytes([raw[-2] ^ 1]) + raw[-1:])
    files[1].write_bytes(files[1].read_bytes()[:-10])
    got = st.latest()
    assert got is not None and got.seq == 1 and got.data == b"one"
    msgs = [r.getMessage() for r in caplog.records]
    assert any("skipping checkpoint ckpt-00000000000000000003.bin: " in m for m in msgs)
    assert any("skipping checkpoint ckpt-00000000000000000002.bin: " in m for m in msgs)
    # an unreadable header is skipped by list()
    files[0].write_bytes(b"not json\n")
    caplog.clear()
    assert [i.seq for i in st.list()] == [2, 3]
    assert "unreadable header" in caplog.text
    assert st.latest() is None


@pytest.mark.slow
def test_save_is_atomic_under_sigkill(tmp_path: Path) -> None:
    """A saver killed mid-write never leaves a listed checkpoint that fails to load."""
    d = tmp_path / "ck"
    for k in range(4):
        p = SPAWN.Process(target=w.checkpoint_saver, args=(str(d), 8 << 20))
        p.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(list(d.glob("ckpt-*"))) < 2 * (k + 1):
            time.sleep(0.01)
        time.sleep(0.013 * k)
        os.kill(p.pid or 0, signal.SIGKILL)
        p.join(10)
    st = FileCheckpointStore(d)
    infos = st.list()
    assert len(infos) >= 2
    for info in infos:
        assert len(st.load(info).data) == 8 << 20  # every listed checkpoint is whole
    assert st.latest() is not None


def test_filelog_has_a_store(tmp_path: Path) -> None:
    with FileLog(tmp_path / "log", notify=False) as log:
        info = log.checkpoints.save(0, b"", "empty/1")
        assert info.size == 0
        assert log.checkpoints.latest() is not None
