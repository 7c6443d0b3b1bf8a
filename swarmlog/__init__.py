"""swarmlog: the append-only, checksummed event log under a swarm's shared memory.

The events and errors load with the package; the logs, the checkpoint stores and
``open_log`` load on first use (PEP 562), so a process pays only for the backend it
opens (an agent's one append does not import the checkpoint machinery of a reader).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.envelope import DEFAULT_LIMITS, Event, Limits, StoredEvent, register_body
from swarmlog.errors import (
    CheckpointNotWritten,
    CorruptionError,
    DurabilityError,
    EventIdReused,
    InvalidEvent,
    LogUnavailable,
    ReadOnlyLog,
    SwarmlogError,
    VersionConflict,
)
from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from swarmlog.checkpoint import Checkpoint, CheckpointInfo, CheckpointStore, FileCheckpointStore
    from swarmlog.contract import Log, VerifyReport
    from swarmlog.file.log import FileLog
    from swarmlog.memlog import MemoryLog
    from swarmlog.open import open_log


__all__ = [
    "DEFAULT_LIMITS",
    "Checkpoint",
    "CheckpointInfo",
    "CheckpointNotWritten",
    "CheckpointStore",
    "CorruptionError",
    "DurabilityError",
    "Event",
    "EventIdReused",
    "FileCheckpointStore",
    "FileLog",
    "InvalidEvent",
    "Limits",
    "Log",
    "LogUnavailable",
    "MemoryLog",
    "ReadOnlyLog",
    "StoredEvent",
    "SwarmlogError",
    "VerifyReport",
    "VersionConflict",
    "open_log",
    "register_body",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "Checkpoint": ".checkpoint",
        "CheckpointInfo": ".checkpoint",
        "CheckpointStore": ".checkpoint",
        "FileCheckpointStore": ".checkpoint",
        "Log": ".contract",
        "VerifyReport": ".contract",
        "FileLog": ".file.log",
        "MemoryLog": ".memlog",
        "open_log": ".open",
    },
)
