"""Fold handlers of the facades' events (types in ``synthesizer/seedvocab.py``).

``handlers.py`` registers ``HANDLERS`` beside its own; like those, they use only the
event (its ``seq``, ``ts``, ``agent``, body): no wall clock, no randomness. Pool and
bank memories are the fold's own facts (strength, capacity, decay, eviction are the
pool's); the store's entries live in ``SwarmState.ext`` (``seedstate.Facades``).
Store times are unix milliseconds, as in seed 001: the event's ``ts`` × 1000.
"""

from __future__ import annotations

import math
from collections.abc import Callable, MutableMapping
from typing import Any, Protocol

from synthesizer import seedvocab as FE
from synthesizer.seedvocab import covers
from synthesizer.state.facts import Evidence, Fact, new_fact
from synthesizer.state.pool import initial_strength
from synthesizer.state.seedstate import MAX_PUT_SEQS, Facades

DAY_S = 86400.0


class _State(Protocol):
    """What these handlers need of ``SwarmState`` (not imported: no cycle)."""

    facts: MutableMapping[str, Fact]
    signatures: dict[str, str]
    ext: Facades

    @property
    def config(self) -> Any: ...

    @property
    def metrics(self) -> Any: ...

    def _add_fact(self, f: Fact) -> None: ...

    def _evict(self, fid: str, reason: str) -> None: ...


def _ext(s: _State, facade: str) -> Facades:
    """The facade state, counting one event of ``facade``."""
    x = s.ext
    x.counts[facade] = x.counts.get(facade, 0) + 1
    return x


def now_ms(ts: float) -> int:
    """An event time in unix milliseconds (the store's clock)."""
    return int(ts * 1000.0)


def expired(entry: dict[str, Any], at_ms: int) -> bool:
    """Whether a store entry's TTL (absolute unix ms; 0 or past = expired) has passed."""
    ttl = entry.get("ttl")
    return ttl is not None and ttl <= at_ms


def _new_fact(s: _State, d: dict[str, Any], content: str, category: str, imp: float) -> Fact:
    """A fact ``f<seq>`` evidenced by this very event (ids never repeat in one log)."""
    seq, ts, session = d["seq"], d["ts"], d.get("session")
    return new_fact(
        id="f" + str(seq),
        content=content,
        category=category,
        importance=float(imp),
        seq=seq,
        ts=ts,
        evidence=[Evidence(seq=seq, agent=d["agent"], session=session, ts=ts)],
        strength=initial_strength(s.config.pool.max_strength),
        thread=d.get("thread"),
        session=session,
    )


# ---------------------------------------------------------------- pool (seed 000)


def _on_pool_shared(s: _State, d: dict[str, Any]) -> None:
    """pool.memory.shared: a new fact at once, or evidence for the live ``dup_of``."""
    _ext(s, "pool")
    b = d["body"]
    dup = b.get("dup_of")
    if dup is not None and dup in s.facts:
        f = s.facts[dup]
        f.evidence.append(Evidence(d["seq"], d["agent"], d.get("session"), d["ts"]))
        return
    f = _new_fact(s, d, b["content"], b.get("category", "general"), b.get("importance", 0.5))
    sig = b.get("signature")
    if sig is not None:
        f.signature = sig
        s.signatures[sig] = f.id
    s._add_fact(f)


def _on_pool_reset(s: _State, d: dict[str, Any]) -> None:
    """pool.reset: evict every live fact; the pool's eviction count restarts here."""
    x = _ext(s, "pool")
    for fid in list(s.facts):
        s._evict(fid, "reset")
        x.bank.pop(fid, None)
        x.absorbed.pop(fid, None)
        x.metadata.pop(fid, None)
    x.pool_base = s.metrics.evictions_total


# ---------------------------------------------------------------- store (seed 001)

ENTRY_DEFAULTS: dict[str, Any] = {
    "version": 1,
    "created_at": None,
    "updated_at": None,
    "last_accessed_at": None,
    "access_count": 0,
    "ttl": None,
    "tier": None,
    "embedding": None,
    "embedder_id": None,
}


