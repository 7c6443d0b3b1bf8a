"""``MemoryStore``: seed 001's identity-namespaced store as a view over the swarm log.

Every write is a ``memstore.*`` event folded by ``synthesizer/state/seeds.py``. An identity
(tenant, principal, conversation) is encoded as a JSON array (absent = null), so no two
different identities collide; an entry's CAS key is a 128-bit hash of (identity, id).
``put_if_version`` expects the entry's key at the version this process folded (the
log's per-key CAS) and carries the expected entry version, which the fold re-checks at
the event's place in the log: of N racers exactly one applies. Times and ``ttl`` are
unix milliseconds; ``tier`` is the caller's own label (not the swarm's fact tiers).
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import math
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from swarmlog import Event, VersionConflict
from synthesizer.compat import events as FE
from synthesizer.compat.args import LIST_OPTIONS, SEARCH_OPTIONS, options
from synthesizer.compat.common import FacadeBase
from synthesizer.replay import fold_into
from synthesizer.search.embed import Embedder
from synthesizer.search.topk import kth_largest
from synthesizer.state.seeds import ENTRY_DEFAULTS, expired

STORE_AGENT = "memstore"
PUT_RETRIES = 1000


@dataclass(frozen=True)
class MemoryIdentity:
    """Who an entry belongs to; any field may be absent (None is not ``"anon"``)."""

    tenant: str | None = None
    principal: str | None = None
    conversation_id: str | None = None


@dataclass(frozen=True)
class MemoryEntry:
    """One stored entry, as in seed 001 (times and ``ttl`` in unix ms; None = now/never)."""

    id: str
    value: Any = None
    version: int = 1
    created_at: int | None = None
    updated_at: int | None = None
    last_accessed_at: int | None = None
    access_count: int = 0
    ttl: int | None = None
    tier: str | None = None
    embedding: tuple[float, ...] | None = None
    embedder_id: str | None = None


@dataclass(frozen=True)
class PutIfVersionResult:
    """Whether the conditional put applied, and the entry's version now (0: none)."""

    applied: bool
    current_version: int


@dataclass(frozen=True)
class ListResult:
    """One page, newest update first; ``cursor`` for the next page (None: done)."""

    entries: list[MemoryEntry]
    cursor: str | None


@dataclass(frozen=True)
class FeedbackStats:
    """Aggregated usefulness of an entry."""

    average: float
    count: int


@dataclass(frozen=True)
class ScoredEntry:
    """A search hit: the entry and its cosine score."""

    entry: MemoryEntry
    score: float


IdentityLike = MemoryIdentity | Mapping[str, Any]


def encode_identity(identity: IdentityLike) -> str:
    """The identity's namespace: a JSON array of its three fields (absent = null)."""
    if isinstance(identity, MemoryIdentity):
        parts: list[Any] = [identity.tenant, identity.principal, identity.conversation_id]
    elif isinstance(identity, Mapping):
        conv = identity.get("conversation_id", identity.get("conversationId"))
        parts = [identity.get("tenant"), identity.get("principal"), conv]
    else:
        raise TypeError(f"identity must be a MemoryIdentity or a dict, not {identity!r}")
    for p in parts:
        if p is not None and not isinstance(p, str):
            raise TypeError(f"identity fields must be strings or None, not {p!r}")
    return orjson.dumps(parts).decode()


def entry_key(ns: str, id: str) -> str:
    """The log's CAS key of one entry (a hash: names cannot carry arbitrary text)."""
    h = hashlib.blake2b(f"{ns}\x00{id}".encode(), digest_size=16).hexdigest()
    return "ms." + h


def _check_entry(entry: MemoryEntry) -> dict[str, Any]:
    """The entry as an event body item (None fields left out), validated."""
    if not isinstance(entry, MemoryEntry):
        raise TypeError(f"expected a MemoryEntry, not {type(entry).__name__}")
    if not isinstance(entry.id, str) or not entry.id:
        raise ValueError("entry id must be a non-empty string")
    if isinstance(entry.version, bool) or not isinstance(entry.version, int):
        raise ValueError(f"entry version must be an integer, got {entry.version!r}")
    for name in ("created_at", "updated_at", "last_accessed_at", "ttl"):
        v = getattr(entry, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise ValueError(f"{name} must be unix milliseconds (an int), got {v!r}")
    d = {k: v for k in _ENTRY_FIELDS if (v := getattr(entry, k)) is not None}
    if "value" in d:  # as the log will give it back (tuples become lists, ...)
        try:
            d["value"] = orjson.loads(orjson.dumps(d["value"]))
        except TypeError as e:
            raise ValueError(f"entry value must be JSON data: {e}") from None
    if entry.embedding is not None:
        vec = [float(x) for x in entry.embedding]
        if not vec or not all(math.isfinite(x) for x in vec):
            raise ValueError("embedding must be a non-empty list of finite numbers")
        d["embedding"] = vec
    return d


_ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(MemoryEntry))


