"""The fields a FileLog handle keeps, declared once for the modules that share them.

A FileLog is built from one class per role: the writing roles stacked (``sync.py`` ->
``writer.py`` -> ``view/catchup.py`` -> ``view/index.py`` -> ``view/alone.py``), the
reading role (``reader.py``) beside them on ``FileState``, both under ``log.py``; each
works on the handle's fields, which ``FileLog.__init__`` sets and ``FileState`` names.
The writer's end of the log (last seq, ts, chain tip, current segment, offsets) has one
owner, ``WriterEnd``: the modules that move it call its methods.
"""

from __future__ import annotations

import os
import threading
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from swarmlog import chain as hashchain
from swarmlog.clock import Clock
from swarmlog.file import segment as seg
from swarmlog.file.segfiles import SegmentFiles

if TYPE_CHECKING:
    from swarmlog.file.lockfile import Flock
    from swarmlog.file.sync import GroupSync
    from swarmlog.file.view.writerindex import WriterIndex

Durability = Literal["process", "fsync"]


class FileState:
    """What each field of a FileLog handle holds, and the two helpers its reading role
    (reader.py) and its writing roles (writer.py and up) share: they are siblings on
    this class, the reader no writer."""

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

    # group commit (sync.py), a member
    _sync: GroupSync
    """The shared ``sync`` file and its locks, the handle's fdatasyncs and its failure."""

    # the writer view (kept current under the append lock by catchup.py)
    _ids: dict[str, int]
    """Event id -> seq of every stored event (idempotency)."""
    _versions: dict[str, int]
    """Key -> seq of its last event (expectations)."""
    _clock: Clock
    _end: WriterEnd
    """The writer's end of the log: last seq, its ts and chain value, the current
    segment (its first seq, end, descriptor, inode) and the offsets written there."""
    _view_at: int
    """The last seq of the view snapshot this handle loaded or saved (snapshot.py)."""
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

    def _seg_path(self, first: int) -> str:
        """The path of the segment whose first seq is ``first``."""
        return os.path.join(self._segdir_s, seg.segment_name(first))

    def _hint(self, first: int, seq: int, offset: int) -> None:
        """Record that seq ``seq`` starts at ``offset`` of segment ``first`` (sparse index)."""
        hints = self._hints.setdefault(first, {})
        if len(hints) > 4096:
            hints.clear()
        hints[seq] = offset

    if TYPE_CHECKING:  # what the modules a handle's role classes import call back on it

        def check_writable(self) -> None: ...  # (log.py)

        def _locked(self, write: bool = True) -> Flock: ...  # (writer.py)

        def _catch_up(self, locked: bool) -> None: ...  # (view/catchup.py)

        def _catch_up_once(self, locked: bool) -> None: ...  # (view/catchup.py)

        def _adopt_view(self, ids: dict[str, int], versions: dict[str, int], at: int) -> None: ...


