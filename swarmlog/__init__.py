"""swarmlog: the append-only, checksummed event log under a swarm's shared memory."""

from .contract import Log, VerifyReport
from .envelope import DEFAULT_LIMITS, Event, Limits, register_body
from .errors import (
    CorruptionError,
    DurabilityError,
    InvalidEvent,
    LogUnavailable,
    SwarmlogError,
    VersionConflict,
)

__all__ = [
    "DEFAULT_LIMITS",
    "CorruptionError",
    "DurabilityError",
    "Event",
    "InvalidEvent",
    "Limits",
    "Log",
    "LogUnavailable",
    "SwarmlogError",
    "VerifyReport",
    "VersionConflict",
    "register_body",
]
