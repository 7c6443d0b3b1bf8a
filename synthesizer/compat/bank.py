"""``MemoryBank``: seed 004's agent memory functions as a view over the swarm log.

``store_memory`` is a ``bank.memory.stored`` event the fold turns into a fact owned by
the agent (never merged on store); recall ranks those facts with the same index and
``recall`` as ``agent.recall`` (thread first, then by similarity, above the threshold).
Consolidation and pruning are events (``bank.consolidated`` / ``bank.pruned``) whose
age cutoff the fold takes from the event's time, the log's clock, so they replay.
Times are the log's, as timezone-aware datetimes.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np
import orjson

from swarmlog import Event
from swarmlog.names import check_name
from synthesizer.compat import events as FE
from synthesizer.compat.common import FacadeBase
from synthesizer.search.embed import Embedder, check_vector
from synthesizer.search.recall import RecallQuery, recall
from synthesizer.state.facts import Fact
from synthesizer.state.seeds import DAY_S

CALLER_EMBEDDER = "caller"
"""Embedder id of vectors passed to ``store_memory``/``recall_memories`` (the caller's
own model); text is embedded by the swarm's embedder. The two never mix."""


@dataclass(frozen=True)
class RecalledMemory:
    """A recall row: the seed's columns."""

    memory_id: str
    content: str
    memory_type: str
    thread_id: str | None
    similarity: float
    created_at: datetime


@dataclass(frozen=True)
class ThreadMemory:
    """A ``get_thread_memories`` row (no similarity: nothing was searched)."""

    memory_id: str
    content: str
    memory_type: str
    thread_id: str | None
    created_at: datetime


def _when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, timezone.utc)