def _on_store_put(s: _State, d: dict[str, Any]) -> None:
    """memstore.put: write the entries (times default to the event's); with
    ``expected``, only when the live stored version (0: none) still equals it."""
    x = _ext(s, "store")
    b = d["body"]
    seq = d["seq"]
    at = now_ms(d["ts"])
    key = d.get("key")
    if key is not None:
        x.keyver[key] = seq
    ns = b["ns"]
    x.gen[ns] = seq
    space = x.store.setdefault(ns, {})
    entries = b["entries"]
    expected = b.get("expected")
    if expected is not None:
        cur = space.get(entries[0]["id"])
        live = cur is not None and not expired(cur, at)
        if (cur["version"] if live else 0) != expected:  # type: ignore[index]
            return
    for e in entries:
        eid = str(e["id"])
        old = space.get(eid)
        if old is not None and expired(old, at):
            old = None
        entry: dict[str, Any] = {"id": eid, "value": e.get("value")}
        for name, default in ENTRY_DEFAULTS.items():
            v = e.get(name, default)
            entry[name] = default if v is None else v
        if entry["created_at"] is None:
            entry["created_at"] = old["created_at"] if old is not None else at
        if entry["updated_at"] is None:
            entry["updated_at"] = at
        seqs = old["_seqs"] if old is not None else []
        entry["_seqs"] = [*seqs, seq][-MAX_PUT_SEQS:]
        space[eid] = entry


def _on_store_deleted(s: _State, d: dict[str, Any]) -> None:
    """memstore.deleted: drop the entry (signatures and feedback stay)."""
    x = _ext(s, "store")
    b = d["body"]
    key = d.get("key")
    if key is not None:
        x.keyver[key] = d["seq"]
    x.gen[b["ns"]] = d["seq"]
    space = x.store.get(b["ns"])
    if space is not None:
        space.pop(b["id"], None)
        if not space:
            del x.store[b["ns"]]


def _on_store_accessed(s: _State, d: dict[str, Any]) -> None:
    """memstore.accessed: a get hit on a live entry counts an access."""
    x = _ext(s, "store")
    b = d["body"]
    at = now_ms(d["ts"])
    e = x.store.get(b["ns"], {}).get(b["id"])
    if e is not None and not expired(e, at):
        e["access_count"] += 1
        e["last_accessed_at"] = at


def _on_store_feedback(s: _State, d: dict[str, Any]) -> None:
    """memstore.feedback: finite usefulness, clamped to [-1, 1], aggregated."""
    x = _ext(s, "store")
    b = d["body"]
    u = float(b["usefulness"])
    if not math.isfinite(u):
        raise ValueError("non-finite usefulness")
    agg = x.feedback.setdefault(b["ns"], {}).setdefault(b["id"], [0.0, 0])
    agg[0] += max(-1.0, min(1.0, u))
    agg[1] += 1


def _on_store_signature(s: _State, d: dict[str, Any]) -> None:
    """memstore.signature: remember a signature of the identity."""
    b = d["body"]
    _ext(s, "store").sigs.setdefault(b["ns"], set()).add(b["signature"])


def _on_store_forgotten(s: _State, d: dict[str, Any]) -> None:
    """memstore.forgotten: every entry, signature and feedback of that identity and of
    every identity it is a prefix of (``synthesizer/seedvocab.py``)."""
    x = _ext(s, "store")
    req = d["body"]["ns"]
    for table in (x.store, x.sigs, x.feedback, x.gen):
        for ns in [ns for ns in table if covers(req, ns)]:  # by prefix (seed 001)
            del table[ns]


# ---------------------------------------------------------------- bank (seed 004)


