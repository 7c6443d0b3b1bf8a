"""FileLog's writing role: encode a batch, write it in one ``write()``, rotate, cut torn tails.

Everything here runs under the append flock (``_locked``) with the writer view caught up
(view/catchup.py), so the handle's end (``_end``: last seq, segment end, chain tip) is the log's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import NoReturn

from swarmlog.clock import stamp
from swarmlog.errors import SwarmlogError, VersionConflict
from swarmlog.file import lockfile, repairs
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import fsync_dir, open_nofollow
from swarmlog.file.view import mapguard
from swarmlog.file.view.state import FileState


class SegmentWriter(FileState):
    """Appends whole batches to the current segment (see module docstring)."""

    # ------------------------------------------------------------------ the append lock

    def _write_lock(self) -> int:
        """The append lock's descriptor, opened (read-write) by the first write."""
        if self._closed:
            raise SwarmlogError("log is closed")
        if self._lock_fd < 0:
            self._lock_fd = lockfile.open_write_lock(self._root_s)
        return self._lock_fd

    def _locked(self, write: bool = True) -> lockfile.Flock:
        """The append lock for a ``with`` block; a reader (``write=False``) that has not
        written flocks a read-only descriptor of it for the block (no write access)."""
        if write or self._lock_fd >= 0 or self._closed:
            return lockfile.Flock(self._write_lock())
        return lockfile.Flock(lockfile.open_read_lock(self._root_s), owned=True)

    # ------------------------------------------------------------------ before writing

    def _check_expect(self, expect: Mapping[str, int]) -> None:
        for key, want in expect.items():
            have = self._versions.get(key, 0)
            if have != want:
                raise VersionConflict(key, want, have)

    def _stamp(self) -> float:
        """The ts of the next batch (under the lock, caught up): ``max(clock(), last ts)``."""
        return stamp(self._clock, self._end.last_ts)

    # ------------------------------------------------------------------ writing

    def _at_known_end(self) -> bool:
        """Under the lock: the segment ends where this handle left it and is not full (one
        lseek): a record can be written with no catch-up."""
        return (
            self._end.seg_fd >= 0
            and self._end.seg_end < self.segment_bytes
            and os.lseek(self._end.seg_fd, 0, os.SEEK_END) == self._end.seg_end
        )

    def _write_one(self, data: bytes, seq: int) -> None:
        """``_write`` of one record when ``_at_known_end``: no rotation, and its offset
        kept in ``_end.offs`` for reads (started over every 65,536 seqs)."""
        self._write_all(data, seq)
        if self.durability == "fsync":
            self._sync.note_written(seq, self._end.seg_first)  # (the end, for the next leader)
        if seq % 65536:
            self._end.offs.append(self._end.seg_end)
        else:
            self._end.offs_new()

    def _write(self, data: bytes, last: int, count: int) -> None:
        """One ``write()`` of a whole batch to the current segment (rotating a full one)."""
        if self._end.seg_fd < 0 or self._end.seg_end >= self.segment_bytes:
            self._rotate(last - count + 1)
        self._write_all(data, last)
        self._hint(self._end.seg_first, last + 1, self._end.seg_end)
        self._end.offs_new()
        if self.durability == "fsync":
            # (last written seq, its segment): exists before the lock is released, so
            # rotations see it, and tells the next syncer what its fdatasync covers
            self._sync.note_written(last, self._end.seg_first)

    def _write_all(self, data: bytes, last: int) -> None:
        """Write ``data`` (records up to seq ``last``) at the segment's end: all of it
        (the kernel may write less than asked) or, on an error, nothing."""
        if mapguard.CUT[0]:
            mapguard.check_cut()
        try:
            written = os.write(self._end.seg_fd, data)
            while written < len(data):
                written += os.write(self._end.seg_fd, memoryview(data)[written:])
        except OSError as e:
            self._undo_write(e)
        self._end.advance(last, len(data))

    def _group_sync(self, mine: int, fd: int, seg_first: int) -> None:
        """Return once a completed fdatasync covers seq ``mine`` (group commit, sync.py)."""
        self._sync.group(mine, fd, seg_first, self._lock_fd)

    def _undo_write(self, e: OSError) -> NoReturn:
        """Nothing of a failed batch may stay: cut back to the last good end and raise."""
        try:
            os.ftruncate(self._end.seg_fd, self._end.seg_end)
        except OSError:
            pass
        where = self._seg_path(self._end.seg_first)
        raise SwarmlogError(f"append failed, nothing written to {where}: {e}") from None

    # ------------------------------------------------------------------ segments

    def _rotate(self, first: int) -> None:
        """Open (creating if needed) the segment new records go to.

        A full segment (at or past ``segment_bytes``) is closed (made durable first if any
        writer of this log uses ``durability="fsync"``), and a new one named by ``first``
        is started; segments are only ever rotated when full, so
        any reader seeing a segment below that size knows it is the last one.
        """
        durable = self.durability == "fsync" or os.path.exists(os.path.join(self._root_s, "sync"))
        if self._end.seg_fd >= 0 and self._end.seg_end >= self.segment_bytes:
            if durable:
                # fsync writers use this log: their group commit only syncs the segment
                # written last, so a segment closed under them must be durable first
                self._sync.fsync(self._end.seg_fd)
            self._end.rotated(first)
        path = self._seg_path(self._end.seg_first)
        new = not os.path.exists(path)
        os.makedirs(self._segdir_s, exist_ok=True)
        self._end.opened(open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT))
        if new and durable:
            fsync_dir(self._segdir_s)

    def _cut(self, end: int, size: int, reason: str) -> None:
        """Cut a torn tail off the current segment, noting it in ``repairs.jsonl`` first."""
        name = seg.segment_name(self._end.seg_first)
        note = {"segment": name, "offset": end, "bytes": size - end, "reason": reason}
        repairs.record(self._root_s, {**note, "after_seq": self._end.last, "ts": time.time()})
        os.ftruncate(self._end.seg_fd, end)  # (after the note: a refused note cuts nothing)
