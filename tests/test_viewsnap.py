"""Writer-view snapshots (swarmlog/file/view/snapshot.py): a fresh writer starts from a saved view,
and a snapshot that cannot be trusted is ignored, never used."""

from __future__ import annotations

import itertools
import os
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, VersionConflict, open_log
from swarmlog.file.log import FileLog
from swarmlog.file.view import snapshot

N = 300


def _fill(root: Path, n: int = N, start: int = 0) -> list[Event]:
    """Append n events (every tenth keyed) through one handle; return them as stored."""
    with open_log(root) as log:
        out = []
        for i in range(start, start + n):
            key = f"k{i % 7}" if i % 10 == 0 else None
            out.append(log.append(Event(agent="a", type="note", key=key, body={"i": i})))
        return out


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Lower the save threshold and record what each fresh handle's load returned."""
    monkeypatch.setattr(snapshot, "SAVE_AFTER", 50)
    loads: list[bool] = []
    real: Callable[[snapshot.View], bool] = snapshot.load

    def load(log: snapshot.View) -> bool:
        loads.append(real(log))
        return loads[-1]

    monkeypatch.setattr(snapshot, "load", load)
    return loads


def _first_append(root: Path) -> FileLog:
    log = open_log(root)
    assert isinstance(log, FileLog)
    log.append(Event(agent="b", type="note", body={"first": True}))
    return log


def _check_view(log: FileLog, stored: list[Event]) -> None:
    """The handle's view is the log's: every stored id re-appends as itself, and each
    key's version is the seq of its last event."""
    for ev in stored[::37] + stored[-3:]:
        again = log.append(Event(agent=ev.agent, type=ev.type, key=ev.key, body=ev.body, id=ev.id))
        assert again.seq == ev.seq
    last_of: dict[str, int] = {}
    for ev in log.read():
        if ev.key is not None:
            last_of[ev.key] = ev.seq
    for key, seq in last_of.items():
        assert log.version(key) == seq
        with pytest.raises(VersionConflict):
            log.append(Event(agent="b", type="note", key=key, body={}), expect={key: seq - 1})


def test_a_writer_saves_its_view_and_the_next_starts_from_it(
    tmp_path: Path, spy: list[bool]
) -> None:
    root = tmp_path / "s"
    stored = _fill(root)
    assert not (root / snapshot.NAME).exists()  # the filling handle never caught up
    spy.clear()
    with _first_append(root):  # reads N records: saves the view
        assert spy == [False]
    assert (root / snapshot.NAME).exists()
    stored += _fill(root, 40, start=N)  # appended after the snapshot: read on top of it
    spy.clear()
    with _first_append(root) as c:
        assert spy == [True]
        _check_view(c, stored)
    assert open_log(root).verify().ok


def test_read_only_catch_up_never_writes_a_snapshot(tmp_path: Path, spy: list[bool]) -> None:
    root = tmp_path / "s"
    _fill(root)
    with open_log(root) as log:
        assert log.version("k0") > 0  # an unlocked catch-up over every record
    assert not (root / snapshot.NAME).exists()


def _rewrite(root: Path, change: Callable[[dict[str, object]], None]) -> None:
    """Change the snapshot's header and write it back well formed (layout:
    swarmlog/file/view/snapshot.py)."""
    path = root / snapshot.NAME
    line, _, columns = path.read_bytes().partition(b"\n")[2].partition(b"\n")
    header = orjson.loads(line)
    change(header)
    line = orjson.dumps(header)
    body = line + b" " * (-(9 + len(line) + 1) % 8) + b"\n" + columns
    path.write_bytes(b"%08x\n" % zlib.crc32(body) + body)


def _bad_last_id(snap: dict[str, object]) -> None:
    snap["last_id"] = f"{snap['last_id']}x"


def _point_before_end(snap: dict[str, object]) -> None:
    end = snap["seg_end"]
    assert isinstance(end, int)
    snap["seg_end"] = end - 5


