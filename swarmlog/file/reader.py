"""FileLog's reading role: ``read``/``read_batches`` by seq, ``follow`` around a cursor.

Readers take no lock and no write access and only take complete, CRC-valid batches.
A lock-free reader can race a writer that cuts a torn tail and writes over it, so a
corruption it finds is confirmed under the lock before it is believed
(``_confirm_corrupt``). Segments are opened through the handle's descriptor cache
(segfiles) and pinned while read, so compaction deleting one cannot pull it away.
"""

from __future__ import annotations

import bisect
import os
import time
from collections.abc import Iterator
from typing import Any

from swarmlog._fast import from_stored
from swarmlog.contract import ChangeWaiter
from swarmlog.envelope import StoredEvent
from swarmlog.errors import CorruptionError
from swarmlog.file import archive
from swarmlog.file import segment as seg
from swarmlog.file.segfiles import Pinned
from swarmlog.file.tail import Waiter
from swarmlog.file.view.state import FileState


class SegmentReader(FileState):
    """Reads stored records by seq and follows the log's end (see module docstring)."""

    @property
    def last_seq(self) -> int:
        for first in reversed(seg.list_segments(self._segdir_s)):
            s = self._tail_seq(first)
            if s is not None:
                return s
        return 0

    def _tail_seq(self, first: int) -> int | None:
        """Seq of the last complete batch of a segment, reading only its tail."""
        try:
            with self._files.pinned(first, seg.segment_name(first)) as fd:
                return seg.tail_seq(fd)
        except FileNotFoundError:
            return None

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[StoredEvent]:
        for batch in self.read_batches(from_seq, to_seq):
            yield from map(from_stored, batch)

    def read_batches(
        self, from_seq: int = 1, to_seq: int | None = None
    ) -> Iterator[list[dict[str, Any]]]:
        """Stored dicts in chunks as the segment reader decodes them (see ``Log``)."""
        from_seq = max(1, from_seq)
        if to_seq is not None and to_seq < from_seq:
            return
        firsts = seg.list_segments(self._segdir_s)
        if not firsts:
            return
        if from_seq < firsts[0]:  # before the retained window: from archives (archive.py)
            from_seq = yield from archive.read_before(self._root_s, from_seq, to_seq, firsts[0])
        i = max(0, bisect.bisect_right(firsts, from_seq) - 1)
        for first in firsts[i:]:
            if to_seq is not None and first > to_seq:
                return
            name = seg.segment_name(first)
            sc = None
            try:
                held = self._files.acquire(first, name)
            except FileNotFoundError:  # compacted since listed: list again (archive.py)
                yield from self.read_batches(from_seq, to_seq)
                return
            with self._files.pinned(first, name) as fd:
                self._files.release(held)
                for attempt in range(3):
                    size = os.fstat(fd).st_size
                    start, expect = self._locate(fd, size, first, from_seq)
                    if start >= size:
                        break
                    try:
                        for records, sc in seg.read_records(fd, start, size, expect, name):
                            if not records:
                                continue
                            if records[0]["seq"] < from_seq or (
                                to_seq is not None and records[-1]["seq"] > to_seq
                            ):
                                records = _clip(records, from_seq, to_seq)
                            if records:
                                yield records
                                from_seq = records[-1]["seq"] + 1
                            if to_seq is not None and from_seq > to_seq:
                                return
                        break
                    except CorruptionError:
                        if attempt == 2:
                            raise
                        self._confirm_corrupt(first, from_seq)  # raises if it is real
            if sc is not None:
                # remember where the next read (usually "everything after what I saw")
                # starts, so it seeks in O(1) instead of bisecting the segment
                self._hint(first, from_seq, sc.end)
            if sc is not None and sc.end < size:
                return  # torn tail (or a batch being written): nothing valid after it

    def _confirm_corrupt(self, first: int, from_seq: int) -> None:
        """Re-read segment ``first`` from ``from_seq`` under the lock; raise if still corrupt.

        A lock-free reader can race a writer that cuts a torn tail and appends over it, and
        see a bad record followed by a good one that never coexisted on disk. Under the lock
        no writer is mid-write, so a CorruptionError here is real.
        """
        name = seg.segment_name(first)
        with self._locked(write=False), self._files.pinned(first, name) as fd:
            size = os.fstat(fd).st_size
            start, expect = self._locate(fd, size, first, from_seq)
            for _ in seg.read_records(fd, start, size, expect, name):
                pass

    def _locate(self, fd: int, size: int, first: int, from_seq: int) -> tuple[int, int]:
        """Where in segment ``first`` reading for ``from_seq`` starts, and the seq found there."""
        if from_seq <= first:
            return 0, first
        if first == self._end.seg_first:  # a record this handle appended: its offset is known
            offs = self._end.offs
            i = from_seq - self._end.offs_base
            if 0 <= i < len(offs):
                # (read without the lock, so maybe from another moment: seek_seq checks
                # the record there has this seq before it trusts the hint)
                self._hint(first, from_seq, offs[i])
        hints = self._hints.setdefault(first, {})
        return seg.seek_seq(fd, size, first, from_seq, hints), from_seq

    def follow(
        self, from_seq: int = 1, timeout: float | None = None
    ) -> Iterator[StoredEvent]:
        """Yield events from ``from_seq`` on as they are appended (see Log.follow).

        A ``FollowCursor`` keeps (segment, offset, next seq) between wake-ups, so a
        wake-up costs one fstat and one read of the new bytes. Wakes on notifications and
        at least every poll interval; a wake-up that moved the cursor reads again at once.
        """
        waiter = Waiter(self.segdir, self.notify, self.poll_interval)
        cur = FollowCursor(self, max(1, from_seq))
        try:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                cur.moved = False
                if not cur.placed:
                    for batch in cur.place():
                        yield from map(from_stored, batch)
                while cur.placed:
                    for records in cur.read():
                        yield from map(from_stored, records)
                    if not cur.next_segment():
                        break
                if cur.moved:
                    if timeout is not None:
                        deadline = time.monotonic() + timeout
                    continue
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                waiter.wait(left)
        finally:
            waiter.close()
            cur.close()

    def change_waiter(self) -> ChangeWaiter:
        """One file-system watch kept across waits (see ``Log.change_waiter``)."""
        return Waiter(self.segdir, self.notify, self.poll_interval)

    def wait_for_change(self, timeout: float) -> bool:
        waiter = Waiter(self.segdir, self.notify, self.poll_interval)
        try:
            return waiter.wait(timeout)
        finally:
            waiter.close()


