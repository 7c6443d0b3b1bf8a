"""A view snapshot saved after the append lock (view/ixsnap.py) that a redaction overtakes
must not leave the strings the redaction renamed in ``view.idx``.

The race, made deterministic here: a writer copies its view under the lock, checks the
redaction count after it (unchanged), and only then writes the file; a redaction that
renames an event id and a key runs in between (dropping the indexes). Before the fix the
late file kept the old id and key in the root after the erasure finished.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swarmlog import Event
from swarmlog.file.log import FileLog
from swarmlog.file.view import snapshot
from swarmlog.redaction import Rewrite


def test_a_save_overtaken_by_a_renaming_redaction_leaves_no_old_string(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot, "SAVE_AFTER", 20)
    root = tmp_path / "s"
    a, b, c = FileLog(root), FileLog(root), FileLog(root)
    victim = a.append(Event(agent="v", type="note", id="req-ZQXRACE-1", key="k-ZQXRACE", body={}))
    real = snapshot.save_tables
    raced: list[int] = []

    def save_tables(*args: Any, **kw: Any) -> bool:
        if not raced:  # (the count was checked: the redaction runs before the rename)
            raced.append(0)  # (the redaction's own catch-up saves too: not again)
            rename = Rewrite({}, {"id": "~erased-id", "key": "~erased-key"})
            raced[0] = c.redact({victim.seq: rename})
        return real(*args, **kw)

    monkeypatch.setattr(snapshot, "save_tables", save_tables)
    for i in range(200):
        (a, b)[i % 2].append(Event(agent="w", type="note", body={"i": i}))
        if raced:
            break
    assert raced == [1], "no snapshot save happened"
    for log in (a, b, c):
        log.close()
    snap = root / snapshot.NAME
    assert not snap.exists() or b"ZQXRACE" not in snap.read_bytes()
    # the log goes on: a fresh writer's view has the pseudonyms, not the old names
    with FileLog(root) as d:
        assert d.version("k-ZQXRACE") == 0
        assert d.version("~erased-key") == victim.seq
        again = d.append(Event(agent="v", type="note", id="req-ZQXRACE-1", body={}))
        assert again.seq == d.last_seq and again.seq != victim.seq


def _index_is_the_log(root: Path) -> None:
    """The shared writer index holds exactly the ids and keys the segments hold."""
    from tests.indexworkers import index_view, segment_view

    view = index_view(str(root))
    assert view is not None, "index not trusted"
    _, ids, keys = segment_view(str(root))
    assert (view[1], view[2]) == (ids, keys)


def test_a_view_read_before_a_renaming_redaction_does_not_become_the_index(
    tmp_path: Path,
) -> None:
    """A handle that read the log (its dicts: every id and key), then a redaction that
    renames an id and a key (dropping the index), then the handle's first append: the
    index it builds holds the new names, not the old ones its dicts held (the swarm-kill
    test's operators case found the index keeping a forgotten agent's ids; session 9)."""
    root = tmp_path / "s"
    with FileLog(root, notify=False) as w:
        victim = w.append(Event(agent="v", type="note", id="req-ZQXOLD-1", key="k-ZQXOLD"))
        for i in range(5):
            w.append(Event(agent="w", type="note", body={"i": i}))
    late = FileLog(root, notify=False)
    assert late.version("k-ZQXOLD") == victim.seq  # (its view now holds the old names)
    with FileLog(root, notify=False) as op:
        rename = Rewrite({}, {"id": "~erased-id", "key": "~erased-key"})
        assert op.redact({victim.seq: rename}) == 1
    late.append(Event(agent="w", type="note", body={"i": 9}))
    late.close()
    _index_is_the_log(root)


def test_a_writer_alone_leaves_its_mode_when_a_redaction_drops_the_index(
    tmp_path: Path,
) -> None:
    """A writer alone decides on its own dicts; a renaming redaction of a record in an
    older segment (the writer's own segment untouched) drops the index it lags. Its next
    appends and its close must not answer from, or enter, the old names: a retry of the
    renamed id is a new record, and the index holds the new names."""
    root = tmp_path / "s"
    w = FileLog(root, notify=False, segment_bytes=4096)
    victim = w.append(Event(agent="v", type="note", id="req-ZQXALONE-1", key="k-ZQXALONE"))
    while w._end.seg_first == 1:  # (past the victim's segment)
        w.append(Event(agent="w", type="note", body={"pad": "x" * 200}))
    w.append(Event(agent="w", type="note", body={"i": 0}))
    assert w._alone
    with FileLog(root, notify=False) as op:
        rename = Rewrite({}, {"id": "~erased-id", "key": "~erased-key"})
        assert op.redact({victim.seq: rename}) == 1
    again = w.append(Event(agent="v", type="note", id="req-ZQXALONE-1", key="k-ZQXALONE"))
    assert again.seq == w.last_seq and again.seq != victim.seq
    w.close()
    _index_is_the_log(root)


def _archived(root: Path, tag: str) -> tuple[Event, int]:
    """A log whose first segments were compacted into archives, its first record an
    event with id ``req-<tag>-1`` and key ``k-<tag>``: (that record, the last seq)."""
    from swarmlog.file.compact import compact

    with FileLog(root, notify=False, segment_bytes=4096) as w:
        victim = w.append(Event(agent="v", type="note", id=f"req-{tag}-1", key=f"k-{tag}"))
        while len(list((root / "segments").iterdir())) < 3:
            w.append(Event(agent="w", type="note", body={"pad": "x" * 200}))
        point = w.last_seq - 2
        w.checkpoints.save(point, b"state", "test/1")
        assert compact(w, point, "archive").segments
        return victim, w.last_seq


def _redact_after_first_load(monkeypatch: pytest.MonkeyPatch, op: FileLog, seq: int) -> list[int]:
    """Make the next load of the retention manifest run a renaming redaction of ``seq``
    (by ``op``) right after it: the list gets the records it rewrote."""
    from swarmlog.file import archive

    real = archive.load
    raced: list[int] = []

    def load(where: str) -> Any:
        got = real(where)
        if not raced:  # (the manifest is read: the redaction runs before its files are)
            raced.append(0)
            rename = Rewrite({}, {"id": "~erased-id", "key": "~erased-key"})
            raced[0] = op.redact({seq: rename})
        return got

    monkeypatch.setattr(archive, "load", load)
    return raced


def test_a_reader_overtaken_by_a_redaction_of_an_archive_reads_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh handle reads the log before it takes the append lock (catchup.py). Past a
    compacted segment it loads the retention manifest, then the archive's ids file; a
    renaming redaction of an archived record in between replaces that ids file (and
    deletes the old one). The handle's first append must go on: the finding is confirmed
    under the lock, where no redaction runs (a swarm-kill worker died of this
    ``ArchiveCorrupt``: "ids file ... is missing"; session 9)."""
    root = tmp_path / "s"
    victim, _ = _archived(root, "ZQXARC")
    for name in ("view.idx", "view.json"):  # (the fresh handle reads from the start)
        (root / name).unlink(missing_ok=True)
    op = FileLog(root, notify=False)
    raced = _redact_after_first_load(monkeypatch, op, victim.seq)
    fresh = FileLog(root, notify=False)
    got = fresh.append(Event(agent="w", type="note", body={"after": 1}))
    assert raced == [1], "the redaction did not run mid-read"
    assert got.seq == fresh.last_seq
    fresh.close()
    op.close()
    _index_is_the_log(root)


def test_a_read_overtaken_by_a_redaction_of_an_archive_reads_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read`` from seq 1 loads the manifest, then reads each archive it names; a
    renaming redaction in between replaces the archive (and deletes the old file). The
    read goes on from the archive the manifest names now, with the redacted record,
    instead of failing as corrupt."""
    root = tmp_path / "s"
    victim, last = _archived(root, "ZQXREAD")
    op = FileLog(root, notify=False)
    raced = _redact_after_first_load(monkeypatch, op, victim.seq)
    with FileLog(root, notify=False) as reader:
        got = list(reader.read(1))
    op.close()
    assert raced == [1], "the redaction did not run mid-read"
    assert [e.seq for e in got] == list(range(1, last + 1))
    assert got[0].id == "~erased-id"
