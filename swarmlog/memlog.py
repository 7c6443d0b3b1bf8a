"""MemoryLog: the whole Log contract in one process's memory, written to be read.

This is the reference backend. It keeps every promise of ``swarmlog.contract`` (R1–R6)
with nothing but a list and a lock, so it doubles as the contract's specification: when
FileLog or JetStreamLog and this module disagree, read this one first. It also backs
the tests that need no files and the facades opened without a target
(``open_log(":memory:")`` gives a fresh, private MemoryLog on every call).

How it holds the log:

* ``records`` is a list of record lines, byte for byte what FileLog writes to a segment
  (``docs/record-format.md``): record ``i`` holds seq ``i + 1``. Reads decode them, so a
  reader gets exactly what a reader of a file gets (JSON values, CRC checked).
* ``ids`` maps each stored id to its seq (idempotency), ``versions`` each key to the seq
  of the last record that carried it (expectations).
* One ``threading.Condition`` guards all of it; appends notify it, followers wait on it.

Several handles may share one in-memory log (``log.handle()``), as several processes
share a directory; nothing survives the process, so ``durability`` is always "process"
in the weakest sense: a returned append is visible to every handle until the process ends.
"""

from __future__ import annotations

import builtins
import math
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import orjson

from swarmlog import chain as hashchain
from swarmlog import idreuse
from swarmlog.checkpoint import CheckpointInfo, CheckpointOwner, CheckpointStore, parse_header
from swarmlog.contract import Log, VerifyReport
from swarmlog.envelope import (
    CRC_SEP,
    DEFAULT_LIMITS,
    Event,
    Limits,
    StoredEvent,
    check_crc,
    decode,
    encode,
    validate_for_append,
)
from swarmlog.errors import InvalidEvent, LogUnavailable, SwarmlogError, VersionConflict
from swarmlog.names import check_name
from swarmlog.redaction import check_changes, redact_line, renames_index

MEMORY_TARGET = ":memory:"
"""The ``open_log`` target of a fresh in-process log."""

Clock = Callable[[], float]


class MemoryCheckpointStore(CheckpointStore):
    """Checkpoints kept in a dict: header and payload per name, as a file would hold them.

    ``owner`` (the log's shared state) gives the identity, last seq and records that
    checkpoints are checked against (see checkpoint.py).
    """

    def __init__(self, owner: CheckpointOwner | None = None) -> None:
        self.saved: dict[str, tuple[bytes, bytes]] = {}
        self.owner = owner

    def _name(self, seq: int) -> str:
        return f"ckpt-{seq:020d}"

    def _put(self, info: CheckpointInfo, header: bytes, data: bytes) -> None:
        self.saved[info.name] = (header, bytes(data))

    def list(self) -> builtins.list[CheckpointInfo]:
        infos = [parse_header(header, name) for name, (header, _) in self.saved.items()]
        return sorted(infos, key=lambda i: (i.seq, i.name))

    def _read(self, info: CheckpointInfo) -> bytes:
        if info.name not in self.saved:
            raise SwarmlogError(f"checkpoint {info.name} is gone")
        return self.saved[info.name][1]

    def delete(self, info: CheckpointInfo) -> None:
        self.saved.pop(info.name, None)


class _Shared:
    """What every handle on one in-memory log shares: the records and their indexes."""

    def __init__(self, name: str, limits: Limits, clock: Clock) -> None:
        self.name = name
        self.limits = limits
        self.clock = clock
        self.records: list[bytes] = []
        self.ids: dict[str, int] = {}
        self.versions: dict[str, int] = {}
        self.last_ts = 0.0
        self.tip = hashchain.GENESIS
        """The chain value of the last record (chain.py)."""
        self.redactions = 0
        """Redactions done (``Log.redactions``)."""
        self.changed = threading.Condition()
        self.swarm_id = uuid.uuid4().hex
        """The log's identity (checkpoints carry it)."""
        self.checkpoints = MemoryCheckpointStore(self)

    @property
    def last_seq(self) -> int:
        with self.changed:
            return len(self.records)

    def record_id(self, seq: int) -> str | None:
        """The id of the record at ``seq`` (None if there is none)."""
        with self.changed:
            if not 1 <= seq <= len(self.records):
                return None
            line = self.records[seq - 1]
        return decode(line)[0].id


