"""A writer alone leaves the shared writer index lagging: no probe, no update per append.

A handle whose ``_ids``/``_versions`` hold the whole log (it read the log at its first
append and no other writer has appended since) needs nothing from the index to append:
idempotency and expectations are decided on its own dicts, and one ``lseek`` (the
segment still ends where this handle left it) tells that nobody else appended, as on
main before the index. So while it is alone it does not touch the index: the index
stays at the end of this handle's last index update, and the records written since
(the *lag*) are entered later:

* by the next other writer, under the append lock, from the segment: the index's end
  is behind the segment's size, so it reads and enters the records past it, exactly as
  after a writer killed between its write and its index update (``view/index.py``; the
  crash tests). Once, and only the lag: afterwards both use the index;
* by this handle from its own list when it closes, if the index is still the one it
  left (same file, same ``gen``), so a log whose writers close cleanly keeps a current
  index and the next writer reads nothing.

The handle leaves the mode when the check fails (another writer appended, or a
redaction touched the segment): the index path takes over (``_wview``), and adopting
another writer's end makes the dicts partial, so the mode does not come back.

The swarm clock (``clock.bounded_stamp``) goes on with the ceiling kept in the handle;
every ``HINT_NS`` it is also written to the index's clock hint (``writerindex``), which a
writer catching up the lag takes when it is newer than the committed ceiling.
Design: docs/architecture.md, "A writer alone".
"""

from __future__ import annotations

import os
from time import clock_gettime_ns as _clock_ns

from swarmlog._fast import bounded_stamp
from swarmlog.errors import SwarmlogError
from swarmlog.file.view import snapshot
from swarmlog.file.view import writerindex as wi
from swarmlog.file.view.index import IndexedView, lag_allowed

HINT_NS = 250_000_000
"""How often (boot-time nanoseconds) a lagging writer publishes its clock ceiling."""


class AloneView(IndexedView):
    """The lagging mode of a writer alone (see module docstring)."""

    def _alone_begin(self, ix: wi.WriterIndex) -> None:
        """After an index update by a handle whose dicts hold the whole log: lag from here."""
        if not lag_allowed() or self._view_stale():
            return  # (stale dicts: a redaction ran since they began; the index decides)
        self._alone = True
        self._lag_gen = ix.seen
        self._lag_first = self._end.last + 1
        self._lag_cap = (ix.cap_ts, ix.cap_at)
        self._lag_hint_at = ix.cap_at

    def _still_alone(self) -> bool:
        """Under the append lock: no other writer appended since this handle's last
        append (the segment ends where it left it; a full one has no successor, so this
        handle rotates), and the index it lags was not retired (a redaction drops it: the
        dicts may hold names it renamed, in any segment). False ends the mode."""
        fd = self._end.seg_fd
        ix = self._wix
        if fd >= 0 and (ix is None or not ix.retired()):  # (retired: a redaction dropped it)
            end = self._end.seg_end
            if os.lseek(fd, 0, os.SEEK_END) == end:
                if end < self.segment_bytes:
                    return True
                if not os.path.exists(self._seg_path(self._end.last + 1)):
                    if snapshot.due(self._end.last, self._view_at):  # (as the catch-up
                        # before a rotation did, after the lock: _ix_flush_save)
                        self._save_later = snapshot.Pending(self._view_redactions)
                    return True
        self._alone = False
        return False

    def _alone_reading(self) -> bool:
        """For a read of the view without the lock (``version``): still alone, so the
        dicts answer. False ends the mode: had the read caught up with another writer's
        records, the dicts would stay whole and this handle would go on parsing them at
        every read instead of taking the index (a CAS loop beside another writer)."""
        fd, end, ix = self._end.seg_fd, self._end.seg_end, self._wix
        if (
            fd >= 0
            and (ix is None or not ix.retired())
            and os.lseek(fd, 0, os.SEEK_END) == end
            and (end < self.segment_bytes or not os.path.exists(self._seg_path(self._end.last + 1)))
        ):
            return True
        self._alone = False
        return False

    def _lag_stamp(self) -> float:
        """The next ts under the handle's own copy of the clock ceiling."""
        now_at = _clock_ns(wi.BOOTTIME) or 1
        cap_ts, cap_at = self._lag_cap
        ts, self._lag_cap = bounded_stamp(self._clock(), self._end.last_ts, cap_ts, cap_at, now_at)
        if now_at - self._lag_hint_at > HINT_NS:
            self._lag_hint()
        return ts

    def _lag_hint(self) -> None:
        """Publish the handle's clock ceiling to the index (for a writer catching up)."""
        self._lag_hint_at = self._lag_cap[1]
        ix = self._wix
        if ix is not None:
            ix.set_clock_hint(self._lag_cap)

    def _lag(self, first: int) -> tuple[list[str], list[int], list[tuple[str, int]]]:
        """What the dicts hold from seq ``first`` on: (ids, their seqs, (key, seq)s).
        Ids were entered in seq order, so the newest are at the end; a key's entry keeps
        its first place when updated, so the keys are scanned."""
        ids: list[str] = []
        seqs: list[int] = []
        for i, s in reversed(dict.items(self._ids)):
            if s < first:
                break
            ids.append(i)
            seqs.append(s)
        ids.reverse()
        seqs.reverse()
        keys = [(k, s) for k, s in dict.items(self._versions) if s >= first]
        return ids, seqs, keys

    def _alone_close(self) -> None:
        """On close: enter what the index lacks of the lag (from its end on: another
        writer may have caught part of it up meanwhile) from the dicts. Best effort:
        what is left is read from the segment by the next writer."""
        self._alone = False
        if self._end.last < self._lag_first or self._lock_fd < 0 or self._view_stale():
            return  # (nothing to enter, or dicts a redaction made stale: a catch-up's)
        try:
            with self._tlock, self._locked():
                ix = self._ix_mapped()
                if ix is None or not ix.load(self._swarm16) or ix.recovered:
                    return
                first = ix.end[0]
                if not self._lag_first <= first <= self._end.last:
                    return  # (nothing to enter, or an index this view cannot extend)
                fd = self._end.seg_fd
                if fd < 0 or os.lseek(fd, 0, os.SEEK_END) < self._end.seg_end:
                    return  # (the segment changed under the view: a catch-up sees to it)
                if not os.fstat(fd).st_nlink:
                    return  # (a redaction replaced it)
                ids, seqs, keys = self._lag(first)
                if seqs != list(range(first, self._end.last + 1)):
                    return  # (not the whole lag in the dicts: leave it to a catch-up)
                key_list: list[str | None] = [k for k, _ in keys]
                ix = self._ix_room(ix, ids, key_list)
                self._ix_enter(ix, ids, seqs, keys, self._lag_cap)
        except (OSError, SwarmlogError):
            pass
