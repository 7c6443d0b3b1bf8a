"""Group commit for ``durability="fsync"``: one fdatasync covers every writer queued behind it.

Files in the log directory::

    sync        32 bytes, mmap'ed by every fsync writer: four machine words
                [0] the last seq written by an fsync writer, [1] the first seq of its
                segment (both set under the append lock), [2] the durable mark: every
                seq at or below it is covered by a completed fdatasync, [3] the number
                of the latest sync a leader started (its ticket)
    sync.lock   held exclusively by the leader while it syncs (and raises the mark);
                only leaders take it, so the next one starts the moment it is let go
    sync.next   held exclusively by the writer that will lead the next sync, while it
                waits for the running one
    sync.done.0, sync.done.1
                the leader of sync number k holds ``sync.done.<k % 2>`` exclusively
                while it syncs; the writers waiting for that sync wait for it shared,
                all woken at once

The protocol (``_group_sync``), after a writer's record is written and the append lock
released. If the mark covers the record, the append is durable. Otherwise the writer
tries to claim ``sync.next``:

* It gets it: it is the next leader. It waits for ``sync.lock`` (the running sync, if
  any, to finish), numbers its sync k (word 3 plus one), takes ``sync.done.<k % 2>``,
  writes k to word 3 and lets go of ``sync.next`` (writers arriving
  from now on wait for the sync after ours). It re-reads the mark (the previous leader
  may have covered it), else reads the end of the log (word 0: everything written so
  far, by anyone), runs one fdatasync of the segment that end is in, raises the mark
  to that end, and lets go of ``sync.lock`` (the next leader starts) and then of its
  done lock (its waiters wake).
* Another writer holds it: that writer will read the end *after* our write, so its sync
  covers us. We wait for it to number its sync (``sync.next`` shared), read that number
  k, then wait for ``sync.done.<k % 2>`` (shared): its sync is done. We read the
  mark: covered, done; not (that leader died mid-sync, or the number we read was stale),
  we start over. If only writers on their way to waiting hold ``sync.next`` (shared,
  for an instant), nobody is about to lead: we try once more, then queue for it asleep
  (exclusive, blocking), so no writer ever spins.

So every writer sleeps while one sync runs for all of them, the writers waiting for one
sync all wake together (shared holders), and they wake on a lock of their own sync. (With
one lock for both, the next leader, waiting for it exclusively, often took it before the
finished sync's waiters took it shared; those writers, already covered, then slept
through the whole next sync as well. At 16 fsync writers on 2 cores, a waiter's sleep
spanned three or more completed syncs in 39-46 % of waits with one lock, 32-33 % with a
lock per sync; 9,472-9,835 appends/s at 4.9-5.0 appends per fdatasync, against
12,096-12,267 at 6.6-6.8; docs/benchmarks.md.) Two done locks
are enough: the leader of sync k+1 takes the other one, and the leader of sync k+2 waits,
if at all, only for writers of sync k that have not run since it finished (as a leader
waited for any such writer before).

Why this is safe:

* The mark is raised only by the holder of ``sync.lock`` (exclusive), only upward, and
  only after its fdatasync returned; so a writer that sees its seq under the mark was
  covered by a completed sync. A leader killed mid-sync dies without raising it: its
  locks go with the process, the writers waiting for it find themselves uncovered and
  start over, and the next leader syncs again. The ticket (word 3) only says which
  done lock to sleep on: a stale or wrong one means waking early (and starting over) or
  late, never returning uncovered.
* Every record at or below the end a leader read is in that end's segment (covered by
  the sync) or in an older one, and a segment is fdatasynced when it is rotated out
  (``SegmentWriter._rotate``, under the append lock, before anything is written to the
  next), so a sync of the newest segment covers the whole log up to the end read. The
  leader knows the end is in its own segment when that segment is not full (segments
  rotate only when full) and still linked (a redaction or compaction replaces or
  removes it); otherwise it reads the end's segment under the append lock.
* The file is only a shared memory between processes: after a power loss its mark is at
  most what was durable (it is raised after the sync), and every fsync write notes the
  end again before anyone syncs.
* Words are read and written as aligned 8-byte machine words (one load or store each,
  so never torn); the mark is read without a lock only to skip the locks, and a stale
  reading only means taking them.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct

from swarmlog.errors import DurabilityError
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import FILE_MODE, open_nofollow

_SYNC = struct.Struct("<QQ")  # at 0: last written seq, first seq of its segment
_MARK = struct.Struct("<Q")  # at 16: the highest seq known durable
_WRITTEN, _WSEG, _DURABLE, _TICKET = 0, 1, 2, 3  # word indexes in the ``sync`` file

_DONE = ("sync.done.0", "sync.done.1")  # the leader of sync k holds _DONE[k % 2]


class GroupSync:
    """Shares fdatasyncs between the writers of one log (see module docstring): a FileLog
    handle holds one (``_sync``), opened on first use."""

    __slots__ = ("count", "done_fds", "failed", "next_fd", "root", "segdir", "segment_bytes",
                 "sync_fd", "sync_map", "sync_words")  # fmt: skip

    def __init__(self, root: str, segdir: str, segment_bytes: int) -> None:
        self.root, self.segdir, self.segment_bytes = root, segdir, segment_bytes
        self.sync_fd = self.next_fd = -1
        """``sync.lock`` (held by the writer syncing for all) and ``sync.next`` (held by
        the writer that will lead the next sync)."""
        self.done_fds = (-1, -1)
        """``sync.done.0`` and ``.1``: sync k's leader holds the k % 2nd, its waiters share it."""
        self.sync_map: mmap.mmap | None = None
        """The shared ``sync`` file: last written seq, its segment, the durable mark."""
        self.sync_words: memoryview | None = None
        """``sync_map`` as machine words."""
        self.failed: str | None = None
        """Why the handle refuses appends (a failed fdatasync), or None."""
        self.count = 0
        """fdatasyncs this handle ran (group commit shares them between writers)."""

    def _sync_state(self) -> mmap.mmap:
        """The shared ``sync`` file, mapped (and the sync locks opened) on first use."""
        if self.sync_map is None:
            fd = open_nofollow(os.path.join(self.root, "sync"), os.O_RDWR | os.O_CREAT)
            try:
                if os.fstat(fd).st_size < 32:
                    os.ftruncate(fd, 32)
                smap = mmap.mmap(fd, 32)
            finally:
                os.close(fd)
            self.sync_fd = self._open_lock("sync.lock")
            self.next_fd = self._open_lock("sync.next")
            self.done_fds = (self._open_lock(_DONE[0]), self._open_lock(_DONE[1]))
            self.sync_map = smap
            self.sync_words = memoryview(smap).cast("Q")  # (native words: one machine)
        return self.sync_map

    def _open_lock(self, name: str) -> int:
        return open_nofollow(os.path.join(self.root, name), os.O_RDWR | os.O_CREAT, FILE_MODE)

    def _words(self) -> memoryview:
        """The ``sync`` file as machine words (see module docstring)."""
        words = self.sync_words
        if words is None:
            self._sync_state()
            words = self.sync_words
            assert words is not None
        return words

    def note_written(self, last: int, seg_first: int) -> None:
        """Under the append lock: the log's end (last seq, its segment) for the next leader."""
        words = self._words()
        words[_WSEG] = seg_first
        words[_WRITTEN] = last

    def group(self, mine: int, fd: int, seg_first_of_fd: int, lock_fd: int) -> None:
        """Return once seq ``mine`` (written through ``fd``, the segment starting at
        ``seg_first_of_fd``) is covered by a completed fdatasync: its own, as the leader,
        or one another writer ran for everyone written before it (module docstring);
        ``lock_fd``: the handle's append lock (the leader's slow path reads the end under it)."""
        words = self._words()
        if words[_DURABLE] >= mine:
            return  # a sync that began after our write has completed
        nxt = self.next_fd
        passes = 0
        while True:
            try:
                fcntl.flock(nxt, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                self._lead(mine, fd, seg_first_of_fd, lock_fd)  # we are the next leader
                return
            covered = self._wait_for_next_sync(mine)
            if covered:
                return
            if covered is None:  # no next leader: writers passing through hold sync.next
                passes += 1
                if passes > 1:  # they keep it busy: queue to lead, asleep
                    fcntl.flock(nxt, fcntl.LOCK_EX)
                    self._lead(mine, fd, seg_first_of_fd, lock_fd)
                    return
            # else its leader died mid-sync: again

    def _wait_for_next_sync(self, mine: int) -> bool | None:
        """``sync.next`` is taken. If a next leader holds it, sleep until that leader
        has numbered its sync, then until that sync is done (its done lock, shared),
        and say whether the mark now covers ``mine``; None if only writers passing
        through held it (no leader)."""
        nxt = self.next_fd
        try:
            fcntl.flock(nxt, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(nxt, fcntl.LOCK_SH)  # until the next leader has numbered its sync
        else:
            fcntl.flock(nxt, fcntl.LOCK_UN)
            return None
        words = self._words()
        done = self.done_fds[words[_TICKET] & 1]
        fcntl.flock(nxt, fcntl.LOCK_UN)
        fcntl.flock(done, fcntl.LOCK_SH)  # until its sync is done (all its waiters at once)
        try:
            return words[_DURABLE] >= mine
        finally:
            fcntl.flock(done, fcntl.LOCK_UN)

    def _lead(self, mine: int, fd: int, seg_first_of_fd: int, lock_fd: int) -> None:
        """Holding ``sync.next``: wait for the running sync, number ours, then sync for
        everyone written so far unless that one covered ``mine`` already."""
        words = self._words()
        lock = self.sync_fd
        done = -1
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the running sync is done
            ticket = words[_TICKET] + 1
            try:
                fcntl.flock(self.done_fds[ticket & 1], fcntl.LOCK_EX)
            except BaseException:  # (never left holding sync.lock: every sync would wait)
                fcntl.flock(lock, fcntl.LOCK_UN)
                raise
            done = self.done_fds[ticket & 1]
            words[_TICKET] = ticket
        finally:
            fcntl.flock(self.next_fd, fcntl.LOCK_UN)  # later writers: the sync after ours
        try:
            if words[_DURABLE] >= mine:
                return  # the leader before us read the end after our write
            end = words[_WRITTEN]  # the log's end: written before we read it
            st = os.fstat(fd)
            if st.st_size < self.segment_bytes and st.st_nlink and end >= mine:
                self.fsync(fd)  # not full, so never rotated: ``end`` is in this segment
            else:
                end = self._sync_newest(mine, fd, seg_first_of_fd, lock_fd)
            if words[_DURABLE] < end:
                words[_DURABLE] = end
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)  # (first: the next leader starts at once)
            if done >= 0:
                fcntl.flock(done, fcntl.LOCK_UN)  # our waiters wake

    def _sync_newest(self, mine: int, fd: int, seg_first: int, lock: int) -> int:
        """The leader's slow path (its segment is full, so the log may have rotated past
        it, or a redaction replaced it): read the end and its segment consistently under
        the append lock, fdatasync the file now at that segment's name and return the end
        it covers (at least our own ``mine``, written through ``fd`` to the segment at
        ``seg_first``)."""
        words = self._words()
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            end, end_seg = words[_WRITTEN], words[_WSEG]
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        if end < mine:  # (a ``sync`` file recreated under us: our own write is the floor)
            end, end_seg = mine, seg_first
        # an older segment than ``end_seg`` was synced when it was rotated out
        if self._fsync_segment(end_seg):
            return end
        self.fsync(fd)  # (no file by that name: at least the bytes we wrote)
        return mine

    def _fsync_segment(self, first: int) -> bool:
        """fdatasync the segment starting at seq ``first`` (opened for the sync); False
        if there is no such file."""
        try:
            fd = open_nofollow(
                os.path.join(self.segdir, seg.segment_name(first)), os.O_RDONLY, writing=False
            )
        except FileNotFoundError:
            return False
        try:
            self.fsync(fd)
        finally:
            os.close(fd)
        return True

    def fsync(self, fd: int) -> None:
        """fdatasync ``fd``; a failure fails the handle (nothing after it is trusted)."""
        try:
            os.fdatasync(fd)
            self.count += 1
        except OSError as e:
            self.failed = f"fdatasync failed ({e}); this log handle refuses further appends"
            raise DurabilityError(self.failed) from None

    def after_fork(self) -> None:
        """In a forked child: lock descriptors of its own (see FileLog._after_fork)."""
        if self.sync_fd >= 0:
            os.close(self.sync_fd)
            os.close(self.next_fd)
            for fd in self.done_fds:
                os.close(fd)
            self.sync_fd = self._open_lock("sync.lock")
            self.next_fd = self._open_lock("sync.next")
            self.done_fds = (self._open_lock(_DONE[0]), self._open_lock(_DONE[1]))

    def close(self) -> None:
        """Close the lock descriptors and unmap ``sync`` (FileLog.close)."""
        for fd in (self.sync_fd, self.next_fd, *self.done_fds):
            if fd >= 0:
                os.close(fd)
        self.sync_fd = self.next_fd = -1
        self.done_fds = (-1, -1)
        if self.sync_words is not None:
            self.sync_words.release()
            self.sync_words = None
        if self.sync_map is not None:
            self.sync_map.close()
            self.sync_map = None