class MemoryLog(Log):
    """The Log contract in memory (see the module docstring)."""

    max_batch = None

    def __init__(
        self,
        name: str | None = None,
        *,
        limits: Limits = DEFAULT_LIMITS,
        clock: Clock | None = None,
        **ignored: Any,
    ) -> None:
        """A new, empty log named ``name`` (default "memory").

        ``clock`` gives the time the log stamps on appended events (default
        ``time.time``; tests pass their own). Options of the other backends
        (``create``, ``durability``, ``segment_bytes``…) are accepted and ignored.
        """
        shared = _Shared(check_name("swarm", name or "memory"), limits, clock or time.time)
        self._attach(shared)

    def _attach(self, shared: _Shared) -> None:
        self._shared = shared
        self.name: str = shared.name
        self.closed = False

    def handle(self) -> MemoryLog:
        """Another handle on this same log (what a second ``open_log`` of a path gives).

        Closing one handle leaves the others working.
        """
        other = MemoryLog.__new__(MemoryLog)
        other._attach(self._shared)
        return other

    def __repr__(self) -> str:
        return f"MemoryLog(name={self.name!r}, last_seq={len(self._shared.records)})"

    def close(self) -> None:
        """This handle refuses further use; followers waiting on it return."""
        self.closed = True
        with self._shared.changed:
            self._shared.changed.notify_all()

    def _check_open(self) -> None:
        if self.closed:
            raise LogUnavailable("the log is closed")

    @property
    def checkpoints(self) -> CheckpointStore:
        return self._shared.checkpoints

    @property
    def swarm_id(self) -> str:
        return self._shared.swarm_id

    # ------------------------------------------------------------------ append

    def append(self, event: Event, expect: Mapping[str, int] | None = None) -> StoredEvent:
        return self.append_many([event], expect)[0]

    def append_many(
        self, events: Iterable[Event], expect: Mapping[str, int] | None = None
    ) -> list[StoredEvent]:
        """Append a batch: validate everything, then under the lock (in this order)
        answer known ids with their stored originals (refusing the whole batch if one
        of them asks for other content: idreuse.py), check the expectations (only if
        something new is to be written), stamp one ``ts`` and consecutive seqs, store.
        """
        self._check_open()
        evs = list(events)
        self._validate(evs)
        s = self._shared
        with s.changed:
            fresh = [ev for ev in evs if ev.id not in s.ids]
            if len(fresh) < len(evs):  # a retry, or an id reused: tell them apart
                for ev in evs:
                    if ev.id in s.ids:
                        idreuse.check(ev, decode(s.records[s.ids[ev.id] - 1])[0])
            if fresh or not evs:
                for key, want in (expect or {}).items():
                    have = s.versions.get(key, 0)
                    if have != want:
                        raise VersionConflict(key, want, have)
            if fresh:
                self._store(fresh)
                s.changed.notify_all()
            return [decode(s.records[s.ids[ev.id] - 1])[0] for ev in evs]

    def _validate(self, evs: list[Event]) -> None:
        """What an append refuses, before anything is written (first problem wins)."""
        seen: set[str] = set()
        for ev in evs:
            if not isinstance(ev, Event):
                raise InvalidEvent(f"append takes Event objects, got {type(ev).__name__}")
            validate_for_append(ev, self._shared.limits)
            if ev.id in seen:
                raise InvalidEvent(f"event id {ev.id!r} appears twice in one batch")
            seen.add(ev.id)

    def _store(self, fresh: list[Event]) -> None:
        """Encode and keep a batch of new events (lock held): the log's seq and time.

        The log's clock never runs backwards along seq: ``ts = max(now, last ts)``, one
        ``ts`` for the whole batch (a clock reading that is not finite counts as no later
        than the last ts). Each record but the last says how many of its batch
        follow (``more``), as in a segment file.
        """
        s = self._shared
        now = s.clock()
        ts = float(now) if math.isfinite(now) and now > s.last_ts else s.last_ts
        first = len(s.records) + 1
        lines = []
        for i, ev in enumerate(fresh):
            stored = ev.replace(seq=first + i, ts=ts, swarm=ev.swarm or s.name)
            line = encode(stored, more=len(fresh) - 1 - i)  # the one record encoder
            if len(line) > s.limits.max_event:
                raise InvalidEvent(
                    f"event {ev.id} is {len(line)} bytes encoded (max {s.limits.max_event})"
                )
            lines.append(line)
        lines, tip = _chained(lines, s.tip)
        # nothing is kept until every record of the batch encoded: all or nothing (R5)
        s.tip = tip
        for i, (ev, line) in enumerate(zip(fresh, lines, strict=True)):
            seq = first + i
            s.records.append(line)
            s.ids[ev.id] = seq
            if ev.key is not None:
                s.versions[ev.key] = seq
        s.last_ts = ts

    # ------------------------------------------------------------------ reading

    @property
    def last_seq(self) -> int:
        self._check_open()
        return len(self._shared.records)

    def version(self, key: str) -> int:
        self._check_open()
        with self._shared.changed:
            return self._shared.versions.get(key, 0)

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[StoredEvent]:
        self._check_open()
        records = self._snapshot(from_seq, to_seq)
        for line in records:
            yield decode(line)[0]

    def _snapshot(self, from_seq: int, to_seq: int | None) -> list[bytes]:
        """The records ``from_seq..to_seq`` as they are now (a batch is all in or all out)."""
        with self._shared.changed:
            records = self._shared.records
            end = len(records) if to_seq is None else min(to_seq, len(records))
            return records[max(1, from_seq) - 1 : max(0, end)]

    def follow(
        self, from_seq: int = 1, timeout: float | None = None
    ) -> Iterator[StoredEvent]:
        """Yield from ``from_seq`` on; wait on the condition when caught up.

        Returns when ``timeout`` seconds pass with nothing new, or when this handle closes.
        """
        nxt = max(1, from_seq)
        s = self._shared
        while not self.closed:
            deadline = None if timeout is None else time.monotonic() + timeout
            with s.changed:
                while len(s.records) < nxt and not self.closed:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        break
                    s.changed.wait(left)  # woken by an append or a close
                new = s.records[nxt - 1 :]
            if not new:
                return
            for line in new:
                yield decode(line)[0]
                nxt += 1

    def wait_for_change(self, timeout: float) -> bool:
        s = self._shared
        with s.changed:
            return s.changed.wait(timeout)

    def redactions(self) -> int:
        """Redactions done on this log (``Log.redactions``)."""
        return self._shared.redactions

    def redact(self, changes: Mapping[int, Mapping[str, Any] | None]) -> int:
        """Rewrite the records at these seqs as tombstones or scrubbed records (see
        ``Log.redact`` and ``redaction.py``): each line replaced under the lock, all or
        nothing (every new line is built before any is stored)."""
        self._check_open()
        todo = check_changes(changes)
        s = self._shared
        with s.changed:
            past = [q for q in todo if q > len(s.records)]
            if past:
                raise SwarmlogError(f"redact: seq {min(past)} is past the end of the log")
            new = {q: redact_line(s.records[q - 1], body) for q, body in todo.items()}
            done = {q: line for q, line in new.items() if line is not None}
            for q, line in done.items():
                s.records[q - 1] = line
            if done and renames_index(todo):  # (ids or keys renamed: index them anew)
                s.ids, s.versions = {}, {}
                for q, rec in enumerate(s.records, 1):
                    d = orjson.loads(rec)
                    s.ids[d["id"]] = q
                    if d.get("key") is not None:
                        s.versions[d["key"]] = q
            if done:
                s.redactions += 1
                s.changed.notify_all()
        return len(done)

    def verify(self) -> VerifyReport:
        """Check every record: its CRC, its seq in place, each batch's ``more`` countdown,
        and the hash chain (each record's link to the one before, chain.py)."""
        rep = VerifyReport()
        more = 0
        records = self._snapshot(1, None)
        head, broken = hashchain.check(enumerate(records, start=1))
        if broken is not None:
            rep.problems.append(
                f"seq {broken}: hash chain broken (this record or one before it was"
                " changed, inserted or removed after it was written)"
            )
        rep.head, rep.head_seq = head.decode(), (broken or len(records) + 1) - 1
        for i, line in enumerate(records, start=1):
            if not check_crc(line):
                rep.problems.append(f"record {i} fails its crc check")
                continue
            ev, n = decode(line)
            if ev.seq != i:
                rep.problems.append(f"record {i} carries seq {ev.seq}")
            if more and n != more - 1:
                rep.problems.append(f"seq {i}: batch countdown says {n}, expected {more - 1}")
            more = n
            rep.events += 1
            rep.last_seq = i
        if more:
            rep.problems.append(f"the last batch misses {more} record(s)")
        return rep


def _chained(lines: list[bytes], prev: bytes) -> tuple[list[bytes], bytes]:
    """Record lines with their ``chain`` member (before ``crc``, which is recomputed), each
    linked to the one before from ``prev``; returns them and the last chain value."""
    out = []
    for line in lines:
        head = line[: line.rfind(CRC_SEP)]
        prev = hashchain.link(prev, head)
        head += b',"chain":"%s"' % prev
        out.append(head + b',"crc":%d}\n' % zlib.crc32(head))
    return out, prev
