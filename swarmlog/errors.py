"""Every error swarmlog raises, so callers can catch the family or one kind."""

from __future__ import annotations


class SwarmlogError(Exception):
    """Base of all swarmlog errors; its message is one line, fit for a CLI."""


class InvalidEvent(SwarmlogError, ValueError):
    """An event (or a field of it) failed validation; nothing was written."""


class VersionConflict(SwarmlogError):
    """An expectation on a key's version did not hold; nothing was written.

    ``actual`` is the key's current version (seq of its last event, 0 if none).
    ``events`` may carry the events written on that key since ``expected``.
    """

    def __init__(self, key: str, expected: int, actual: int, events: list | None = None) -> None:
        super().__init__(f"version conflict on {key!r}: expected {expected}, actual {actual}")
        self.key = key
        self.expected = expected
        self.actual = actual
        self.events = events or []

    def __reduce__(self) -> tuple:  # picklable across processes
        return (VersionConflict, (self.key, self.expected, self.actual, self.events))


class CorruptionError(SwarmlogError):
    """A record that is not the last one failed its checksum or did not parse."""

    def __init__(self, segment: str, offset: int, seq: int | None, reason: str) -> None:
        where = f"seq {seq}" if seq is not None else "unknown seq"
        super().__init__(f"corrupt record in {segment} at byte {offset} ({where}): {reason}")
        self.segment = segment
        self.offset = offset
        self.seq = seq
        self.reason = reason

    def __reduce__(self) -> tuple:
        return (CorruptionError, (self.segment, self.offset, self.seq, self.reason))


class CheckpointNotWritten(SwarmlogError):
    """A checkpoint could not be stored (disk full, I/O error); the message says which is kept."""


class DurabilityError(SwarmlogError):
    """fsync failed: the log can no longer promise durability and refuses to go on."""


class LogUnavailable(SwarmlogError):
    """The log's backing store cannot be reached, opened or used.

    ``maybe_stored`` is True when an append got no answer and may have landed anyway; the
    same events (same ids) can then be appended again safely: the log returns the stored
    originals instead of writing them twice.
    """

    def __init__(self, message: str, maybe_stored: bool = False) -> None:
        super().__init__(message)
        self.maybe_stored = maybe_stored

    def __reduce__(self) -> tuple:
        return (type(self), (str(self), self.maybe_stored))


class ReadOnlyLog(LogUnavailable):
    """A write was asked of a log this process may only read (read-only mount, permissions)."""


class EventIdReused(InvalidEvent):
    """An append reused a stored event's id for different content; nothing was written.

    An event id names one event: the same id with the same content is a retry (answered
    with the stored original), with other content it is refused, as an idempotency key
    reused with other parameters is elsewhere. ``seq`` is where the id is stored and
    ``fields`` the envelope fields that differ.
    """

    def __init__(self, event_id: str, seq: int, fields: list[str]) -> None:
        super().__init__(
            f"event id {event_id!r} is already stored at seq {seq} with different content"
            f" ({', '.join(fields) or 'content'} differ): a retry must resend the same"
            " event; a new event needs a new id"
        )
        self.event_id = event_id
        self.seq = seq
        self.fields = fields

    def __reduce__(self) -> tuple:
        return (EventIdReused, (self.event_id, self.seq, self.fields))