class FollowCursor:
    """Where a follower is: the segment it reads (pinned), the offset there, the next seq.

    Unplaced (``first`` -1) until ``place`` finds the segment holding ``nxt``; an offset
    found by seeking is only trusted (``confirmed``) once a complete batch was read from
    it. ``moved`` tells ``follow`` something happened since it last waited.
    """

    def __init__(self, log: SegmentReader, nxt: int) -> None:
        self.log = log
        self.nxt = nxt
        self.first = -1
        self.offset = 0
        self.confirmed = False
        self.moved = False
        self.pin: Pinned | None = None

    @property
    def placed(self) -> bool:
        return self.first >= 0

    def place(self) -> Iterator[list[dict[str, Any]]]:
        """Find and pin the segment holding ``nxt``, yielding any archived batches before
        the retained window first; stays unplaced while the log has no segment."""
        log = self.log
        while True:
            firsts = seg.list_segments(log._segdir_s)
            if not firsts:
                return
            if self.nxt < firsts[0]:
                yield from archive.read_before(log._root_s, self.nxt, None, firsts[0])
                self.nxt = firsts[0]
            first = firsts[max(0, bisect.bisect_right(firsts, self.nxt) - 1)]
            try:
                self.pin = log._files.swap(self.pin, first, seg.segment_name(first))
            except FileNotFoundError:  # compacted since the listing: list again
                continue
            fd = self.pin.fd
            self.first = first
            self.offset, self.nxt = log._locate(fd, os.fstat(fd).st_size, first, self.nxt)
            self.confirmed = self.offset == 0
            return

    def read(self) -> Iterator[list[dict[str, Any]]]:
        """The complete batches written after the offset, moving the cursor past each."""
        assert self.pin is not None
        fd = self.pin.fd
        size = os.fstat(fd).st_size
        if size <= self.offset:
            return
        name = seg.segment_name(self.first)
        try:
            for records, sc in seg.read_records(fd, self.offset, size, self.nxt, name):
                if records and os.fstat(fd).st_nlink == 0:
                    break  # rewritten (redact.py): yield only what was read before it
                if records:
                    # only a complete batch moves the offset: a chunk that ends inside an
                    # unfinished batch reports its own start, which may be mid-batch (and
                    # that batch may be cut)
                    self.offset = sc.end
                    self.moved = self.confirmed = True
                    self.nxt = records[-1]["seq"] + 1
                    yield records
        except CorruptionError:
            self.log._confirm_corrupt(self.first, self.nxt)  # raises if it is real
            # a race with a writer's repair: seek to ``nxt`` again and re-read now
            # (re-reading from the same offset could spin forever)
            self.moved, self.first, self.confirmed = True, -1, False

    def next_segment(self) -> bool:
        """After a read: True if the cursor moved on to the next segment (read it now);
        False to wait, unplaced if it must seek again (not confirmed, or compacted)."""
        log = self.log
        full = self.offset >= log.segment_bytes
        assert self.pin is not None
        if os.fstat(self.pin.fd).st_nlink == 0 and os.path.exists(log._seg_path(self.first)):
            self.moved, self.first = True, -1  # rewritten by a redaction: reopen (redact.py)
        elif not self.confirmed:
            self.first = -1  # not there yet: seek again on the next wake-up
        elif full and os.path.exists(log._seg_path(self.nxt)):
            try:
                self.pin = log._files.swap(self.pin, self.nxt, seg.segment_name(self.nxt))
            except FileNotFoundError:  # compacted between the check and the open
                self.moved, self.first = True, -1
                return False
            self.first, self.offset = self.nxt, 0
            return True
        elif full and not os.path.exists(log._seg_path(self.first)):
            self.moved, self.first = True, -1  # compacted under us: find nxt again
        return False

    def close(self) -> None:
        if self.pin is not None:
            self.log._files.release(self.pin)
            self.pin = None


def _clip(records: list[dict[str, Any]], lo: int, hi: int | None) -> list[dict[str, Any]]:
    """The records with seqs in [lo, hi] (hi None: no upper bound)."""
    return [d for d in records if d["seq"] >= lo and (hi is None or d["seq"] <= hi)]