def _set(key: str, value: object) -> Callable[[dict[str, object]], None]:
    def change(snap: dict[str, object]) -> None:
        snap[key] = value

    return change


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda r: _flip(r / snapshot.NAME), id="rotted"),
        pytest.param(lambda r: (r / snapshot.NAME).write_bytes(b"{}"), id="garbage"),
        pytest.param(lambda r: _rewrite(r, _set("swarm", "another-swarm")), id="foreign"),
        pytest.param(lambda r: _rewrite(r, _set("format", "swarmlog-view/9")), id="future"),
        pytest.param(lambda r: _rewrite(r, _bad_last_id), id="other-last-record"),
        pytest.param(lambda r: _rewrite(r, _point_before_end), id="not-at-a-record-end"),
        pytest.param(lambda r: _rewrite(r, _set("tip", "0" * 32)), id="other-chain"),
        pytest.param(lambda r: _rewrite(r, _set("seg_first", 10**6)), id="no-such-segment"),
    ],
)
def test_a_snapshot_that_cannot_be_trusted_is_ignored(
    tmp_path: Path, spy: list[bool], damage: Callable[[Path], None]
) -> None:
    root = tmp_path / "s"
    stored = _fill(root)
    _first_append(root).close()
    damage(root)
    with _first_append(root) as c:
        assert spy[-1] is False
        _check_view(c, stored)


def test_a_snapshot_of_another_log_with_the_same_identity_is_ignored(
    tmp_path: Path, spy: list[bool]
) -> None:
    """A log restored from an older backup (same identity, a different history after the
    fork point) must not take a snapshot of the newer one."""
    root, old = tmp_path / "s", tmp_path / "old"
    _fill(root, 100)
    shutil.copytree(root, old)
    _fill(root, 200, start=100)
    _first_append(root).close()  # snapshot of the longer history
    shutil.copy(root / snapshot.NAME, old / snapshot.NAME)
    stored = list(open_log(old).read())
    with _first_append(old) as c:
        assert spy[-1] is False
        _check_view(c, stored)


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert os.path.getsize(path) == len(data)


def _columns(root: Path, change: Callable[[dict[str, object], bytearray], None]) -> None:
    """Change the snapshot's columns and write it back with a checksum that holds."""
    path = root / snapshot.NAME
    line, _, columns = path.read_bytes().partition(b"\n")[2].partition(b"\n")
    cols = bytearray(columns)
    change(orjson.loads(line), cols)
    body = line + b"\n" + bytes(cols)
    path.write_bytes(b"%08x\n" % zlib.crc32(body) + body)


def _id_column(header: dict[str, object], cols: bytearray, k: int) -> memoryview:
    """Column ``k`` (0 hashes, 1 seqs, 2 offsets) of the ids table, as 8-byte items."""
    shape = header["ids"]
    assert isinstance(shape, list)
    n = int(shape[0])
    start = 8 * n * k
    return memoryview(cols)[start : start + 8 * (n + (k == 2))].cast("Q")


def _unsorted(header: dict[str, object], cols: bytearray) -> None:
    hashes = _id_column(header, cols, 0)
    hashes[0], hashes[1] = hashes[1], hashes[0]
    assert hashes[0] != hashes[1]


def _seq_past_last(header: dict[str, object], cols: bytearray) -> None:
    last = header["last"]
    assert isinstance(last, int)
    _id_column(header, cols, 1)[0] = last + 1


