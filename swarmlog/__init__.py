"""swarmlog: the append-only, checksummed event log under a swarm's shared memory.

The events and errors load with the package; the logs, the checkpoint stores and
``open_log`` load on first use (PEP 562), so a process pays only for the backend it
opens (an agent's one append does not import the checkpoint machinery of a reader).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .envelope import DEFAULT_LIMITS, Event, Limits, register_body
from .errors import (
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

if TYPE_CHECKING:
    from .checkpoint import Checkpoint, CheckpointInfo, CheckpointStore, FileCheckpointStore
    from .contract import Log, VerifyReport
    from .filelog import FileLog
    from .memlog import MemoryLog
    from .open import open_log

_LAZY = {
    "Checkpoint": "checkpoint",
    "CheckpointInfo": "checkpoint",
    "CheckpointStore": "checkpoint",
    "FileCheckpointStore": "checkpoint",
    "Log": "contract",
    "VerifyReport": "contract",
    "FileLog": "filelog",
    "MemoryLog": "memlog",
    "open_log": "open",
}

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
    "SwarmlogError",
    "VerifyReport",
    "VersionConflict",
    "open_log",
    "register_body",
]


def __getattr__(name: str) -> Any:
    """The public names not loaded with the package, imported on first use (PEP 562)."""
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'swarmlog' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
