"""The Log contract every backend keeps (docs/design.md §3), and what a caller may rely on.

Requirements a backend must meet (the tests in ``tests/test_log_contract.py`` check them):

R1 seq is gapless and strictly increasing; a reader never sees seq k+1 before k.
R2 an append returns only once its events are committed at the promised durability.
R3 appending an event whose ``id`` is already stored returns the stored original (a
   retry); if it asks for other content under that id it raises EventIdReused naming
   the stored seq and writes nothing (idreuse.py).
R4 ``expect={key: v}`` appends only when every key's version is exactly v, else
   raises VersionConflict(key, expected, actual) and writes nothing.
R5 ``append_many`` is atomic: all of its events are visible or none is.
R6 ``follow`` yields every event from ``from_seq`` on, in order, each once.

Everything a consumer above this package (the fold, the board, the CLI) needs from a log
is a method here; ``swarmlog.memlog.MemoryLog`` is the plain reference implementation.
"""

from __future__ import annotations

import abc
import itertools
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Self

from swarmlog.envelope import Event, StoredEvent

if TYPE_CHECKING:
    from pathlib import Path

    from swarmlog.checkpoint import CheckpointStore


READ_CHUNK = 4096
"""Records per chunk of the default ``Log.read_batches``."""


class Log(abc.ABC):
    """An append-only, totally ordered log of events."""

    name: str
    """The swarm's name; fills ``swarm`` on events that leave it empty."""

    max_batch: int | None = None
    """Most events one ``append_many`` may hold (None: no limit but the size limits)."""

    @abc.abstractmethod
    def append(self, event: Event, expect: Mapping[str, int] | None = None) -> StoredEvent:
        """Append one event; return the stored event (with seq)."""

    @abc.abstractmethod
    def append_many(
        self, events: Iterable[Event], expect: Mapping[str, int] | None = None
    ) -> list[StoredEvent]:
        """Append a batch atomically (all or nothing); return the stored events."""

    @abc.abstractmethod
    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[StoredEvent]:
        """Stored events with ``from_seq <= seq <= to_seq`` in seq order."""

    def read_batches(
        self, from_seq: int = 1, to_seq: int | None = None
    ) -> Iterator[list[dict[str, Any]]]:
        """The same records as ``read``, as chunks (lists) of their stored mappings.

        Why: a fold works a chunk at a time and reads fields by key, so a backend that
        decodes records straight into mappings (FileLog) skips building an Event per
        record. Each mapping is ``Event.envelope`` of the stored event: shared, so
        read-only. Chunk sizes are the backend's choice. This default chunks ``read()``.
        """
        events = self.read(from_seq, to_seq)
        while chunk := [ev.envelope for ev in itertools.islice(events, READ_CHUNK)]:
            yield chunk

    @abc.abstractmethod
    def follow(
        self, from_seq: int = 1, timeout: float | None = None
    ) -> Iterator[StoredEvent]:
        """Yield events from ``from_seq`` on as they are appended.

        Ends when nothing new arrived for ``timeout`` seconds (never, if None).
        """

    @property
    @abc.abstractmethod
    def last_seq(self) -> int:
        """Highest committed seq (0 for an empty log)."""

    @abc.abstractmethod
    def version(self, key: str) -> int:
        """Seq of the last event carrying ``key``; 0 if none ever did."""

    @property
    def swarm_id(self) -> str:
        """The log's identity, fixed when it was created; checkpoints carry it.

        Backends keep one in their metadata; this default derives it from the first
        record's id (unique, and never changes), "" while the log is empty.
        """
        rid = self.record_id(1)
        return f"first:{rid}" if rid else ""

    def record_id(self, seq: int) -> str | None:
        """The id of the event at ``seq``, None if there is none."""
        for ev in self.read(seq, seq):
            return ev.id
        return None

    @abc.abstractmethod
    def verify(self) -> VerifyReport:
        """Check integrity of the whole log; never modifies it."""

    @property
    @abc.abstractmethod
    def checkpoints(self) -> CheckpointStore:
        """This log's checkpoint store."""

    def compactable(self) -> bool:
        """Whether ``swarmlog.file.compact`` can archive or delete this log's old segments.

        Why: a retention policy is applied by compacting segments, and callers ask the
        log rather than test its class. The default is False, the documented answer
        of a backend without segments to compact: MemoryLog keeps none, and a JetStream
        stream is bounded by its own max_age/max_bytes limits (docs/retention.md).
        """
        return False

    def local_dir(self) -> Path | None:
        """The directory this log lives in on this machine, or None (a log in memory or
        on a server). Why: what sits beside a log (reports rendered from it, temporary
        files of killed writers) is found through the log, not by testing its class."""
        return None

    def wait_for_change(self, timeout: float) -> bool:
        """Block until the log may have changed or ``timeout`` passes; True if woken.

        Followers and workers use it to idle without polling hard. A backend that can be
        told of appends wakes early; this default just sleeps (a poll every ``timeout``).
        """
        time.sleep(timeout)
        return False

    def change_waiter(self) -> ChangeWaiter:
        """A waiter that keeps watching between waits, for a follower that waits in a
        loop: its ``wait(timeout)`` returns at once for any change since the previous
        wait, which ``wait_for_change`` (a fresh watch per call) would miss. This default
        calls ``wait_for_change``; a backend that can watch continuously overrides it."""
        return _PollWaiter(self)

    def redact(self, changes: Mapping[int, Mapping[str, Any] | None]) -> int:
        """Erase content in place (docs/design.md §9): rewrite the records at these seqs.

        ``changes[seq]`` is None to turn the event into a redaction tombstone (it keeps
        seq, id, type and a hash of the original, nothing of its content), or a body to
        store instead of the original's (a derived event scrubbed of erased content).
        Seqs never move; every other record is untouched; a record already redacted the
        same way is left alone, so re-running after a crash completes the job. Returns
        how many records were rewritten. Backends that cannot rewrite say so.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot redact records")

    def redactions(self) -> int:
        """A count of the redactions done on this log that only grows (0: none, or a log
        that cannot redact).

        Why: a process that folded records before they were erased holds their words in
        memory; comparing this count from before its fold with the count when it writes
        a checkpoint tells it to fold anew instead (synthesizer/replay.py).
        """
        return 0

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (threads, connections); the log is unusable afterwards."""

    def __enter__(self) -> Self:
        """The handle itself, typed as its own class (``with FileLog(...) as log``)."""
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ChangeWaiter(abc.ABC):
    """What ``Log.change_waiter`` returns: wait for a change, then close."""

    @abc.abstractmethod
    def wait(self, timeout: float) -> bool:
        """Block until the log may have changed since the last wait or ``timeout``
        passes; True if woken."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Stop watching (idempotent)."""