def _on_bank_stored(s: _State, d: dict[str, Any]) -> None:
    """bank.memory.stored: the agent's own memory, a fact at once (never merged here)."""
    x = _ext(s, "bank")
    b = d["body"]
    f = _new_fact(s, d, b["content"], b["memory_type"], 0.5)
    emb = b.get("embedding")
    if emb is not None:
        f.embedding = [float(v) for v in emb]
        f.embedder = b.get("embedder")
    s._add_fact(f)
    x.bank[f.id] = d["agent"]
    if b.get("metadata"):
        x.metadata[f.id] = b["metadata"]


def _drop_bank(x: Facades, fid: str) -> None:
    x.bank.pop(fid, None)
    x.absorbed.pop(fid, None)
    x.metadata.pop(fid, None)


def _owned_old(s: _State, x: Facades, fid: str, agent: str, cutoff: float) -> Fact | None:
    """The live bank memory ``fid`` if ``agent`` owns it and it is older than ``cutoff``."""
    f = s.facts.get(fid)
    if f is None or x.bank.get(fid) != agent or f.created_ts > cutoff:
        return None
    return f


def _on_bank_consolidated(s: _State, d: dict[str, Any]) -> None:
    """bank.consolidated: merge each absorbed memory into its kept one (evidence and
    ids carried over), re-checking ownership and age at the event's time."""
    x = _ext(s, "bank")
    b = d["body"]
    agent = d["agent"]
    cutoff = d["ts"] - float(b["older_than_days"]) * DAY_S
    for keep, absorbed in b["merges"]:
        k = _owned_old(s, x, keep, agent, cutoff)
        if k is None:
            continue
        for a in absorbed:
            fa = None if a == keep else _owned_old(s, x, a, agent, cutoff)
            if fa is None:
                continue
            k.evidence.extend(e for e in fa.evidence if not k.has_evidence(e.seq))
            merged = x.absorbed.setdefault(keep, [])
            merged.append(a)
            merged.extend(x.absorbed.get(a, ()))
            s._evict(a, "consolidated")
            _drop_bank(x, a)


def _on_bank_pruned(s: _State, d: dict[str, Any]) -> None:
    """bank.pruned: remove the agent's memories older than the cutoff (event time)."""
    x = _ext(s, "bank")
    agent = d["agent"]
    cutoff = d["ts"] - float(d["body"]["older_than_days"]) * DAY_S
    for fid, owner in list(x.bank.items()):
        if owner != agent:
            continue
        f = s.facts.get(fid)
        if f is None:
            _drop_bank(x, fid)  # evicted by the pool meanwhile
        elif f.created_ts <= cutoff:
            s._evict(fid, "pruned")
            _drop_bank(x, fid)


def chain(
    *handlers: Callable[[Any, dict[str, Any]], None],
) -> Callable[[Any, dict[str, Any]], None]:
    """One handler running ``handlers`` in order (a fold type with a facade follow-up)."""

    def run(s: Any, d: dict[str, Any]) -> None:
        for h in handlers:
            h(s, d)

    return run


def on_identity_forgotten(s: _State, d: dict[str, Any]) -> None:
    """After the fold's erasure of an agent: drop its bank ownership records too (the
    fold has already dropped the facts only it evidenced)."""
    agent = d["body"].get("agent")
    x = s.ext
    if agent is None or not x.bank:
        return
    for fid in [fid for fid, a in x.bank.items() if a == agent]:
        _drop_bank(x, fid)


HANDLERS: dict[str, Callable[[Any, dict[str, Any]], None]] = {
    FE.POOL_SHARED: _on_pool_shared,
    FE.POOL_RESET: _on_pool_reset,
    FE.STORE_PUT: _on_store_put,
    FE.STORE_DELETED: _on_store_deleted,
    FE.STORE_ACCESSED: _on_store_accessed,
    FE.STORE_FEEDBACK: _on_store_feedback,
    FE.STORE_SIGNATURE: _on_store_signature,
    FE.STORE_FORGOTTEN: _on_store_forgotten,
    FE.BANK_STORED: _on_bank_stored,
    FE.BANK_CONSOLIDATED: _on_bank_consolidated,
    FE.BANK_PRUNED: _on_bank_pruned,
}
