"""synthesizer: the fold over a swarmlog (facts, memory pool, tiers) and its workers.

Importing the package registers the body checks of every event type it knows (so
appends of known types are validated; ``bodies``: plain Python, no pydantic). Everything
else loads on first use
(``synthesizer.Swarm``, the seed facades …), so a process that only appends or reads
events does not pay for numpy, the fold or the synthesizer worker.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from synthesizer import bodies as bodies  # registers the body checks with the envelope
from synthesizer import events as events

if TYPE_CHECKING:
    from synthesizer.config import SynthConfig
    from synthesizer.facade_bank import MemoryBank
    from synthesizer.facade_pool import MemorySearchResult, SharedMemory, SharedMemoryPool
    from synthesizer.facade_store import (
        FeedbackStats,
        ListResult,
        MemoryEntry,
        MemoryIdentity,
        MemoryStore,
        PutIfVersionResult,
        ScoredEntry,
    )
    from synthesizer.facts import Evidence, Fact
    from synthesizer.state import SwarmState, apply, fold
    from synthesizer.swarm import Agent, Swarm

_LAZY = {
    "SynthConfig": "config",
    "MemoryBank": "facade_bank",
    "MemorySearchResult": "facade_pool",
    "SharedMemory": "facade_pool",
    "SharedMemoryPool": "facade_pool",
    "FeedbackStats": "facade_store",
    "ListResult": "facade_store",
    "MemoryEntry": "facade_store",
    "MemoryIdentity": "facade_store",
    "MemoryStore": "facade_store",
    "PutIfVersionResult": "facade_store",
    "ScoredEntry": "facade_store",
    "Evidence": "facts",
    "Fact": "facts",
    "SwarmState": "state",
    "apply": "state",
    "fold": "state",
    "Agent": "swarm",
    "Swarm": "swarm",
}

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


def __getattr__(name: str) -> Any:
    """The public names, imported from their modules on first use (PEP 562)."""
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'synthesizer' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value
