"""FileLog's use of the shared writer index: trust it, catch it up, or rebuild it.

Under the append lock, ``_wview`` brings the handle's end (last seq, segment, offset,
chain head, last ts) to the one in ``index`` (writerindex.py) after checking the file
can be trusted and the segment it names is the one on disk, at that size. Then the
append checks ids and expectations against the index's tables and records what it wrote
there (``_ix_record``): no writer parses the others' records. Anything the index does
not cover is handled as catch-up always was: records written past its end (a writer
that died between its write and its index update) are read and entered; a torn, stale,
foreign or other-boot index is rebuilt from a full catch-up (``_ix_rebuild``). Design:
docs/architecture.md, "The shared writer index (FileLog)".

In this mode the handle's own ``_ids``/``_versions`` dicts no longer hold the whole log
(``_partial``): nothing decides on them, and ``version`` asks the index.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping

from swarmlog import chain as hashchain
from swarmlog._fast import bounded_stamp, hashed_dict
from swarmlog.clock import MAX_STEP
from swarmlog.errors import VersionConflict
from swarmlog.file import redact
from swarmlog.file.fsguard import open_nofollow, os_error
from swarmlog.file.view import ixsnap, mapguard, snapshot
from swarmlog.file.view import writerindex as wi
from swarmlog.file.view.catchup import CatchUp
from swarmlog.file.view.columns import BasedDict, full_table

_HEAP = 4  # heap bytes per string beyond its UTF-8 (its length)
CRASH_ENV = "SWARMLOG_TEST_INDEX_CRASH_AT"
"""Test hook: ``"N:S"`` makes the process SIGKILL itself in its Nth index update, at step
S (1: the batch written, index not touched; 2: ``gen`` odd; 3: slots stored, end not);
with steps 1-3 a writer alone updates the index at every append (no lag). Step 4: in
its Nth append (index updates and appends while alone counted together), written while
alone, not acknowledged, the index lagging (a real kill -9 at a chosen point;
tests/test_writerindex_crash.py)."""
_crash = [int(x) for x in os.environ.get(CRASH_ENV, "0:0").split(":")][:2]
CRASH_AT_LAG = _crash[1] == 4


def _step(s: int) -> None:
    """Die here if the crash test asks for this update and step."""
    if s == 1:
        _crash[0] -= 1
    if _crash[0] == 0 and _crash[1] == s:
        os.kill(os.getpid(), signal.SIGKILL)


def crash_step(s: int) -> None:
    """The test hook at step ``s`` (4: an append while alone; see ``CRASH_ENV``)."""
    if _crash[1] == s:
        _crash[0] -= 1
        if _crash[0] == 0:
            os.kill(os.getpid(), signal.SIGKILL)


def lag_allowed() -> bool:
    """Whether a writer alone may leave the index lagging (alone.py; not while a crash
    test kills writers inside index updates)."""
    return _crash[1] in (0, 4)


def _entries(view: dict[str, int]) -> list[tuple[str, int]]:
    """(string, seq) of a writer view's dict (a plain one, or one over a view snapshot)."""
    if isinstance(view, BasedDict):
        return wi.table_entries(full_table(view))
    return list(view.items())


def _heap_bound(s: str) -> int:
    return 4 * len(s) + _HEAP  # (UTF-8 with surrogates: at most 4 bytes a character)