def _days(v: float, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number of days >= 0, got {v!r}")
    return float(v)


class MemoryBank(FacadeBase):
    """Seed 004's memory bank (see the module docstring)."""

    def __init__(
        self, target: str | os.PathLike[str] | None = None, *, embedder: Embedder | None = None
    ) -> None:
        super().__init__(target, embedder)

    def _memories(self, agent_id: str) -> list[Fact]:
        """The agent's live memories, oldest first."""
        state = self.refresh()
        facts = state.facts
        mine = [facts[fid] for fid, a in state.ext.bank.items() if a == agent_id and fid in facts]
        return sorted(mine, key=lambda f: f.created_seq)

    def store_memory(
        self,
        agent_id: str,
        content: str,
        thread_id: str | None = None,
        memory_type: str = "insight",
        embedding: Sequence[float] | np.ndarray | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Keep a memory of ``agent_id`` (its own, never merged here); returns its id."""
        if memory_type not in FE.MEMORY_TYPES:
            allowed = ", ".join(FE.MEMORY_TYPES)
            raise ValueError(f"memory_type must be one of {allowed}, not {memory_type!r}")
        body: dict[str, Any] = {"content": content, "memory_type": memory_type}
        if embedding is not None:
            vec = np.asarray(embedding, dtype=np.float64)
            if vec.ndim != 1 or not len(vec) or not np.isfinite(vec).all():
                raise ValueError("embedding must be a flat list of finite numbers")
            body["embedding"] = vec.tolist()
            body["embedder"] = CALLER_EMBEDDER
        if metadata:
            try:
                body["metadata"] = orjson.loads(orjson.dumps(dict(metadata)))
            except TypeError as e:
                raise ValueError(f"metadata must be JSON data: {e}") from None
        thread = None if thread_id is None else check_name("thread_id", str(thread_id))
        stored = self._append(Event(agent=agent_id, thread=thread, type=FE.BANK_STORED, body=body))
        return f"f{stored.seq}"

    def recall_memories(
        self,
        agent_id: str,
        query: str | Sequence[float] | np.ndarray,
        thread_id: str | None = None,
        limit: int = 3,
        similarity_threshold: float = 0.6,
    ) -> list[RecalledMemory]:
        """The agent's memories for ``query`` (text, or a vector of the caller's model):
        the thread's first, then by similarity, each at least the threshold."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive integer, got {limit!r}")
        mine = [f.id for f in self._memories(agent_id)]
        if not mine:
            return []
        if isinstance(query, str):
            emb = self.swarm.embedder
            vec, eid = check_vector(emb.embed([query])[0], emb.dim), None
        else:
            vec = np.asarray(query, dtype=np.float32)
            if vec.ndim != 1 or not len(vec) or not np.isfinite(vec).all():
                raise ValueError("query vector must be a flat list of finite numbers")
            eid = CALLER_EMBEDDER
        q = RecallQuery(
            limit=limit,
            embedder_id=eid,
            thread=None if thread_id is None else str(thread_id),
            thread_first=thread_id is not None,
            min_similarity=similarity_threshold,
            now=time.time(),
            only=mine,
        )
        hits = recall(self.refresh(), self.swarm.index, vec, q)
        return [
            RecalledMemory(
                h.fact.id,
                h.fact.content,
                h.fact.category,
                h.fact.thread,
                h.similarity,
                _when(h.fact.created_ts),
            )
            for h in hits
        ]

    def get_thread_memories(self, agent_id: str, thread_id: str) -> list[ThreadMemory]:
        """The agent's memories of one thread, oldest first."""
        return [
            ThreadMemory(f.id, f.content, f.category, f.thread, _when(f.created_ts))
            for f in self._memories(agent_id)
            if f.thread == str(thread_id)
        ]

    def get_agent_memory_stats(self, agent_id: str) -> dict[str, Any]:
        """total_memories, memories_by_type, threads_with_memories, oldest/latest_memory."""
        mine = self._memories(agent_id)
        by_type: dict[str, int] = {}
        for f in mine:
            by_type[f.category] = by_type.get(f.category, 0) + 1
        times = [f.created_ts for f in mine]
        return {
            "total_memories": len(mine),
            "memories_by_type": by_type,
            "threads_with_memories": len({f.thread for f in mine if f.thread is not None}),
            "oldest_memory": _when(min(times)) if times else None,
            "latest_memory": _when(max(times)) if times else None,
        }

    def provenance(self, memory_id: str) -> dict[str, list[Any]]:
        """What a memory absorbed by consolidation: memory ids and raw event seqs."""
        state = self.refresh()
        f = state.facts.get(memory_id)
        return {
            "absorbed": list(state.ext.absorbed.get(memory_id, [])),
            "events": [] if f is None else [e.seq for e in f.evidence],
        }

    def _vectors(self, mine: list[Fact]) -> dict[str, np.ndarray]:
        """Unit vectors of memories (their own, else the swarm's embedder's)."""
        out: dict[str, np.ndarray] = {}
        plain = [f for f in mine if f.embedding is None]
        if plain:
            for f, v in zip(
                plain, self.swarm.embedder.embed([f.content for f in plain]), strict=True
            ):
                out[f.id] = np.asarray(v, dtype=np.float64)
        for f in mine:
            if f.embedding is not None:
                out[f.id] = np.asarray(f.embedding, dtype=np.float64)
        for k, v in out.items():
            n = float(np.linalg.norm(v))
            out[k] = v / n if n > 0 else v
        return out

    def consolidate_memories(
        self, agent_id: str, older_than_days: float = 30, similarity_threshold: float = 0.9
    ) -> int:
        """Merge the agent's memories older than N days whose cosine exceeds the
        threshold into the oldest of each group (provenance of both kept); returns how
        many were merged away."""
        days = _days(older_than_days, "older_than_days")
        cutoff = time.time() - days * DAY_S
        old = [f for f in self._memories(agent_id) if f.created_ts <= cutoff]
        vecs = self._vectors(old)
        gone: set[str] = set()
        merges: list[list[Any]] = []
        for i, keep in enumerate(old):
            if keep.id in gone:
                continue
            absorbed = []
            for other in old[i + 1 :]:
                a, b = vecs[keep.id], vecs[other.id]
                same_space = keep.embedder == other.embedder and a.shape == b.shape
                if other.id not in gone and same_space and float(a @ b) > similarity_threshold:
                    absorbed.append(other.id)
                    gone.add(other.id)
            if absorbed:
                merges.append([keep.id, absorbed])
        body = {"older_than_days": days, "merges": merges}
        state, _ = self._around(Event(agent=agent_id, type=FE.BANK_CONSOLIDATED, body=body))
        before = sum(1 for a in state.ext.bank.values() if a == agent_id)
        return before - sum(1 for a in self.refresh().ext.bank.values() if a == agent_id)

    def prune_old_memories(self, agent_id: str, older_than_days: float = 90) -> int:
        """Remove the agent's memories older than N days (log time); returns how many."""
        body = {"older_than_days": _days(older_than_days, "older_than_days")}
        state, _ = self._around(Event(agent=agent_id, type=FE.BANK_PRUNED, body=body))
        before = len(
            [1 for fid, a in state.ext.bank.items() if a == agent_id and fid in state.facts]
        )
        after = self.refresh()
        return before - len(
            [1 for fid, a in after.ext.bank.items() if a == agent_id and fid in after.facts]
        )
