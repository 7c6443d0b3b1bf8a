"""Group commit for ``durability="fsync"``: the shared ``sync`` mark and one fdatasync for many.

Files in the log directory::

    sync        32 bytes, mmap'ed by every fsync writer: the last written seq and its
                segment (set under the append lock), and the highest seq known durable
    sync.lock   flock'ed for the microseconds it takes to read or raise the mark
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct

from .errors import DurabilityError
from .filestate import FileState
from .fsguard import FILE_MODE, open_nofollow

_SYNC = struct.Struct("<QQ")  # at 0: last written seq, first seq of its segment
_MARK = struct.Struct("<Q")  # at 16: the highest seq known durable


class GroupSync(FileState):
    """Shares fdatasyncs between the writers of one log (see ``_group_sync``)."""

    def _sync_state(self) -> mmap.mmap:
        """The shared ``sync`` mark, mapped (and ``sync.lock`` opened) on first use."""
        if self._sync_map is None:
            fd = open_nofollow(os.path.join(self._root_s, "sync"), os.O_RDWR | os.O_CREAT)
            if os.fstat(fd).st_size < 32:
                os.ftruncate(fd, 32)
            self._sync_map = mmap.mmap(fd, 32)
            os.close(fd)
            self._sync_fd = open_nofollow(
                os.path.join(self._root_s, "sync.lock"), os.O_RDWR | os.O_CREAT, FILE_MODE
            )
        return self._sync_map

    def _note_written(self, last: int, seg_first: int) -> None:
        """Under the append lock: (last written seq, its segment) for the next syncer."""
        _SYNC.pack_into(self._sync_state(), 0, last, seg_first)

    def _group_sync(self, mine: int, fd: int, seg_first_of_fd: int) -> None:
        """Make seq ``mine`` (written through ``fd``, the segment starting at
        ``seg_first_of_fd``) durable, sharing syncs between writers.

        The shared ``sync`` file holds the last written seq and its segment (set under the
        append lock) and the highest seq known durable (the mark). A writer whose seq the
        mark already covers returns at once. Otherwise it notes the last written seq,
        runs its own fdatasync *without holding any lock* — concurrent fdatasyncs of one
        file are merged into one journal commit by the kernel, so serializing them here
        would only make writers queue — and raises the mark to what it noted: every record
        written before its sync started is in the same segment (covered by this
        fdatasync) or in a segment that was synced when it was closed. The mark is read
        and written under ``sync.lock`` (held for microseconds, never across a sync).
        """
        state = self._sync_state()
        sync_fd = self._sync_fd
        fcntl.flock(sync_fd, fcntl.LOCK_EX)
        try:
            if _MARK.unpack_from(state, 16)[0] >= mine:
                return  # a sync that started after our write has finished
            written, seg_first = _SYNC.unpack_from(state, 0)
        finally:
            fcntl.flock(sync_fd, fcntl.LOCK_UN)
        cover = written if seg_first == seg_first_of_fd and written > mine else mine
        self._fsync(fd)
        fcntl.flock(sync_fd, fcntl.LOCK_EX)
        try:
            if _MARK.unpack_from(state, 16)[0] < cover:
                _MARK.pack_into(state, 16, cover)
        finally:
            fcntl.flock(sync_fd, fcntl.LOCK_UN)

    def _fsync(self, fd: int) -> None:
        """fdatasync ``fd``; a failure fails the handle (nothing after it is trusted)."""
        try:
            os.fdatasync(fd)
            self.sync_count += 1
        except OSError as e:
            self._failed = f"fdatasync failed ({e}); this log handle refuses further appends"
            raise DurabilityError(self._failed) from None

    def _reopen_sync_lock(self) -> None:
        """In a forked child: a ``sync.lock`` descriptor of its own (see FileLog._after_fork)."""
        if self._sync_fd >= 0:
            os.close(self._sync_fd)
            self._sync_fd = os.open(os.path.join(self._root_s, "sync.lock"), os.O_RDWR)

    def _close_sync(self) -> None:
        if self._sync_map is not None:
            self._sync_map.close()
            self._sync_map = None
