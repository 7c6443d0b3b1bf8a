"""FileLog: the embedded log — a directory of JSONL segments shared by local processes.

Layout of a log directory::

    swarm.json          name, format, segment size (fixed at creation)
    segments/           <first seq>.jsonl files, append-only
    lock                flock'ed (exclusive) around every append batch
    sync                16 bytes shared by writers: last written seq, its segment (group commit)
    sync.lock           flock'ed by the one writer running fdatasync for everybody
    repairs.jsonl       torn tails the writers cut off (reported by verify)
    checkpoints/        opaque snapshots (see checkpoint.py)

Writers serialise on ``lock``: catch up with what other processes wrote (keeping an
in-memory id index and key versions), check idempotency and expectations, then write the
whole batch with one ``write()``. Readers take no lock and only consume complete,
CRC-valid batches.
"""

from __future__ import annotations

import bisect
import fcntl
import mmap
import os
import struct
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import orjson

from . import segment as seg
from .checkpoint import CheckpointStore, FileCheckpointStore
from .contract import Log, VerifyReport
from .envelope import DEFAULT_LIMITS, Event, Limits, from_stored, validate_for_append
from .errors import (
    CorruptionError,
    DurabilityError,
    InvalidEvent,
    LogUnavailable,
    SwarmlogError,
    VersionConflict,
)
from .fsguard import check_local
from .names import check_name
from .tail import Waiter

