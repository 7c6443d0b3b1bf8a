"""swarmlog: the append-only, checksummed event log under a swarm's shared memory."""

from .checkpoint import Checkpoint, CheckpointInfo, CheckpointStore, FileCheckpointStore
from .contract import Log, VerifyReport
from .envelope import DEFAULT_LIMITS, Event, Limits, register_body
from .errors import (
    CheckpointNotWritten,
    CorruptionError,
    DurabilityError,
    InvalidEvent,
    LogUnavailable,
    ReadOnlyLog,
    SwarmlogError,
    VersionConflict,
)
from .filelog import FileLog
from .memlog import MemoryLog
from .open import open_log

__all__ = [
    "DEFAULT_LIMITS",
    "Checkpoint",
    "CheckpointInfo",
    "CheckpointNotWritten",
    "CheckpointStore",
    "CorruptionError",
    "DurabilityError",
    "Event",
    "FileCheckpointStore",
    "FileLog",
    "InvalidEvent",
    "Limits",
    "Log",
    "LogUnavailable",
    "MemoryLog",
    "ReadOnlyLog",
    "SwarmlogError",
    "VerifyReport",
    "VersionConflict",
    "open_log",
    "register_body",
]
