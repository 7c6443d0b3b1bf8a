"""FileLog's catch-up: bring the writer view (ids, key versions, end) up to what others wrote.

Each writing process keeps its own view of the log; before it checks idempotency and
expectations (under the append lock) it reads what other processes appended since, and
cuts a torn tail a crashed writer left (noting it in ``repairs.jsonl``).
"""

from __future__ import annotations

import os

from swarmlog import chain as hashchain
from swarmlog.errors import CorruptionError, ReadOnlyLog
from swarmlog.file import archive, redact
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import open_nofollow
from swarmlog.file.view import snapshot
from swarmlog.file.writer import SegmentWriter


class CatchUp(SegmentWriter):
    """Reads what other writers appended into the handle's writer view."""

    def _write_lock(self) -> int:
        """The append lock's descriptor; a fresh handle's first write reads the log first.

        Why: a fresh handle's view (the saved snapshot, numpy's import to map it, the
        records after it) takes 15-300 ms to build; read under the lock, every fresh
        writer process held every other writer (the synthesizer's decisions too) that
        long, so a swarm of agents starting together stalled the log for seconds. Read
        here, before the lock, as ``version`` reads; under the lock only what was
        appended since is read.
        """
        fresh = self._lock_fd < 0 and self._end.last == 0 and self._end.seg_fd < 0
        fd = super()._write_lock()
        if fresh and self._end.seg_end == 0:
            self._catch_up(locked=False)
        return fd

    def _catch_up(self, locked: bool) -> None:
        """Bring the writer view up to the end of the log (cutting a torn tail if locked).

        Unlocked, a "bad record followed by a good one" can be a race, not corruption: a
        writer cut a torn tail and appended over it while we read, and our read mixed old
        and new bytes. So can a missing archive ids file: a redaction replaced it after we
        read the manifest. Such a finding is confirmed under the lock before it is believed.
        """
        last = self._end.last
        try:
            if last == 0 and self._end.seg_fd < 0 and self._end.seg_end == 0:
                # (the dicts begin: the count first, so a redaction from here on shows)
                self._view_redactions = redact.count(self._root_s)
                snapshot.load(self)  # a fresh handle: start from a saved view if sound
            self._catch_up_once(locked)
        except (CorruptionError, archive.ArchiveCorrupt):
            if locked:
                raise
            # no writer is mid-write now, and no redaction is mid-way (it replaces an
            # archive's ids file after this read loaded the manifest naming the old one)
            with self._locked(write=False):
                self._catch_up_once(False)
        finally:
            if self._end.last != last:
                self._end.offs_new()
        if locked and not self._partial and snapshot.due(self._end.last, self._view_at):
            # spare the next process this scan (snapshot.py), after the lock
            self._save_later = snapshot.Pending(self._view_redactions)

    def _adopt_view(self, ids: dict[str, int], versions: dict[str, int], at: int) -> None:
        """Take a view snapshot's dicts, saved at seq ``at`` (snapshot.load)."""
        self._ids, self._versions, self._view_at = ids, versions, at

    def _catch_up_once(self, locked: bool) -> None:
        """One pass of ``_catch_up``.

        Fast path: the current segment's size equals the end we know and it is not full,
        so nothing was appended and no later segment can exist (one lseek, no stat).
        """
        if self._end.seg_fd >= 0:
            size = os.lseek(self._end.seg_fd, 0, os.SEEK_END)
            if size == self._end.seg_end and size < self.segment_bytes:
                return
        while True:
            if self._end.seg_fd < 0:
                path = self._seg_path(self._end.seg_first)
                if not os.path.exists(path):
                    if archive.skip(self):  # (compacted or not yet written: see archive.py)
                        continue
                    return
                self._end.opened(self._open_current(path, locked))
            st = os.fstat(self._end.seg_fd)
            if st.st_nlink == 0 and redact.reopen(self, locked):  # rewritten (redact.py)
                continue
            size = st.st_size
            if size > self._end.seg_end and self._read_on(size, locked):
                continue  # the segment was compacted: the view moved past it
            if self._end.seg_end >= self.segment_bytes and os.path.exists(
                self._seg_path(self._end.last + 1)
            ):
                self._end.rotated(self._end.last + 1)
                continue
            if self._end.seg_end >= self.segment_bytes and archive.skip(self):
                continue
            return

    def _read_on(self, size: int, locked: bool) -> bool:
        """Take the current segment's records from ``_end.seg_end`` to ``size`` into the view;
        True if the segment was gone and the view moved past it instead."""
        name = seg.segment_name(self._end.seg_first)
        try:
            pin = self._files.acquire(self._end.seg_first, name)
        except FileNotFoundError:  # compacted under this view: go past it (archive.py)
            if archive.skip(self):
                return True
            raise
        sc = None
        ids, versions, end = self._ids, self._versions, self._end
        try:
            fd = pin.fd
            for records, sc in seg.read_records(fd, end.seg_end, size, end.last + 1, name):
                for d in records:
                    s = d["seq"]
                    ids[d["id"]] = s
                    k = d.get("key")
                    if k is not None:
                        versions[k] = s
                if records:
                    c = sc.chain
                    tip = c.encode() if c is not None else hashchain.GENESIS
                    end.scanned(records[-1]["seq"], sc.end, records[-1]["ts"], tip)
                else:
                    end.passed(sc.end)
        finally:
            self._files.release(pin)
        if sc is not None and sc.end < size and locked:
            self._cut(sc.end, size, sc.torn or "torn tail")
        return False

    def _open_current(self, path: str, locked: bool) -> int:
        """The current segment's descriptor for the writer view: write mode if it can be
        written, else (a reader's catch-up on a read-only log) read mode."""
        try:
            return open_nofollow(path, os.O_WRONLY | os.O_APPEND)
        except ReadOnlyLog:
            if locked:
                raise
            return open_nofollow(path, os.O_RDONLY)
