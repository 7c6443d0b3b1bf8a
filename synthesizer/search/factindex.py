"""The vector index of live facts, kept in step with a SwarmState.

The fold never embeds (docs/design.md §4): vectors are derived outside it — from a fact's own
vector when an agent supplied one, else from its content with the local embedder — and
cached here per fact. ``sync`` adds new facts and drops evicted ones.

Beside each vector row live the fact's ranking fields (``RANK_COLUMNS``: strength,
importance factor, reinforcements, status, tier, thread, category, TTL) and its weight
(strength × importance factor, 0 when retracted or superseded), so a recall is a matrix
product, numpy masks and a top-k. They are derived data, kept current from the folded
events: ``observe`` is handed each batch the fold applied, and ``prepare`` brings the
columns to the state's seq — a tick is one vector operation, a reinforcement, feedback
or board write rewrites the rows it names. A state folded without ``observe`` (or a
``swarm.configured``, a ``session.ended``, an erasure) is rebuilt from the facts once.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from typing import Any

import numpy as np

from synthesizer import events as T
from synthesizer.search.embed import Embedder, HashingEmbedder
from synthesizer.search.lexical import LexicalIndex
from synthesizer.search.vindex import VectorIndex, VectorSpace
from synthesizer.state import SwarmState
from synthesizer.state.facts import (
    ACTIVE,
    CONTESTED,
    LONG_TERM,
    RETRACTED,
    SHORT_TERM,
    SUPERSEDED,
    WORKING,
    Fact,
)
from synthesizer.state.pool import decay_factor

INACTIVE = frozenset((RETRACTED, SUPERSEDED))
TIER_CODES = {WORKING: 0, SHORT_TERM: 1, LONG_TERM: 2}
STATUS_CODES = {ACTIVE: 0, CONTESTED: 1, SUPERSEDED: 2, RETRACTED: 3}
LIVE_STATUS_MAX = STATUS_CODES[CONTESTED]  # status codes above this rank nowhere
NO_CODE = -1  # thread / category None

RANK_COLUMNS: tuple[tuple[str, type, object], ...] = (
    ("strength", np.float64, 0.0),
    ("impf", np.float64, 0.0),  # 1 - w + w * importance (w: importance_weight)
    ("reinf", np.int64, 0),
    ("status", np.int8, STATUS_CODES[RETRACTED]),  # a row ranks nowhere until written
    ("tier", np.int8, 0),
    ("thread", np.int32, NO_CODE),
    ("category", np.int32, NO_CODE),
    ("expires", np.float64, math.inf),  # TTL: +inf when none
)


# events whose named facts (key, target, hits, rivals, winner, losers, related) change
_KEYED = frozenset(
    (
        T.FACT_CREATED,
        T.FACT_CORROBORATED,
        T.FACT_CONTESTED,
        T.FACT_RESOLVED,
        T.FACT_UPDATED,
        T.FACT_RETRACTED,
        T.MEMORY_REINFORCED,
        T.MEMORY_RECALLED,
        T.MEMORY_FEEDBACK,
        T.JUDGE_ANSWERED,
    )
)
# events that may change many facts' ranking fields: rebuild the columns once
_WHOLESALE = frozenset((T.SESSION_ENDED, T.IDENTITY_FORGOTTEN, T.SWARM_CONFIGURED))


class _Namespaces:
    """Fact id -> (embedder id, dim) of the namespace that holds its vector.

    The local embedder's namespace answers for its own facts from its rows (attaching a
    checkpoint's 100,000 rows then adds no entry per fact); a dict holds the others.
    """

    def __init__(self, space: Callable[[], VectorSpace], local: tuple[str, int]) -> None:
        self._space, self._local = space, local
        self._other: dict[str, tuple[str, int]] = {}

    def _local_rows(self) -> VectorIndex | None:
        return self._space().get(*self._local)

    def get(self, fid: str) -> tuple[str, int] | None:
        idx = self._local_rows()
        if idx is not None and fid in idx:
            return self._local
        return self._other.get(fid)

    def __contains__(self, fid: object) -> bool:
        idx = self._local_rows()
        return (idx is not None and fid in idx) or fid in self._other

    def __len__(self) -> int:
        idx = self._local_rows()
        return (0 if idx is None else len(idx)) + len(self._other)

    def __iter__(self) -> Iterator[str]:
        idx = self._local_rows()
        return chain(() if idx is None else idx.ids(), list(self._other))

    def note(self, fid: str, where: tuple[str, int]) -> None:
        """Record that ``where``'s index now holds ``fid`` (the local one needs no note)."""
        if where != self._local:
            self._other[fid] = where

    def pop(self, fid: str) -> tuple[str, int] | None:
        """Forget ``fid`` (its caller removes it from the index named)."""
        where = self.get(fid)
        self._other.pop(fid, None)
        return where


