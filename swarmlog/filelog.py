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
"""

from __future__ import annotations

import bisect
import fcntl
import mmap
import operator
import os
import struct
import threading
import time
import weakref
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, repeat
from pathlib import Path
from typing import Any, Literal, NoReturn

import orjson

from . import archive, fileverify, lockfile, repairs
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
    from_stored,
    members_with,
    record_members,
)
from .errors import (
    CorruptionError,
    DurabilityError,
    InvalidEvent,
    LogUnavailable,
    ReadOnlyLog,
    SwarmlogError,
    VersionConflict,
)
from .filemeta import clean_meta_tmp, new_swarm_id, write_meta
from .fsguard import (
    FILE_MODE,
    check_local,
    check_real_dir,
    fsync_dir,
    open_nofollow,
    os_error,
    read_nofollow,
)
from .names import check_name, default_swarm_name
from .segfiles import Pinned, SegmentFiles
from .tail import Waiter

FORMAT = "swarmlog-file/1"
DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024
Durability = Literal["process", "fsync"]
_SYNC = struct.Struct("<QQ")
_MARK = struct.Struct("<Q")
_flock = fcntl.flock
_LOCK_EX = fcntl.LOCK_EX
_LOCK_UN = fcntl.LOCK_UN
_crc32 = zlib.crc32
_dumps = orjson.dumps
_Fragment = orjson.Fragment
_SORT = orjson.OPT_SORT_KEYS
_OPEN: weakref.WeakSet[FileLog] = weakref.WeakSet()
_get_d = operator.attrgetter("_d")
_get_id = operator.itemgetter("id")
_HEAD = b'{"seq":%d,%s%s%s'  # seq, members up to "ts":, the stamped ts, the rest
_HEAD_MORE = b'{"seq":%d,%s%s%s,"more":%d'
_LINE = b'%s,"crc":%d}\n'
_CHAINED = b'%s,"chain":"%s"'
_link = hashchain.link
_lseek = os.lseek
_write = os.write
_new = object.__new__
_SEEK_END = os.SEEK_END
_TS = b',"ts":'


def _reopen_locks_after_fork() -> None:
    for log in list(_OPEN):
        log._after_fork()


os.register_at_fork(after_in_child=_reopen_locks_after_fork)


class FileLog(Log):
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
        self.durability: Durability = durability
        self.notify = notify
        self.poll_interval = poll_interval
        self.sync_count = 0
        """fdatasyncs this handle ran (group commit shares them between writers)."""
        check_local(self.root, allow_network_fs)
        meta_path = self.root / "swarm.json"
        if not meta_path.exists():
            if not create:
                raise LogUnavailable(f"no swarm log at {self.root} (run 'swarmlog init')")
            self._create(meta_path, name, segment_bytes)
        try:
            meta = orjson.loads(read_nofollow(meta_path))
            self.name: str = meta["name"]
            self.segment_bytes: int = int(meta["segment_bytes"])
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
        self._sync_map: mmap.mmap | None = None
        self._failed: str | None = None
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
        self._ids: dict[str, int] = _hashed_dict()
        self._versions: dict[str, int] = {}
        self._last = 0
        self._last_ts = 0.0  # ts of seq _last: the floor of the next stamp
        # readings are floats (time.time's are; an injected clock's are made so)
        self._clock: Clock = time.time if clock is None else _float_clock(clock)
        self._tip = hashchain.GENESIS  # chain value of record _last (chain.py)
        self._seg_first = 1
        self._seg_end = 0
        self._seg_fd = -1
        self._hints: dict[int, dict[int, int]] = {}
        # where the records this handle wrote start, kept cheaply (machine integers, no
        # dict entry per append): _offs[i] is the offset of seq _offs_base + i in the
        # current segment; the last one is always where seq _last + 1 will start
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
        if self._sync_fd >= 0:
            os.close(self._sync_fd)
            self._sync_fd = os.open(os.path.join(self._root_s, "sync.lock"), os.O_RDWR)

    def close(self) -> None:
        _OPEN.discard(self)
        self._closed = True
        for fd in (self._lock_fd, self._sync_fd, self._seg_fd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if self._sync_map is not None:
            self._sync_map.close()
            self._sync_map = None
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

    def _stamp(self) -> float:
        """The ts of the next batch (under the lock, caught up): ``max(clock(), last ts)``."""
        ts = self._clock()
        return ts if ts >= self._last_ts else self._last_ts

    def _offs_new(self) -> None:
        """Start ``_offs`` over at the writer view's end (after anything but a fast append)."""
        self._offs = array("q", (self._seg_end,))
        self._offs_base = self._last + 1

    def _write_rest(self, data: bytes, written: int) -> None:
        """Finish a short write (the kernel may write less than asked)."""
        try:
            while written < len(data):
                written += os.write(self._seg_fd, memoryview(data)[written:])
        except OSError as e:
            self._undo_write(e)

    def _undo_write(self, e: OSError) -> NoReturn:
        """Nothing of a failed batch may stay: cut back to the last good end and raise."""
        try:
            os.ftruncate(self._seg_fd, self._seg_end)
        except OSError:
            pass
        where = self._seg_path(self._seg_first)
        raise SwarmlogError(f"append failed, nothing written to {where}: {e}") from None

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

    def _encode(
        self, parts: list[tuple[bytes, bytes]], first: int, ts: bytes
    ) -> tuple[bytes, int, bytes]:
        """A batch's bytes, seqs from ``first`` on, all stamped ``ts`` (under the lock):
        ``(data, last seq, chain value of the last record)``; ``parts``: each event's
        members cut around its ts.

        Each record but the last carries ``"more": n`` (records of the batch still to
        come), each its ``chain`` link (one hash per record, in order). Built by C-level
        maps over the members, then one ``%`` for all lines.
        """
        n = len(parts)
        last = first + n - 1
        pres, posts = zip(*parts, strict=True)
        heads = list(
            map(
                _HEAD_MORE.__mod__,
                zip(range(first, last), pres, repeat(ts), posts, range(n - 1, 0, -1), strict=False),
            )
        )
        heads.append(_HEAD % (last, pres[-1], ts, posts[-1]))
        tip = self._tip
        for i, head in enumerate(heads):
            tip = _link(tip, head)
            heads[i] = _CHAINED % (head, tip)
        lines = _LINE * n % tuple(chain.from_iterable(zip(heads, map(_crc32, heads), strict=True)))
        return lines, last, tip

    def _check_expect(self, expect: Mapping[str, int]) -> None:
        for key, want in expect.items():
            have = self._versions.get(key, 0)
            if have != want:
                raise VersionConflict(key, want, have)

    def _write(self, data: bytes, last: int, count: int) -> None:
        """One ``write()`` of a whole batch to the current segment (rotating a full one)."""
        if self._seg_fd < 0 or self._seg_end >= self.segment_bytes:
            self._rotate(last - count + 1)
        try:
            written = os.write(self._seg_fd, data)
        except OSError as e:
            self._undo_write(e)
        if written != len(data):
            self._write_rest(data, written)
        self._seg_end += len(data)
        self._last = last
        self._hint(self._seg_first, last + 1, self._seg_end)
        self._offs_new()
        if self.durability == "fsync":
            # (last written seq, its segment): exists before the lock is released, so
            # rotations see it, and tells the next syncer what its fdatasync covers
            _SYNC.pack_into(self._sync_state(), 0, last, self._seg_first)

    def _seg_path(self, first: int) -> str:
        return os.path.join(self._segdir_s, seg.segment_name(first))

    def _rotate(self, first: int) -> None:
        """Open (creating if needed) the segment new records go to.

        A full segment (at or past ``segment_bytes``) is closed (made durable first if any
        writer of this log uses ``durability="fsync"``), and a new one named by ``first``
        is started; segments are only ever rotated when full, so
        any reader seeing a segment below that size knows it is the last one.
        """
        durable = self.durability == "fsync" or os.path.exists(os.path.join(self._root_s, "sync"))
        if self._seg_fd >= 0 and self._seg_end >= self.segment_bytes:
            if durable:
                # fsync writers use this log: their group commit only syncs the segment
                # written last, so a segment closed under them must be durable first
                self._fsync(self._seg_fd)
            os.close(self._seg_fd)
            self._seg_fd = -1
            self._seg_first, self._seg_end = first, 0
        path = self._seg_path(self._seg_first)
        new = not os.path.exists(path)
        os.makedirs(self._segdir_s, exist_ok=True)
        self._seg_fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        if new and durable:
            fsync_dir(self._segdir_s)

    # ------------------------------------------------------------------ durability

    def _sync_state(self) -> mmap.mmap:
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
        _flock(sync_fd, _LOCK_EX)
        try:
            if _MARK.unpack_from(state, 16)[0] >= mine:
                return  # a sync that started after our write has finished
            written, seg_first = _SYNC.unpack_from(state, 0)
        finally:
            _flock(sync_fd, _LOCK_UN)
        cover = written if seg_first == seg_first_of_fd and written > mine else mine
        self._fsync(fd)
        _flock(sync_fd, _LOCK_EX)
        try:
            if _MARK.unpack_from(state, 16)[0] < cover:
                _MARK.pack_into(state, 16, cover)
        finally:
            _flock(sync_fd, _LOCK_UN)

    def _fsync(self, fd: int) -> None:
        try:
            os.fdatasync(fd)
            self.sync_count += 1
        except OSError as e:
            self._failed = f"fdatasync failed ({e}); this log handle refuses further appends"
            raise DurabilityError(self._failed) from None

    # ------------------------------------------------------------------ locking & catch-up

    def _write_lock(self) -> int:
        """The append lock's descriptor, opened (read-write) by the first write."""
        if self._closed:
            raise SwarmlogError("log is closed")
        if self._lock_fd < 0:
            self._lock_fd = lockfile.open_write_lock(self._root_s)
        return self._lock_fd

    def check_writable(self) -> None:
        """Raise ReadOnlyLog ("read-only: …") now if this handle could not append."""
        self._write_lock()

    def _locked(self, write: bool = True) -> lockfile.Flock:
        """The append lock for a ``with`` block; a reader (``write=False``) that has not
        written flocks a read-only descriptor of it for the block (no write access)."""
        if write or self._lock_fd >= 0 or self._closed:
            return lockfile.Flock(self._write_lock())
        return lockfile.Flock(lockfile.open_read_lock(self._root_s), owned=True)

    def _catch_up(self, locked: bool) -> None:
        """Bring the writer view up to the end of the log (cutting a torn tail if locked).

        Unlocked, a "bad record followed by a good one" can be a race, not corruption: a
        writer cut a torn tail and appended over it while we read, and our read mixed old
        and new bytes. Such a finding is confirmed under the lock before it is believed.
        """
        last = self._last
        try:
            self._catch_up_once(locked)
        except CorruptionError:
            if locked:
                raise
            with self._locked(write=False):  # no writer is mid-write now: this is real
                self._catch_up_once(False)
        finally:
            if self._last != last:
                self._offs_new()

    def _catch_up_once(self, locked: bool) -> None:
        """One pass of ``_catch_up``.

        Fast path: the current segment's size equals the end we know and it is not full,
        so nothing was appended and no later segment can exist (one lseek, no stat).
        """
        if self._seg_fd >= 0:
            size = _lseek(self._seg_fd, 0, _SEEK_END)
            if size == self._seg_end and size < self.segment_bytes:
                return
        while True:
            if self._seg_fd < 0:
                path = self._seg_path(self._seg_first)
                if not os.path.exists(path):
                    if archive.skip(self):  # (compacted or not yet written: see archive.py)
                        continue
                    return
                self._seg_fd = self._open_current(path, locked)
            size = os.fstat(self._seg_fd).st_size
            if size > self._seg_end:
                name = seg.segment_name(self._seg_first)
                try:
                    pin = self._files.acquire(self._seg_first, name)
                except FileNotFoundError:  # compacted under this view: go past it (archive.py)
                    if archive.skip(self):
                        continue
                    raise
                sc = None
                ids, versions = self._ids, self._versions
                try:
                    fd = pin.fd
                    for records, sc in seg.read_records(
                        fd, self._seg_end, size, self._last + 1, name
                    ):
                        for d in records:
                            s = d["seq"]
                            ids[d["id"]] = s
                            k = d.get("key")
                            if k is not None:
                                versions[k] = s
                        if records:
                            self._last = records[-1]["seq"]
                            self._last_ts = records[-1]["ts"]
                            c = sc.chain
                            self._tip = c.encode() if c is not None else hashchain.GENESIS
                        self._seg_end = sc.end
                finally:
                    self._files.release(pin)
                if sc is not None and sc.end < size and locked:
                    self._cut(sc.end, size, sc.torn or "torn tail")
            if self._seg_end >= self.segment_bytes and os.path.exists(
                self._seg_path(self._last + 1)
            ):
                os.close(self._seg_fd)
                self._seg_fd = -1
                self._seg_first, self._seg_end = self._last + 1, 0
                continue
            if self._seg_end >= self.segment_bytes and archive.skip(self):
                continue
            return

    def _open_current(self, path: str, locked: bool) -> int:
        """The current segment's descriptor for the writer view: write mode if it can be
        written, else (a reader's catch-up on a read-only log) read mode."""
        try:
            return open_nofollow(path, os.O_WRONLY | os.O_APPEND)
        except ReadOnlyLog:
            if locked:
                raise
            return open_nofollow(path, os.O_RDONLY)

    def _cut(self, end: int, size: int, reason: str) -> None:
        name = seg.segment_name(self._seg_first)
        note = {"segment": name, "offset": end, "bytes": size - end, "reason": reason}
        repairs.record(self._root_s, {**note, "after_seq": self._last, "ts": time.time()})
        os.ftruncate(self._seg_fd, end)  # (after the note: a refused note cuts nothing)

    # ------------------------------------------------------------------ reading

    @property
    def last_seq(self) -> int:
        firsts = seg.list_segments(self._segdir_s)
        for first in reversed(firsts):
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

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
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

    def _hint(self, first: int, seq: int, offset: int) -> None:
        """Record that seq ``seq`` starts at ``offset`` of segment ``first`` (sparse index)."""
        hints = self._hints.setdefault(first, {})
        if len(hints) > 4096:
            hints.clear()
        hints[seq] = offset

    def _locate(self, fd: int, size: int, first: int, from_seq: int) -> tuple[int, int]:
        """Where in segment ``first`` reading for ``from_seq`` starts, and the seq found there."""
        if from_seq <= first:
            return 0, first
        if first == self._seg_first:  # a record this handle appended: its offset is known
            offs = self._offs
            i = from_seq - self._offs_base
            if 0 <= i < len(offs):
                # (read without the lock, so maybe from another moment: seek_seq checks
                # the record there has this seq before it trusts the hint)
                self._hint(first, from_seq, offs[i])
        hints = self._hints.setdefault(first, {})
        return seg.seek_seq(fd, size, first, from_seq, hints), from_seq

    def follow(self, from_seq: int = 1, timeout: float | None = None) -> Iterator[Event]:
        """Yield events from ``from_seq`` on as they are appended (see Log.follow).

        Keeps its own (segment, offset) between wake-ups, so a wake-up costs one fstat and
        one read of the new bytes; moves to the next segment once the current one is full
        and its successor exists. Wakes on notifications and at least every poll interval.
        """
        waiter = Waiter(self.segdir, self.notify, self.poll_interval)
        pin: Pinned | None = None  # the segment read now, pinned in the descriptor cache
        try:
            nxt = max(1, from_seq)
            first = -1
            fd = -1
            offset = 0
            confirmed = False
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                got = False
                if first < 0:
                    firsts = seg.list_segments(self._segdir_s)
                    if firsts and nxt < firsts[0]:
                        for batch in archive.read_before(self._root_s, nxt, None, firsts[0]):
                            yield from map(from_stored, batch)
                        nxt = firsts[0]
                    if firsts:
                        first = firsts[max(0, bisect.bisect_right(firsts, nxt) - 1)]
                        try:
                            pin = self._files.swap(pin, first, seg.segment_name(first))
                        except FileNotFoundError:  # compacted since the listing: list again
                            first = -1
                            continue
                        fd = pin.fd
                        offset, nxt = self._locate(fd, os.fstat(fd).st_size, first, nxt)
                        # a sought offset is trusted once a complete batch was read from it
                        confirmed = offset == 0
                while first >= 0:
                    size = os.fstat(fd).st_size
                    if size > offset:
                        name = seg.segment_name(first)
                        try:
                            for records, sc in seg.read_records(fd, offset, size, nxt, name):
                                if records:
                                    # only a complete batch moves the offset: a chunk that
                                    # ends inside an unfinished batch reports its own start,
                                    # which may be mid-batch (and that batch may be cut)
                                    offset = sc.end
                                    got = confirmed = True
                                    nxt = records[-1]["seq"] + 1
                                    for d in records:
                                        yield from_stored(d)
                        except CorruptionError:
                            self._confirm_corrupt(first, nxt)  # raises if it is real
                            # a race with a writer's repair: seek to ``nxt`` again and re-read
                            # now (re-reading from the same offset could spin forever)
                            got, first, confirmed = True, -1, False
                            break
                    if not confirmed:
                        first = -1  # not there yet: seek again on the next wake-up
                    elif offset >= self.segment_bytes and os.path.exists(self._seg_path(nxt)):
                        try:
                            pin = self._files.swap(pin, nxt, seg.segment_name(nxt))
                        except FileNotFoundError:  # compacted between the check and the open
                            got, first = True, -1
                            break
                        first, fd, offset = nxt, pin.fd, 0
                        continue
                    elif offset >= self.segment_bytes and not os.path.exists(self._seg_path(first)):
                        got, first = True, -1  # compacted under us: find nxt again (archive.py)
                    break
                if got:
                    if timeout is not None:
                        deadline = time.monotonic() + timeout
                    continue
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                waiter.wait(left)
        finally:
            waiter.close()
            if pin is not None:
                self._files.release(pin)

    def wait_for_change(self, timeout: float) -> bool:
        waiter = Waiter(self.segdir, self.notify, self.poll_interval)
        try:
            return waiter.wait(timeout)
        finally:
            waiter.close()

    # ------------------------------------------------------------------ verify

    def verify(self) -> VerifyReport:
        """Every record's CRC and seq order, archives included (see fileverify.py), then
        the hash chain over the segments (walked over an intact log only; see chain.py)."""
        rep = fileverify.verify(self)
        if rep.corruption is None:
            names = [seg.segment_name(f) for f in seg.list_segments(self.segdir)]
            hashchain.verify_files(self._segdir_s, names, rep)
        return rep


def _clip(records: list[dict[str, Any]], lo: int, hi: int | None) -> list[dict[str, Any]]:
    """The records with seqs in [lo, hi] (hi None: no upper bound)."""
    return [d for d in records if d["seq"] >= lo and (hi is None or d["seq"] <= hi)]


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
