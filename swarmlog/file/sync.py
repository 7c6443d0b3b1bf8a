"""Group commit for ``durability="fsync"``: one fdatasync covers every writer queued behind it.

Files in the log directory::

    sync        64 bytes (32 before issue 24's epochs), mmap'ed by every fsync writer:
                machine words [0] the last seq written by an fsync writer, [1] the first
                seq of its segment (both set under the append lock), [2] the durable
                mark: every seq at or below it is covered by a completed fdatasync,
                [3] the epoch: how many syncs have begun, and at byte 32 a 32-bit
                generation, one more each time a sync is done (the futex word)
    sync.lock   held exclusively by the leader while it syncs (and raises the mark);
                with the flock protocol, writers waiting for that sync hold it shared
    sync.next   held exclusively by the writer that will lead the next sync, while it
                waits for the running one

Two protocols share these files: on Linux the epoch protocol (``_epoch_sync``, below),
elsewhere the flock protocol (``_group_sync``'s fallback). Both elect leaders the same
way (``sync.next``, then ``sync.lock``), so writers of either kind may share a log.

**The epoch protocol** (issue 24). After its write (append lock released) a writer
whose record the mark does not cover tries to claim ``sync.next``. Got it: it leads.
It raises the epoch word (the syncs claimed so far) while it holds ``sync.next``, waits
for ``sync.lock`` (the running sync), lets go of ``sync.next``, reads the log's end, runs
one fdatasync for everyone written so far (none if the mark covers it), raises the
mark, then the generation, and wakes the futex waiters of its epoch's bit alone
(``FUTEX_WAKE_BITSET``). Not got it: another leader holds ``sync.next``; it will let go
after our failed claim and read the end after that, so its sync covers us (the order
of two flock calls on one file), and its epoch is the epoch word ``e`` we read after the
claim, or ``e + 1`` if it has not raised the word yet (its predecessor raised it before
letting go of ``sync.next``). So the writer sleeps once, in a futex wait on the
generation with the bits of ``e`` and ``e + 1`` (``FUTEX_WAIT_BITSET``), and on every
return reads the mark: covered, done; else it claims again. Writers waiting for a later
sync sleep on; nothing but leaders takes ``sync.lock``, so a leader waits only for the
sync before it. A waiter not woken within ``_RECHECK_S`` (a leader killed mid-sync, or
one of the flock protocol, which wakes no futex) looks at the mark and claims again.

Why (measured on the 2-core machine, 16 fsync writers): with flock every waiter slept
twice per append (for the next leader to hold ``sync.lock``, then for its sync), the
waiters of a sync were woken all at once as shared holders, and the next leader could
not begin before all of them had run and let go: 20-25 us of CPU per append on cores
that were all busy.

**The flock protocol** (``_group_sync`` where there is no futex), after a writer's
record is written and the append lock released. If the mark covers the record, the
append is durable. Otherwise the writer tries to claim ``sync.next``:

* It gets it: it is the next leader. It waits for ``sync.lock`` (the running sync, if
  any, to finish), lets go of ``sync.next`` (writers arriving from now on wait for the
  sync after ours), re-reads the mark (the previous leader may have covered it), else
  reads the end of the log (word 0: everything written so far, by anyone), runs one
  fdatasync of the segment that end is in, raises the mark to that end and lets go.
* Another writer holds it: that writer will read the end *after* our write, so its sync
  covers us. We wait for it to hold ``sync.lock`` (``sync.next`` shared), then for its
  sync to finish (``sync.lock`` shared), and read the mark: covered, done; not (that
  leader died mid-sync), we start over. If only writers on their way to waiting hold
  ``sync.next`` (shared, for an instant), nobody is about to lead: we try once more,
  then queue for it asleep (exclusive, blocking), so no writer ever spins.

So every writer sleeps in flock while one sync runs for all of them, and the writers
waiting for one sync all wake together (shared holders), never one after another.

Why this is safe:

* The mark is raised only by the holder of ``sync.lock`` (exclusive), only upward, and
  only after its fdatasync returned; so a writer that sees its seq under the mark was
  covered by a completed sync. A leader killed mid-sync dies without raising it: flock
  lets go with the process, the writers waiting for it find themselves uncovered and
  start over (a futex waiter when its recheck comes), and the next leader syncs again.
* Every return of a waiter is a reading of the mark, never a wake-up alone: a wake, a
  timeout or a stale generation only makes it look again.
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
  so never torn); the mark is read without a lock only to skip the flocks, and a stale
  reading only means taking them.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import struct
import sys
import time
from collections.abc import Callable

from swarmlog.errors import DurabilityError
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import FILE_MODE, open_nofollow
from swarmlog.file.view.state import FileState

_SYNC = struct.Struct("<QQ")  # at 0: last written seq, first seq of its segment
_MARK = struct.Struct("<Q")  # at 16: the highest seq known durable
_WRITTEN, _WSEG, _DURABLE, _EPOCH = 0, 1, 2, 3  # word indexes in the ``sync`` file
_GEN = 8  # the generation: 32-bit word index (byte 32), the futex word
_SIZE = 64
_RECHECK_S = 0.05
"""A futex waiter looks at the mark at least this often (a dead leader wakes nobody)."""

Futex = tuple[Callable[[int, int, int, float], None], Callable[[int, int], None]]


def _futex() -> Futex | None:
    """(wait, wake) over Linux's futex syscall on a shared mapping, or None elsewhere.

    ``wait(addr, value, bit, timeout)`` sleeps while the 32-bit word at ``addr`` holds
    ``value``, until a ``wake`` of a mask holding ``bit`` or ``timeout`` seconds;
    ``wake(addr, bit)`` wakes every waiter of ``bit``. Not private: the word is in a
    file every writer process maps.
    """
    import platform

    nr = {"x86_64": 202, "aarch64": 98}.get(platform.machine())
    if not sys.platform.startswith("linux") or nr is None:
        return None
    import ctypes

    try:
        call = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    call.restype = ctypes.c_long

    class Timespec(ctypes.Structure):
        _fields_ = [("sec", ctypes.c_long), ("nsec", ctypes.c_long)]

    c_long, c_uint, c_void = ctypes.c_long, ctypes.c_uint32, ctypes.c_void_p
    byref, null = ctypes.byref, ctypes.c_void_p()
    wait_bits, wake_bits = c_long(9), c_long(10)  # FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET
    sysno, everyone = c_long(nr), c_long(0x7FFFFFFF)

    def wait(addr: int, value: int, bit: int, timeout: float) -> None:
        at = time.monotonic() + timeout  # (WAIT_BITSET: an absolute CLOCK_MONOTONIC time)
        ts = Timespec(int(at), int((at % 1.0) * 1e9))
        call(sysno, c_void(addr), wait_bits, c_uint(value), byref(ts), null, c_uint(bit))

    def wake(addr: int, bit: int) -> None:
        call(sysno, c_void(addr), wake_bits, everyone, null, null, c_uint(bit))

    return wait, wake


_FUTEX: list[Futex | None] = []  # (found on first use: ctypes only for fsync writers)


class GroupSync(FileState):
    """Shares fdatasyncs between the writers of one log (see module docstring)."""

    _sync_gen: memoryview | None = None
    """``sync`` as 32-bit words (the generation; epoch protocol)."""
    _futex_at = 0
    """The generation word's address in this process (0: the flock protocol)."""

    def _sync_state(self) -> mmap.mmap:
        """The shared ``sync`` file, mapped (and the sync locks opened) on first use."""
        if self._sync_map is None:
            fd = open_nofollow(os.path.join(self._root_s, "sync"), os.O_RDWR | os.O_CREAT)
            try:
                if os.fstat(fd).st_size < _SIZE:
                    os.ftruncate(fd, _SIZE)  # (zeros: a 32-byte file of older writers grows)
                smap = mmap.mmap(fd, _SIZE)
            finally:
                os.close(fd)
            self._sync_fd = self._open_lock("sync.lock")
            self._next_fd = self._open_lock("sync.next")
            self._sync_map = smap
            self._sync_words = memoryview(smap).cast("Q")  # (native words: one machine)
            if not _FUTEX:
                _FUTEX.append(_futex())
            if _FUTEX[0] is not None:
                import ctypes

                self._sync_gen = memoryview(smap).cast("I")
                word = ctypes.c_uint32.from_buffer(smap, 4 * _GEN)
                self._futex_at = ctypes.addressof(word)  # (valid while mapped)
                del word  # (no export left: the map can close)
        return self._sync_map

    def _open_lock(self, name: str) -> int:
        return open_nofollow(os.path.join(self._root_s, name), os.O_RDWR | os.O_CREAT, FILE_MODE)

    def _words(self) -> memoryview:
        """The ``sync`` file as machine words (see module docstring)."""
        words = self._sync_words
        if words is None:
            self._sync_state()
            words = self._sync_words
            assert words is not None
        return words

    def _note_written(self, last: int, seg_first: int) -> None:
        """Under the append lock: the log's end (last seq, its segment) for the next leader."""
        words = self._words()
        words[_WSEG] = seg_first
        words[_WRITTEN] = last

    def _group_sync(self, mine: int, fd: int, seg_first_of_fd: int) -> None:
        """Return once seq ``mine`` (written through ``fd``, the segment starting at
        ``seg_first_of_fd``) is covered by a completed fdatasync: its own, as the leader,
        or one another writer ran for everyone written before it (module docstring)."""
        words = self._words()
        if words[_DURABLE] >= mine:
            return  # a sync that began after our write has completed
        if self._futex_at:
            self._epoch_sync(mine, fd, seg_first_of_fd)
            return
        nxt = self._next_fd
        passes = 0
        while True:
            try:
                fcntl.flock(nxt, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                self._lead(mine, fd, seg_first_of_fd)  # we are the next leader
                return
            covered = self._wait_for_next_sync(mine)
            if covered:
                return
            if covered is None:  # no next leader: writers passing through hold sync.next
                passes += 1
                if passes > 1:  # they keep it busy: queue to lead, asleep
                    fcntl.flock(nxt, fcntl.LOCK_EX)
                    self._lead(mine, fd, seg_first_of_fd)
                    return
            # else its leader died mid-sync: again

    def _wait_for_next_sync(self, mine: int) -> bool | None:
        """``sync.next`` is taken. If a next leader holds it, sleep until that leader
        holds ``sync.lock``, then until its sync is done, and say whether the mark now
        covers ``mine``; None if only writers passing through held it (no leader)."""
        nxt, lock = self._next_fd, self._sync_fd
        try:
            fcntl.flock(nxt, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(nxt, fcntl.LOCK_SH)  # until the next leader holds sync.lock
        else:
            fcntl.flock(nxt, fcntl.LOCK_UN)
            return None
        fcntl.flock(nxt, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_SH)  # until its sync is done (all waiters at once)
        try:
            return self._words()[_DURABLE] >= mine
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def _epoch_sync(self, mine: int, fd: int, seg_first_of_fd: int) -> None:
        """The epoch protocol's wait (module docstring): lead, or sleep in the futex
        until a sync that covers this write is done."""
        words, gen = self._words(), self._sync_gen
        assert gen is not None and _FUTEX[0] is not None
        wait = _FUTEX[0][0]
        nxt, at = self._next_fd, self._futex_at
        while True:
            try:
                fcntl.flock(nxt, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                self._lead_epoch(mine, fd, seg_first_of_fd)
                return
            # the holder of sync.next leads epoch e or e + 1 (it may not have claimed yet)
            e = words[_EPOCH]
            g = gen[_GEN]  # (before the mark: a sync done after this read changes it)
            if words[_DURABLE] >= mine:
                return
            wait(at, g, (1 << (e & 31)) | (1 << ((e + 1) & 31)), _RECHECK_S)
            if words[_DURABLE] >= mine:
                return

    def _lead_epoch(self, mine: int, fd: int, seg_first_of_fd: int) -> None:
        """Holding ``sync.next``: claim the next epoch, wait for the running sync, then
        sync for everyone written so far and wake that epoch's waiters."""
        words, gen = self._words(), self._sync_gen
        assert gen is not None and _FUTEX[0] is not None
        epoch = words[_EPOCH] + 1
        words[_EPOCH] = epoch  # (claimed while holding sync.next: one claimer at a time)
        lock = self._sync_fd
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the running sync is done
        finally:
            fcntl.flock(self._next_fd, fcntl.LOCK_UN)  # later writers: the epoch after ours
        try:
            end = words[_WRITTEN]  # the log's end: written before we read it
            if words[_DURABLE] < max(end, mine):
                st = os.fstat(fd)
                if st.st_size < self.segment_bytes and st.st_nlink and end >= mine:
                    self._fsync(fd)  # not full, so never rotated: ``end`` is in this segment
                else:
                    end = self._sync_newest(mine, fd, seg_first_of_fd)
                if words[_DURABLE] < end:
                    words[_DURABLE] = end
            gen[_GEN] = (gen[_GEN] + 1) & 0xFFFFFFFF
            _FUTEX[0][1](self._futex_at, 1 << (epoch & 31))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def _lead(self, mine: int, fd: int, seg_first_of_fd: int) -> None:
        """Holding ``sync.next``: wait for the running sync, then sync for everyone
        written so far unless that one covered ``mine`` already."""
        words = self._words()
        lock = self._sync_fd
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the running sync is done, its waiters woke
        finally:
            fcntl.flock(self._next_fd, fcntl.LOCK_UN)  # later writers: the sync after ours
        try:
            if words[_DURABLE] >= mine:
                return  # the leader before us read the end after our write
            end = words[_WRITTEN]  # the log's end: written before we read it
            st = os.fstat(fd)
            if st.st_size < self.segment_bytes and st.st_nlink and end >= mine:
                self._fsync(fd)  # not full, so never rotated: ``end`` is in this segment
            else:
                end = self._sync_newest(mine, fd, seg_first_of_fd)
            if words[_DURABLE] < end:
                words[_DURABLE] = end
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def _sync_newest(self, mine: int, fd: int, seg_first: int) -> int:
        """The leader's slow path (its segment is full, so the log may have rotated past
        it, or a redaction replaced it): read the end and its segment consistently under
        the append lock, fdatasync the file now at that segment's name and return the end
        it covers (at least our own ``mine``, written through ``fd`` to the segment at
        ``seg_first``)."""
        words = self._words()
        lock = self._lock_fd
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
        self._fsync(fd)  # (no file by that name: at least the bytes we wrote)
        return mine

    def _fsync_segment(self, first: int) -> bool:
        """fdatasync the segment starting at seq ``first`` (opened for the sync); False
        if there is no such file."""
        try:
            fd = open_nofollow(
                os.path.join(self._segdir_s, seg.segment_name(first)), os.O_RDONLY, writing=False
            )
        except FileNotFoundError:
            return False
        try:
            self._fsync(fd)
        finally:
            os.close(fd)
        return True

    def _fsync(self, fd: int) -> None:
        """fdatasync ``fd``; a failure fails the handle (nothing after it is trusted)."""
        try:
            os.fdatasync(fd)
            self.sync_count += 1
        except OSError as e:
            self._failed = f"fdatasync failed ({e}); this log handle refuses further appends"
            raise DurabilityError(self._failed) from None

    def _reopen_sync_lock(self) -> None:
        """In a forked child: lock descriptors of its own (see FileLog._after_fork)."""
        if self._sync_fd >= 0:
            os.close(self._sync_fd)
            os.close(self._next_fd)
            self._sync_fd = self._open_lock("sync.lock")
            self._next_fd = self._open_lock("sync.next")

    def _close_sync(self) -> None:
        """Close the lock descriptors and unmap ``sync`` (FileLog.close)."""
        for fd in (self._sync_fd, self._next_fd):
            if fd >= 0:
                os.close(fd)
        self._sync_fd = self._next_fd = -1
        self._futex_at = 0
        if self._sync_gen is not None:
            self._sync_gen.release()
            self._sync_gen = None
        if self._sync_words is not None:
            self._sync_words.release()
            self._sync_words = None
        if self._sync_map is not None:
            self._sync_map.close()
            self._sync_map = None
