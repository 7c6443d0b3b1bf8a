"""FileLog: the embedded log — a directory of JSONL segments shared by local processes.

Layout of a log directory::

    swarm.json          name, format, segment size (fixed at creation)
    segments/           <first seq>.jsonl files, append-only
    lock                flock'ed (exclusive) around every append batch (readers need none)
    sync                shared by fsync writers: the log's end and the durable mark (sync.py)
    sync.lock           flock'ed by the one writer running fdatasync for everybody
    sync.next           flock'ed by the writer that leads the next fdatasync
    sync.done.0, .1     flock'ed (in turn, a sync each) by the writer running it; the
                        writers waiting for that sync sleep on it
    combine             a slot per writer handle: single appends posted for the lock's
                        holder to write with its own (flat combining, view/combine.py)
    index               the shared writer index: the end, id -> seq, key -> version and
                        the swarm clock's ceiling, mapped by writers (writerindex, view/index.py)
    repairs.jsonl       torn tails the writers cut off (reported by verify)
    checkpoints/        opaque snapshots (see checkpoint.py)

Writers serialise on ``lock``: take the log's end, ids and key versions from the shared
``index`` (a handle's first append reads the log itself; view/index.py), check idempotency and
expectations, then write the whole batch with one ``write()`` and update the index.
Readers take no lock and no write access, and only consume complete, CRC-valid batches.
Nothing in the directory is followed if it is a symlink (fsguard); segments are opened on
demand through a small cache (segfiles).

One module per role: ``writer.py`` (write, rotate, cut a torn tail),
``sync.py`` (group commit), ``view/catchup.py`` (the writer view), ``reader.py`` (read,
follow); the speed tricks of encoding and decoding are in ``_fast``; this one opens
and closes a handle and runs ``append``/``append_many``.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from itertools import repeat
from pathlib import Path
from typing import Any

import orjson

from swarmlog import idreuse
from swarmlog._fast import (
    Serializer,
    appended,
    appended_batch,
    encode_batch,
    encode_one,
    hashed_dict,
)
from swarmlog.checkpoint import CheckpointStore, FileCheckpointStore
from swarmlog.clock import Clock, split_ts
from swarmlog.contract import Log, VerifyReport
from swarmlog.envelope import DEFAULT_LIMITS, Event, Limits, StoredEvent
from swarmlog.errors import DurabilityError, InvalidEvent, SwarmlogError
from swarmlog.file import archive, chainwalk, lockfile, redact, verify
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import check_local
from swarmlog.file.meta import FORMAT as FORMAT  # (the format's name, as before)
from swarmlog.file.meta import clean_meta_tmp, open_meta
from swarmlog.file.reader import SegmentReader
from swarmlog.file.segfiles import SegmentFiles
from swarmlog.file.sync import _MARK as _MARK  # (tests read the shared mark through log.py)
from swarmlog.file.sync import GroupSync
from swarmlog.file.view import _fast as ixfast
from swarmlog.file.view import combine, writerindex
from swarmlog.file.view.alone import AloneView
from swarmlog.file.view.columns import any_known
from swarmlog.file.view.index import CRASH_AT_LAG, crash_step
from swarmlog.file.view.state import Durability, WriterEnd

_EX_NB = fcntl.LOCK_EX | fcntl.LOCK_NB
DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024
_OPEN: weakref.WeakSet[FileLog] = weakref.WeakSet()
_ROTATE, _AT_END, _FUSED = 0, 1, 2
"""How ``FileLog._record`` writes a record (see there)."""
Expect = Mapping[str, int] | None


def _reopen_locks_after_fork() -> None:
    for log in list(_OPEN):
        log._after_fork()


os.register_at_fork(after_in_child=_reopen_locks_after_fork)


class FileLog(SegmentReader, AloneView, Log):
    """The Log contract on a local directory (see module docstring)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        create: bool = True,
        name: str | None = None,
        durability: Durability = "process",
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        limits: Limits = DEFAULT_LIMITS,
        notify: bool = True,
        poll_interval: float = 0.25,
        allow_network_fs: bool = False,
        clock: Clock | None = None,
    ) -> None:
        """``clock`` stamps ``ts`` (default ``time.time``; tests inject their own)."""
        if durability not in ("process", "fsync"):
            raise ValueError(f"durability must be 'process' or 'fsync', not {durability!r}")
        self.root = Path(root)
        self.durability = durability
        self.notify = notify
        self.poll_interval = poll_interval
        check_local(self.root, allow_network_fs)
        self.name, self.segment_bytes, self._swarm_id = open_meta(
            self.root, create, name, segment_bytes
        )
        self.segdir = self.root / "segments"
        # str paths: pathlib costs microseconds per join, too much for the append path
        self._root_s = os.fspath(self.root)
        self._segdir_s = os.path.join(self._root_s, "segments")
        self._lock_fd = -1  # opened by the first write (readers need no lock: lockfile.py)
        self._spin = lockfile.SPIN_MAX // 2  # (tries before sleeping: lockfile.lock_spinning)
        self._closed = False
        self._tlock = threading.RLock()
        self._sync = GroupSync(self._root_s, self._segdir_s, self.segment_bytes)
        clean_meta_tmp(self.root)
        self._checkpoints = FileCheckpointStore(self.root / "checkpoints", owner=self)
        self._serializer = Serializer(orjson.dumps(self.name), limits)
        self.limits = limits
        self._init_view(time.time if clock is None else _float_clock(clock))
        _OPEN.add(self)

    # ------------------------------------------------------------------ setup

    def _init_view(self, clock: Clock) -> None:
        """The writer view's fields, empty: the first append (or ``version``) reads the log;
        ``clock``'s readings are floats (time.time's are; an injected clock's are made so)."""
        self._ids = hashed_dict()
        self._versions = {}
        self._clock = clock
        self._end = WriterEnd()  # (where the next record goes: view/state.py)
        self._view_at = 0  # seq of the view snapshot loaded or saved (view/snapshot.py)
        self._hints = {}
        self._files = SegmentFiles(self._segdir_s)
        self._wix = None
        self._wix_off = False
        self._swarm16 = writerindex.swarm_key(self._swarm_id)
        self._partial = False
        self._view_redactions = 0
        self._ix_ready = False
        self._save_later = None
        self._save_from = (None, 0)  # (the index and heap size a save copies from)
        self.index_rebuilds = 0
        self._alone = False
        self._lag_gen = self._lag_first = self._lag_hint_at = 0
        self._lag_cap = (0.0, 0)
        self._slots: combine.Slots | None = None  # (this handle's combining slot)
        self._slots_tried = False

    def _after_fork(self) -> None:
        """In a forked child: get flock descriptors of our own.

        flock belongs to the open file description, which fork shares: without this a
        child and its parent would both "hold" the lock at once.
        """
        self._tlock = threading.RLock()
        self._alone = False  # (the parent may enter its lag; the index is caught up anyway)
        self._files.after_fork()
        if self._slots is not None:  # (the parent's slot: the child claims its own)
            self._slots.close(scrub=False)  # (the parent's descriptor keeps its OFD lock)
            self._slots = None
            self._slots_tried = False
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = lockfile.open_write_lock(self._root_s)
        self._sync.after_fork()

    def close(self) -> None:
        _OPEN.discard(self)
        if self._alone and not self._closed:
            self._alone_close()  # (the lag into the index: view/alone.py)
        self._closed = True
        self._sync.close()
        if self._lock_fd >= 0:
            try:
                os.close(self._lock_fd)
            except OSError:
                pass
        self._lock_fd = -1
        try:
            self._end.close_segment()
        except OSError:
            pass
        self._files.close()
        if self._wix is not None:
            self._wix.close()
            self._wix = None
        if self._slots is not None:
            self._slots.close()
            self._slots = None

    def __repr__(self) -> str:
        return f"FileLog({str(self.root)!r}, name={self.name!r})"

    @property
    def sync_count(self) -> int:
        """fdatasyncs this handle ran (group commit shares them between writers)."""
        return self._sync.count

    @property
    def checkpoints(self) -> CheckpointStore:
        return self._checkpoints

    def compactable(self) -> bool:
        """True: ``swarmlog.file.compact`` archives or deletes this log's old segments."""
        return True

    def local_dir(self) -> Path:
        """The log's directory (its root)."""
        return self.root

    @property
    def swarm_id(self) -> str:
        return self._swarm_id or super().swarm_id

    @property
    def limits(self) -> Limits:
        return self._limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        self._limits = limits
        self._serializer.set_limits(limits)

    # ------------------------------------------------------------------ append

    def append(self, event: Event, expect: Mapping[str, int] | None = None) -> StoredEvent:
        """Append one event (the hot path: one flock pair, one lseek, one write).

        The event is serialized once, outside the flock. Under it, a writer alone (the
        segment ends where this handle left it: nobody else appended) decides on its own
        dicts and leaves the shared index lagging (view/alone.py); otherwise the end, ids and
        key versions come from the index (view/index.py), and the record and the index update
        follow. Under ``durability="fsync"`` it returns once a completed fdatasync
        covers the record (group commit: sync.py).
        """
        if self._sync.failed:
            raise DurabilityError(self._sync.failed)
        if not isinstance(event, Event):
            raise InvalidEvent(f"append takes Event objects, got {type(event).__name__}")
        src = event._d
        eid = src["id"]
        last = 0
        with self._tlock:
            pre, post = split_ts(self._serializer.members(src))
            # (another writer was seen: the id's index bytes and hash before the lock)
            idk = None if self._alone else ixfast.id_key(eid)
            lock_fd = self._lock_fd if self._lock_fd >= 0 else self._write_lock()
            slots = self._slots_for(idk) if not expect else None
            if slots is None or idk is None:
                self._spin = lockfile.lock_spinning(lock_fd, self._spin)  # (awake a little first)
            elif (done := self._post_and_lock(slots, lock_fd, src, idk, pre, post)) is not None:
                return self._combined(event, src, *done)  # (a combiner appended it for us)
            try:
                if self._alone and self._still_alone():  # a writer alone (view/alone.py)
                    seq, known, ts = self._append_alone(src, eid, pre, post, expect)
                elif (
                    slots is not None
                    and (others := slots.others())
                    and (ix := ixfast.view(self)) is not None
                ):  # others posted: append theirs with ours (view/combine.py)
                    assert idk is not None
                    own = combine.Posted(0, 0, idk[0], idk[1], src.get("key"), pre, post)
                    seq, known, ts, last = combine.batch(self, ix, slots, own, others)
                    if combine.STICKY:
                        last = combine.more(self, ix, slots, last, combine.STICKY)
                elif (ix := ixfast.view(self)) is not None:  # (the common case, fused)
                    seq, known, ts = self._append_fused(ix, src, eid, idk, pre, post, expect)
                    if slots is not None and (others := slots.others()):  # (posted meanwhile)
                        ix = self._wix or ix  # (a grown index: the new file)
                        last = combine.batch(self, ix, slots, None, others)[3]
                        if combine.STICKY:
                            last = combine.more(self, ix, slots, last, combine.STICKY)
                elif (ix := self._wview()) is None:
                    seq, known, ts = self._append_plain(src, eid, pre, post, expect)
                else:
                    seq, known, ts = self._append_indexed(ix, src, eid, pre, post, expect)
                seg_fd, seg_first = self._end.seg_fd, self._end.seg_first
            finally:
                if slots is not None and slots.ticket:
                    slots.clear()  # (posted, not done by another: nobody may take it now)
                fcntl.flock(lock_fd, fcntl.LOCK_UN)
            if self._save_later is not None:
                self._ix_flush_save()
            if self.durability == "fsync":
                # (a combined batch: one sync for all of it, from here; a known id's record
                # too: the writer that stored it may be waiting for its sync still)
                self._sync_upto(seq if last < seq else last, seg_fd, seg_first)
        if known:  # a retry gets the original; an id reused for other content, an error
            return idreuse.check(event, self._read_one(seq))
        return appended(seq, src, None if "swarm" in src else self.name, ts)

    def _record(self, pre: bytes, post: bytes, ts: float, how: int) -> int:
        """The record step of a single append, under the lock with the view caught up:
        encode the event as seq ``last + 1`` stamped ``ts``, write it, and take it as the
        end; its seq. ``how``: ``_AT_END`` (the open segment, not full: ``_write_one``),
        ``_FUSED`` (the same, fused: view/_fast.py) or ``_ROTATE`` (``_write``: it may
        rotate a full segment or open a closed one)."""
        end = self._end
        seq = end.last + 1
        line, tip = encode_one(seq, pre, orjson.dumps(ts), post, end.tip)
        if how == _FUSED:
            ixfast.write_one(self, line, seq)
        elif how == _AT_END:
            self._write_one(line, seq)
        else:
            self._write(line, seq, 1)
        end.last_ts = ts  # (WriterEnd.sealed, inlined: under the lock, every append)
        end.tip = tip
        return seq

    def _append_alone(
        self, src: dict[str, Any], eid: str, pre: bytes, post: bytes, expect: Expect
    ) -> tuple[int, bool, float]:
        """``append``'s body for a writer alone: its own dicts, no index work, the index
        left lagging (view/alone.py): (seq, known, ts)."""
        seq = self._ids.get(eid)
        if seq is not None:
            return seq, True, 0.0
        if expect:
            self._check_expect(expect)
        ts = self._lag_stamp()
        seq = self._record(
            pre, post, ts, _AT_END if self._end.seg_end < self.segment_bytes else _ROTATE
        )
        self._ids[eid] = seq
        key = src.get("key")
        if key is not None:
            self._versions[key] = seq
        if CRASH_AT_LAG:
            crash_step(4)
        return seq, False, ts

    def _append_fused(
        self,
        ix: writerindex.WriterIndex,
        src: dict[str, Any],
        eid: str,
        idk: tuple[bytes, int, bytes] | None,
        pre: bytes,
        post: bytes,
        expect: Expect,
    ) -> tuple[int, bool, float]:
        """``_append_indexed`` in the common case ``ixfast.view`` vouched for: the id's
        slot found once, the record and the index update fused (view/_fast.py)."""
        if idk is None:
            idk = ixfast.id_key(eid)
        seq, slot = ixfast.find(ix, *idk)
        if seq:
            return seq, True, 0.0
        if expect:
            self._ix_expect(ix, expect)
        key = src.get("key")
        if not ix.fits_one(eid, key):
            ix = self._ix_room(ix, [eid], [key])
            slot = ixfast.find(ix, *idk)[1]
        ts, cap = ixfast.stamp(self, ix)
        seq = self._record(pre, post, ts, _FUSED)  # (view: the open segment, not full)
        if not ixfast.record_one(self, ix, seq, *idk, slot, key, cap):
            self._ix_record_one(ix, seq, eid, key, cap)
        return seq, False, ts

    def _append_indexed(
        self,
        ix: writerindex.WriterIndex,
        src: dict[str, Any],
        eid: str,
        pre: bytes,
        post: bytes,
        expect: Expect,
    ) -> tuple[int, bool, float]:
        """``append``'s body through the shared index (view/index.py): (seq, known, ts)."""
        seq = ix.find_id(eid)
        if seq:
            return seq, True, 0.0
        if expect:
            self._ix_expect(ix, expect)
        key = src.get("key")
        if not ix.fits_one(eid, key):
            ix = self._ix_room(ix, [eid], [key])
        ts, cap = self._ix_stamp(ix)
        end = self._end
        at_end = end.seg_fd >= 0 and end.seg_end < self.segment_bytes
        seq = self._record(pre, post, ts, _AT_END if at_end else _ROTATE)
        self._ix_record_one(ix, seq, eid, key, cap)
        return seq, False, ts

    def _sync_upto(self, seq: int, seg_fd: int, seg_first: int) -> None:
        """Under fsync: return once a completed fdatasync covers ``seq`` (group commit),
        through the handle's segment ``seg_fd`` (starting at ``seg_first``), or, where it
        has none open, the segment of that name (``combine.sync_done``)."""
        if seg_fd >= 0:
            self._group_sync(seq, seg_fd, seg_first)
        else:
            combine.sync_done(self, seq, seg_first)

    def _slots_for(self, idk: tuple[bytes, int, bytes] | None) -> combine.Slots | None:
        """This handle's combining slot where a single append may combine: not alone
        (``idk`` set), switched on, a slot claimed (view/combine.py)."""
        slots = self._slots
        if slots is None and idk is not None and not self._slots_tried and combine.COMBINING:
            self._slots_tried = True
            slots = self._slots = combine.Slots.open(self._root_s, self._lock_fd)
        return slots if idk is not None else None

    def _post_and_lock(
        self,
        slots: combine.Slots,
        lock_fd: int,
        src: dict[str, Any],
        idk: tuple[bytes, int, bytes],
        pre: bytes,
        post: bytes,
    ) -> combine.Done | None:
        """Take the append lock; if it is busy, first post the record for its holder:
        None holding the lock, or what a combiner appended for us (lock not held)."""
        try:
            fcntl.flock(lock_fd, _EX_NB)  # (free: nobody to combine for us, no post)
            return None
        except BlockingIOError:
            pass
        if not slots.crowded() or not slots.post(idk[0], idk[1], src.get("key"), pre, post):
            self._spin = lockfile.lock_spinning(lock_fd, self._spin)
            return None
        self._spin, done = slots.lock_or_done(lock_fd, self._spin)
        return done

    def _combined(
        self, event: Event, src: dict[str, Any], seq: int, known: bool, ts: float, segf: int
    ) -> StoredEvent:
        """The event a combiner appended for us (we hold no lock): as ``append`` returns."""
        if self.durability == "fsync":
            combine.sync_done(self, seq, segf)
        if known:
            return idreuse.check(event, self._read_one(seq))
        return appended(seq, src, None if "swarm" in src else self.name, ts)

    def _append_plain(
        self, src: dict[str, Any], eid: str, pre: bytes, post: bytes, expect: Expect
    ) -> tuple[int, bool, float]:
        """``append``'s body without the index (under the lock): (seq, known, ts)."""
        at_end = self._at_known_end()
        if not at_end:
            if self._view_stale():  # (a redaction renamed what the dicts hold)
                self._view_restart()
            self._catch_up(locked=True)
        seq = self._ids.get(eid)
        if seq is not None:
            return seq, True, 0.0
        if expect:
            self._check_expect(expect)
        ts = self._stamp()
        seq = self._record(pre, post, ts, _AT_END if at_end else _ROTATE)
        self._ids[eid] = seq
        key = src.get("key")
        if key is not None:
            self._versions[key] = seq
        return seq, False, ts

    def append_many(self, events: Iterable[Event], expect: Expect = None) -> list[StoredEvent]:
        evs = list(events)
        if self._sync.failed:
            raise DurabilityError(self._sync.failed)
        if not evs:
            if expect:
                self._expect_only(expect)
            return []
        inners, srcs, ids = self._prepare_many(evs)
        parts = [split_ts(inner) for inner in inners]
        with self._tlock:
            with self._locked():
                known, olds, fresh, first, last, ts = self._many_locked(
                    evs, srcs, ids, parts, expect
                )
                seg_fd, seg_first = self._end.seg_fd, self._end.seg_first
            if self._save_later is not None:
                self._ix_flush_save()
            if self.durability == "fsync" and (fresh or known is not None):
                # (the retried records too: their writer may be waiting for their sync)
                olds_top = max((s for s in known if s), default=0) if known is not None else 0
                if fresh:
                    self._sync_upto(max(last, olds_top), seg_fd, seg_first)
                else:
                    self._sync_upto(olds_top, self._end.seg_fd, self._end.seg_first)
        out: list[StoredEvent] = []
        if fresh:
            if any("swarm" in d for d in fresh):
                swarms = [None if "swarm" in d else self.name for d in fresh]
                out = appended_batch(first, fresh, swarms, ts)
            else:  # the common case: the log's own swarm for all
                out = appended_batch(first, fresh, repeat(self.name), ts)
        if known is None:
            return out
        it = iter(out)
        return [olds[s] if s is not None else next(it) for s in known]

    def _expect_only(self, expect: Mapping[str, int]) -> None:
        """``append_many`` of no events: check the expectations under the lock."""
        with self._tlock, self._locked():
            alone = self._alone and self._still_alone()
            ix = None if alone else self._wview()
            if ix is None:
                if not alone:
                    self._catch_up(locked=True)
                self._check_expect(expect)
            else:
                self._ix_expect(ix, expect)

    def _many_locked(
        self,
        evs: list[Event],
        srcs: list[dict[str, Any]],
        ids: list[str],
        parts: list[tuple[bytes, bytes]],
        expect: Expect,
    ) -> tuple[
        list[int | None] | None, dict[int, StoredEvent], list[dict[str, Any]], int, int, float
    ]:
        """``append_many`` under the lock: which ids are known (None: none), their stored
        originals, the fresh events, and the seqs and ts they were written with."""
        alone = self._alone and self._still_alone()  # (no index work: view/alone.py)
        ix = None if alone else self._wview()
        known: list[int | None] | None
        if ix is None:
            if not alone:
                self._catch_up(locked=True)
            index = self._ids
            known = [index.get(i) for i in ids] if any_known(index, ids) else None
        else:
            found = [ix.find_id(i) for i in ids]
            known = [s or None for s in found] if any(found) else None
        olds: dict[int, StoredEvent] = {}
        fresh = srcs
        if known is not None:  # a retry: some (or all) events are in the log already
            olds = self._check_known(evs, known)  # (raises before any write)
            fresh = [d for d, s in zip(srcs, known, strict=True) if s is None]
            parts = [b for b, s in zip(parts, known, strict=True) if s is None]
        if not fresh:
            return known, olds, fresh, 0, 0, 0.0
        fresh_ids = [d["id"] for d in fresh] if known is not None else ids
        keys = [d.get("key") for d in fresh]
        first, last, ts = self._record_many(ix, alone, parts, fresh_ids, keys, expect)
        return known, olds, fresh, first, last, ts

    def _record_many(
        self,
        ix: writerindex.WriterIndex | None,
        alone: bool,
        parts: list[tuple[bytes, bytes]],
        ids: list[str],
        keys: list[str | None],
        expect: Expect,
    ) -> tuple[int, int, float]:
        """The record step of a batch (its fresh events): check ``expect``, stamp, write
        it in one ``write()``, take its end, enter its ids and keys (the index, or the
        dicts of a handle with none or alone); (first seq, last seq, ts)."""
        if ix is None:
            if expect:
                self._check_expect(expect)
            ts = self._lag_stamp() if alone else self._stamp()
        else:
            if expect:
                self._ix_expect(ix, expect)
            ix = self._ix_room(ix, ids, keys)
            ts, cap = self._ix_stamp(ix)
        end = self._end
        first = end.last + 1
        data, last, tip = encode_batch(parts, first, orjson.dumps(ts), end.tip)
        assert tip is not None
        self._write(data, last, len(ids))
        end.sealed(ts, tip)
        if ix is not None:
            self._ix_record(ix, first, ids, keys, cap)
        else:  # (no index, or a writer alone: the dicts, view/alone.py)
            seqs = range(first, last + 1)
            self._ids.update(zip(ids, seqs, strict=True))
            if keys.count(None) != len(keys):
                self._versions.update(
                    (k, s) for k, s in zip(keys, seqs, strict=True) if k is not None
                )
        return first, last, ts

    def _check_known(self, evs: list[Event], known: list[int | None]) -> dict[int, StoredEvent]:
        """The stored originals of a batch's known ids, by seq (under the lock, before
        anything of the batch is written); EventIdReused if one asks for other content."""
        return {
            s: idreuse.check(ev, self._read_one(s))
            for ev, s in zip(evs, known, strict=True)
            if s is not None
        }

    def _prepare_many(
        self, evs: list[Event]
    ) -> tuple[list[bytes], list[dict[str, Any]], list[str]]:
        """Validate and pre-serialize a batch outside the lock: (members, dicts, ids).

        One orjson call for the whole batch when it is plain (see ``_fast.batch_members``),
        else event by event, raising the first problem in batch order.
        """
        if all(type(ev) is Event for ev in evs):
            srcs = [ev._d for ev in evs]
            ids = [d["id"] for d in srcs]
            if len(set(ids)) == len(ids):
                inners = self._serializer.batch(srcs)
                if inners is not None:
                    return inners, srcs, ids
        seen: set[str] = set()
        inners, srcs, ids = [], [], []
        for ev in evs:
            if not isinstance(ev, Event):
                raise InvalidEvent(f"append takes Event objects, got {type(ev).__name__}")
            src = ev._d
            inners.append(self._serializer.checked(src))
            eid = src["id"]
            if eid in seen:
                raise InvalidEvent(f"event id {eid!r} appears twice in one batch")
            seen.add(eid)
            srcs.append(src)
            ids.append(eid)
        return inners, srcs, ids

    def check_writable(self) -> None:
        """Raise ReadOnlyLog ("read-only: …") now if this handle could not append."""
        self._write_lock()

    # ------------------------------------------------------------------ reading

    def version(self, key: str) -> int:
        with self._tlock:
            if self._alone and not self._alone_reading():
                self._partial = True  # (another writer appended: ask the index, as it does)
            if self._partial:  # (the view's dicts miss other writers' keys: view/index.py)
                v = self._ix_version(key)
                if v is not None:
                    return v
            self._catch_up(locked=False)
            return self._versions.get(key, 0)

    def _read_one(self, seq: int) -> StoredEvent:
        for ev in self.read(seq, seq):
            return ev
        raise SwarmlogError(f"seq {seq} is not in the log")

    def record_id(self, seq: int) -> str | None:
        """The id at ``seq``, from the ids files where retention deleted the record."""
        try:
            return super().record_id(seq)
        except archive.RetentionError:
            return archive.archived_id(self._root_s, seq)

    def redact(self, changes: Mapping[int, Mapping[str, Any] | None]) -> int:
        """Rewrite the records at these seqs (see ``Log.redact``; how: redact.py)."""
        return redact.redact(self, changes)

    def redactions(self) -> int:
        """Redactions done on this log (``Log.redactions``): the count in the root's
        ``redactions`` file, raised by each redaction that rewrote a record."""
        return redact.count(self._root_s)

    # ------------------------------------------------------------------ verify

    def verify(self) -> VerifyReport:
        """Every record's CRC and seq order, archives included (see verify.py), then
        the hash chain over the segments (walked over an intact log only; see chain.py)."""
        rep = verify.verify(self)
        if rep.corruption is None:  # archives and segments, from seq 1 (chainwalk.py)
            firsts = seg.list_segments(self.segdir)
            names = [seg.segment_name(f) for f in firsts]
            window = firsts[0] if firsts else 1
            chainwalk.verify_all(self._root_s, self._segdir_s, names, window, rep)
        return rep


def _float_clock(clock: Clock) -> Clock:
    """An injected clock whose readings are floats (as ``ts`` always is)."""
    return lambda: float(clock())
