"""FileLog: the embedded log — a directory of JSONL segments shared by local processes.

Layout of a log directory::

    swarm.json          name, format, segment size (fixed at creation)
    segments/           <first seq>.jsonl files, append-only
    lock                flock'ed (exclusive) around every append batch (readers need none)
    sync                16 bytes shared by writers: last written seq, its segment (group commit)
    sync.lock           flock'ed by the one writer running fdatasync for everybody
    repairs.jsonl       torn tails the writers cut off (reported by verify)
    checkpoints/        opaque snapshots (see checkpoint.py)

Writers serialise on ``lock``: catch up with what other processes wrote (keeping an
in-memory id index and key versions), check idempotency and expectations, then write the
whole batch with one ``write()``. Readers take no lock and no write access, and only
consume complete, CRC-valid batches. Nothing in the directory is followed if it is a
symlink (fsguard); segments are opened on demand through a small cache (segfiles).

One module per role: ``filewriter`` (encode, write, rotate, cut a torn tail),
``filesync`` (group commit), ``filecatchup`` (the writer view), ``filereader`` (read,
follow); this one opens and closes a handle and runs ``append``/``append_many``.
"""

from __future__ import annotations

import fcntl
import operator
import os
import threading
import time
import weakref
from array import array
from collections.abc import Iterable, Mapping
from itertools import repeat
from pathlib import Path
from typing import Any

import orjson

from . import archive, fileverify, lockfile
from . import chain as hashchain
from . import segment as seg
from .checkpoint import CheckpointStore, FileCheckpointStore
from .clock import Clock, split_ts
from .contract import Log, VerifyReport
from .envelope import (
    _AGENT,
    _BODIES,
    _MEMBERS_OK,
    DEFAULT_LIMITS,
    Event,
    Limits,
    _Appended,
    _has_null,
    _Members,
    _set_p,
    _with_swarm,
    appended_batch,
    batch_members,
    fast_limit,
    members_with,
    record_members,
)
from .errors import (
    DurabilityError,
    InvalidEvent,
    LogUnavailable,
    SwarmlogError,
)
from .filecatchup import CatchUp
from .filemeta import clean_meta_tmp, new_swarm_id, write_meta
from .filereader import SegmentReader
from .filestate import Durability
from .filesync import _MARK, _SYNC
from .filewriter import _CHAINED, _HEAD, _LINE, _crc32, _link
from .fsguard import check_local, check_real_dir, os_error, read_nofollow
from .names import check_name, default_swarm_name
from .segfiles import SegmentFiles

__all__ = ["DEFAULT_SEGMENT_BYTES", "FORMAT", "_MARK", "_SYNC", "Durability", "FileLog"]

FORMAT = "swarmlog-file/1"
DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024
_flock = fcntl.flock
_LOCK_EX = fcntl.LOCK_EX
_LOCK_UN = fcntl.LOCK_UN
_dumps = orjson.dumps
_SORT = orjson.OPT_SORT_KEYS
_OPEN: weakref.WeakSet[FileLog] = weakref.WeakSet()
_get_d = operator.attrgetter("_d")
_get_id = operator.itemgetter("id")
_lseek = os.lseek
_write = os.write
_SEEK_END = os.SEEK_END
_TS = b',"ts":'


def _reopen_locks_after_fork() -> None:
    for log in list(_OPEN):
        log._after_fork()


os.register_at_fork(after_in_child=_reopen_locks_after_fork)