class FactIndex:
    """Vectors of a state's live facts in per-(embedder, dim) namespaces, with their
    ranking columns (see module docstring)."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder: Embedder = embedder if embedder is not None else HashingEmbedder()
        self._space = VectorSpace()
        self._where = _Namespaces(lambda: self.space, (self.embedder.id, self.embedder.dim))
        self._pending: tuple[threading.Thread, list[bool]] | None = None
        self._pending_lock = threading.Lock()
        self._mark: tuple[int, int, int] = (-1, -1, -1)
        self._codes: dict[str, int] = {}
        self._seq = -1  # state seq the columns reflect (-1: rebuild on next prepare)
        self._observed = -1  # last seq handed to observe since then
        self._dirty: set[str] = set()  # facts whose rows must be rewritten
        self._ticks = 0  # pool.ticks observed since the last prepare
        self._rebuild = True
        self.rebuilds = 0  # full rebuilds done (a figure for tests and benchmarks)
        self.lexical: LexicalIndex | None = None  # built on the first text recall
        # a checkpoint's lexical index, read on first use, and the facts changed since
        # (None: every fact, after a rebuild)
        self._lex_file: Callable[[], LexicalIndex | None] | None = None
        self._lex_since: set[str] | None = set()

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, fid: object) -> bool:
        return fid in self._where

    @property
    def space(self) -> VectorSpace:
        """The namespaces; the first use after ``verify_later`` waits for its check."""
        if self._pending is not None:
            self._settle()
        return self._space

    def verify_later(self, check: Callable[[], bool]) -> None:
        """Run ``check`` (of the side files just attached) in a background thread; the
        first use of the vectors after it waits for it, and on False the attached rows
        are dropped and rebuilt from the state (embedded), never used.

        Why in the background: hashing a 100,000-fact vector file takes ~0.2 s, about
        what the rest of an open costs; run beside it, it also faults the pages in for
        the first recall (which used to take a separate warm-up pass)."""
        box = [False]

        def run() -> None:
            box[0] = check()

        t = threading.Thread(target=run, name="swarmlog-side-check", daemon=True)
        self._pending = (t, box)
        t.start()

    def _settle(self) -> None:
        with self._pending_lock:  # (cleared only once settled: other threads wait here)
            pending = self._pending
            if pending is None:
                return
            t, box = pending
            t.join()
            if not box[0]:
                self._lex_file = None  # (a side file of the same checkpoint: not trusted)
                self._space.drop(self.embedder.id, self.embedder.dim)
                self._mark = (-1, -1, -1)
                self._seq = -1
                self._rebuild = True
                self._dirty.clear()
            self._pending = None

    @property
    def default(self) -> VectorIndex:
        """The namespace of the local embedder."""
        return self._space_index(self.embedder.id, self.embedder.dim)

    def _space_index(self, eid: str, dim: int) -> VectorIndex:
        idx = self.space.index(eid, dim)
        for name, dtype, fill in RANK_COLUMNS:
            idx.add_column(name, dtype, fill)
        return idx

    def namespace_of(self, fid: str) -> tuple[str, int] | None:
        """(embedder id, dim) holding a fact's vector."""
        return self._where.get(fid)

    def codes(self) -> dict[str, int]:
        """Thread and category names -> their column codes (a copy)."""
        return dict(self._codes)

    def attach_default(
        self,
        ids: list[str],
        mat: np.ndarray,
        cols: dict[str, np.ndarray],
        codes: list[str],
        mark: tuple[int, int, int],
    ) -> None:
        """Take over the local embedder's saved rows and columns as of a checkpoint.

        ``mark`` is (facts, evictions, seq) of the checkpoint's state; events after it
        are to be handed to ``observe`` (new facts are then embedded, nothing else).
        """
        cols = dict(cols)
        weights = cols.pop("weight")
        idx = self.default
        idx.attach(ids, mat, weights, cols)  # (its rows are where _where finds them)
        self._codes = {name: i for i, name in enumerate(codes)}
        self.lexical = None  # read or rebuilt when a text recall needs it (lexical_from)
        self._lex_file = None
        self._mark = mark
        self._seq = self._observed = mark[2]
        self._dirty.clear()
        self._ticks = 0
        self._rebuild = False

    def code(self, name: str) -> int | None:
        """The column code of a thread or category name (None: no fact ever had it)."""
        return self._codes.get(name)

    def _code(self, name: str | None) -> int:
        if name is None:
            return NO_CODE
        c = self._codes.get(name)
        if c is None:
            c = self._codes[name] = len(self._codes)
        return c

    # ------------------------------------------------------------------ vectors

    def add(self, fid: str, vec: np.ndarray, embedder_id: str | None = None) -> None:
        """Add one fact's vector (idempotent)."""
        if fid in self._where:
            return
        eid = embedder_id or self.embedder.id
        arr = np.asarray(vec, dtype=np.float32)
        if arr.ndim != 1 or arr.shape[0] < 1:
            raise ValueError(f"vector must be 1-D and non-empty, got shape {arr.shape}")
        self._space_index(eid, int(arr.shape[0])).add(fid, arr)
        self._where.note(fid, (eid, int(arr.shape[0])))
        self._dirty.add(fid)

    def remove(self, fid: str) -> None:
        """Drop a fact's vector (and its words) if present."""
        if self.lexical is not None:
            self.lexical.remove(fid)
        elif self._lex_file is not None and self._lex_since is not None:
            self._lex_since.add(fid)
        where = self._where.pop(fid)
        if where is not None:
            idx = self.space.get(*where)
            if idx is not None:
                idx.remove(fid)
        self._dirty.discard(fid)

    def sync(self, state: SwarmState) -> None:
        """Make the index hold exactly the state's live facts (cheap when nothing changed)."""
        if self._pending is not None:
            self._settle()
        facts = state.facts
        mark = (len(facts), state.metrics.evictions_total, state.last_seq)
        if mark == self._mark:
            return
        if len(self._where) > len(facts) or mark[1] != self._mark[1]:
            for fid in [f for f in self._where if f not in facts]:
                self.remove(fid)
        if len(self._where) < len(facts):
            where = self._where
            missing = [facts[f] for f in self._dirty if f in facts and f not in where]
            if len(where) + len(missing) < len(facts):  # not all named by events seen
                missing = [f for fid, f in facts.items() if fid not in where]
            self.add_facts(missing)
        self._mark = mark

    def add_local(self, fids: list[str], vecs: np.ndarray) -> None:
        """Add vectors made by the local embedder for facts not indexed yet (one bulk copy)."""
        fresh = [i for i, fid in enumerate(fids) if fid not in self._where]
        if not fresh:
            return
        ids = [fids[i] for i in fresh]
        self.default.add_many(ids, vecs[fresh])  # (the local namespace: no _where note)
        self._dirty.update(ids)

    def add_facts(self, facts: list[Fact]) -> None:
        """Embed (in one batch) and add facts that are not indexed yet."""
        plain = [f for f in facts if f.embedding is None]
        if plain:
            self.add_local([f.id for f in plain], self.embedder.embed([f.content for f in plain]))
        for f in facts:
            if f.embedding is not None and f.embedder is not None:
                self.add(f.id, np.asarray(f.embedding, dtype=np.float32), f.embedder)

    # ------------------------------------------------------------------ ranking columns

    def observe(self, dicts: list[dict[str, Any]]) -> None:
        """Note what a batch of stored events, just folded into the state, changed.

        Call it with exactly the dicts the fold applied, in order, after folding them.
        """
        if not dicts:
            return
        first = dicts[0]["seq"]
        if self._observed >= 0 and first != self._observed + 1:
            if first <= self._observed:  # an overlap: keep what is new
                dicts = [d for d in dicts if d["seq"] > self._observed]
                if not dicts:
                    return
            else:
                self._rebuild = True  # a gap: something was folded unseen
        dirty = self._dirty
        for d in dicts:
            t = d["type"]
            if t == T.POOL_TICK:
                self._ticks += 1
            elif t in _KEYED:
                _note_named(d, dirty)
            elif t in _WHOLESALE:
                self._rebuild = True
        self._observed = dicts[-1]["seq"]

    def prepare(self, state: SwarmState) -> None:
        """Bring vectors and ranking columns to ``state`` (O(changed rows) when observed)."""
        if self._pending is not None:
            self._settle()
        if self._seq == state.last_seq and self._mark[2] == state.last_seq and not self._dirty:
            return
        if self._seq < 0 or self._observed != state.last_seq:
            self._rebuild = True  # folded without observe: rebuild from the facts
        self.sync(state)
        if self._rebuild:
            self._rebuild_columns(state)
        else:
            if self._ticks:
                self._apply_ticks(state, self._ticks)
            self._write_rows(state, self._dirty)
            if self._ticks:
                self._reweigh()
        if self.lexical is not None:  # new, changed or dropped contents (all on a rebuild)
            self.lexical.sync(state.facts, None if self._rebuild else self._dirty)
        elif self._lex_file is not None:  # noted for when the checkpoint's index is read
            if self._rebuild:
                self._lex_since = None
            elif self._lex_since is not None:
                self._lex_since.update(self._dirty)
                if len(self._lex_since) > len(state.facts) + 1024:  # (a long-lived worker)
                    self._lex_since = None  # a full comparison then costs no more
        self._dirty.clear()
        self._ticks = 0
        self._rebuild = False
        self._seq = self._observed = state.last_seq

    def lexical_from(self, read: Callable[[], LexicalIndex | None]) -> None:
        """Take a checkpoint's lexical index (call right after ``attach_default``):
        ``read`` is called on the first text recall; None from it (unreadable) means
        build from the facts instead."""
        self._lex_file, self._lex_since = read, set()

    def lexical_for(self, state: SwarmState) -> LexicalIndex:
        """The lexical index of ``state``'s facts (call after ``prepare``): read from the
        checkpoint (then brought up to date by the facts changed since) or built from
        their contents on first use, then kept current by ``prepare``."""
        if self.lexical is None:
            lex = self._lex_file() if self._lex_file is not None else None
            if lex is None:
                lex = LexicalIndex()
                lex.sync(state.facts)
            else:
                lex.sync(state.facts, self._lex_since)
            self.lexical, self._lex_file, self._lex_since = lex, None, set()
        return self.lexical

    def refresh_weights(self, state: SwarmState) -> None:
        """Alias of ``prepare`` (the name benchmarks and older callers use)."""
        self.prepare(state)

    def columns(self, embedder_id: str, dim: int) -> tuple[list[str], dict[str, np.ndarray]]:
        """(ids, column name -> copy) of one namespace, in row order (tests, inspection)."""
        idx = self.space.get(embedder_id, dim)
        if idx is None:
            return [], {}
        cols = {name: idx.column(name).copy() for name, _, _ in RANK_COLUMNS}
        cols["weight"] = idx.weights().copy()
        return idx.ids(), cols

    def fact_row(self, f: Fact, importance_weight: float) -> dict[str, float | int]:
        """The column values of one fact (what ``prepare`` writes for it)."""
        inactive = f.status in INACTIVE
        impf = 1.0 - importance_weight + importance_weight * f.importance
        return {
            "strength": f.strength,
            "impf": impf,
            "reinf": f.reinforcements,
            "status": STATUS_CODES.get(f.status, STATUS_CODES[RETRACTED]),
            "tier": TIER_CODES.get(f.tier, 0),
            "thread": self._code(f.thread),
            "category": self._code(f.category),
            "expires": math.inf if f.expires_at is None else f.expires_at,
            "weight": 0.0 if inactive else f.strength * impf,
        }

    def _write_rows(self, state: SwarmState, fids: Iterable[str]) -> None:
        """Rewrite the rows of the given facts (those live and indexed) from the facts:
        one assignment per column and namespace (a fresh process's first recall writes
        every row the events since the checkpoint touched: hundreds)."""
        facts = state.facts
        w_imp = state.config.importance_weight
        todo: dict[tuple[str, int], tuple[VectorIndex, list[int], list[dict[str, Any]]]] = {}
        for fid in fids:
            f = facts.get(fid)
            where = self._where.get(fid)
            if f is None or where is None:
                continue
            idx = self.space.get(*where)
            row = None if idx is None else idx.row(fid)
            if idx is None or row is None:
                continue
            _, rows, vals = todo.setdefault(where, (idx, [], []))
            rows.append(row)
            vals.append(self.fact_row(f, w_imp))
        for idx, rows, vals in todo.values():
            at = np.array(rows, dtype=np.int64)
            idx.weights()[at] = [v["weight"] for v in vals]
            for name, _, _ in RANK_COLUMNS:
                idx.column(name)[at] = [v[name] for v in vals]

    def _rebuild_columns(self, state: SwarmState) -> None:
        """Every row from the facts (only when events went unobserved): one pass per
        column over the facts, then vector arithmetic for the weights."""
        self.rebuilds += 1
        facts = state.facts
        w_imp = state.config.importance_weight
        retracted = STATUS_CODES[RETRACTED]
        for idx in self.space:
            ids = idx.ids()
            if not ids:
                continue
            fs = [facts.get(fid) for fid in ids]
            live = [f for f in fs if f is not None]
            if len(live) != len(fs):  # rows of facts not folded yet: unranked until then
                for name, _, fill in RANK_COLUMNS:
                    idx.column(name)[:] = fill
                idx.weights()[:] = 0.0
                rows = np.array([i for i, f in enumerate(fs) if f is not None], dtype=np.int64)
            else:
                rows = None

            def put(
                name: str,
                values: list[Any],
                _rows: np.ndarray | None = rows,
                _idx: VectorIndex = idx,
            ) -> None:
                col = _idx.column(name)
                if _rows is None:
                    col[:] = values
                else:
                    col[_rows] = values

            put("strength", [f.strength for f in live])
            put("impf", [1.0 - w_imp + w_imp * f.importance for f in live])
            put("reinf", [f.reinforcements for f in live])
            put("status", [STATUS_CODES.get(f.status, retracted) for f in live])
            put("tier", [TIER_CODES.get(f.tier, 0) for f in live])
            code = self._code
            put("thread", [code(f.thread) for f in live])
            put("category", [code(f.category) for f in live])
            put("expires", [math.inf if f.expires_at is None else f.expires_at for f in live])
            w = idx.weights()
            np.multiply(idx.column("strength"), idx.column("impf"), out=w)
            w[idx.column("status") > LIVE_STATUS_MAX] = 0.0

    def _apply_ticks(self, state: SwarmState, n: int) -> None:
        """``n`` decay steps on every row: strength × the factor of its reinforcements."""
        rate = state.config.pool.decay_rate
        for idx in self.space:
            if not len(idx):
                continue
            reinf = idx.column("reinf")
            uniq, inverse = np.unique(reinf, return_inverse=True)
            table = np.array([decay_factor(rate, int(r)) for r in uniq], dtype=np.float64)
            factor = table[inverse]
            strength = idx.column("strength")
            for _ in range(n):  # one multiply per tick, as the fold does (bit for bit)
                np.multiply(strength, factor, out=strength)

    def _reweigh(self) -> None:
        """Every row's weight from its strength, importance factor and status."""
        for idx in self.space:
            w = idx.weights()
            np.multiply(idx.column("strength"), idx.column("impf"), out=w)
            w[idx.column("status") > LIVE_STATUS_MAX] = 0.0


