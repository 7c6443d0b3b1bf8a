"""Recall: rank live facts for a query — hybrid relevance × strength × importance weight.

With the query's text (``RecallQuery.text``) the ranking is hybrid: relevance is the
cosine plus ``LEX_WEIGHT`` × the fact's BM25 score over the best BM25 score of the
query (``lexical``), then × strength × importance weight as before; a fact holding a
query identifier whole (``ORA-00942``, ``src/billing/invoice.py``, ``v2.14.3``) ranks
before those that do not (the more of them, the earlier). Why: a dense embedding
ranks look-alike identifiers almost alike, BM25 alone misses paraphrases. ``mode``
picks ``dense`` (the cosine alone, what a vector-only query gets) or ``lexical``.

Facts linked as possible duplicates (an open question to a judge) come back as one hit,
their best-ranked wording, naming the others in ``also`` (``group_hits``);
``grouped=False`` returns them apart. Why: a reader should not see one finding twice in
different words, and nothing is lost: ``also`` keeps the other wordings' ids and agents.
A judge's ``different`` removes the link, and the facts show apart again.

Filters: category, tier, thread (``thread_first`` ranks that thread's facts first, then
the rest, as in seed 004), minimum similarity and minimum relevance, embedder namespace.
Retracted and superseded facts, facts whose TTL passed and facts with neither a positive
similarity nor a word of the query (in a hybrid recall) are never returned. Ties break
by fact id. Works on a FactIndex kept in step with a SwarmState. Above
``quantindex.APPROX_MIN_ROWS`` rows the candidates come from one-bit codes and are
re-ranked exactly (see ``quantindex``); below it every row is scored.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from synthesizer import events as T
from synthesizer.errors import check_choice
from synthesizer.search import quantindex
from synthesizer.search.factindex import LIVE_STATUS_MAX, TIER_CODES, FactIndex
from synthesizer.search.lexical import identifiers
from synthesizer.search.prune import one_blas_thread
from synthesizer.search.threads import run_both
from synthesizer.search.vindex import VectorIndex
from synthesizer.state import SwarmState
from synthesizer.state.facts import Fact
from synthesizer.state.judging import SHOWN

MODES = ("hybrid", "dense", "lexical")
LEX_WEIGHT = 0.5  # the lexical share of relevance, beside a cosine in [0, 1]
LEX_CANDIDATES = 256  # BM25's best facts fused with the dense scores (at least 4 × limit)
_FIRST = 1e6  # per identifier held whole: a rank offset no relevance reaches


@dataclass(frozen=True)
class Hit:
    """One recalled fact with its cosine (similarity), ranking score and strength;
    ``also``: the facts that may say the same in other words, each with its agents."""

    fact: Fact
    similarity: float
    relevance: float
    strength: float
    also: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __repr__(self) -> str:
        text = self.fact.content if len(self.fact.content) <= 60 else self.fact.content[:57] + "..."
        return (
            f"Hit({self.fact.id}, similarity={self.similarity:.3f}, "
            f"relevance={self.relevance:.3f}, strength={self.strength:.3f}, {text!r}"
            + (f", contested_with={self.fact.contested_with}" if self.fact.contested_with else "")
            + (f", also={[a for a, _ in self.also]}" if self.also else "")
            + ")"
        )


@dataclass(frozen=True)
class RecallQuery:
    """What a recall asks for, besides its vector: declared once, passed whole.

    ``only`` restricts the candidates to those fact ids (e.g. one agent's bank memories);
    ``now`` drops facts whose TTL passed; ``embedder_id`` picks the vector namespace (the
    index's embedder when None)."""

    limit: int = 10
    embedder_id: str | None = None
    category: str | None = None
    tier: str | None = None
    thread: str | None = None
    thread_first: bool = False
    min_similarity: float | None = None
    min_score: float | None = None
    now: float | None = None
    only: Collection[str] | None = None
    grouped: bool = True
    text: str | None = None
    mode: str = "hybrid"

    @property
    def selective(self) -> bool:
        """Whether a filter may drop many rows (the approximate path then fetches more)."""
        return any(
            v is not None for v in (self.category, self.tier, self.thread, self.min_similarity)
        )


def recall(
    state: SwarmState,
    index: FactIndex,
    query: np.ndarray,
    q: RecallQuery | None = None,
    **filters: Any,
) -> list[Hit]:
    """The top ``q.limit`` facts for a query vector (see module docstring). ``filters``
    are ``RecallQuery``'s fields, for a caller that has no query object at hand."""
    q = q or RecallQuery(**filters)
    if q.limit < 1:
        raise ValueError(f"limit must be >= 1, got {q.limit}")
    if q.grouped and state.judging.open:
        wider = replace(q, limit=q.limit + extra_wanted(state, q.limit), grouped=False)
        return group_hits(state, recall(state, index, query, wider), q.limit)
    check_choice("tier", q.tier, T.TIERS)
    check_choice("mode", q.mode, MODES)
    index.prepare(state)
    eid = q.embedder_id or index.embedder.id
    idx = index.space.get(eid, int(query.shape[0]))
    if idx is None or not len(idx):
        return []
    if len(idx) >= quantindex.APPROX_MIN_ROWS and q.only is None and not q.thread_first:
        # a large index: score the estimated best rows exactly (quantindex); the exact
        # scan below only when fewer than `limit` of them pass the filters. The words'
        # side (BM25) runs beside the codes' scan, on another core when one is free.
        want = quantindex.candidate_count(len(idx), q.selective)
        rows, lex = run_both(
            lambda: quantindex.candidates(idx, query, want),
            lambda: _lexical(state, index, idx, q),
        )
        if lex is not None:
            rows = _union(rows, lex[0])
        hits = _ranked(state, index, idx, query, q, rows, lex)
        if len(hits) >= q.limit or rows.shape[0] >= len(idx):
            return hits
        return _ranked(state, index, idx, query, q, None, lex)
    return _ranked(state, index, idx, query, q, None, _lexical(state, index, idx, q))


_Lex = tuple[np.ndarray, np.ndarray, np.ndarray]  # rows, normalised BM25, identifiers held


def _union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted distinct rows of both (``np.union1d``'s result; it imported ``numpy.ma``
    on a process's first call, ~0.2 s of the first recall at 1M facts)."""
    u = np.sort(np.concatenate([a, b]))
    return u[np.concatenate(([True], u[1:] != u[:-1]))] if u.shape[0] else u


def _lexical(state: SwarmState, index: FactIndex, idx: VectorIndex, q: RecallQuery) -> _Lex | None:
    """The query's lexical side as index rows: BM25 over its best (in [0, 1]) and the
    count of query identifiers each row holds whole; None for a dense recall."""
    if q.mode == "dense" or not q.text:
        return None
    lexical = index.lexical_for(state)
    want = max(LEX_CANDIDATES, 4 * q.limit)
    found = lexical.scores(q.text, want)
    held: dict[str, int] = {}
    for ident in identifiers(q.text):
        for fid in lexical.holding(ident, want):
            held[fid] = held.get(fid, 0) + 1
    top = max(found.values(), default=0.0)
    row = idx.row
    got = [(r, fid) for fid in found.keys() | held.keys() if (r := row(fid)) is not None]
    rows = np.fromiter((r for r, _ in got), np.int64, len(got))
    vals = np.fromiter((found.get(f, 0.0) for _, f in got), np.float64, len(got))
    ids = np.fromiter((held.get(f, 0) for _, f in got), np.float64, len(got))
    order = np.argsort(rows, kind="stable")
    return rows[order], (vals / top if top > 0.0 else vals)[order], ids[order]


@dataclass
class _Scored:
    """A recall's scores over every live row, or over the rows ``base`` only (ascending):
    cosines, relevance × weight (``score``), the ranking key and the rows that may pass."""

    idx: VectorIndex
    base: np.ndarray | None
    cos: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    ok: np.ndarray

    def col(self, name: str) -> np.ndarray:
        """A ranking column over the scored rows."""
        c = self.idx.column(name)
        return c if self.base is None else c[self.base]


def _scored(
    idx: VectorIndex, query: np.ndarray, q: RecallQuery, base: np.ndarray | None, lex: _Lex | None
) -> _Scored:
    """Cosines, weights and (hybrid or lexical) the fused relevance of the scored rows."""
    if base is None:
        cos, weights = idx.cosines(query), idx.weights()
        status = idx.column("status")
    else:
        with one_blas_thread():  # a small product: a second BLAS thread only waits
            cos = idx.cosines_at(query, base)
        weights, status = idx.weights()[base], idx.column("status")[base]
    if lex is None:
        score = cos * weights
        ok = (cos > 0.0) & (status <= LIVE_STATUS_MAX)
        return _Scored(idx, base, cos, score, score, ok)
    lexn, held = np.zeros(cos.shape[0]), np.zeros(cos.shape[0])
    at_rows = lex[0] if base is None else np.searchsorted(base, lex[0])
    lexn[at_rows], held[at_rows] = lex[1], lex[2]
    if q.mode == "lexical":
        score, found = lexn * weights, lexn > 0.0
    else:
        score, found = (cos + LEX_WEIGHT * lexn) * weights, (cos > 0.0) | (lexn > 0.0)
    ok = (found | (held > 0.0)) & (status <= LIVE_STATUS_MAX)
    return _Scored(idx, base, cos, score, score + held * _FIRST, ok)


def _filtered(index: FactIndex, s: _Scored, q: RecallQuery) -> bool:
    """Narrow ``s.ok`` to the query's filters; False when a filter admits no fact."""
    for name, value in (("category", q.category), ("thread", None if q.thread_first else q.thread)):
        if value is not None:
            code = index.code(value)
            if code is None:
                return False
            s.ok &= s.col(name) == code
    if q.tier is not None:
        if q.tier not in TIER_CODES:
            return False
        s.ok &= s.col("tier") == TIER_CODES[q.tier]
    if q.now is not None:
        s.ok &= s.col("expires") > q.now
    if q.min_similarity is not None:
        s.ok &= s.cos >= q.min_similarity
    if q.min_score is not None:
        s.ok &= s.score >= q.min_score
    if q.only is not None:
        allowed = [fid for fid in q.only if fid in s.idx]
        if not allowed:
            return False
        mask = s.idx.mask_for(allowed)
        s.ok &= mask if s.base is None else mask[s.base]
    return True


def _top_hits(state: SwarmState, s: _Scored, mask: np.ndarray, want: int) -> list[Hit]:
    """The best ``want`` rows of ``mask`` as hits, best first (ties by fact id)."""
    pos = np.flatnonzero(mask)
    if not pos.shape[0]:
        return []
    base, idx, facts = s.base, s.idx, state.facts
    top = idx.top(s.rank[pos], want, pos if base is None else base[pos])
    # positions in cos/score: the row itself, or its place in the ascending `base`
    at = top if base is None else np.searchsorted(base, top).tolist()
    out = []
    for r, p in zip(top, at, strict=True):
        f = facts[idx.id_at(r)]
        out.append(Hit(f, float(s.cos[p]), float(s.score[p]), f.strength))
    return out


def _ranked(
    state: SwarmState,
    index: FactIndex,
    idx: VectorIndex,
    query: np.ndarray,
    q: RecallQuery,
    base: np.ndarray | None,
    lex: _Lex | None = None,
) -> list[Hit]:
    """The ranking of ``recall`` over every live row, or over the rows ``base`` only."""
    s = _scored(idx, query, q, base, lex)
    if not _filtered(index, s, q):
        return []
    if q.thread is not None and q.thread_first:
        code = index.code(q.thread)
        own_mask = s.ok & (s.col("thread") == code) if code is not None else s.ok & False
        own = _top_hits(state, s, own_mask, q.limit)
        if len(own) >= q.limit:
            return own
        return own + _top_hits(state, s, s.ok & ~own_mask, q.limit - len(own))
    return _top_hits(state, s, s.ok, q.limit)


def extra_wanted(state: SwarmState, limit: int) -> int:
    """How many more hits to rank so that ``limit`` remain once groups fold into one:
    at most one per linked fact (bounded)."""
    return min(len(state.judging.links()), 4 * limit + 50)


def group_hits(state: SwarmState, hits: Sequence[Hit], limit: int) -> list[Hit]:
    """``hits`` (best first) with each possible-duplicate group folded into its
    best-ranked member, whose ``also`` names the others; at most ``limit`` hits."""
    judging = state.judging
    if not judging.open:
        return list(hits[:limit])
    facts = state.facts
    out: list[Hit] = []
    seen: set[str] = set()
    for h in hits:
        fid = h.fact.id
        if fid in seen:
            continue
        members = judging.group(fid)
        seen.update(members)
        also = tuple(
            (m, tuple(f.agents))
            for m in members
            if m != fid and (f := facts.get(m)) is not None and f.status in SHOWN
        )
        out.append(replace(h, also=also) if also else h)
        if len(out) >= limit:
            break
    return out
