"""A view snapshot from the shared writer index: the raw tables copied under the lock,
the sorted columns built after it (issue 24).

Every ``SAVE_AFTER`` records a writer saves ``view.idx`` (snapshot.py) so that a fresh
handle's first append reads little. Taking the entries out of the index as Python
strings and dicts costs O(n) interpreted work (~60 ms at 40,000 ids), and doing that
under the append lock stalled every other writer for as long. Here the holder only
copies the id slots, the key slots and the used heap (``copy``: three memcpys); the
columns are made from those bytes with numpy after the lock is released (``save``):
slots are (hash u64, seq u64, heap offset u64), a heap entry is a u32 length then the
UTF-8 string (writerindex.py). The result is the snapshot a dict-built one would be.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from swarmlog.file.view import snapshot as viewsnap
from swarmlog.file.view import writerindex as wi
from swarmlog.file.view.columns import Table, str_hash


@dataclass
class RawView:
    """The index's tables and the writer view's end at one moment (under the lock)."""

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


def copy(ix: wi.WriterIndex) -> tuple[bytes, bytes, bytes]:
    """The id slots, the key slots and the used heap of ``ix``, as bytes (under the lock)."""
    m = ix.m
    ids, keys = ix.ids_at, ix.keys_at
    heap = keys + wi.SLOT * ix.key_cap
    return m[ids:keys], m[keys:heap], m[heap : heap + ix.heap_used]


def table(slots: bytes, heap: Any) -> Table:
    """The sorted columns of one table's slots (``heap``: the heap as a uint8 array)."""
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    words = np.frombuffer(slots, dtype="<u8").reshape(-1, 3)
    words = words[words[:, 0] != 0]
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
    import numpy as np

    heap = np.frombuffer(view.heap, dtype=np.uint8)
    ids, keys = table(view.ids, heap), table(view.keys, heap)
    at = np.flatnonzero(ids.seqs == view.last)
    if not len(at):
        return False  # (the last record came from an ids file: no segment record to check)
    i = int(at[0])
    last_id = bytes(ids.blob[ids.offs[i] : ids.offs[i + 1]]).decode("utf-8", "surrogatepass")
    return viewsnap.save_tables(
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