def _strings_moved(header: dict[str, object], cols: bytearray) -> None:
    _id_column(header, cols, 2)[-1] += 8


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda r: _columns(r, _unsorted), id="unsorted-hashes"),
        pytest.param(lambda r: _columns(r, _seq_past_last), id="seq-past-last"),
        pytest.param(lambda r: _columns(r, _strings_moved), id="offsets-past-strings"),
        pytest.param(
            lambda r: (r / snapshot.NAME).write_bytes((r / snapshot.NAME).read_bytes()[:-8]),
            id="truncated",
        ),
        pytest.param(lambda r: (r / snapshot.NAME).write_bytes(b""), id="empty"),
    ],
)
def test_a_snapshot_with_malformed_columns_is_ignored(
    tmp_path: Path, spy: list[bool], damage: Callable[[Path], None]
) -> None:
    """Columns that a save cannot have written are refused even when the checksum holds:
    the handle scans the segments and answers from what they hold."""
    root = tmp_path / "s"
    stored = _fill(root)
    _first_append(root).close()
    damage(root)
    with _first_append(root) as c:
        assert spy[-1] is False
        _check_view(c, stored)


def test_a_format_1_snapshot_is_ignored_and_removed_by_the_next_save(
    tmp_path: Path, spy: list[bool]
) -> None:
    root = tmp_path / "s"
    stored = _fill(root)
    (root / snapshot.OLD_NAME).write_bytes(b'00000000\n{"format": "swarmlog-view/1"}')
    spy.clear()
    with _first_append(root) as c:
        assert spy == [False]
        _check_view(c, stored)
    assert (root / snapshot.NAME).exists() and not (root / snapshot.OLD_NAME).exists()


def _header(root: Path) -> dict[str, object]:
    head: dict[str, object] = orjson.loads((root / snapshot.NAME).read_bytes().split(b"\n")[1])
    return head


def test_a_snapshot_saved_over_a_loaded_one_merges_them_exactly(
    tmp_path: Path, spy: list[bool]
) -> None:
    """A handle that started from a snapshot, had its segment rescanned (a redaction: the
    ids before the snapshot are read again) and read on saves one view with every id
    once; the next handle starts from it and is right."""
    root = tmp_path / "s"
    stored = _fill(root)
    _first_append(root).close()
    with _first_append(root) as b:
        assert spy[-1] is True
        with open_log(root) as r:
            assert r.redact({stored[5].seq: {"scrubbed": True}}) == 1
        # (more than SAVE_AFTER and a quarter of what the snapshot covered: b's next
        # catch-up saves; snapshot.due)
        stored += _fill(root, 100, start=N)
        b.append(Event(agent="b", type="note", body={}))
    head = _header(root)
    saved = len(list(open_log(root).read())) - 1  # (saved by the catch-up before b's append)
    assert head["last"] == saved and head["ids"] == [saved, 32 * saved]
    with _first_append(root) as c:
        assert spy[-1] is True
        _check_view(c, stored)


def test_snapshots_are_saved_geometrically_so_a_save_costs_o1_per_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers appending in turn (the shared index's path) save a view snapshot once
    ``SAVE_AFTER`` records and a quarter of the last snapshot came after it: each at
    least 1.25x the one before, so their number grows with log(n), not n / SAVE_AFTER
    (each save is O(n)); a fresh handle still starts from the last one and is right."""
    from swarmlog.file.view import ixsnap

    monkeypatch.setattr(snapshot, "SAVE_AFTER", 20)
    covered: list[int] = []
    real = ixsnap.save

    def save(view: ixsnap.RawView) -> bool:
        covered.append(view.last)
        return real(view)

    monkeypatch.setattr(ixsnap, "save", save)
    root = tmp_path / "s"
    a, b = open_log(root), open_log(root)
    stored = []
    for i in range(3000):
        log = (a, b)[i % 2]
        key = f"k{i % 7}" if i % 10 == 0 else None
        stored.append(log.append(Event(agent="a", type="note", key=key, body={"i": i})))
    a.close()
    b.close()
    assert covered, "no snapshot was saved"
    assert all(
        now - before >= max(20, before / snapshot.SAVE_FRACTION)
        for before, now in itertools.pairwise(covered)
    ), covered
    assert len(covered) <= 20  # (every 20 records would be 150 saves)
    assert _header(root)["last"] == covered[-1]
    with _first_append(root) as c:
        _check_view(c, stored)