class _PollWaiter(ChangeWaiter):
    """The default waiter: each wait is one ``wait_for_change``."""

    def __init__(self, log: Log) -> None:
        self.log = log

    def wait(self, timeout: float) -> bool:
        return self.log.wait_for_change(timeout)


class VerifyReport:
    """What ``verify()`` found: counts, problems (fatal) and notes (repairs, warnings)."""

    def __init__(self) -> None:
        self.events = 0
        self.last_seq = 0
        self.segments = 0
        self.problems: list[str] = []
        self.notes: list[str] = []
        self.corruption: dict[str, object] | None = None
        """Where the first corrupt record is (segment, offset, seq); ``events`` and
        ``last_seq`` then describe the valid prefix before it."""
        self.head = ""  # hash chain value of the last chained record ("" if none)
        self.head_seq = 0
        self.chain_values: dict[int, bytes] | None = None
        """Every record's chain value as the check recomputed it (hex), by seq, where a
        backend keeps no value in its records (JetStream): what ``verify --expect``
        compares (swarmlog/file/anchors.py). None elsewhere; never serialized."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def __repr__(self) -> str:
        state = "ok" if self.ok else f"{len(self.problems)} problem(s)"
        where = f", corruption={self.corruption}" if self.corruption else ""
        return (
            f"VerifyReport({state}, events={self.events}, last_seq={self.last_seq}, "
            f"segments={self.segments}, notes={len(self.notes)}{where})"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "events": self.events,
            "last_seq": self.last_seq,
            "segments": self.segments,
            "problems": self.problems,
            "notes": self.notes,
            "corruption": self.corruption,
            "head": self.head,
            "head_seq": self.head_seq,
        }
