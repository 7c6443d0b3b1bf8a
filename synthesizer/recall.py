"""Recall: rank live facts for a query — relevance = cosine × strength × importance weight.

Filters: category, tier, thread (``thread_first`` ranks that thread's facts first, then
the rest, as in seed 004), minimum similarity and minimum relevance, embedder namespace.
Retracted and superseded facts, facts whose TTL passed and facts with no positive
similarity are never returned. Ties break
by fact id. Works on a FactIndex kept in step with a SwarmState.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from . import events as T
from .errors import check_choice
from .factindex import INACTIVE, FactIndex
from .facts import Fact
from .state import SwarmState


@dataclass(frozen=True)
class Hit:
    """One recalled fact with its cosine (similarity), ranking score and strength."""

    fact: Fact
    similarity: float
    relevance: float
    strength: float

    def __repr__(self) -> str:
        text = self.fact.content if len(self.fact.content) <= 60 else self.fact.content[:57] + "..."
        return (
            f"Hit({self.fact.id}, similarity={self.similarity:.3f}, "
            f"relevance={self.relevance:.3f}, strength={self.strength:.3f}, {text!r})"
        )


def recall(
    state: SwarmState,
    index: FactIndex,
    query: np.ndarray,
    *,
    limit: int = 10,
    embedder_id: str | None = None,
    category: str | None = None,
    tier: str | None = None,
    thread: str | None = None,
    thread_first: bool = False,
    min_similarity: float | None = None,
    min_score: float | None = None,
    now: float | None = None,
    only: Collection[str] | None = None,
) -> list[Hit]:
    """The top ``limit`` facts for a query vector (see module docstring); ``only``
    restricts the candidates to those fact ids (e.g. one agent's bank memories)."""
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    check_choice("tier", tier, T.TIERS)
    index.refresh_weights(state)
    eid = embedder_id or index.embedder.id
    idx = index.space.get(eid, int(query.shape[0]))
    if idx is None or not len(idx):
        return []
    facts = state.facts

    def ok(f: Fact, cos: float, score: float) -> bool:
        if f.status in INACTIVE or cos <= 0.0:
            return False
        if category is not None and f.category != category:
            return False
        if tier is not None and f.tier != tier:
            return False
        if thread is not None and not thread_first and f.thread != thread:
            return False
        if now is not None and f.expires_at is not None and f.expires_at <= now:
            return False
        if min_similarity is not None and cos < min_similarity:
            return False
        return not (min_score is not None and score < min_score)

    def ranked(mask: np.ndarray | None, want: int) -> list[Hit]:
        k = min(len(idx), max(4 * want + 16, 32))
        while True:
            hits = idx.search(query, k, weighted=True, mask=mask)
            out = []
            for h in hits:
                f = facts.get(h.id)
                if f is not None and ok(f, h.cosine, h.score):
                    out.append(Hit(f, h.cosine, h.score, f.strength))
            if len(out) >= want or k >= len(idx) or len(hits) < k:
                return out[:want]
            k = min(len(idx), k * 4)

    base: np.ndarray | None = None
    if only is not None:
        allowed = [fid for fid in only if fid in idx]
        if not allowed:
            return []
        base = idx.mask_for(allowed)
    if thread is not None and thread_first:
        pool = facts if only is None else {fid: facts[fid] for fid in only if fid in facts}
        own_ids = [fid for fid, f in pool.items() if f.thread == thread and fid in idx]
        own = ranked(idx.mask_for(own_ids), limit) if own_ids else []
        if len(own) >= limit:
            return own
        seen = {h.fact.id for h in own}
        rest = [h for h in ranked(base, limit + len(own)) if h.fact.id not in seen]
        return own + rest[: limit - len(own)]
    return ranked(base, limit)
