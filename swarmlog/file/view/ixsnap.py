"""A view snapshot from the shared writer index: the view's end taken under the lock,
the raw tables copied and the sorted columns built after it (many writers: short hold).

At the points ``snapshot.due`` names a writer saves ``view.idx`` (snapshot.py) so that a
fresh handle's first append reads little. Taking the entries out of the index as Python
strings and dicts costs O(n) interpreted work (~60 ms at 40,000 ids), and doing that
under the append lock stalled every other writer for as long; so did copying the tables
there (145 ms at 1,000,000 ids). Under the lock the holder now notes only the end (seq
``last``, chain, segment) and the heap's used size; after the lock it copies the id
slots, the key slots and that much heap (``copy``: three memcpys) and makes the columns
with numpy (``save``): slots are (hash u64, seq u64, heap offset u64), a heap entry is a
u32 length then the UTF-8 string (writerindex.py).

Copied while others append, the tables are those of the moment plus what came after,
and keeping only slots of seq 1..``last`` gives exactly the view at ``last``:

* every slot and heap entry of a seq up to ``last`` was written before the append lock
  passed to the writer that noted ``last`` (the flock orders those stores before its
  reads, on any CPU), and the heap only grows past the size it noted;
* a slot being written while we copy belongs to a later seq: whatever part of it the
  copy sees has seq 0 or above ``last`` (an id slot starts empty and never changes once
  written), so it is dropped;
* a key's slot is rewritten in place: the copy sees the version up to ``last`` (kept,
  right at ``last``) or a later one (dropped: a fresh handle reads the records after
  ``last`` and finds it there);
* a grown or rebuilt index is a new file (this mapping keeps the old one's bytes), and a
  redaction moves the count before it drops the indexes (``_ix_flush_save`` checks it
  after the copy and after the rename).

The result is the snapshot a dict-built one would be, but for the keys written again
after ``last``, which it leaves to the records after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from swarmlog.file.view import snapshot
from swarmlog.file.view import writerindex as wi
from swarmlog.file.view.columns import Table, str_hash
from swarmlog.file.view.state import FileState


@dataclass
class RawView:
    """The index's tables (``copy``) and the writer view's end at one moment (the end
    taken under the lock, the tables copied after it: see the module docstring)."""

    root: str
    swarm_id: str
    ids: bytes
    keys: bytes
    heap: bytes
    last: int
    last_ts: float
    tip: bytes
    seg_first: int
    seg_end: int
    redactions: int
    id_count: int = -1
    """How many ids the index held at ``last`` (-1: unknown); a copy holding fewer read
    zeros (the file was cut and extended back under it: mapguard) and is not saved."""


def of_view(
    log: FileState, tables: tuple[bytes, bytes, bytes] = (b"", b"", b""), redactions: int = 0
) -> RawView:
    """A ``RawView`` of the writer view's end in ``log`` with ``tables`` (``copy``; empty:
    copied later) and the redaction count ``redactions``."""
    ids, keys, heap = tables
    return RawView(
        root=log._root_s,
        swarm_id=log._swarm_id,
        ids=ids,
        keys=keys,
        heap=heap,
        last=log._end.last,
        last_ts=log._end.last_ts,
        tip=log._end.tip,
        seg_first=log._end.seg_first,
        seg_end=log._end.seg_end,
        redactions=redactions,
    )


def copy(ix: wi.WriterIndex, heap_used: int | None = None) -> tuple[bytes, bytes, bytes]:
    """The id slots, the key slots and the heap up to ``heap_used`` (default: what this
    handle last saw used) of ``ix``, as bytes."""
    m = ix.m
    ids, keys = ix.ids_at, ix.keys_at
    heap = keys + wi.SLOT * ix.key_cap
    used = ix.heap_used if heap_used is None else heap_used
    return m[ids:keys], m[keys:heap], m[heap : heap + used]


def table(slots: bytes, heap: Any, last: int) -> Table:
    """The sorted columns of one table's slots of seq 1..``last`` (``heap``: the heap as a
    uint8 array)."""
    from swarmlog.numpyload import np  # (first: numpy's own names load it otherwise)

    sliding_window_view = np.lib.stride_tricks.sliding_window_view

    words = np.frombuffer(slots, dtype="<u8").reshape(-1, 3)
    words = words[(words[:, 0] != 0) & (words[:, 1] >= 1) & (words[:, 1] <= last)]
    hashes = words[:, 0].copy()
    soffs = words[:, 2].astype(np.int64)
    # (each entry's u32 length: its 4 bytes gathered as one row, read little-endian)
    lens = sliding_window_view(heap, 4)[soffs].copy().view("<u4").ravel().astype(np.int64)
    starts = soffs + 4
    for i in np.flatnonzero(hashes == 1):  # (a hash of 0 is stored as 1: the real one)
        s = bytes(heap[starts[i] : starts[i] + lens[i]]).decode("utf-8", "surrogatepass")
        hashes[i] = str_hash(s)
    return Table._sorted(hashes, words[:, 1].astype(np.int64), starts, lens, heap)


def save(view: RawView) -> bool:
    """Write ``view.idx`` from a copy ``copy`` took (after the lock; best effort)."""
    from swarmlog.numpyload import np

    heap = np.frombuffer(view.heap, dtype=np.uint8)
    ids, keys = table(view.ids, heap, view.last), table(view.keys, heap, view.last)
    if view.id_count >= 0 and len(ids) != view.id_count:
        return False  # (not the tables at ``last``: see ``RawView.id_count``)
    at = np.flatnonzero(ids.seqs == view.last)
    if not len(at):
        return False  # (the last record came from an ids file: no segment record to check)
    i = int(at[0])
    last_id = bytes(ids.blob[ids.offs[i] : ids.offs[i + 1]]).decode("utf-8", "surrogatepass")
    return snapshot.save_tables(
        view.root,
        view.swarm_id,
        ids,
        keys,
        last=view.last,
        last_id=last_id,
        last_ts=view.last_ts,
        tip=view.tip,
        seg_first=view.seg_first,
        seg_end=view.seg_end,
    )