class WriterEnd:
    """The writer's end of the log, one owner for it: where the next record goes.

    A FileLog holds one (``_end``); the modules that move the end (the writer, the
    catch-up, the index, a snapshot load, compaction's skip, a redaction's reopen) call
    its methods instead of setting the handle's fields, so what changes together is
    changed in one place. Slotted: the append path reads these fields under the flock.
    """

    __slots__ = (
        "last",
        "last_ts",
        "offs",
        "offs_base",
        "seg_end",
        "seg_fd",
        "seg_first",
        "seg_ino",
        "tip",
    )  # fmt: skip

    def __init__(self) -> None:
        self.last = 0
        """The last seq in the log."""
        self.last_ts = 0.0
        """ts of seq ``last``: the floor of the next stamp."""
        self.tip = hashchain.GENESIS
        """Chain value of record ``last`` (chain.py)."""
        self.seg_first = 1
        """First seq of the segment new records go to."""
        self.seg_end = 0
        """Where that segment's valid bytes end."""
        self.seg_fd = -1
        """That segment's descriptor (-1: not open)."""
        self.seg_ino = 0
        """Inode of that segment as the shared index names it."""
        self.offs = array("q", (0,))
        """``offs[i]`` is the offset of seq ``offs_base + i`` in the current segment (records
        this handle wrote; machine integers, no dict entry per append); the last one is
        always where seq ``last + 1`` will start."""
        self.offs_base = 1

    def advance(self, last: int, nbytes: int) -> None:
        """Records up to seq ``last`` (``nbytes`` of them) were written at the end."""
        self.seg_end += nbytes
        self.last = last

    def sealed(self, ts: float, tip: bytes) -> None:
        """The record just written (seq ``last``) has this ts and chain value."""
        self.last_ts = ts
        self.tip = tip

    def adopt(
        self, last: int, seg_end: int, last_ts: float, tip: bytes, seg_first: int = 0
    ) -> None:
        """Take an end another writer left on the current segment (the shared index's,
        a view snapshot's: then on segment ``seg_first``): seq ``last`` ends at
        ``seg_end``, with its ts and chain value."""
        if seg_first:
            self.seg_first = seg_first
        self.last, self.seg_end, self.last_ts = last, seg_end, last_ts
        self.tip = tip or hashchain.GENESIS
        self.offs = array("q", (seg_end,))  # (offs_new, inlined: the fused path adopts)
        self.offs_base = last + 1

    def scanned(self, last: int, seg_end: int, last_ts: float, tip: bytes) -> None:
        """The catch-up read the segment on to ``seg_end``, record ``last`` its last (the
        caller starts ``offs`` over once it is done)."""
        self.last, self.seg_end, self.last_ts, self.tip = last, seg_end, last_ts, tip

    def passed(self, seg_end: int) -> None:
        """The catch-up read the segment on to ``seg_end`` with no record in between."""
        self.seg_end = seg_end

    def fd_ino(self) -> int:
        """The current segment's inode, from its open descriptor (0: none open)."""
        return os.fstat(self.seg_fd).st_ino if self.seg_fd >= 0 else 0

    def note_ino(self) -> int:
        """``fd_ino``, kept as the inode the index will name."""
        self.seg_ino = ino = self.fd_ino()
        return ino

    def for_index(self, ino: int) -> tuple[int, int, int, int, float, bytes]:
        """The end as the shared index stores it: (next seq, segment, its end, its inode
        ``ino``, last ts, chain tip)."""
        return (self.last + 1, self.seg_first, self.seg_end, ino, self.last_ts, self.tip)

    def set_ino(self, ino: int) -> None:
        """The current segment's inode as the shared index names it (0: none)."""
        self.seg_ino = ino

    def place(self, seg_first: int, fd: int) -> None:
        """Make the segment at ``seg_first`` (descriptor ``fd``, -1: no such file) the
        current one, the old descriptor closed (its end and seqs follow by ``adopt``)."""
        if fd != self.seg_fd:
            self.close_segment()
        self.seg_first, self.seg_fd = seg_first, fd

    def restart(self) -> None:
        """Back to an empty log's end, the segment closed: the view is read again."""
        self.close_segment()
        self.last, self.last_ts, self.tip = 0, 0.0, hashchain.GENESIS
        self.seg_first, self.seg_end = 1, 0
        self.offs_new()

    def reset(self, first: int) -> None:
        """Point at segment ``first``, unread (its descriptor closed): the next catch-up
        scans it from its start (compaction removed the old one, a redaction replaced it)."""
        self.close_segment()
        self.seg_first, self.seg_end, self.last = first, 0, first - 1

    def rotated(self, first: int) -> None:
        """The current segment is full and closed: the next one starts at seq ``first``."""
        self.close_segment()
        self.seg_first, self.seg_end = first, 0

    def reopened(self, fd: int, seg_end: int) -> None:
        """The current segment was rewritten under the same seqs: its new descriptor and
        size (a redaction; redacted records never shrink)."""
        self.close_segment()
        self.seg_fd, self.seg_end = fd, seg_end
        self.offs_new()

    def opened(self, fd: int) -> None:
        """The current segment's descriptor, opened for appending at ``seg_end``."""
        self.seg_fd = fd

    def close_segment(self) -> None:
        """Close the current segment's descriptor, if open."""
        fd, self.seg_fd = self.seg_fd, -1
        if fd >= 0:
            os.close(fd)

    def offs_new(self) -> None:
        """Start ``offs`` over at the end (after anything but a fast append)."""
        self.offs = array("q", (self.seg_end,))
        self.offs_base = self.last + 1