class IndexedView(CatchUp):
    """The writer view through the shared index (see module docstring)."""

    def _wview(self) -> wi.WriterIndex | None:
        """Under the append lock: the trusted index with the handle's end set to its own
        (caught up or rebuilt as needed); None where no index can be used (the legacy
        catch-up then serves).

        A handle's first append reads the log as appends always did (from a view
        snapshot, else from the start: rot anywhere is found there), and takes the index
        only if it agrees with what it read; from then on it trusts the index.
        """
        if not self._ix_ready:
            self._catch_up(locked=True)
            ix = self._ix_mapped()
            if ix is None:
                return None
            self._ix_ready = True
            if not ix.load(self._swarm16) or not self._ix_agrees(ix):
                return self._ix_rebuild(rescan=False)
        else:
            ix = self._ix_mapped()
            if ix is None:
                return None
            if not ix.load(self._swarm16):
                return self._ix_rebuild()
        nxt, seg_first, off, ino, last_ts, tip = ix.end
        fd = self._end.seg_fd
        if seg_first != self._end.seg_first or fd < 0 or ino != self._end.seg_ino:
            # another segment than the one this handle has open: open it and check it
            # is the index's file (inode); then only its size (one lseek a time)
            fd = self._ix_open(seg_first)
            if fd >= 0:
                st = os.fstat(fd)
                if st.st_ino != ino or not st.st_nlink:
                    return self._ix_rebuild()
            elif ino or off:
                return self._ix_rebuild()  # (the segment it names is gone)
        elif nxt - 1 == self._end.last and off != self._end.seg_end:
            return self._ix_rebuild()  # this handle rewrote the segment (an erasure)
        size = os.lseek(fd, 0, os.SEEK_END) if fd >= 0 else 0
        if size < off:
            return self._ix_rebuild()  # cut under it: another writer's view, not ours
        adopted = nxt - 1 != self._end.last or off != self._end.seg_end
        if adopted:  # (others appended: where the plain path would have caught up)
            self._end.adopt(nxt - 1, off, last_ts, tip)
            self._partial = True
        self._end.set_ino(ino)
        full = off >= self.segment_bytes
        if size > off or ix.recovered or (full and os.path.exists(self._seg_path(nxt))):
            ix = self._ix_catch_up(ix)
        if adopted and snapshot.due(self._end.last, max(self._view_at, ix.snapshot_at())):
            self._ix_save_view(ix)
        return ix

    def _ix_save_view(self, ix: wi.WriterIndex) -> None:
        """Save the view snapshot (``view.idx``: what a fresh handle's first append starts
        from) from the index's tables, as a catch-up that read SAVE_AFTER records did.

        Under the lock it only claims the window (the hint, so that one writer tries per
        snapshot point even if it dies) and notes the view's end; copying the tables,
        building and writing the file (numpy, O(n)) happen after the lock is released
        (``_ix_flush_save``; ixsnap.py says why a copy then is the view at the end noted),
        so no other writer waits for them.
        """
        ix.set_snapshot_at(self._end.last)
        self._save_from = (ix, ix.heap_used)
        self._save_later = later = ixsnap.of_view(self, redactions=redact.count(self._root_s))
        later.id_count = ix.id_count
        self._view_at = self._end.last

    def _ix_flush_save(self) -> None:
        """Write the snapshot ``_ix_save_view`` prepared, or the handle's own view whose
        save came due under the lock (``snapshot.Pending``), after the append lock."""
        view, self._save_later = self._save_later, None
        (ix, used), self._save_from = self._save_from, (None, 0)
        if isinstance(view, snapshot.Pending):
            # (the dicts are still this handle's whole view, or it went partial: no save)
            if not self._partial:
                self._save_unless_redacted(view.redactions, self._save_own)
        elif view is not None and ix is not None:

            def write() -> bool:
                try:
                    view.ids, view.keys, view.heap = ixsnap.copy(ix, used)
                except ValueError:  # (the mapping was closed: no snapshot this time)
                    return False
                # (a redaction that began while we copied: nothing written)
                return redact.count(self._root_s) == view.redactions and ixsnap.save(view)

            self._save_unless_redacted(view.redactions, write)

    def _save_own(self) -> bool:
        """Save the handle's own view (its whole dicts) as ``view.idx``; True if saved."""
        if not snapshot.save(self):
            return False
        self._view_at = self._end.last
        return True

    def _save_unless_redacted(self, redactions: int, write: Callable[[], bool]) -> None:
        """Run ``write`` (a view snapshot's save) unless the redaction count moved from
        ``redactions`` (a redaction may have renamed ids or keys the view holds); if it
        moved while ``write`` ran (the redaction dropped the indexes between our check and
        our rename: it moves the count before it deletes them), take back what we wrote."""
        if redact.count(self._root_s) != redactions:
            return
        if write() and redact.count(self._root_s) != redactions:
            snapshot.discard(self._root_s)

    def _ix_mapped(self) -> wi.WriterIndex | None:
        """The index file, mapped (reopened if a newer one replaced it); None if it
        cannot be opened."""
        ix = self._wix
        if ix is not None and not ix.retired():
            return ix
        if ix is not None:
            ix.close()
            self._wix = None
        if self._wix_off:
            return None
        try:
            self._wix = wi.WriterIndex.open(self._root_s)
        except OSError as e:
            if self._partial:  # (the view's dicts cannot serve: refuse, try again later)
                raise os_error(e, os.path.join(self._root_s, wi.NAME), writing=True) from None
            self._wix_off = True  # (this handle appends by catching up, as before)
        else:
            self._wix.unretire()  # (a builder died before its rename: still sound)
        return self._wix

    def _ix_agrees(self, ix: wi.WriterIndex) -> bool:
        """Whether the index's end can be the one this handle just read from the segments:
        the same, or behind it (a writer died between its write and its index update:
        the records past it are caught up), never ahead or different at the same seq."""
        nxt, seg_first, off, ino, last_ts, tip = ix.end
        if nxt - 1 > self._end.last:
            return False
        if nxt - 1 < self._end.last:
            return True
        if (seg_first, off, last_ts) != (self._end.seg_first, self._end.seg_end, self._end.last_ts):
            return False
        if (tip or hashchain.GENESIS) != self._end.tip:
            return False
        return (os.fstat(self._end.seg_fd).st_ino if self._end.seg_fd >= 0 else 0) == ino

    def _ix_open(self, seg_first: int) -> int:
        """Make the segment at ``seg_first`` the handle's current one (-1: no such file)."""
        self._end.close_segment()
        try:
            fd = open_nofollow(self._seg_path(seg_first), os.O_WRONLY | os.O_APPEND)
        except FileNotFoundError:
            fd = -1
        self._end.place(seg_first, fd)
        return fd

    def _view_stale(self) -> bool:
        """Whether a redaction ran since the dicts began (``_view_redactions``): they may
        hold ids and keys it renamed, under the old names, so nothing may be built from
        them (a file read: only where the dicts are about to be trusted whole)."""
        return redact.count(self._root_s) != self._view_redactions

    def _view_restart(self) -> None:
        """Drop the view and read the log again from scratch (view snapshot, archives,
        torn tails cut as ever), under the append lock."""
        self._end.restart()
        self._ids, self._versions = hashed_dict(), {}
        self._view_at = 0
        self._partial = False
        self._catch_up(locked=True)

    def _ix_rebuild(self, rescan: bool = True) -> wi.WriterIndex:
        """A full catch-up from scratch (``_view_restart``; ``rescan=False``: the
        handle's complete view of a moment ago, unless a redaction ran since it began),
        then a new index file from it (the old one retired)."""
        wi.clean_tmp(self._root_s)
        if rescan or self._partial or self._view_stale():
            self._view_restart()
        ino = self._end.fd_ino()
        old = self._wix
        cap = old.clock(self._swarm16) if old is not None else (0.0, 0)
        if not cap[1]:  # (no ceiling kept: the index was deleted, dropped or foreign)
            cap = self._derived_cap()
        ids, keys = _entries(self._ids), _entries(self._versions)
        end = self._end.for_index(ino)
        try:
            self._wix = ix = wi.build(self._root_s, self._swarm16, ids, keys, end, cap, old=old)
        except OSError as e:  # (a full disk: the old file stays, untrusted; tried again)
            raise os_error(e, os.path.join(self._root_s, wi.NAME), writing=True) from None
        self._end.set_ino(ino)
        self.index_rebuilds += 1
        mapguard.CUT[0] = 0  # (a cut index healed in this process: rebuilt now)
        return ix

    def _derived_cap(self) -> tuple[float, int]:
        """A clock ceiling derived from the log itself, for an index built with none
        (``index`` deleted, dropped by an erasure, foreign, from another boot): the newest
        record's ts, plus the real time since its segment was last written (its mtime,
        set by the kernel, against the kernel's clock now, never the handle's injected
        or skewed one), plus ``MAX_STEP``, anchored at the boot-time clock now. Why: the
        ceiling otherwise lives only in ``index``, and a writer whose clock is hours
        ahead that rebuilt it stamped its own reading and dragged every later event
        along. (0.0, 0): no record, nothing to bound by. With no segment open (every
        record archived) the segments directory's mtime stands in, a looser bound: it
        moved when the newest segment was created or an old one archived."""
        if self._end.last == 0:
            return 0.0, 0
        try:
            if self._end.seg_fd >= 0:
                written = os.fstat(self._end.seg_fd).st_mtime
            else:
                written = os.stat(self._segdir_s).st_mtime
        except OSError:
            return 0.0, 0
        since = max(0.0, time.time() - written)
        return self._end.last_ts + since + MAX_STEP, wi.boottime_ns()

    def _ix_catch_up(self, ix: wi.WriterIndex) -> wi.WriterIndex:
        """Read the records written past the index's end (by a writer that died before
        its index update, or one without the index) and enter them."""
        if self._end.last == 0:
            return self._ix_rebuild()
        saved = self._ids, self._versions
        self._ids, self._versions = hashed_dict(), {}
        self._partial = True
        try:
            self._catch_up(locked=True)
            ids, keys = self._ids, self._versions
        finally:
            self._ids, self._versions = saved
        fresh = [(i, s) for i, s in ids.items() if not ix.find_id(i)]
        heap = sum(_heap_bound(i) for i, _ in fresh) + sum(_heap_bound(k) for k in keys)
        if not ix.fits(len(fresh), len(keys), heap):
            ix = self._ix_room(ix, [i for i, _ in fresh], list(keys))
        gen = ix.begin()
        for i, s in fresh:
            ix.add_id(i, s)
        for k, s in keys.items():
            ix.set_key(k, s)
        end = self._end.for_index(self._end.note_ino())
        ix.commit(gen, end, ix.clock(self._swarm16))  # (a lagging writer's newer ceiling)
        return ix

    # ------------------------------------------------------------------ appending

    def _ix_expect(self, ix: wi.WriterIndex, expect: Mapping[str, int]) -> None:
        for key, want in expect.items():
            have = ix.version(key)
            if have != want:
                raise VersionConflict(key, want, have)

    def _ix_stamp(self, ix: wi.WriterIndex) -> tuple[float, tuple[float, int]]:
        """The batch's ts under the shared clock ceiling (clock.bounded_stamp)."""
        return bounded_stamp(
            self._clock(), self._end.last_ts, ix.cap_ts, ix.cap_at, wi.boottime_ns()
        )

    def _ix_room(
        self, ix: wi.WriterIndex, ids: list[str], keys: list[str | None]
    ) -> wi.WriterIndex:
        """The index, grown first if these entries would not fit."""
        heap = sum(map(_heap_bound, ids)) + sum(_heap_bound(k) for k in keys if k is not None)
        if ix.fits(len(ids), len(keys), heap):
            return ix
        try:
            self._wix = ix = ix.grown(self._root_s, self._swarm16, len(ids), len(keys), heap)
        except OSError as e:  # (a full disk: nothing written yet, the old index intact)
            raise os_error(e, os.path.join(self._root_s, wi.NAME), writing=True) from None
        return ix

    def _ix_record(
        self,
        ix: wi.WriterIndex,
        first: int,
        ids: list[str],
        keys: list[str | None],
        cap: tuple[float, int],
        alone: bool = True,
    ) -> None:
        """Enter a batch just written (seqs ``first``..) and the new end (after the write:
        a writer killed before this leaves an index that lags, which is caught up). A
        handle whose dicts held the whole log enters it there too and, with ``alone``,
        lags the index from here (alone.py)."""
        whole = not self._partial
        self._partial = True  # (the handle's dicts do not get these)
        if _crash[1]:
            _step(1)
        gen = ix.begin()
        if _crash[1]:
            _step(2)
        add = ix.add_id
        for s, i in enumerate(ids, first):
            add(i, s)
        for s, k in enumerate(keys, first):
            if k is not None:
                ix.set_key(k, s)
        if _crash[1]:
            _step(3)
        at = self._end
        ino = at.note_ino() if at.seg_first != ix.end[1] or not ix.end[3] else at.seg_ino
        ix.commit(gen, at.for_index(ino), cap)  # (note_ino: a new segment file)
        if whole:
            self._partial = False
            seqs = range(first, first + len(ids))
            self._ids.update(zip(ids, seqs, strict=True))
            self._versions.update((k, s) for k, s in zip(keys, seqs, strict=True) if k is not None)
            if alone:
                self._alone_begin(ix)

    def _alone_begin(self, ix: wi.WriterIndex) -> None:
        """(alone.AloneView: start lagging the index)"""

    def _ix_enter(
        self,
        ix: wi.WriterIndex,
        ids: list[str],
        seqs: list[int],
        keys: list[tuple[str, int]],
        cap: tuple[float, int],
    ) -> None:
        """Enter ids at their seqs and keys at their versions, then the handle's end as
        the index's (a writer alone's lag on close: alone.py)."""
        gen = ix.begin()
        for i, s in zip(ids, seqs, strict=True):
            ix.add_id(i, s)
        for k, s in keys:
            ix.set_key(k, s)
        ix.commit(gen, self._end.for_index(self._end.note_ino()), cap)

    def _ix_record_one(
        self, ix: wi.WriterIndex, seq: int, eid: str, key: str | None, cap: tuple[float, int]
    ) -> None:
        """``_ix_record`` of one event (the single append's path)."""
        if _crash[1]:
            self._ix_record(ix, seq, [eid], [key], cap)
            return
        whole = not self._partial
        self._partial = True
        gen = ix.begin()
        ix.add_id(eid, seq)
        if key is not None:
            ix.set_key(key, seq)
        at, end = self._end, ix.end
        ino = at.note_ino() if at.seg_first != end[1] or not end[3] else at.seg_ino
        ix.commit(gen, at.for_index(ino), cap)  # (note_ino: a new segment file)
        if whole:  # (the dicts hold the whole log: keep them so, and lag from here)
            self._partial = False
            self._ids[eid] = seq
            if key is not None:
                self._versions[key] = seq
            self._alone_begin(ix)

    def _ix_version(self, key: str) -> int | None:
        """``version(key)`` from the index under the append lock (None: no index)."""
        with self._locked():
            ix = self._wview()
            return None if ix is None else ix.version(key)