def _entry(d: dict[str, Any]) -> MemoryEntry:
    emb = d.get("embedding")
    return MemoryEntry(
        id=d["id"],
        value=d.get("value"),
        **{k: d.get(k, v) for k, v in ENTRY_DEFAULTS.items() if k != "embedding"},
        embedding=None if emb is None else tuple(emb),
    )


def _now_ms() -> int:
    return int(time.time() * 1000)


def _cursor(snapshot: int, seq: int, id: str) -> str:
    return orjson.dumps([snapshot, seq, id]).hex()


def _parse_cursor(cursor: str | None) -> tuple[int, int, str] | None:
    """A valid cursor's (snapshot seq, last seq, last id); None starts from the top."""
    if not cursor:
        return None
    try:
        s, q, i = orjson.loads(bytes.fromhex(cursor))
    except (ValueError, TypeError, orjson.JSONDecodeError):
        return None
    if type(s) is not int or type(q) is not int or type(i) is not str:
        return None
    return s, q, i


def _ranked(scores: np.ndarray, rank: np.ndarray, first: int) -> Iterator[int]:
    """Row indices by descending score, ties by id rank: the best ``first`` (and any
    ties with the last of them) sorted at once, the rest only if the caller reads on."""
    n = len(scores)
    if n > first:
        cut = kth_largest(scores, first)  # (np.partition crawls over runs of ties)
        top = np.flatnonzero(scores >= cut)
        yield from top[np.lexsort((rank[top], -scores[top]))].tolist()
        rest = np.flatnonzero(scores < cut)
        yield from rest[np.lexsort((rank[rest], -scores[rest]))].tolist()
        return
    yield from np.lexsort((rank, -scores)).tolist()


