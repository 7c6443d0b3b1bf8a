"""``SharedMemoryPool``: seed 000's pool as a view over the swarm log.

A share is a ``pool.memory.shared`` event that the fold turns into a fact at once, so
strength, reinforcement, decay (``pool.tick``), eviction, capacity and stats are the
fold's own (``handlers.py`` / ``pool.py``): no second copy of the pool math. The decay and
capacity numbers are the swarm's configuration (recorded on a new log; an existing log's
must agree; a new log also turns off the tiers' energy expiry, so memories leave by
strength only, as in the seed). Ids are ``f<seq>``: they never repeat within one log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from swarmlog import Event
from synthesizer import events as T
from synthesizer.compat import events as FE
from synthesizer.compat.args import pool_settings, share_input
from synthesizer.compat.common import FacadeBase, open_target
from synthesizer.config import PoolConfig, SynthConfig, TierConfig
from synthesizer.configlog import log_config
from synthesizer.search.embed import Embedder
from synthesizer.state.facts import Fact
from synthesizer.swarm import Swarm
from synthesizer.worker.signature import signature

SYSTEM_AGENT = "system"


@dataclass(frozen=True)
class SharedMemory:
    """One memory as the seed shows it (``created_at``: the log's time, unix seconds)."""

    id: str
    source_agent_id: str
    content: str
    category: str
    importance: float
    embedding: tuple[float, ...] = field(repr=False)
    created_at: float


@dataclass(frozen=True)
class MemorySearchResult:
    """A search hit: cosine ``similarity``, ranking ``relevance``, current ``strength``."""

    memory: SharedMemory
    relevance: float
    similarity: float
    strength: float


@dataclass(frozen=True)
class PoolStats:
    """The seed's ``stats()``; ``evicted_total`` counts since creation or the last reset."""

    total_memories: int
    average_strength: float
    category_counts: dict[str, int]
    agent_counts: dict[str, int]
    evicted_total: int
    total_reinforcements: int
    near_eviction: int


@dataclass(frozen=True)
class VectorMemoryEntry:
    """A hit of the vector-memory adapter (metadata values are strings)."""

    id: str
    content: str
    relevance: float
    strength: float
    metadata: dict[str, str]


class SharedMemoryPool(FacadeBase):
    """Seed 000's ``SharedMemoryPool`` (see the module docstring).

    The pool numbers come from keywords, or from the seed's nested config object
    (``SharedMemoryPool({"decay": {"rate": 0.05}, "capacity": {"maxMemories": 500}})``,
    as first argument or ``config=``; any part may be left out); numbers not given are
    the swarm's recorded configuration (an existing swarm opens as configured, e.g. by
    ``swarmlog init --set pool.capacity=…``), else the seed's defaults.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        *,
        config: Mapping[str, Any] | None = None,
        embedder: Embedder | None = None,
        decay_rate: float | None = None,
        eviction_threshold: float | None = None,
        max_capacity: int | None = None,
        boost: float | None = None,
        max_strength: float | None = None,
        dedup: bool = False,
    ) -> None:
        if isinstance(target, Mapping):
            if config is not None:
                raise ValueError("give the pool config once: as first argument or config=")
            target, config = None, target
        given = {
            "decay_rate": decay_rate,
            "eviction_threshold": eviction_threshold,
            "capacity": max_capacity,
            "boost": boost,
            "max_strength": max_strength,
        }
        given = {k: v for k, v in given.items() if v is not None}
        if config is not None:
            nested = pool_settings(config)
            both = sorted(set(nested) & set(given))
            if both:
                raise ValueError(f"pool setting given twice (config and keyword): {both[0]}")
            given.update(nested)
        log = open_target(target)
        try:
            cur = log_config(log)
            base = cur.config
            if not cur.recorded and log.last_seq == 0:
                # a new log: memories leave by strength only, as in seed 000 (no tier expiry)
                base = SynthConfig(tiers=TierConfig(working_expire=0.0))
            pool = (base.pool if cur.recorded else PoolConfig()).model_copy(update=given)
            pool = PoolConfig.model_validate(pool.model_dump())  # the ranges, checked
            self._open(Swarm(log, base.model_copy(update={"pool": pool}), embedder))
        except BaseException:
            log.close()
            raise
        self.dedup = dedup

    @property
    def config(self) -> SynthConfig:
        """The swarm's configuration (the pool numbers are ``config.pool``)."""
        return self.refresh().config

    def _memory(self, f: Fact) -> SharedMemory:
        vec = self.swarm.embedder.embed([f.content])[0]
        return SharedMemory(
            f.id,
            f.agent or "",
            f.content,
            f.category,
            f.importance,
            tuple(float(x) for x in vec),
            f.created_ts,
        )

    def share(
        self,
        agent_id: str,
        content: str | Mapping[str, Any],
        category: str = "general",
        importance: float = 0.5,
    ) -> SharedMemory:
        """Add a memory (its own, unless ``dedup`` and a live memory has the same
        normalised content); visible to this pool's get/search at once. ``content`` may
        be the seed's input object: ``{"content": …, "category": …, "importance": …}``."""
        if isinstance(content, Mapping):
            content, category, importance = share_input(content, category, importance)
        body: dict[str, Any] = {"content": content, "category": category, "importance": importance}
        if self.dedup:
            sig = signature(content)
            body["signature"] = sig
            live = self.refresh().signatures.get(sig)
            if live is not None and live in self.refresh().facts:
                body["dup_of"] = live
        stored = self._append(Event(agent=agent_id, type=FE.POOL_SHARED, body=body))
        fid = body.get("dup_of") or f"f{stored.seq}"
        f = self.refresh().facts.get(fid)
        if f is None:  # evicted at once by a concurrent capacity squeeze
            raise KeyError(f"memory {fid} was evicted before it could be read")
        return self._memory(f)

    def search(
        self, query: str, limit: int = 10, category: str | None = None, mode: str = "dense"
    ) -> list[MemorySearchResult]:
        """Memories by ``cosine × importance × strength``, best first (ties by id): the
        dense ranking by default, since seed 000 defines relevance so; ``mode="hybrid"``
        ranks as ``Swarm.search`` does (the words too, an identifier held whole first)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive integer, got {limit!r}")
        if not self.refresh().facts:
            return []
        if mode not in ("dense", "hybrid"):
            raise ValueError(f"mode must be dense or hybrid, not {mode!r}")
        hits = self.swarm.search(query, limit=limit, category=category, mode=mode)
        return [
            MemorySearchResult(self._memory(h.fact), h.relevance, h.similarity, h.strength)
            for h in hits
        ]

    def reinforce(self, agent_id: str, memory_id: str) -> bool:
        """Count ``agent_id``'s vote once: False for an unknown memory or a repeat."""
        f = self.refresh().facts.get(memory_id)
        if f is None or agent_id in f.reinforced_by:
            return False
        ev = Event(agent=agent_id, type=T.MEMORY_REINFORCED, body={"target": memory_id})
        state, _ = self._around(ev)
        before = state.metrics.reinforcements
        return self.refresh().metrics.reinforcements > before

    def decay(self) -> int:
        """One ``pool.tick``; returns how many memories it evicted."""
        state, _ = self._around(Event(agent=SYSTEM_AGENT, type=T.POOL_TICK, body={}))
        before = state.metrics.evictions_total
        return self.refresh().metrics.evictions_total - before

    def get(self, id: str) -> SharedMemory | None:
        """A live memory by id."""
        f = self.refresh().facts.get(id)
        return None if f is None else self._memory(f)

    def get_strength(self, id: str) -> float | None:
        """A live memory's current strength."""
        f = self.refresh().facts.get(id)
        return None if f is None else f.strength

    def get_by_agent(self, agent_id: str) -> list[SharedMemory]:
        """The agent's live memories in insertion order."""
        return [self._memory(f) for f in self.refresh().by_agent(agent_id)]

    def get_by_category(self, category: str) -> list[SharedMemory]:
        """Live memories of a category, oldest first."""
        return [self._memory(f) for f in self.refresh().by_category(category)]

    def stats(self) -> PoolStats:
        """The fold's pool statistics in the seed's shape."""
        state = self.refresh()
        st = state.stats()
        return PoolStats(
            total_memories=st.total,
            average_strength=st.average_strength,
            category_counts=st.by_category,
            agent_counts=st.by_agent,
            evicted_total=st.evictions - state.ext.pool_base,
            total_reinforcements=st.total_reinforcements,
            near_eviction=st.near_eviction,
        )

    def reset(self) -> None:
        """Empty the pool (one ``pool.reset``); ids keep counting up."""
        self._append(Event(agent=SYSTEM_AGENT, type=FE.POOL_RESET, body={}))

    @property
    def size(self) -> int:
        """Live memories."""
        return len(self.refresh().facts)

    def to_vector_memory(self) -> VectorMemoryEntries:
        """The live memories as the seed's ``VectorMemoryEntry[]`` (oldest first; each
        with its strength as ``relevance`` and string metadata), a list that is also the
        VectorMemory interface over this pool (``store``/``search``/``reinforce``/``decay``)."""
        entries = VectorMemoryEntries(self)
        for f in sorted(self.refresh().facts.values(), key=lambda f: (f.created_seq, f.id)):
            entries.append(
                VectorMemoryEntry(f.id, f.content, f.strength, f.strength, _metadata(f))
            )
        return entries


def _metadata(f: Fact) -> dict[str, str]:
    return {"agent": f.agent or "", "category": f.category, "importance": str(f.importance)}


class VectorMemory:
    """Adapter: ``store(content, metadata) -> id`` etc., metadata values as strings."""

    def __init__(self, pool: SharedMemoryPool) -> None:
        self.pool = pool

    def store(self, content: str, metadata: dict[str, Any] | None = None) -> str:
        """Share as ``metadata['agent']`` (default ``system``), category ``general``,
        importance 0.5 unless the metadata says otherwise."""
        md = metadata or {}
        m = self.pool.share(
            str(md.get("agent", SYSTEM_AGENT)),
            content,
            category=str(md.get("category", "general")),
            importance=float(md.get("importance", 0.5)),
        )
        return m.id

    def search(self, query: str, limit: int = 10) -> list[VectorMemoryEntry]:
        """Hits with string metadata (agent, category, importance)."""
        return [
            VectorMemoryEntry(
                r.memory.id,
                r.memory.content,
                r.relevance,
                r.strength,
                {
                    "agent": r.memory.source_agent_id,
                    "category": r.memory.category,
                    "importance": str(r.memory.importance),
                },
            )
            for r in self.pool.search(query, limit)
        ]

    def reinforce(self, id: str) -> bool:
        """Reinforce as agent ``system``."""
        return self.pool.reinforce(SYSTEM_AGENT, id)

    def decay(self) -> int:
        """One decay tick; evicted count."""
        return self.pool.decay()


class VectorMemoryEntries(list[VectorMemoryEntry]):
    """``to_vector_memory()``'s entries, with the VectorMemory methods over the pool."""

    def __init__(self, pool: SharedMemoryPool) -> None:
        super().__init__()
        self._vm = VectorMemory(pool)
        self.pool = pool

    def store(self, content: str, metadata: dict[str, Any] | None = None) -> str:
        """As ``VectorMemory.store``."""
        return self._vm.store(content, metadata)

    def search(self, query: str, limit: int = 10) -> list[VectorMemoryEntry]:
        """As ``VectorMemory.search``."""
        return self._vm.search(query, limit)

    def reinforce(self, id: str) -> bool:
        """As ``VectorMemory.reinforce``."""
        return self._vm.reinforce(id)

    def decay(self) -> int:
        """As ``VectorMemory.decay``."""
        return self._vm.decay()
