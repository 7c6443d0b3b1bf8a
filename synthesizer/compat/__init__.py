"""The seeds' APIs as views over the swarm log: pool (seed 000), store (001), bank (004).

``pool``, ``store`` and ``bank`` are the facades; ``common`` and ``args`` what they share;
``events`` and ``models`` their event types and body models (the fold's rules for them
are in ``synthesizer.state.seeds``); ``nsprefix`` the store's forget-by-prefix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from synthesizer.compat.bank import MemoryBank
    from synthesizer.compat.pool import SharedMemoryPool
    from synthesizer.compat.store import MemoryStore

__all__ = ["MemoryBank", "MemoryStore", "SharedMemoryPool"]

__getattr__, __dir__ = lazy_names(
    __name__,
    {"MemoryBank": ".bank", "MemoryStore": ".store", "SharedMemoryPool": ".pool"},
)
