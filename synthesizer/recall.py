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
from .factindex import LIVE_STATUS_MAX, TIER_CODES, FactIndex
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
    index.prepare(state)
    eid = embedder_id or index.embedder.id
    idx = index.space.get(eid, int(query.shape[0]))
    if idx is None or not len(idx):
        return []
    cos = idx.cosines(query)
    score = cos * idx.weights()
    ok = (cos > 0.0) & (idx.column("status") <= LIVE_STATUS_MAX)
    for name, value in (("category", category), ("thread", None if thread_first else thread)):
        if value is not None:
            code = index.code(value)
            if code is None:
                return []
            ok &= idx.column(name) == code
    if tier is not None:
        if tier not in TIER_CODES:
            return []
        ok &= idx.column("tier") == TIER_CODES[tier]
    if now is not None:
        ok &= idx.column("expires") > now
    if min_similarity is not None:
        ok &= cos >= min_similarity
    if min_score is not None:
        ok &= score >= min_score
    if only is not None:
        allowed = [fid for fid in only if fid in idx]
        if not allowed:
            return []
        ok &= idx.mask_for(allowed)
    facts = state.facts

    def ranked(mask: np.ndarray, want: int) -> list[Hit]:
        rows = np.flatnonzero(mask)
        if not rows.shape[0]:
            return []
        out = []
        for r in idx.top(score[rows], want, rows):
            f = facts[idx.id_at(r)]
            out.append(Hit(f, float(cos[r]), float(score[r]), f.strength))
        return out

    if thread is not None and thread_first:
        code = index.code(thread)
        own_mask = ok & (idx.column("thread") == code) if code is not None else ok & False
        own = ranked(own_mask, limit)
        if len(own) >= limit:
            return own
        return own + ranked(ok & ~own_mask, limit - len(own))
    return ranked(ok, limit)
