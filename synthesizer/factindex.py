"""The vector index of live facts, kept in step with a SwarmState.

The fold never embeds (DESIGN 4): vectors are derived outside it — from a fact's own
vector when an agent supplied one, else from its content with the local embedder — and
cached here per fact. ``sync`` adds new facts and drops evicted ones; weights
(strength × importance weight, 0 for retracted/superseded facts) are refreshed lazily
when a recall needs them.
"""

from __future__ import annotations

import numpy as np

from .embed import Embedder, HashingEmbedder
from .facts import RETRACTED, SUPERSEDED, Fact
from .state import SwarmState
from .vindex import VectorIndex, VectorSpace

INACTIVE = frozenset((RETRACTED, SUPERSEDED))


class FactIndex:
    """Vectors of a state's live facts in per-(embedder, dim) namespaces."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self.space = VectorSpace()
        self._where: dict[str, tuple[str, int]] = {}
        self._mark: tuple[int, int, int] = (-1, -1, -1)
        self._weights_at = -1

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, fid: object) -> bool:
        return fid in self._where

    @property
    def default(self) -> VectorIndex:
        """The namespace of the local embedder."""
        return self.space.index(self.embedder.id, self.embedder.dim)

    def namespace_of(self, fid: str) -> tuple[str, int] | None:
        """(embedder id, dim) holding a fact's vector."""
        return self._where.get(fid)

    def add(self, fid: str, vec: np.ndarray, embedder_id: str | None = None) -> None:
        """Add one fact's vector (idempotent)."""
        if fid in self._where:
            return
        eid = embedder_id or self.embedder.id
        self.space.add(eid, fid, vec)
        self._where[fid] = (eid, int(vec.shape[0]))

    def remove(self, fid: str) -> None:
        """Drop a fact's vector if present."""
        where = self._where.pop(fid, None)
        if where is not None:
            idx = self.space.get(*where)
            if idx is not None:
                idx.remove(fid)

    def sync(self, state: SwarmState) -> None:
        """Make the index hold exactly the state's live facts (cheap when nothing changed)."""
        facts = state.facts
        mark = (len(facts), state.metrics.evictions_total, state.last_seq)
        if mark == self._mark:
            return
        if len(self._where) > len(facts) or mark[1] != self._mark[1]:
            for fid in [f for f in self._where if f not in facts]:
                self.remove(fid)
        if len(self._where) < len(facts):
            missing = [f for fid, f in facts.items() if fid not in self._where]
            self.add_facts(missing)
        self._mark = mark

    def add_local(self, fids: list[str], vecs: np.ndarray) -> None:
        """Add vectors made by the local embedder for facts not indexed yet (one bulk copy)."""
        fresh = [i for i, fid in enumerate(fids) if fid not in self._where]
        if not fresh:
            return
        ids = [fids[i] for i in fresh]
        self.default.add_many(ids, vecs[fresh])
        where = (self.embedder.id, self.embedder.dim)
        for fid in ids:
            self._where[fid] = where

    def add_facts(self, facts: list[Fact]) -> None:
        """Embed (in one batch) and add facts that are not indexed yet."""
        plain = [f for f in facts if f.embedding is None]
        if plain:
            self.add_local([f.id for f in plain], self.embedder.embed([f.content for f in plain]))
        for f in facts:
            if f.embedding is not None and f.embedder is not None:
                self.add(f.id, np.asarray(f.embedding, dtype=np.float32), f.embedder)

    def refresh_weights(self, state: SwarmState) -> None:
        """Set each row's weight to strength × importance weight (0 when inactive)."""
        if self._weights_at == state.last_seq and self._mark[2] == state.last_seq:
            return
        self.sync(state)
        w_imp = state.config.importance_weight
        facts = state.facts
        for idx in self.space:
            ids = idx.ids()
            w = np.empty(len(ids), dtype=np.float32)
            for i, fid in enumerate(ids):
                f = facts[fid]
                if f.status in INACTIVE:
                    w[i] = 0.0
                else:
                    w[i] = f.strength * (1.0 - w_imp + w_imp * f.importance)
            idx.set_weights(zip(ids, w.tolist(), strict=True))
        self._weights_at = state.last_seq