def _note_named(d: dict[str, Any], dirty: set[str]) -> None:
    """Add the fact ids a keyed event names to ``dirty``."""
    key = d.get("key")
    if key is not None:
        dirty.add(key)
    b = d.get("body")
    if not isinstance(b, dict):
        return
    t = d["type"]
    if t == T.MEMORY_RECALLED:
        hits = b.get("hits")
        if isinstance(hits, list):
            dirty.update(h for h in hits if isinstance(h, str))
    elif t in (T.MEMORY_REINFORCED, T.MEMORY_FEEDBACK):
        target = b.get("target")
        if isinstance(target, str):
            dirty.add(target)
    elif t == T.FACT_CONTESTED:
        _add_ids(b.get("rivals"), dirty)
    elif t == T.FACT_RESOLVED:
        _add_ids([b.get("winner")], dirty)
        _add_ids(b.get("losers"), dirty)
    elif t == T.JUDGE_ANSWERED:  # a merge or a contest changes both facts' status
        q = b.get("question")
        if isinstance(q, str):
            a, _, other = q.partition("/")
            _add_ids([a, other], dirty)
    elif t == T.FACT_CREATED:
        related = b.get("related")
        if isinstance(related, list):
            _add_ids([r[0] for r in related if isinstance(r, list) and r], dirty)


def _add_ids(ids: object, dirty: set[str]) -> None:
    if isinstance(ids, list):
        dirty.update(i for i in ids if isinstance(i, str))
