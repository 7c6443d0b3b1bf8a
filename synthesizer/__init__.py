"""synthesizer: the fold over a swarmlog (facts, memory pool, tiers) and its workers.

Importing the package registers the body checks of every event type it knows (so
appends of known types are validated; ``bodies``: plain Python, no pydantic). Everything
else loads on first use
(``synthesizer.Swarm``, the seed facades …), so a process that only appends or reads
events does not pay for numpy, the fold or the synthesizer worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names
from synthesizer import bodies as bodies  # registers the body checks with the envelope
from synthesizer import events as events

if TYPE_CHECKING:
    from synthesizer.compat.bank import MemoryBank
    from synthesizer.compat.pool import MemorySearchResult, SharedMemory, SharedMemoryPool
    from synthesizer.compat.store import (
        FeedbackStats,
        ListResult,
        MemoryEntry,
        MemoryIdentity,
        MemoryStore,
        PutIfVersionResult,
        ScoredEntry,
    )
    from synthesizer.config import SynthConfig
    from synthesizer.state import SwarmState, apply, fold
    from synthesizer.state.facts import Evidence, Fact
    from synthesizer.swarm import Agent, Swarm


__all__ = [
    "Agent",
    "Evidence",
    "Fact",
    "FeedbackStats",
    "ListResult",
    "MemoryBank",
    "MemoryEntry",
    "MemoryIdentity",
    "MemorySearchResult",
    "MemoryStore",
    "PutIfVersionResult",
    "ScoredEntry",
    "SharedMemory",
    "SharedMemoryPool",
    "Swarm",
    "SwarmState",
    "SynthConfig",
    "apply",
    "fold",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "SynthConfig": ".config",
        "MemoryBank": ".compat.bank",
        "MemorySearchResult": ".compat.pool",
        "SharedMemory": ".compat.pool",
        "SharedMemoryPool": ".compat.pool",
        "FeedbackStats": ".compat.store",
        "ListResult": ".compat.store",
        "MemoryEntry": ".compat.store",
        "MemoryIdentity": ".compat.store",
        "MemoryStore": ".compat.store",
        "PutIfVersionResult": ".compat.store",
        "ScoredEntry": ".compat.store",
        "Evidence": ".state.facts",
        "Fact": ".state.facts",
        "SwarmState": ".state",
        "apply": ".state",
        "fold": ".state",
        "Agent": ".swarm",
        "Swarm": ".swarm",
    },
)