class MemoryStore(FacadeBase):
    """Seed 001's ``MemoryStore`` (see the module docstring)."""

    def __init__(
        self, target: str | os.PathLike[str] | None = None, *, embedder: Embedder | None = None
    ) -> None:
        super().__init__(target, embedder)
        self._mats: dict[tuple[str, int], tuple[int, list[str], np.ndarray, np.ndarray]] = {}

    # ------------------------------------------------------------ reads

    def _space(self, ns: str) -> dict[str, dict[str, Any]]:
        return self.refresh().ext.store.get(ns, {})

    def _live(self, ns: str, id: str) -> dict[str, Any] | None:
        e = self._space(ns).get(id)
        return None if e is None or expired(e, _now_ms()) else e

    def get(self, identity: IdentityLike, id: str) -> MemoryEntry | None:
        """The entry, or None when missing or expired; a hit counts an access."""
        ns = encode_identity(identity)
        if self._live(ns, id) is None:
            return None
        self._append(Event(agent=STORE_AGENT, type=FE.STORE_ACCESSED, body={"ns": ns, "id": id}))
        e = self._state.ext.store.get(ns, {}).get(id)
        return None if e is None else _entry(e)

    def list(
        self,
        identity: IdentityLike,
        limit: int | Mapping[str, Any] | None = None,
        cursor: str | None = None,
        tiers: Iterable[str] | None = None,
    ) -> ListResult:
        """A page of live entries, newest update first. Pages are disjoint and complete
        while others write: the cursor keeps the order of the first page's moment (an
        entry re-put since sits where it stood; entries made since are not listed). The
        second argument may be the seed's options object (``{"limit", "cursor", "tiers"}``)."""
        if isinstance(limit, Mapping):
            if cursor is not None or tiers is not None:
                raise ValueError("give list options either as an object or as keywords")
            return self.list(identity, **options(limit, LIST_OPTIONS, "list"))
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise ValueError(f"limit must be an integer, got {limit!r}")
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        state = self.refresh()
        parsed = _parse_cursor(cursor)
        if parsed is not None and parsed[0] > state.last_seq:
            parsed = None
        snapshot = parsed[0] if parsed is not None else state.last_seq
        want = None if tiers is None else set(tiers)
        now = _now_ms()
        rows: list[tuple[int, str, dict[str, Any]]] = []
        for eid, e in state.ext.store.get(encode_identity(identity), {}).items():
            if expired(e, now) or (want is not None and e.get("tier") not in want):
                continue
            at = [q for q in e["_seqs"] if q <= snapshot]
            if at:
                rows.append((at[-1], eid, e))
        rows.sort(key=lambda r: (r[0], r[1]), reverse=True)
        if parsed is not None:
            after = (parsed[1], parsed[2])
            rows = [r for r in rows if (r[0], r[1]) < after]
        page = rows if limit is None else rows[:limit]
        more = len(rows) > len(page)
        nxt = _cursor(snapshot, page[-1][0], page[-1][1]) if more and page else None
        return ListResult([_entry(r[2]) for r in page], nxt)

    def get_feedback(self, identity: IdentityLike, id: str) -> FeedbackStats | None:
        """(average, count) of the entry's feedback; None before the first."""
        agg = self.refresh().ext.feedback.get(encode_identity(identity), {}).get(id)
        if agg is None or not agg[1]:
            return None
        return FeedbackStats(agg[0] / agg[1], int(agg[1]))

    def seen(self, identity: IdentityLike, signature: str) -> bool:
        """Whether the identity recorded ``signature``."""
        return signature in self.refresh().ext.sigs.get(encode_identity(identity), ())

    def search(
        self,
        identity: IdentityLike,
        query_vector: Sequence[float] | np.ndarray,
        k: int | Mapping[str, Any] = 10,
        tiers: Iterable[str] | None = None,
        min_score: float | None = None,
        embedder_id: str | None = None,
    ) -> builtins.list[ScoredEntry]:
        """Entries by cosine to ``query_vector``, descending, ties by id. Skipped: no
        embedding, another dimension, another embedder (when given), expired, other tiers.
        The third argument may be the seed's options object (``{"k", "tiers", "minScore",
        "embedderId"}``) instead of ``k``."""
        if isinstance(k, Mapping):
            given = {"tiers": tiers, "min_score": min_score, "embedder_id": embedder_id}
            if any(v is not None for v in given.values()):
                raise ValueError("give search options either as an object or as keywords")
            return self.search(identity, query_vector, **options(k, SEARCH_OPTIONS, "search"))
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        q = np.asarray(query_vector, dtype=np.float64)
        if q.ndim != 1 or not len(q) or not np.isfinite(q).all():
            raise ValueError("query_vector must be a flat list of finite numbers")
        ns = encode_identity(identity)
        state = self.refresh()
        space = state.ext.store.get(ns, {})
        ids, mat, rank = self._matrix(ns, len(q), space, state.ext.gen.get(ns, 0))
        if not ids:
            return []
        qn = float(np.linalg.norm(q))
        scores = mat @ (q / qn) if qn > 0 else np.zeros(len(ids))
        want = None if tiers is None else set(tiers)
        now = _now_ms()
        out: list[ScoredEntry] = []
        for i in _ranked(scores, rank, 4 * k + 16):
            e = space.get(ids[i])
            score = float(scores[i])
            if e is None or expired(e, now) or (want is not None and e.get("tier") not in want):
                continue
            if embedder_id is not None and e.get("embedder_id") != embedder_id:
                continue
            if min_score is not None and score < min_score:
                break
            out.append(ScoredEntry(_entry(e), score))
            if len(out) == k:
                break
        return out

    def _matrix(
        self, ns: str, dim: int, space: dict[str, dict[str, Any]], gen: int
    ) -> tuple[builtins.list[str], np.ndarray, np.ndarray]:
        """Unit vectors of the namespace's entries of dimension ``dim`` and each id's rank
        in id order (cached until the namespace's next write)."""
        hit = self._mats.get((ns, dim))
        if hit is not None and hit[0] == gen:
            return hit[1], hit[2], hit[3]
        ids = [eid for eid, e in space.items() if e.get("embedding") and len(e["embedding"]) == dim]
        mat = np.array([space[i]["embedding"] for i in ids], dtype=np.float64).reshape(-1, dim)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        mat = np.divide(mat, norms, out=np.zeros_like(mat), where=norms > 0)
        rank = np.empty(len(ids), dtype=np.int64)
        rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
        self._mats[(ns, dim)] = (gen, ids, mat, rank)
        return ids, mat, rank

    # ------------------------------------------------------------ writes

    def put(self, identity: IdentityLike, entry: MemoryEntry) -> None:
        """Unconditional write (overwrites an entry with the same id)."""
        ns = encode_identity(identity)
        body = {"ns": ns, "entries": [_check_entry(entry)]}
        key = entry_key(ns, entry.id)
        self._append(Event(agent=STORE_AGENT, type=FE.STORE_PUT, key=key, body=body))

    def put_many(self, identity: IdentityLike, entries: Iterable[MemoryEntry]) -> None:
        """Write entries in one atomic batch (the same id twice: the last wins)."""
        ns = encode_identity(identity)
        evs = [
            Event(
                agent=STORE_AGENT,
                type=FE.STORE_PUT,
                key=entry_key(ns, e.id),
                body={"ns": ns, "entries": [_check_entry(e)]},
            )
            for e in entries
        ]
        if evs:
            self.log.append_many(evs)
            self.refresh()

    def put_if_version(
        self, identity: IdentityLike, entry: MemoryEntry, expected_version: int
    ) -> PutIfVersionResult:
        """Write only if the stored version equals ``expected_version`` (0: nothing
        stored); linearizable across processes. Retries only when the entry's key moved
        without its version becoming something other than expected."""
        if isinstance(expected_version, bool) or not isinstance(expected_version, int):
            raise ValueError(f"expected_version must be an integer, got {expected_version!r}")
        if expected_version < 0:
            raise ValueError(f"expected_version must be >= 0, got {expected_version}")
        ns = encode_identity(identity)
        item = _check_entry(entry)
        key = entry_key(ns, entry.id)
        body = {"ns": ns, "entries": [item], "expected": expected_version}
        for _ in range(PUT_RETRIES):
            cur = self._live(ns, entry.id)
            version = cur["version"] if cur is not None else 0
            if version != expected_version:
                return PutIfVersionResult(False, version)
            at = self.refresh().ext.keyver.get(key, 0)
            ev = Event(agent=STORE_AGENT, type=FE.STORE_PUT, key=key, body=body)
            try:
                stored = self.log.append(ev, expect={key: at})
            except VersionConflict:
                continue
            applied = self._applied(ns, entry.id, stored)
            e = self._space(ns).get(entry.id)
            return PutIfVersionResult(applied, 0 if e is None else int(e["version"]))
        raise RuntimeError(f"put_if_version on {entry.id!r} kept conflicting; retry")

    def _applied(self, ns: str, id: str, stored: Event) -> bool:
        """Whether the fold applied the put ``stored`` (this call's own event, at the seq
        the log gave it), not whether it is still the newest: the state is folded up to exactly
        that event and the entry checked, then on to the end. Why: another writer's put
        built on ours may land before we look; the newest seq then is theirs, and the
        caller told ``applied=False`` would write its increment twice."""
        state, seq = self._state, stored.seq or 0
        if state.last_seq < seq:
            fold_into(state, self.log, seq, observe=self.swarm.observer())
        e = state.ext.store.get(ns, {}).get(id)
        if state.last_seq == seq:
            ok = e is not None and e["_seqs"][-1] == seq
        else:  # folded past it meanwhile (another thread): its seq among the entry's puts
            ok = e is not None and seq in e["_seqs"]
        self.refresh()
        return ok

    def delete(self, identity: IdentityLike, id: str) -> None:
        """Remove one entry (no-op if it does not exist); its signatures stay."""
        ns = encode_identity(identity)
        if id not in self._space(ns):
            return
        body = {"ns": ns, "id": id}
        ev = Event(agent=STORE_AGENT, type=FE.STORE_DELETED, key=entry_key(ns, id), body=body)
        self._append(ev)

    def feedback(self, identity: IdentityLike, id: str, usefulness: float) -> None:
        """Record usefulness (finite; clamped to [-1, 1]); non-finite raises ValueError."""
        if isinstance(usefulness, bool) or not isinstance(usefulness, (int, float)):
            raise ValueError(f"usefulness must be a number, got {usefulness!r}")
        if not math.isfinite(usefulness):
            raise ValueError(f"usefulness must be finite, got {usefulness}")
        body = {"ns": encode_identity(identity), "id": id, "usefulness": float(usefulness)}
        self._append(Event(agent=STORE_AGENT, type=FE.STORE_FEEDBACK, body=body))

    def record_signature(self, identity: IdentityLike, signature: str) -> None:
        """Remember ``signature`` for ``seen`` (outlives the entry, not ``forget``)."""
        body = {"ns": encode_identity(identity), "signature": signature}
        self._append(Event(agent=STORE_AGENT, type=FE.STORE_SIGNATURE, body=body))

    def forget(self, identity: IdentityLike) -> None:
        """Remove every entry, signature and feedback of this identity, nothing else:
        ``memstore.forgotten``, then no byte of it left in the log or the checkpoints
        (synthesizer/forget/erase.py)."""
        from synthesizer.forget.erase import Identity, forget

        try:
            forget(self.swarm, Identity(ns=encode_identity(identity)), STORE_AGENT, force=True)
        except NotImplementedError:
            # a backend that cannot rewrite records yet: the intent is stored and the
            # fold forgets the identity; its bytes stay until ``swarmlog forget`` can run
            pass
        self._state = self.swarm.refresh()
