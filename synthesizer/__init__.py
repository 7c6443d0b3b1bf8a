"""synthesizer: the fold over a swarmlog (facts, memory pool, tiers) and its workers.

Importing the package registers the body models of every event type it knows.
"""

from . import events as events  # registers body models with the envelope
from .config import SynthConfig
from .facade_bank import MemoryBank
from .facade_pool import MemorySearchResult, SharedMemory, SharedMemoryPool
from .facade_store import (
    FeedbackStats,
    ListResult,
    MemoryEntry,
    MemoryIdentity,
    MemoryStore,
    PutIfVersionResult,
    ScoredEntry,
)
from .facts import Evidence, Fact
from .state import SwarmState, apply, fold
from .swarm import Agent, Swarm

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
