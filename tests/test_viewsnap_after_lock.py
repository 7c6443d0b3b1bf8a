"""A writer's own view snapshot, when it comes due under the append lock (a fresh
handle's catch-up read the log; a writer alone rotates its segment), is saved after the
lock is released: building it is O(n) (1.3 s at 1,000,000 ids), and another writer must
not wait for it. The check: inside the save, another descriptor takes the append lock
without blocking. On the old code the save ran under the lock and the try failed."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from swarmlog import Event
from swarmlog.file.log import FileLog
from swarmlog.file.view import snapshot


@pytest.fixture
def free_at_save(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether the append lock was free at each save of a handle's own view."""
    monkeypatch.setattr(snapshot, "SAVE_AFTER", 20)
    seen: list[bool] = []
    real = snapshot.save

    def save(log: snapshot.View) -> bool:
        fd = os.open(os.path.join(log._root_s, "lock"), os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            seen.append(False)
        else:
            seen.append(True)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        return real(log)

    monkeypatch.setattr(snapshot, "save", save)
    return seen


def _fill(root: Path, n: int, **kw: object) -> None:
    log = FileLog(root, **kw)  # type: ignore[arg-type]
    log.append_many([Event(agent="a", type="t", body={"i": i}) for i in range(n)])
    log.close()


def test_a_fresh_handles_catch_up_saves_after_the_lock(
    tmp_path: Path, free_at_save: list[bool]
) -> None:
    root = tmp_path / "s"
    _fill(root, 100)
    (root / snapshot.NAME).unlink(missing_ok=True)
    log = FileLog(root)
    log.append(Event(agent="b", type="t", body={}))
    log.close()
    assert free_at_save and all(free_at_save), free_at_save
    head = (root / snapshot.NAME).read_bytes().split(b"\n")[1]
    assert b'"last":101' in head  # (its view after the lock: its own record too)


def test_a_writer_alone_saves_after_the_lock_at_rotation(
    tmp_path: Path, free_at_save: list[bool]
) -> None:
    root = tmp_path / "s"
    log = FileLog(root, segment_bytes=4096)
    for i in range(300):  # (a writer alone: rotations, saves as they come due)
        log.append(Event(agent="a", type="t", body={"i": i}))
    log.close()
    assert len(free_at_save) >= 2 and all(free_at_save), free_at_save
    with FileLog(root) as again:  # and the snapshots are sound: a fresh handle is right
        assert again.append(Event(agent="a", type="t", body={})).seq == 301