FORMAT = "swarmlog-file/1"
DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024
Durability = Literal["process", "fsync"]
_SYNC = struct.Struct("<QQ")


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
    ) -> None:
        if durability not in ("process", "fsync"):
            raise ValueError(f"durability must be 'process' or 'fsync', not {durability!r}")
        self.root = Path(root)
        self.durability: Durability = durability
        self.limits = limits
        self.notify = notify
        self.poll_interval = poll_interval
        meta_path = self.root / "swarm.json"
        if not meta_path.exists():
            if not create:
                raise LogUnavailable(f"no swarm log at {self.root} (run 'swarmlog init')")
            self._create(meta_path, name, segment_bytes)
        try:
            meta = orjson.loads(meta_path.read_bytes())
            self.name: str = meta["name"]
            self.segment_bytes: int = int(meta["segment_bytes"])
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
            raise LogUnavailable(f"{meta_path} is unreadable: {e}") from None
        if meta.get("format") != FORMAT:
            raise LogUnavailable(f"{meta_path} has format {meta.get('format')!r}, not {FORMAT}")
        check_local(self.root, allow_network_fs)
        self.segdir = self.root / "segments"
        self._lock_fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        self._tlock = threading.RLock()
        self._sync_fd = -1
        self._sync_map: mmap.mmap | None = None
        self._failed: str | None = None
        self._checkpoints = FileCheckpointStore(self.root / "checkpoints")
        # writer view of the log (kept current under the lock)
        self._ids: dict[str, int] = {}
        self._versions: dict[str, int] = {}
        self._last = 0
        self._seg_first = 1
        self._seg_end = 0
        self._seg_fd = -1
        self._hints: dict[int, dict[int, int]] = {}
        self._fds: dict[int, int] = {}

    # ------------------------------------------------------------------ setup

    def _create(self, meta_path: Path, name: str | None, segment_bytes: int) -> None:
        if segment_bytes < 4096:
            raise ValueError("segment_bytes must be at least 4096")
        name = check_name("swarm", name or _default_name(self.root))
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "segments").mkdir(exist_ok=True)
        fd = os.open(self.root / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not meta_path.exists():
                meta = {"format": FORMAT, "name": name, "segment_bytes": segment_bytes}
                tmp = meta_path.with_suffix(f".tmp{os.getpid()}")
                tmp.write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))
                os.replace(tmp, meta_path)
                _fsync_dir(self.root)
        finally:
            os.close(fd)

    def close(self) -> None:
        for fd in (self._lock_fd, self._sync_fd, self._seg_fd, *self._fds.values()):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if self._sync_map is not None:
            self._sync_map.close()
            self._sync_map = None
        self._lock_fd = self._sync_fd = self._seg_fd = -1
        self._fds.clear()

    def __repr__(self) -> str:
        return f"FileLog({str(self.root)!r}, name={self.name!r})"

    @property
    def checkpoints(self) -> CheckpointStore:
        return self._checkpoints

    # ------------------------------------------------------------------ append

    def append(self, event: Event, expect: Mapping[str, int] | None = None) -> Event:
        return self.append_many((event,), expect)[0]

    def append_many(
        self, events: Iterable[Event], expect: Mapping[str, int] | None = None
    ) -> list[Event]:
        evs = list(events)
        if not evs:
            if expect:
                with self._tlock, self._locked():
                    self._catch_up(locked=True)
                    self._check_expect(expect)
            return []
        if self._failed:
            raise DurabilityError(self._failed)
        bodies = self._prepare(evs)
        with self._tlock:
            with self._locked():
                self._catch_up(locked=True)
                known = [self._ids.get(ev.id) for ev in evs]
                if all(s is not None for s in known):
                    stored = [s for s in known if s is not None]
                    return [self._read_one(s) for s in stored]
                if expect:
                    self._check_expect(expect)
                fresh = [(ev, b) for ev, b, s in zip(evs, bodies, known, strict=True) if s is None]
                out, data, last = self._encode(fresh)
                self._write(data, last, out)
            if self.durability == "fsync":
                self._group_sync(last)
        if any(s is not None for s in known):
            it = iter(out)
            return [self._read_one(s) if s is not None else next(it) for s in known]
        return out

    def _prepare(self, evs: list[Event]) -> list[tuple[bytes, dict[str, Any]]]:
        """Validate and pre-serialize all that does not depend on seq (outside the lock)."""
        seen: set[str] = set()
        out = []
        for ev in evs:
            if not isinstance(ev, Event):
                raise InvalidEvent(f"append takes Event objects, got {type(ev).__name__}")
            if ev.id in seen:
                raise InvalidEvent(f"event id {ev.id!r} appears twice in one batch")
            seen.add(ev.id)
            validate_for_append(ev, self.limits)
            d = ev.to_dict()
            d.pop("seq", None)
            if "swarm" not in d:
                d = {"id": d["id"], "ts": d["ts"], "swarm": self.name, **d}
            enc = dict(d)
            enc["body"] = orjson.Fragment(orjson.dumps(d["body"], option=orjson.OPT_SORT_KEYS))
            rest = orjson.dumps(enc)
            if len(rest) + 48 > self.limits.max_event:
                raise InvalidEvent(
                    f"event {ev.id} is {len(rest)} bytes encoded (max {self.limits.max_event})"
                )
            out.append((rest[1:-1], d))
        return out

    def _encode(
        self, fresh: list[tuple[Event, tuple[bytes, dict[str, Any]]]]
    ) -> tuple[list[Event], bytes, int]:
        """Assign seqs and build the batch's bytes (under the lock)."""
        seq = self._last
        lines = []
        out = []
        n = len(fresh)
        for i, (_, (inner, d)) in enumerate(fresh):
            seq += 1
            more = n - 1 - i
            if more:
                head = b'{"seq":%d,%s,"more":%d' % (seq, inner, more)
            else:
                head = b'{"seq":%d,%s' % (seq, inner)
            lines.append(head + b',"crc":%d}\n' % zlib.crc32(head))
            out.append(from_stored({"seq": seq, **d}))
        return out, b"".join(lines), seq

    def _check_expect(self, expect: Mapping[str, int]) -> None:
        for key, want in expect.items():
            have = self._versions.get(key, 0)
            if have != want:
                raise VersionConflict(key, want, have)

    def _write(self, data: bytes, last: int, out: list[Event]) -> None:
        first = last - len(out) + 1
        if self._seg_fd < 0 or (
            self._seg_end > 0 and self._seg_end + len(data) > self.segment_bytes
        ):
            self._rotate(first)
        view = memoryview(data)
        written = 0
        try:
            while written < len(data):
                written += os.write(self._seg_fd, view[written:])
        except OSError as e:
            # nothing of a failed batch may stay: cut back to the last good end
            try:
                os.ftruncate(self._seg_fd, self._seg_end)
            except OSError:
                pass
            raise SwarmlogError(f"append failed, nothing written: {e}") from None
        self._seg_end += len(data)
        self._last = last
        ids = self._ids
        versions = self._versions
        for ev in out:
            ids[ev.id] = ev.seq  # type: ignore[assignment]
            k = ev.key
            if k is not None:
                versions[k] = ev.seq  # type: ignore[assignment]
        if self.durability == "fsync":
            self._sync_state()[0:16] = _SYNC.pack(last, self._seg_first)

    def _rotate(self, first: int) -> None:
        """Open (creating if needed) the segment new records go to; start one past the size."""
        if self._seg_fd >= 0 and self._seg_end > 0:
            self._fsync(self._seg_fd)  # a closed segment is always durable
            os.close(self._seg_fd)
            self._seg_fd = -1
            self._seg_first, self._seg_end = first, 0
        path = self.segdir / seg.segment_name(self._seg_first)
        new = not path.exists()
        self.segdir.mkdir(exist_ok=True)
        self._seg_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if new:
            _fsync_dir(self.segdir)

    # ------------------------------------------------------------------ durability

    def _sync_state(self) -> mmap.mmap:
        if self._sync_map is None:
            fd = os.open(self.root / "sync", os.O_RDWR | os.O_CREAT, 0o644)
            if os.fstat(fd).st_size < 32:
                os.ftruncate(fd, 32)
            self._sync_map = mmap.mmap(fd, 32)
            os.close(fd)
            self._sync_fd = os.open(self.root / "sync.lock", os.O_RDWR | os.O_CREAT, 0o644)
        return self._sync_map

    def _group_sync(self, mine: int) -> None:
        """Make seq ``mine`` durable, sharing one fdatasync among concurrent writers.

        Whoever holds ``sync.lock`` syncs everything written so far and publishes how far
        that reached; writers that queued behind it find themselves covered and return.
        """
        state = self._sync_state()
        fcntl.flock(self._sync_fd, fcntl.LOCK_EX)
        try:
            durable = _SYNC.unpack_from(state, 16)[0]
            if durable >= mine:
                return
            with self._locked():
                written, seg_first = _SYNC.unpack_from(state, 0)
            fd = self._seg_fd if seg_first == self._seg_first else self._fd(seg_first)
            self._fsync(fd)
            state[16:24] = struct.pack("<Q", max(written, mine))
        finally:
            fcntl.flock(self._sync_fd, fcntl.LOCK_UN)

    def _fsync(self, fd: int) -> None:
        try:
            os.fdatasync(fd)
        except OSError as e:
            self._failed = f"fdatasync failed ({e}); this log handle refuses further appends"
            raise DurabilityError(self._failed) from None

    # ------------------------------------------------------------------ locking & catch-up

    class _Flock:
        def __init__(self, fd: int) -> None:
            self.fd = fd

        def __enter__(self) -> None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)

        def __exit__(self, *exc: object) -> None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def _locked(self) -> FileLog._Flock:
        if self._lock_fd < 0:
            raise SwarmlogError("log is closed")
        return FileLog._Flock(self._lock_fd)

    def _catch_up(self, locked: bool) -> None:
        """Bring the writer view up to the end of the log (cutting a torn tail if locked)."""
        while True:
            path = self.segdir / seg.segment_name(self._seg_first)
            if self._seg_fd < 0:
                if not path.exists():
                    if self._seg_first == 1:
                        firsts = seg.list_segments(self.segdir)
                        if firsts and firsts[0] != 1:
                            self._seg_first = firsts[0]
                            self._last = firsts[0] - 1
                            continue
                    return
                self._seg_fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            size = os.fstat(self._seg_fd).st_size
            if size > self._seg_end:
                fd = self._fd(self._seg_first)
                name = seg.segment_name(self._seg_first)
                sc = None
                for records, sc in seg.read_records(fd, self._seg_end, size, self._last + 1, name):
                    ids, versions = self._ids, self._versions
                    for d in records:
                        s = d["seq"]
                        ids[d["id"]] = s
                        k = d.get("key")
                        if k is not None:
                            versions[k] = s
                    if records:
                        self._last = records[-1]["seq"]
                if sc is not None:
                    self._seg_end = sc.end
                    if sc.end < size and locked:
                        self._cut(sc.end, size, sc.torn or "torn tail")
            nxt = self.segdir / seg.segment_name(self._last + 1)
            if self._last + 1 != self._seg_first and nxt.exists():
                os.close(self._seg_fd)
                self._seg_fd = -1
                self._seg_first, self._seg_end = self._last + 1, 0
                continue
            return

    def _cut(self, end: int, size: int, reason: str) -> None:
        name = seg.segment_name(self._seg_first)
        os.ftruncate(self._seg_fd, end)
        note = {
            "segment": name,
            "offset": end,
            "bytes": size - end,
            "reason": reason,
            "after_seq": self._last,
            "ts": time.time(),
        }
        with open(self.root / "repairs.jsonl", "ab") as f:
            f.write(orjson.dumps(note) + b"\n")

    def _fd(self, first: int) -> int:
        fd = self._fds.get(first)
        if fd is None:
            fd = os.open(self.segdir / seg.segment_name(first), os.O_RDONLY)
            self._fds[first] = fd
        return fd

    # ------------------------------------------------------------------ reading

    @property
    def last_seq(self) -> int:
        firsts = seg.list_segments(self.segdir)
        if not firsts:
            return 0
        for first in reversed(firsts):
            s = self._tail_seq(first)
            if s is not None:
                return s
        return 0

    def _tail_seq(self, first: int) -> int | None:
        """Seq of the last complete batch of a segment, reading only its tail."""
        try:
            fd = self._fd(first)
        except FileNotFoundError:
            return None
        size = os.fstat(fd).st_size
        window = 65536
        while True:
            start = max(0, size - window)
            buf = os.pread(fd, size - start, start)
            lines = buf.split(b"\n")
            lines.pop()  # after the last newline: empty or incomplete
            if start > 0:
                lines = lines[1:]
            for line in reversed(lines):
                d = seg.parse_record(line)
                if d is not None and not d.get("more"):
                    return int(d["seq"])
            if start == 0:
                return None
            window *= 4

    def version(self, key: str) -> int:
        with self._tlock:
            self._catch_up(locked=False)
            return self._versions.get(key, 0)

    def _read_one(self, seq: int) -> Event:
        for ev in self.read(seq, seq):
            return ev
        raise SwarmlogError(f"seq {seq} is not in the log")

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        for d in self.read_dicts(from_seq, to_seq):
            yield from_stored(d)

    def read_dicts(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[dict[str, Any]]:
        """Like ``read`` but yields the stored dicts (the fast path for folds)."""
        for batch in self.read_batches(from_seq, to_seq):
            yield from batch

    def read_batches(
        self, from_seq: int = 1, to_seq: int | None = None
    ) -> Iterator[list[dict[str, Any]]]:
        """Stored dicts in chunks (lists) — for consumers that work a batch at a time."""
        from_seq = max(1, from_seq)
        firsts = seg.list_segments(self.segdir)
        if not firsts:
            return
        i = max(0, bisect.bisect_right(firsts, from_seq) - 1)
        for first in firsts[i:]:
            if to_seq is not None and first > to_seq:
                return
            fd = self._fd(first)
            size = os.fstat(fd).st_size
            hints = self._hints.setdefault(first, {})
            start = seg.seek_seq(fd, size, first, from_seq, hints) if from_seq > first else 0
            expect = from_seq if from_seq > first else first
            if start >= size:
                continue
            name = seg.segment_name(first)
            sc = None
            for records, sc in seg.read_records(fd, start, size, expect, name):
                if not records:
                    continue
                if records[0]["seq"] < from_seq or (
                    to_seq is not None and records[-1]["seq"] > to_seq
                ):
                    records = [
                        d
                        for d in records
                        if d["seq"] >= from_seq and (to_seq is None or d["seq"] <= to_seq)
                    ]
                if records:
                    yield records
                if to_seq is not None and records and records[-1]["seq"] >= to_seq:
                    return
            if sc is not None and sc.end < size:
                return  # torn tail: nothing valid after it

    def follow(self, from_seq: int = 1, timeout: float | None = None) -> Iterator[Event]:
        waiter = Waiter(self.segdir, self.notify, self.poll_interval)
        try:
            nxt = max(1, from_seq)
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                got = False
                for batch in self.read_batches(nxt):
                    for d in batch:
                        yield from_stored(d)
                    nxt = batch[-1]["seq"] + 1
                    got = True
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

    def wait_for_change(self, timeout: float) -> bool:
        waiter = Waiter(self.segdir, self.notify, self.poll_interval)
        try:
            return waiter.wait(timeout)
        finally:
            waiter.close()

    # ------------------------------------------------------------------ verify

    def verify(self) -> VerifyReport:
        rep = VerifyReport()
        firsts = seg.list_segments(self.segdir)
        rep.segments = len(firsts)
        nxt = firsts[0] if firsts else 1
        ids: set[str] = set()
        for j, first in enumerate(firsts):
            name = seg.segment_name(first)
            if first != nxt:
                rep.problems.append(f"{name}: starts at seq {first}, expected {nxt} (gap)")
                nxt = first
            fd = os.open(self.segdir / name, os.O_RDONLY)
            try:
                size = os.fstat(fd).st_size
                sc = None
                for records, sc in seg.read_records(fd, 0, size, nxt, name):
                    for d in records:
                        if d["id"] in ids:
                            rep.problems.append(f"seq {d['seq']}: duplicate event id {d['id']}")
                        ids.add(d["id"])
                    if records:
                        nxt = records[-1]["seq"] + 1
                        rep.events += len(records)
                if sc is not None and sc.end < size:
                    msg = (
                        f"{name}: torn final record at byte {sc.end} ({size - sc.end} bytes, "
                        f"{sc.torn}); the next append cuts it off"
                    )
                    (rep.notes if j == len(firsts) - 1 else rep.problems).append(msg)
            except CorruptionError as e:
                rep.problems.append(str(e))
            finally:
                os.close(fd)
        rep.last_seq = nxt - 1
        repairs = self.root / "repairs.jsonl"
        if repairs.exists():
            for line in repairs.read_bytes().splitlines():
                try:
                    r = orjson.loads(line)
                    rep.notes.append(
                        f"repaired: cut {r['bytes']} bytes of a torn tail in {r['segment']} "
                        f"at byte {r['offset']} after seq {r['after_seq']} ({r['reason']})"
                    )
                except (orjson.JSONDecodeError, KeyError, TypeError):
                    rep.notes.append("repairs.jsonl holds an unreadable line")
        return rep


def _default_name(root: Path) -> str:
    base = root.resolve().name.lstrip(".") or "swarm"
    clean = "".join(c if c.isalnum() or c in "-_" else "-" for c in base)
    return clean[:64] or "swarm"


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