class FileLog(SegmentReader, CatchUp, Log):
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
        self.sync_count = 0
        check_local(self.root, allow_network_fs)
        meta_path = self.root / "swarm.json"
        if not meta_path.exists():
            if not create:
                raise LogUnavailable(f"no swarm log at {self.root} (run 'swarmlog init')")
            self._create(meta_path, name, segment_bytes)
        try:
            meta = orjson.loads(read_nofollow(meta_path))
            self.name = meta["name"]
            self.segment_bytes = int(meta["segment_bytes"])
            self._swarm_id = str(meta.get("id") or "")
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise LogUnavailable(f"{meta_path} is unreadable: {e}") from None
        for d in ("segments", "checkpoints"):
            check_real_dir(self.root / d)
        if meta.get("format") != FORMAT:
            raise LogUnavailable(f"{meta_path} has format {meta.get('format')!r}, not {FORMAT}")
        self.segdir = self.root / "segments"
        # str paths: pathlib costs microseconds per join, too much for the append path
        self._root_s = os.fspath(self.root)
        self._segdir_s = os.path.join(self._root_s, "segments")
        self._lock_fd = -1  # opened by the first write (readers need no lock: lockfile.py)
        self._closed = False
        self._tlock = threading.RLock()
        self._tacquire, self._trelease = self._tlock.acquire, self._tlock.release
        self._sync_fd = -1
        self._sync_map = None
        self._failed = None
        clean_meta_tmp(self.root)
        self._checkpoints = FileCheckpointStore(self.root / "checkpoints", owner=self)
        self._swarm_json = orjson.dumps(self.name)
        self._with_swarm = _with_swarm(self._swarm_json)
        # append's serializer view (see envelope._Members), reused under the thread lock;
        # _members_src holds the dict it shows too, so that pointing it at the next event
        # never drops a last reference (no finalizer can run between that and the dump)
        self._members = _Members()
        self._members_src: dict[str, Any] = {}
        self._members.__dict__ = self._members_src
        self.limits = limits
        # writer view of the log (kept current under the lock)
        self._ids = _hashed_dict()
        self._versions = {}
        self._last = 0
        self._last_ts = 0.0  # ts of seq _last: the floor of the next stamp
        # readings are floats (time.time's are; an injected clock's are made so)
        self._clock = time.time if clock is None else _float_clock(clock)
        self._tip = hashchain.GENESIS  # chain value of record _last (chain.py)
        self._seg_first = 1
        self._seg_end = 0
        self._seg_fd = -1
        self._hints = {}
        # where the records this handle wrote start (see FileState._offs)
        self._offs = array("q", (0,))
        self._offs_base = 1
        self._files = SegmentFiles(self._segdir_s)
        _OPEN.add(self)

    # ------------------------------------------------------------------ setup

    def _create(self, meta_path: Path, name: str | None, segment_bytes: int) -> None:
        if segment_bytes < 4096:
            raise ValueError("segment_bytes must be at least 4096")
        name = check_name("swarm", name or default_swarm_name(self.root))
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            (self.root / "segments").mkdir(exist_ok=True)
        except OSError as e:
            raise os_error(e, e.filename or self.root, writing=True) from None
        check_real_dir(self.root / "segments")
        fd = lockfile.open_write_lock(os.fspath(self.root))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not meta_path.exists():
                meta = {"format": FORMAT, "name": name, "segment_bytes": segment_bytes}
                write_meta(meta_path, {**meta, "id": new_swarm_id()})
        finally:
            os.close(fd)

    def _after_fork(self) -> None:
        """In a forked child: get flock descriptors of our own.

        flock belongs to the open file description, which fork shares: without this a
        child and its parent would both "hold" the lock at once.
        """
        self._tlock = threading.RLock()
        self._tacquire, self._trelease = self._tlock.acquire, self._tlock.release
        self._files.after_fork()
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = lockfile.open_write_lock(self._root_s)
        self._reopen_sync_lock()

    def close(self) -> None:
        _OPEN.discard(self)
        self._closed = True
        for fd in (self._lock_fd, self._sync_fd, self._seg_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._close_sync()
        self._lock_fd = self._sync_fd = self._seg_fd = -1
        self._files.close()

    def __repr__(self) -> str:
        return f"FileLog({str(self.root)!r}, name={self.name!r})"

    @property
    def checkpoints(self) -> CheckpointStore:
        return self._checkpoints

    @property
    def swarm_id(self) -> str:
        return self._swarm_id or super().swarm_id

    @property
    def limits(self) -> Limits:
        return self._limits

    @limits.setter
    def limits(self, limits: Limits) -> None:
        self._limits = limits
        self._fast_limit = fast_limit(limits)
        # the same bound before the swarm is filled in (``append``'s inlined serializer)
        self._fast_raw = self._fast_limit - (len(self._with_swarm) - len(_AGENT))

    # ------------------------------------------------------------------ append

    def append(self, event: Event, expect: Mapping[str, int] | None = None) -> Event:
        """Append one event (the hot path: one flock pair, one lseek, one write).

        The common case is inlined: the segment's end is where this handle left it (no
        other writer appended, nothing to catch up), the segment is not full and the
        durability is "process". Anything else goes through ``_append_locked``.
        """
        if self._failed:
            raise DurabilityError(self._failed)
        if type(event) is not Event and not isinstance(event, Event):
            raise InvalidEvent(f"append takes Event objects, got {type(event).__name__}")
        src = event._d
        self._tacquire()
        try:
            # ``members_with`` inlined for events that need no closer look (no seq, no
            # ``null`` in their bytes, no registered body model, well under the size
            # limits); any other goes to it, which checks everything and raises the
            # errors in order
            if "seq" in src or not _MEMBERS_OK:
                raw = b"null"
            else:
                m = self._members  # the handle's own: used under the thread lock only
                m.__dict__ = src  # (never frees the one it had: see _members_src)
                try:
                    raw = _dumps(m, None, _SORT)
                except TypeError:
                    raw = b"null"
                self._members_src = src
            swarm = None if "swarm" in src else self.name  # the log's, if the event has none
            if _has_null(raw) or src["type"] in _BODIES or len(raw) > self._fast_raw:
                inner = members_with(src, self._with_swarm, self._limits, self._fast_limit)
            elif swarm is None:
                inner = raw[1:-1]
            else:
                inner = raw.replace(_AGENT, self._with_swarm, 1)[1:-1]
            eid = src["id"]
            i = inner.index(_TS) + 6  # clock.split_ts, inlined
            pre, post = inner[:i], inner[inner.index(b",", i) :]
            lock_fd = self._lock_fd
            if lock_fd < 0:
                lock_fd = self._write_lock()
            _flock(lock_fd, _LOCK_EX)
            try:
                fd = self._seg_fd
                end = self._seg_end
                if (
                    fd < 0
                    or end >= self.segment_bytes
                    or self.durability != "process"
                    or _lseek(fd, 0, _SEEK_END) != end
                ):
                    known, seq, sync, ts = self._append_locked(src, pre, post, eid, expect)
                else:
                    sync = None
                    known = self._ids.get(eid)
                    if known is None:  # ``_write`` of one record, inlined
                        if expect:
                            self._check_expect(expect)
                        seq = self._last + 1
                        ts = self._clock()  # the log's clock (see clock.stamp)
                        if not ts >= self._last_ts:
                            ts = self._last_ts
                        head = _HEAD % (seq, pre, _dumps(ts), post)
                        tip = _link(self._tip, head)
                        head = _CHAINED % (head, tip)
                        data = _LINE % (head, _crc32(head))
                        try:
                            written = _write(fd, data)
                        except OSError as e:
                            self._undo_write(e)
                        if written != len(data):
                            self._write_rest(data, written)
                        self._seg_end = end = end + len(data)
                        self._last = seq
                        self._last_ts = ts
                        self._tip = tip
                        if seq & 0xFFFF:
                            self._offs.append(end)
                        else:  # (bounded: starts over every 65,536 seqs)
                            self._offs_new()
                        self._ids[eid] = seq
                        if "key" in src:
                            k = src["key"]
                            if k is not None:
                                self._versions[k] = seq
            finally:
                _flock(lock_fd, _LOCK_UN)
            if sync is not None:  # durability "fsync": sync the segment written to
                self._group_sync(seq, sync[0], sync[1])
        finally:
            self._trelease()
        if known is not None:
            return self._read_one(known)
        ev = _Appended()  # appended(), inlined
        _set_p(ev, (seq, src, swarm, ts))
        return ev

    def _append_locked(
        self,
        src: dict[str, Any],
        pre: bytes,
        post: bytes,
        eid: str,
        expect: Mapping[str, int] | None,
    ) -> tuple[int | None, int, tuple[int, int] | None, float]:
        """``append`` past its fast path, both locks held: ``(known seq, 0, None, 0.0)``
        for an id already stored, else ``(None, seq, sync, ts)``; ``sync`` is None or, with
        durability "fsync", (fd, first seq) of the segment written to, for the caller's
        ``_group_sync`` once the flock is released; ``pre``/``post``: the event's members
        around its ts (``clock.split_ts``)."""
        self._catch_up(locked=True)
        known = self._ids.get(eid)
        if known is not None:
            return known, 0, None, 0.0
        if expect:
            self._check_expect(expect)
        seq = self._last + 1
        ts = self._stamp()
        head = _HEAD % (seq, pre, _dumps(ts), post)
        tip = _link(self._tip, head)
        head = _CHAINED % (head, tip)
        self._write(_LINE % (head, _crc32(head)), seq, 1)
        self._last_ts = ts
        self._tip = tip
        self._ids[eid] = seq
        if "key" in src:
            k = src["key"]
            if k is not None:
                self._versions[k] = seq
        if self.durability == "fsync":
            return None, seq, (self._seg_fd, self._seg_first), ts
        return None, seq, None, ts

    def append_many(
        self, events: Iterable[Event], expect: Mapping[str, int] | None = None
    ) -> list[Event]:
        evs = list(events)
        if self._failed:
            raise DurabilityError(self._failed)
        if not evs:
            if expect:
                with self._tlock, self._locked():
                    self._catch_up(locked=True)
                    self._check_expect(expect)
            return []
        inners, srcs, ids = self._prepare_many(evs)
        parts = list(map(split_ts, inners))
        with self._tlock:
            with self._locked():
                self._catch_up(locked=True)
                index = self._ids
                if index.keys().isdisjoint(ids):
                    known = None
                    fresh = srcs
                else:  # a retry: some (or all) events are in the log already
                    known = [index.get(i) for i in ids]
                    fresh = [d for d, s in zip(srcs, known, strict=True) if s is None]
                    parts = [b for b, s in zip(parts, known, strict=True) if s is None]
                if fresh:
                    if expect:
                        self._check_expect(expect)
                    first = self._last + 1
                    ts = self._stamp()
                    data, last, tip = self._encode(parts, first, _dumps(ts))
                    self._write(data, last, len(fresh))
                    self._last_ts = ts
                    self._tip = tip
                    seg_fd = self._seg_fd
                    seg_first = self._seg_first
                    seqs = range(first, last + 1)
                    index.update(zip(map(_get_id, fresh), seqs, strict=True))
                    keys = list(map(dict.get, fresh, repeat("key", len(fresh))))
                    if keys.count(None) != len(keys):
                        self._versions.update(
                            (k, s) for k, s in zip(keys, seqs, strict=True) if k is not None
                        )
            if fresh and self.durability == "fsync":
                self._group_sync(last, seg_fd, seg_first)
        if fresh:
            n = len(fresh)
            if any(map(dict.__contains__, fresh, repeat("swarm", n))):
                out = appended_batch(first, fresh, map(self._swarm_of, fresh), ts)
            else:  # the common case: the log's own swarm for all (no call per event)
                out = appended_batch(first, fresh, repeat(self.name, n), ts)
        if known is None:
            return out
        if not fresh:
            return [self._read_one(s) for s in known if s is not None]
        it = iter(out)
        return [self._read_one(s) if s is not None else next(it) for s in known]

    def _swarm_of(self, src: dict[str, Any]) -> str | None:
        return None if "swarm" in src else self.name

    def _prepare_many(
        self, evs: list[Event]
    ) -> tuple[list[bytes], list[dict[str, Any]], list[str]]:
        """Validate and pre-serialize a batch outside the lock: (members, dicts, ids).

        One orjson call for the whole batch when it is plain (see ``batch_members``),
        else event by event, raising the first problem in batch order.
        """
        if set(map(type, evs)) == {Event}:
            srcs: list[dict[str, Any]] = list(map(_get_d, evs))
            ids: list[str] = list(map(_get_id, srcs))
            if len(set(ids)) == len(ids):
                inners = batch_members(srcs, self._swarm_json, self.limits)
                if inners is not None:
                    return inners, srcs, ids
        seen: set[str] = set()
        inners, srcs, ids = [], [], []
        for ev in evs:
            if type(ev) is not Event and not isinstance(ev, Event):
                raise InvalidEvent(f"append takes Event objects, got {type(ev).__name__}")
            src = ev._d
            inners.append(record_members(src, self._swarm_json, self.limits))
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
            self._catch_up(locked=False)
            return self._versions.get(key, 0)

    def _read_one(self, seq: int) -> Event:
        for ev in self.read(seq, seq):
            return ev
        raise SwarmlogError(f"seq {seq} is not in the log")

    def record_id(self, seq: int) -> str | None:
        """The id at ``seq``, from the ids files where retention deleted the record."""
        try:
            return super().record_id(seq)
        except archive.RetentionError:
            return archive.archived_id(self._root_s, seq)

    # ------------------------------------------------------------------ verify

    def verify(self) -> VerifyReport:
        """Every record's CRC and seq order, archives included (see fileverify.py), then
        the hash chain over the segments (walked over an intact log only; see chain.py)."""
        rep = fileverify.verify(self)
        if rep.corruption is None:
            names = [seg.segment_name(f) for f in seg.list_segments(self.segdir)]
            hashchain.verify_files(self._segdir_s, names, rep)
        return rep


def _float_clock(clock: Clock) -> Clock:
    """An injected clock whose readings are floats (as ``ts`` always is)."""
    return lambda: float(clock())


def _hashed_dict() -> dict[str, int]:
    """An empty dict that keeps each key's hash in its table, as dicts with a non-str key do.

    CPython gives a dict of only str keys a compact table without hashes, so a lookup
    that misses (every fresh id) reads the key object of each slot it probes to compare
    hashes: a cache miss per probe once the id index outgrows the cache. Having held a
    non-str key, the dict keeps the general table (hashes stored) when it grows.
    """
    d: dict[Any, int] = {0: 0}
    del d[0]
    return d
