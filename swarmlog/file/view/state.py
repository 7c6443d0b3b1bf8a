"""The fields a FileLog handle keeps, declared once for the modules that share them.

A FileLog is built from one class per role (``sync.py`` -> ``writer.py`` ->
``view/catchup.py`` / ``reader.py`` -> ``log.py``); each works on the handle's own
fields, which ``FileLog.__init__`` sets and this class names and explains.
"""

from __future__ import annotations

import mmap
import threading
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from swarmlog.clock import Clock
from swarmlog.file.segfiles import SegmentFiles

if TYPE_CHECKING:
    from swarmlog.file.view.writerindex import WriterIndex

Durability = Literal["process", "fsync"]


class FileState:
    """Declarations only: what each field of a FileLog handle holds."""

    # where the log is (str paths: pathlib costs microseconds per join on the append path)
    root: Path
    segdir: Path
    _root_s: str
    _segdir_s: str
    name: str
    _swarm_id: str
    """The log's identity from ``swarm.json`` (empty for a log made before identities)."""
    segment_bytes: int
    durability: Durability
    notify: bool
    poll_interval: float

    # locks: the thread lock (one append at a time per handle) and the append flock
    _tlock: threading.RLock
    _lock_fd: int
    """The append lock's descriptor (-1 until the first write)."""
    _closed: bool

    # group commit (sync.py)
    _sync_fd: int
    """``sync.lock``: held by the writer syncing for all (sync.py)."""
    _next_fd: int
    """``sync.next``: held by the writer that will lead the next sync (sync.py)."""
    _done_fds: tuple[int, int]
    """``sync.done.0`` and ``.1``: sync k's leader holds the k % 2nd, its waiters share it."""
    _sync_map: mmap.mmap | None
    """The shared ``sync`` file: last written seq, its segment, the durable mark."""
    _sync_words: memoryview | None
    """``_sync_map`` as machine words (sync.py)."""
    _failed: str | None
    """Why this handle refuses appends (a failed fdatasync), or None."""
    sync_count: int
    """fdatasyncs this handle ran (group commit shares them between writers)."""

    # the writer view (kept current under the append lock by catchup.py)
    _ids: dict[str, int]
    """Event id -> seq of every stored event (idempotency)."""
    _versions: dict[str, int]
    """Key -> seq of its last event (expectations)."""
    _last: int
    """The last seq in the log."""
    _last_ts: float
    """ts of seq ``_last``: the floor of the next stamp."""
    _clock: Clock
    _tip: bytes
    """Chain value of record ``_last`` (chain.py)."""
    _seg_first: int
    """First seq of the segment new records go to."""
    _seg_end: int
    """Where that segment's valid bytes end."""
    _seg_fd: int
    """That segment's descriptor (-1: not open)."""
    _view_at: int
    """The last seq of the view snapshot this handle loaded or saved (snapshot.py)."""
    _offs: array[int]
    """_offs[i] is the offset of seq ``_offs_base + i`` in the current segment (records
    this handle wrote; machine integers, no dict entry per append); the last one is
    always where seq ``_last + 1`` will start."""
    _offs_base: int
    _hints: dict[int, dict[int, int]]
    """Segment first seq -> sparse seq -> offset index (filled by seeks and writes)."""
    _files: SegmentFiles
    """Pinned read descriptors of segments (segfiles)."""

    # the shared writer index (writerindex.py, index.py)
    _wix: WriterIndex | None
    """The mapped ``index`` file (None until the first append uses it)."""
    _wix_off: bool
    """True where the index cannot be opened: appends use the catch-up alone."""
    _swarm16: bytes
    """The log's identity as the index header stores it."""
    _partial: bool
    """True once the view took its end from the index: ``_ids``/``_versions`` miss what
    other writers appended, and nothing decides on them."""
    _view_redactions: int
    """The redaction count when ``_ids``/``_versions`` began (their first read of the log,
    view/catchup.py): a redaction since may have renamed ids and keys they still hold under
    the old names, so they are no longer whole (``_view_stale``, view/index.py)."""
    _save_later: Any
    """A view snapshot prepared under the append lock (``ixsnap.RawView``, or
    ``snapshot.Pending`` for the handle's own view), written after it (view/index.py)."""
    _save_from: tuple[Any, int]
    """The writer index and its used heap size that snapshot copies from (view/ixsnap.py)."""
    _ix_ready: bool
    """True once this handle's first append read the log and took (or rebuilt) the index."""
    _seg_ino: int
    """Inode of the current segment as the index names it."""
    index_rebuilds: int
    """Index rebuilds this handle ran (a torn, stale or foreign index; tests read it)."""

    # a writer alone (alone.py): the index lags while nobody else appends
    _alone: bool
    """True while this handle appends without touching the index (its dicts whole)."""
    _lag_first: int
    """The first seq past the index's end when the lag began (the dicts hold the rest)."""
    _lag_gen: int
    """The index's ``gen`` when the lag began (the close flush needs it unchanged)."""
    _lag_cap: tuple[float, int]
    """The swarm clock's ceiling kept by the handle while it lags."""
    _lag_hint_at: int
    """When the ceiling was last published to the index's clock hint (boot-time ns)."""
