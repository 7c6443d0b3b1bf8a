"""A view snapshot's tables copied after the append lock (view/ixsnap.py), while other
writers go on appending: new ids and keys give the same file as a copy made at the
moment the view's end was noted; a key written again after that end is left out of the
file (its slot holds the new seq), and a fresh handle starting from it is right about
every id and key anyway (it reads the records after the end)."""

from __future__ import annotations

from pathlib import Path

import orjson

from swarmlog import Event
from swarmlog.file.log import FileLog
from swarmlog.file.view import ixsnap, snapshot


def _keys_in(root: Path) -> int:
    head = orjson.loads((root / snapshot.NAME).read_bytes().split(b"\n")[1])
    return int(head["keys"][0])


def test_a_late_copy_is_the_view_at_the_noted_end(tmp_path: Path) -> None:
    a, b = FileLog(tmp_path, notify=False), FileLog(tmp_path, notify=False)
    for i in range(400):
        key = f"key{i % 9}" if i % 3 else None
        (a, b)[i % 2].append(Event(agent="w", type="t", id=f"e{i}\u00e9", key=key))
    ix = b._wview()
    assert ix is not None
    used = ix.heap_used
    noted = ixsnap.of_view(b, ixsnap.copy(ix, used))
    assert ixsnap.save(noted)
    first = (tmp_path / snapshot.NAME).read_bytes()
    assert _keys_in(tmp_path) == 6  # (key1, 2, 4, 5, 7, 8)
    # others go on with new ids and new keys: the late copy differs, the file does not
    for i in range(400, 600):
        a.append(Event(agent="w", type="t", id=f"e{i}\u00e9", key=f"new{i}" if i % 2 else None))
    late = ixsnap.copy(ix, used)  # (b's mapping: the same file, moved on)
    assert late != (noted.ids, noted.keys, noted.heap)
    noted.ids, noted.keys, noted.heap = late
    assert ixsnap.save(noted)
    assert (tmp_path / snapshot.NAME).read_bytes() == first
    # key7 and key8 written again (in place, in their slots), key6 new: left out of a
    # late copy
    for i in range(600, 603):
        a.append(Event(agent="w", type="t", id=f"e{i}\u00e9", key=f"key{i % 9}"))
    noted.ids, noted.keys, noted.heap = ixsnap.copy(ix, used)
    assert ixsnap.save(noted)
    assert _keys_in(tmp_path) == 4
    a.close()
    b.close()
    c = FileLog(tmp_path, notify=False)
    try:
        assert snapshot.load(c)
        assert c._view_at == noted.last
        assert c.append(Event(agent="w", type="t", id="e9\u00e9")).seq == 10
        assert c.append(Event(agent="w", type="t", id="e550\u00e9")).seq == 551
        last_of: dict[str, int] = {}
        for ev in c.read():
            if ev.key is not None and ev.seq is not None:
                last_of[ev.key] = ev.seq
        assert len(last_of) == 7 + 100
        assert all(c.version(k) == s for k, s in last_of.items())
    finally:
        c.close()
