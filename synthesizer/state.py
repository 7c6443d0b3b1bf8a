"""SwarmState and the pure fold ``apply(state, event)``.

Same events in seq order -> same state, byte for byte (``digest()``), whether folded from
seq 1 or from ``SwarmState.from_bytes`` of a checkpoint. No wall clock, no randomness, no
embedding model: time is the events' ``ts`` and similarity decisions arrive as events.
``apply`` mutates and returns the same object (speed); use ``copy()`` to branch.
"""

from __future__ import annotations

import hashlib
import math
import operator
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from itertools import islice
from typing import Any

import orjson

from swarmlog.envelope import Event

from . import authz, pool, revival, tiers
from . import events as T
from .bulk import paused_gc
from .config import SynthConfig
from .configlog import on_configured
from .erasure import FORGOTTEN, on_forgotten
from .facade_fold import HANDLERS as FACADE_HANDLERS
from .facade_fold import chain, on_identity_forgotten
from .facade_state import Facades
from .facts import (
    ACTIVE,
    CONTESTED,
    FACT_FIELDS,
    LONG_TERM,
    RETRACTED,
    SHORT_TERM,
    SUPERSEDED,
    WORKING,
    Evidence,
    Fact,
    RawMemory,
    facts_from_rows,
)

FORMAT = 3

LATENCY_WINDOW = 4096
"""Visibility latencies kept: the most recent 4,096 to 8,192 samples (bounded state)."""
"""Serialization format of ``to_bytes``; bump on incompatible changes."""

STATUS_SET = frozenset(T.STATUSES)

# eviction reasons
DECAY = "decay"
CAPACITY = "capacity"
EXPIRED = "expired"
TTL = "ttl"


@dataclass(slots=True)
class Metrics:
    """Counters the dashboard reads; all plain JSON values so they round-trip."""

    events_total: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    by_agent: dict[str, int] = field(default_factory=dict)
    raw_total: int = 0
    shared: dict[str, int] = field(default_factory=dict)
    first_ts: float = 0.0
    evictions: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)
    recalls: dict[str, int] = field(default_factory=dict)
    causes: dict[str, list[int]] = field(default_factory=dict)
    cas: dict[str, list[int]] = field(default_factory=dict)
    feedback_total: int = 0
    reinforcements: int = 0
    promotions: int = 0
    retro: int = 0
    revivals: int = 0

    @property
    def evictions_total(self) -> int:
        """Evictions for every reason."""
        return sum(self.evictions.values())

    def to_dict(self) -> dict[str, Any]:
        """Field dict for serialization."""
        return {name: getattr(self, name) for name in _METRIC_FIELDS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Metrics:
        """Inverse of ``to_dict``."""
        return cls(**d)


_METRIC_FIELDS = tuple(f.name for f in fields(Metrics))


def _bump(d: dict[str, int], key: str, n: int = 1) -> None:
    """Increment a counter in a dict."""
    d[key] = d.get(key, 0) + n


@dataclass(frozen=True, slots=True)
class PoolStats:
    """The seed pool's ``stats()`` plus tier and status breakdowns."""

    total: int
    by_category: dict[str, int]
    by_agent: dict[str, int]
    by_tier: dict[str, int]
    by_status: dict[str, int]
    average_strength: float
    total_reinforcements: int
    near_eviction: int
    evictions: int

    def as_dict(self) -> dict[str, Any]:
        """Plain dict (JSON output)."""
        return {name: getattr(self, name) for name in _STATS_FIELDS}


_STATS_FIELDS = tuple(f.name for f in fields(PoolStats))


class _Knobs:
    """The config numbers the hot handlers read, copied into plain slots.

    Attribute access on a (frozen) pydantic model is several times slower than on a
    slot, and the fold reads these per event.
    """

    __slots__ = (
        "access_energy",
        "boost",
        "capacity",
        "long_decay",
        "max_strength",
        "promote_long",
        "promote_short",
        "short_decay",
        "working_decay",
    )

    def __init__(self, cfg: SynthConfig) -> None:
        p = cfg.pool
        t = cfg.tiers
        self.capacity = p.capacity
        self.boost = p.boost
        self.max_strength = p.max_strength
        self.working_decay = t.working_decay
        self.short_decay = t.short_decay
        self.long_decay = t.long_decay
        self.access_energy = t.access_energy
        self.promote_short = t.promote_short
        self.promote_long = t.promote_long


class SwarmState:
    """Everything folded from the log: live facts, pending raw memories, indexes, metrics.

    * ``facts``: live facts by id (evicted ones are removed);
    * ``signatures``: content signature -> fact id, kept after eviction (exact dedup);
    * ``evicted``: evicted facts kept for revival, oldest eviction first (see revival);
    * ``pending``: raw ``memory.shared`` events by seq, until a synth event consumes them;
    * ``subjects``: subject -> ids of live facts claiming it;
    * ``coact`` / ``clusters``: co-activation weights (symmetric) and cluster members;
    * ``recalled``: agent -> seqs of peers' evidence it has seen in recall hits;
    * ``progress``: the synthesizer's progress mark; ``last_seq``: last folded seq;
    * ``config_seq``: seq of the ``swarm.configured`` in force (0: the initial config).
    """

    __slots__ = (
        "_config",
        "_k",
        "clusters",
        "coact",
        "config_seq",
        "evicted",
        "ext",
        "facts",
        "last_seq",
        "last_ts",
        "metrics",
        "pending",
        "progress",
        "recalled",
        "signatures",
        "subjects",
        "synth_version",
    )

    def __init__(self, config: SynthConfig | None = None) -> None:
        self.config = config if config is not None else SynthConfig()
        self.facts: dict[str, Fact] = {}
        self.signatures: dict[str, str] = {}
        self.evicted: dict[str, Fact] = {}
        self.pending: dict[int, RawMemory] = {}
        self.subjects: dict[str, list[str]] = {}
        self.coact: dict[str, dict[str, int]] = {}
        self.clusters: dict[str, list[str]] = {}
        self.recalled: dict[str, set[int]] = {}
        self.last_seq: int = 0
        self.last_ts: float = 0.0
        self.progress: int = 0
        self.config_seq: int = 0
        self.synth_version: int = 0  # seq of the last record keyed "synthesizer" (authz.py)
        self.metrics: Metrics = Metrics()
        self.ext: Facades = Facades()  # the seeds' facades (facade_fold.py)

    @property
    def config(self) -> SynthConfig:
        """The fold's configuration (assigning it refreshes the handlers' copy of it)."""
        return self._config

    @config.setter
    def config(self, config: SynthConfig) -> None:
        self._config = config
        self._k = _Knobs(config)

    def __repr__(self) -> str:
        return (
            f"SwarmState(last_seq={self.last_seq}, facts={len(self.facts)}, "
            f"pending={len(self.pending)}, evicted={len(self.evicted)}, progress={self.progress})"
        )

    # ------------------------------------------------------------ queries

    @property
    def lag(self) -> int:
        """Synthesizer lag: events past its progress mark."""
        return max(0, self.last_seq - self.progress)

    def get(self, fid: str) -> Fact | None:
        """A live fact by id."""
        return self.facts.get(fid)

    def by_agent(self, agent: str) -> list[Fact]:
        """Live facts first discovered by ``agent``, in insertion (creation) order."""
        return sorted(
            (f for f in self.facts.values() if f.agent == agent), key=lambda f: f.created_seq
        )

    def by_category(self, category: str) -> list[Fact]:
        """Live facts of a category, oldest first."""
        return sorted(
            (f for f in self.facts.values() if f.category == category),
            key=lambda f: f.created_seq,
        )

    def stats(self) -> PoolStats:
        """Pool statistics in the seed's shape (average strength 0.0 when empty)."""
        cats: dict[str, int] = {}
        agents: dict[str, int] = {}
        tiers_: dict[str, int] = {}
        statuses: dict[str, int] = {}
        total_s = 0.0
        reinf = 0
        near = 0
        near_level = 2.0 * self.config.pool.eviction_threshold
        for f in self.facts.values():
            _bump(cats, f.category)
            _bump(agents, f.agent if f.agent is not None else "")
            _bump(tiers_, f.tier)
            _bump(statuses, f.status)
            total_s += f.strength
            reinf += f.reinforcements
            if f.strength < near_level:
                near += 1
        n = len(self.facts)
        return PoolStats(
            total=n,
            by_category=cats,
            by_agent=agents,
            by_tier=tiers_,
            by_status=statuses,
            average_strength=total_s / n if n else 0.0,
            total_reinforcements=reinf,
            near_eviction=near,
            evictions=self.metrics.evictions_total,
        )

    # ------------------------------------------------------------ serialization

    def to_dict(self) -> dict[str, Any]:
        """The canonical content of the state as plain JSON values."""
        return {
            "format": FORMAT,
            "config": self.config.model_dump(mode="json"),
            "last_seq": self.last_seq,
            "last_ts": self.last_ts,
            "progress": self.progress,
            "config_seq": self.config_seq,
            "fact_fields": list(FACT_FIELDS),
            "facts": [f.to_row() for f in self.facts.values()],
            "signatures": self.signatures,
            "evicted": [f.to_row() for f in self.evicted.values()],
            "pending": [r.to_dict() for r in self.pending.values()],
            "subjects": self.subjects,
            "coact": self.coact,
            "clusters": self.clusters,
            "recalled": {a: sorted(s) for a, s in self.recalled.items()},
            "metrics": self.metrics.to_dict(),
            **({"facades": self.ext.to_dict()} if self.ext else {}),
            **({"synth_version": self.synth_version} if self.synth_version else {}),
        }

    def to_bytes(self) -> bytes:
        """Canonical JSON (sorted keys; floats in shortest round-trip form)."""
        with paused_gc():
            return orjson.dumps(self.to_dict(), option=orjson.OPT_SORT_KEYS)

    @classmethod
    def from_bytes(cls, b: bytes) -> SwarmState:
        """Rebuild a state from ``to_bytes`` (exactly: the digests agree)."""
        with paused_gc():
            return cls._from_dict(orjson.loads(b))

    @classmethod
    def _from_dict(cls, d: dict[str, Any]) -> SwarmState:
        if d.get("format") != FORMAT:
            raise ValueError(f"unsupported state format {d.get('format')!r} (want {FORMAT})")
        s = cls(SynthConfig.model_validate(d["config"]))
        s.last_seq = d["last_seq"]
        s.last_ts = d["last_ts"]
        s.progress = d["progress"]
        s.config_seq = d.get("config_seq", 0)
        if d.get("fact_fields") != list(FACT_FIELDS):
            raise ValueError("state was written with other fact fields; replay from the log")
        s.facts = facts_from_rows(d["facts"])
        s.signatures = d["signatures"]
        s.evicted = facts_from_rows(d["evicted"])
        s.pending = {rd["seq"]: RawMemory.from_dict(rd) for rd in d["pending"]}
        s.subjects = d["subjects"]
        s.coact = d["coact"]
        s.clusters = d["clusters"]
        s.recalled = {a: set(v) for a, v in d["recalled"].items()}
        s.metrics = Metrics.from_dict(d["metrics"])
        s.ext = Facades.from_dict(d.get("facades"))
        s.synth_version = d.get("synth_version", 0)
        return s

    def digest(self) -> str:
        """blake2b-256 hex of the canonical serialization."""
        return hashlib.blake2b(self.to_bytes(), digest_size=32).hexdigest()

    def copy(self) -> SwarmState:
        """An independent deep copy."""
        return SwarmState.from_bytes(self.to_bytes())

    # ------------------------------------------------------------ internal helpers

    def _evict(self, fid: str, reason: str) -> None:
        """Remove a live fact (its signature stays remembered; the fact is kept for revival)."""
        f = self.facts.pop(fid)
        revival.bury(self, f, reason == FORGOTTEN)
        if f.subject is not None:
            self._unindex_subject(f)
        tiers.forget_fact(f, self.coact, self.clusters)
        _bump(self.metrics.evictions, reason)

    def _index_subject(self, f: Fact) -> None:
        if f.subject is not None:
            ids = self.subjects.setdefault(f.subject, [])
            if f.id not in ids:
                ids.append(f.id)

    def _unindex_subject(self, f: Fact) -> None:
        ids = self.subjects.get(f.subject) if f.subject is not None else None
        if ids is not None and f.id in ids:
            ids.remove(f.id)
            if not ids:
                del self.subjects[f.subject]  # type: ignore[arg-type]

    def _make_room(self) -> None:
        """At capacity, evict the weakest fact (ties: the oldest)."""
        cap = self.config.pool.capacity
        while len(self.facts) >= cap:
            victim = pool.capacity_victim(self.facts.values())
            if victim is None:
                return
            self._evict(victim, CAPACITY)

    def _add_fact(self, f: Fact) -> None:
        self._make_room()
        self.facts[f.id] = f
        self._index_subject(f)


# ---------------------------------------------------------------- handlers
#
# Handlers take the event's envelope dict (``Event.envelope``, or a dict read straight from the
# log): one dict lookup per field instead of a property call. They are the fold's hot path,
# so they cache lookups in locals and build entities positionally; the order in which
# they mutate the state and may raise (a malformed body) is part of the digest contract.

Handler = Callable[[SwarmState, dict[str, Any]], None]

_tuple_new = tuple.__new__
_exp = math.exp
_isfinite = math.isfinite
_HOUR = tiers.HOUR


def _ignore(s: SwarmState, why: str) -> None:
    """Count an event the fold could not act on, by reason."""
    _bump(s.metrics.ignored, why)


def _f(v: Any) -> float | None:
    """Optional number as float (so ints and floats serialize alike)."""
    return None if v is None else float(v)


_SHARED_PLAIN = frozenset(("content", "category", "importance"))


def _on_shared(s: SwarmState, d: dict[str, Any]) -> None:
    """memory.shared: remember the raw memory until a synth event consumes it."""
    b = d["body"]
    m = s.metrics
    m.raw_total += 1
    agent = d["agent"]
    sh = m.shared
    try:
        sh[agent] += 1
    except KeyError:
        sh[agent] = 1
    get = b.get
    imp = get("importance", 0.5)
    imp = imp if type(imp) is float else float(imp)
    category = get("category", "general")
    if len(b) <= 3 and _SHARED_PLAIN.issuperset(b):  # the usual body: no optional fields
        seq = d["seq"]
        s.pending[seq] = _tuple_new(
            RawMemory,
            (
                seq,
                agent,
                d.get("session"),
                d.get("thread"),
                d["ts"],
                b["content"],
                category,
                imp,
                None,
                None,
                None,
                None,
                None,
            ),
        )
        return
    thread = d.get("thread")
    if thread is None:
        thread = get("thread")
    ttl = get("ttl_s")
    emb = get("embedding")
    seq = d["seq"]
    s.pending[seq] = RawMemory(
        seq,
        agent,
        d.get("session"),
        thread,
        d["ts"],
        b["content"],
        category,
        imp,
        get("subject"),
        get("value"),
        None if ttl is None else float(ttl),
        None if emb is None else [float(x) for x in emb],
        get("embedder"),
    )


def _consume(s: SwarmState, ts: float, raw_seq: int) -> RawMemory | None:
    """Take a pending raw memory and record its discovery -> visibility latency."""
    raw = s.pending.pop(raw_seq, None)
    if raw is not None:
        lat = s.metrics.latencies
        lat.append(ts - raw.ts)
        if len(lat) > 2 * LATENCY_WINDOW:  # keep a recent window, amortised O(1)
            del lat[:-LATENCY_WINDOW]
    return raw


def _on_created(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.created: build the fact from its raw memory (making room at capacity), then
    strengthen the related short/long-term facts."""
    fid = d.get("key")
    b = d["body"]
    facts = s.facts
    if fid is None or fid in facts:
        _ignore(s, "fact.created:duplicate")
        return
    ts = d["ts"]
    raw = s.pending.pop(b["evidence"], None)  # _consume, inlined
    if raw is None:
        _ignore(s, "fact.created:no_raw")
        return
    (
        rseq,
        ragent,
        session,
        thread,
        rts,
        content,
        category,
        imp,
        subject,
        value,
        ttl,
        emb,
        embedder,
    ) = raw
    lat = s.metrics.latencies
    lat.append(ts - rts)
    if len(lat) > 2 * LATENCY_WINDOW:
        del lat[:-LATENCY_WINDOW]
    seq = d["seq"]
    sig = b.get("signature")
    if sig is not None:
        s.signatures[sig] = fid
    k = s._k
    max_strength = k.max_strength
    f = Fact(
        fid,
        content,
        category,
        imp,
        seq,  # created_seq
        ts,  # created_ts
        seq,  # version
        subject,
        value,
        ACTIVE,
        [_tuple_new(Evidence, (rseq, ragent, session, rts))],
        [],  # cited
        1.0 if max_strength >= 1.0 else max_strength,  # pool.initial_strength
        0,  # reinforcements
        [],  # reinforced_by
        1.0,  # energy
        WORKING,
        ts,  # energy_ts
        0.0,  # feedback_sum
        0,  # feedback_count
        0,  # access_count
        None,  # last_access
        None if ttl is None else rts + ttl,  # expires_at
        thread,
        session,
        None,  # cluster
        sig,
        emb,
        embedder,
        [],  # history
    )
    if len(facts) >= k.capacity:
        s._make_room()
    facts[fid] = f
    if subject is not None:
        s._index_subject(f)
    related = b.get("related")
    if related:
        tcfg = s.config.tiers
        m = s.metrics
        for rel in related:
            other = facts.get(rel[0])
            if other is not None and other is not f:
                before = other.tier
                if tiers.retro_strengthen(other, float(rel[1]), ts, tcfg):
                    m.retro += 1
                    if other.tier != before:
                        m.promotions += 1


def _on_corroborated(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.corroborated / fact.revived: add evidence; an evicted fact comes back only on a
    fact.revived (see revival), a corroboration of it is counted and ignored."""
    b = d["body"]
    _bump(s.metrics.duplicates, b.get("kind", "exact"))
    raw = _consume(s, d["ts"], b["evidence"])
    key = d.get("key")
    f = s.facts.get(key) if key is not None else None
    if f is None:
        t = d["type"]
        if key is None or t != T.FACT_REVIVED or not revival.revive(s, key, raw, d["seq"], d["ts"]):
            _ignore(s, f"{t}:evicted")
        return
    if raw is not None and not f.has_evidence(raw.seq):
        f.evidence.append(raw.evidence())


def _set_status(s: SwarmState, fid: str, status: str, seq: int, reason: str | None) -> None:
    """Set a live fact's status unless it is retracted (retraction sticks)."""
    f = s.facts.get(fid)
    if f is not None and f.status != RETRACTED:
        f.set_status(status, seq, reason)


def _on_contested(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.contested: the keyed fact and its rivals become contested."""
    seq = d["seq"]
    key = d.get("key")
    if key is not None:
        _set_status(s, key, CONTESTED, seq, None)
    for fid in d["body"].get("rivals") or ():
        _set_status(s, fid, CONTESTED, seq, None)


def _on_resolved(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.resolved: winner active, losers superseded (a later resolution may flip)."""
    b = d["body"]
    seq = d["seq"]
    reason = b.get("reason") or None
    _set_status(s, b["winner"], ACTIVE, seq, reason)
    for fid in b.get("losers") or ():
        _set_status(s, fid, SUPERSEDED, seq, reason)


def _cas_success(s: SwarmState, agent: str) -> None:
    """Count a successful board write for ``agent``: [attempts, successes, conflicts]."""
    c = s.metrics.cas.get(agent)
    if c is None:
        c = s.metrics.cas[agent] = [0, 0, 0]
    c[0] += 1
    c[1] += 1


def _cite(s: SwarmState, f: Fact, seqs: Iterable[int]) -> None:
    """Attach cited raw seqs: as Evidence when the raw memory is still pending, else as
    a bare citation (its author is unknown to the fold)."""
    for q in seqs:
        if f.has_evidence(q) or q in f.cited:
            continue
        raw = s.pending.get(q)
        if raw is not None:
            f.evidence.append(raw.evidence())
        else:
            f.cited.append(q)


def _on_updated(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.updated: a board write; creates the fact when the key is not live (needs
    content). An explicit status write may revive a retracted fact."""
    fid = d.get("key")
    if fid is None:
        _ignore(s, "fact.updated:no_key")
        return
    b = d["body"]
    seq = d["seq"]
    f = s.facts.get(fid)
    if f is None:
        content = b.get("content")
        if not content:
            _ignore(s, "fact.updated:unknown")
            return
        imp = b.get("importance")
        ts = d["ts"]
        session = d.get("session")
        f = Fact(
            id=fid,
            content=content,
            category=b.get("category") or "general",
            importance=0.5 if imp is None else float(imp),
            created_seq=seq,
            created_ts=ts,
            version=seq,
            subject=b.get("subject"),
            value=b.get("value"),
            evidence=[Evidence(seq, d["agent"], session, ts)],
            strength=pool.initial_strength(s.config.pool.max_strength),
            energy_ts=ts,
            thread=d.get("thread"),
            session=session,
        )
        status = b.get("status")
        if status is not None and status != ACTIVE and status in STATUS_SET:
            f.set_status(status, seq, b.get("reason"))
        s._add_fact(f)
    else:
        if b.get("content"):
            f.content = b["content"]
        if "value" in b:
            f.value = b["value"]
        if "importance" in b and b["importance"] is not None:
            f.importance = float(b["importance"])
        if b.get("category"):
            f.category = b["category"]
        if "subject" in b and b["subject"] != f.subject:
            s._unindex_subject(f)
            f.subject = b["subject"]
            s._index_subject(f)
        status = b.get("status")
        if status is not None and status in STATUS_SET:
            f.set_status(status, seq, b.get("reason"))
    ev_seqs = b.get("evidence")
    if ev_seqs:
        _cite(s, f, ev_seqs)
    _cas_success(s, d["agent"])


def _on_retracted(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.retracted: status retracted; it sticks against synthesizer events."""
    key = d.get("key")
    f = s.facts.get(key) if key is not None else None
    if f is None:
        _ignore(s, "fact.retracted:unknown")
        return
    f.set_status(RETRACTED, d["seq"], d["body"].get("reason"))
    _cas_success(s, d["agent"])


def _on_conflict(s: SwarmState, d: dict[str, Any]) -> None:
    """board.conflict: a losing CAS attempt."""
    agent = d["agent"]
    c = s.metrics.cas.get(agent)
    if c is None:
        c = s.metrics.cas[agent] = [0, 0, 0]
    c[0] += 1
    c[2] += 1


def _on_reinforced(s: SwarmState, d: dict[str, Any]) -> None:
    """memory.reinforced: once per agent per fact, +boost (capped), count even at cap."""
    f = s.facts.get(d["body"].get("target", ""))
    agent = d["agent"]
    if f is None or agent in f.reinforced_by:
        _ignore(s, "memory.reinforced")
        return
    k = s._k
    f.reinforced_by.append(agent)
    f.reinforcements += 1
    # pool.boosted, inlined: min(max_strength, strength + boost)
    x = f.strength + k.boost
    cap = k.max_strength
    f.strength = x if x < cap else cap
    f.last_access = d["ts"]
    s.metrics.reinforcements += 1


def _on_recalled(s: SwarmState, d: dict[str, Any]) -> None:
    """memory.recalled: each distinct live hit is accessed; hits co-activate; peers'
    evidence seqs are remembered for correlation lift.

    The access (``tiers.access``: decay, add energy, promote) is inlined: same float
    operations in the same order.
    """
    facts = s.facts
    agent = d["agent"]
    ts = d["ts"]
    m = s.metrics
    rc = m.recalls
    try:
        rc[agent] += 1
    except KeyError:
        rc[agent] = 1
    hit_ids = d["body"].get("hits") or ()
    if not hit_ids:
        return
    k = s._k
    hits: list[Fact] = []
    seen: set[str] | None = None  # ids of ``hits``, built once there is a second hit
    peers: set[int] | None = s.recalled.get(agent)
    for fid in hit_ids:
        f = facts.get(fid)
        if f is None:
            continue
        if hits:
            if seen is None:
                seen = {h.id for h in hits}
            if fid in seen:
                continue
            seen.add(fid)
        hits.append(f)
        tier = f.tier
        # tiers.access(f, ts, tcfg), inlined
        dt = ts - f.energy_ts
        if dt > 0.0:
            if tier == WORKING:
                lam = k.working_decay
            elif tier == SHORT_TERM:
                lam = k.short_decay
            else:
                lam = k.long_decay
            f.energy = f.energy * _exp(-lam * (dt / _HOUR))
            f.energy_ts = ts
        f.energy += k.access_energy
        e = f.energy
        moved = tier
        if moved == WORKING and e > k.promote_short:
            moved = SHORT_TERM
        if moved == SHORT_TERM and e > k.promote_long:
            moved = LONG_TERM
        if moved != tier:
            f.tier = moved
            m.promotions += 1
        f.access_count += 1
        f.last_access = ts
        for q, a, _, _ in f.evidence:
            if a != agent:
                if peers is None:
                    peers = s.recalled[agent] = set()
                peers.add(q)
    if len(hits) > 1:
        tiers.coactivate(hits, s.coact, s.clusters, facts, s.config.tiers)


def _on_feedback(s: SwarmState, d: dict[str, Any]) -> None:
    """memory.feedback: clamp to [-1, 1] and aggregate on a live fact."""
    b = d["body"]
    f = s.facts.get(b.get("target", ""))
    u = b.get("usefulness")
    if f is None or u is None or not _isfinite(u):
        _ignore(s, "memory.feedback")
        return
    x = u if type(u) is float else float(u)
    # max(-1.0, min(1.0, x)) for a finite x, without the two calls
    f.feedback_sum += x if -1.0 <= x <= 1.0 else (1.0 if x > 1.0 else -1.0)
    f.feedback_count += 1
    s.metrics.feedback_total += 1


def _on_tick(s: SwarmState, d: dict[str, Any]) -> None:
    """One decay step for every live fact, then deterministic evictions: strength below
    threshold (decay), TTL passed (ttl), working energy below expiry (expired)."""
    p = s.config.pool
    tcfg = s.config.tiers
    rate = p.decay_rate
    threshold = p.eviction_threshold
    expire = tcfg.working_expire
    ts = d["ts"]
    factors: dict[int, float] = {}
    out: list[tuple[str, str]] = []
    advance = tiers.advance
    decay_factor = pool.decay_factor
    for f in s.facts.values():
        r = f.reinforcements
        k = factors.get(r)
        if k is None:
            k = factors[r] = decay_factor(rate, r)
        f.strength *= k
        advance(f, ts, tcfg)
        if f.strength < threshold:
            out.append((f.id, DECAY))
        elif f.expires_at is not None and ts >= f.expires_at:
            out.append((f.id, TTL))
        elif f.tier == WORKING and f.energy < expire:
            out.append((f.id, EXPIRED))
    for fid, reason in out:
        s._evict(fid, reason)


def _on_session_ended(s: SwarmState, d: dict[str, Any]) -> None:
    """session.ended: session-end promotion pass over that session's working facts."""
    session = d["body"].get("session") or d.get("session")
    if session is None:
        _ignore(s, "session.ended:no_session")
        return
    tcfg = s.config.tiers
    ts = d["ts"]
    for f in s.facts.values():
        if f.session == session and f.tier == WORKING and tiers.session_end_promote(f, ts, tcfg):
            s.metrics.promotions += 1


def _on_progress(s: SwarmState, d: dict[str, Any]) -> None:
    """synth.progress: the synthesizer's progress mark (monotonic)."""
    upto = d["body"].get("upto", 0)
    if upto > s.progress:
        s.progress = upto


HANDLERS: dict[str, Handler] = authz.guarded({
    T.MEMORY_SHARED: _on_shared,
    T.FACT_CREATED: _on_created,
    T.FACT_CORROBORATED: _on_corroborated,
    T.FACT_REVIVED: _on_corroborated,
    T.FACT_CONTESTED: _on_contested,
    T.FACT_RESOLVED: _on_resolved,
    T.FACT_UPDATED: _on_updated,
    T.FACT_RETRACTED: _on_retracted,
    T.BOARD_CONFLICT: _on_conflict,
    T.MEMORY_REINFORCED: _on_reinforced,
    T.MEMORY_RECALLED: _on_recalled,
    T.MEMORY_FEEDBACK: _on_feedback,
    T.POOL_TICK: _on_tick,
    T.SESSION_ENDED: _on_session_ended,
    T.SYNTH_PROGRESS: _on_progress,
    T.IDENTITY_FORGOTTEN: chain(on_forgotten, on_identity_forgotten),
    T.SWARM_CONFIGURED: on_configured,
    **FACADE_HANDLERS,
})

_MALFORMED = (KeyError, TypeError, ValueError, IndexError)


def _note_causes(s: SwarmState, agent: str, causes: list[int]) -> None:
    """Correlation lift: per agent ``[events with causes, of which citing peers'
    evidence the agent had recalled]``."""
    c = s.metrics.causes.get(agent)
    if c is None:
        c = s.metrics.causes[agent] = [0, 0]
    c[0] += 1
    seen = s.recalled.get(agent)
    if seen and any(q in seen for q in causes):
        c[1] += 1


def apply(state: SwarmState, event: Event | dict[str, Any]) -> SwarmState:
    """Fold one stored event into ``state`` (in place) and return it.

    ``event`` is an Event or its stored envelope dict (as ``Log.read_batches`` yields).
    Events at or below ``state.last_seq`` are skipped, so re-reading an overlap after a
    checkpoint is harmless. Unknown types only bump counters; a malformed body of a
    known type is counted under ``metrics.ignored`` and otherwise skipped.
    """
    d = event if type(event) is dict else event.envelope  # type: ignore[union-attr]
    seq = d.get("seq")
    if seq is None:
        raise ValueError("only stored events (with a seq) can be folded")
    if seq <= state.last_seq:
        return state
    return fold_dicts(state, [d])


def fold_dicts(state: SwarmState, dicts: Iterable[dict[str, Any]]) -> SwarmState:
    """Fold stored envelope dicts (in seq order) into ``state``: the fold's hot loop.

    Exactly ``apply`` for each dict. A list (a chunk as ``read_batches`` yields it) is
    folded as it is; any other iterable a slice of ``_SLICE`` dicts at a time.
    """
    if type(dicts) is list:
        _fold_list(state, dicts)
        return state
    it = iter(dicts)
    while chunk := list(islice(it, _SLICE)):
        _fold_list(state, chunk)
    return state


_SLICE = 4096
_get_type = operator.itemgetter("type")
_get_agent = operator.itemgetter("agent")
_get_ts = operator.itemgetter("ts")
_FORGOTTEN = T.IDENTITY_FORGOTTEN
_SYNTH_KEY = T.SYNTH_AGENT


def _fold_list(state: SwarmState, chunk: list[dict[str, Any]]) -> None:
    """Fold a list of stored dicts: what is new, in runs between ``identity.forgotten``s.

    The dicts are in seq order (as every log yields them); those at or below
    ``last_seq`` (an overlap re-read after a checkpoint) are dropped first. An
    ``identity.forgotten`` drops an agent's counts, so it is a run of its own, counted
    before its handler runs, as the events before it are counted before it.
    """
    if not chunk:
        return
    first = chunk[0].get("seq")
    if first is None:
        raise ValueError("only stored events (with a seq) can be folded")
    last = state.last_seq
    if first <= last:  # an overlap re-read after a checkpoint
        chunk = [d for d in chunk if d["seq"] > last]
        if not chunk:
            return
    types = list(map(_get_type, chunk))
    start = 0
    while _FORGOTTEN in types:  # (rare: an erasure request)
        try:
            i = types.index(_FORGOTTEN, start)
        except ValueError:
            break
        _fold_run(state, chunk[start:i], types[start:i], count_first=False)
        _fold_run(state, chunk[i : i + 1], types[i : i + 1], count_first=True)
        start = i + 1
    if start:
        chunk, types = chunk[start:], types[start:]
    _fold_run(state, chunk, types, count_first=False)


def _count(state: SwarmState, run: list[dict[str, Any]], types: list[str]) -> None:
    """The per-event counters of ``run``: total, by type and by agent (first-seen order)."""
    m = state.metrics
    if not m.events_total:
        m.first_ts = run[0]["ts"]
    m.events_total += len(run)
    if len(run) == 1:
        bt, ba = m.by_type, m.by_agent
        t, a = types[0], run[0]["agent"]
        bt[t] = bt.get(t, 0) + 1
        ba[a] = ba.get(a, 0) + 1
        return
    for counts, keys in ((m.by_type, types), (m.by_agent, list(map(_get_agent, run)))):
        for k, n in Counter(keys).items():
            counts[k] = counts.get(k, 0) + n


def _fold_run(
    state: SwarmState, run: list[dict[str, Any]], types: list[str], count_first: bool
) -> None:
    """The handler loop over new, increasing dicts (the only per-event Python work).

    The counters, ``last_seq`` and ``last_ts`` are kept for the whole run by C-level
    maps: no handler reads them. They are done after the loop, except for a run whose
    handler changes them (``count_first``). If a handler raises (a bug, not a malformed
    body), the events up to and including the failing one are counted, and the marks
    stop before it.
    """
    if not run:
        return
    facts = state.facts
    handlers = HANDLERS
    malformed = _MALFORMED
    m = state.metrics
    if count_first:
        _count(state, run, types)
    done = 0
    try:
        for d, t in zip(run, types, strict=True):
            if "causes" in d:
                causes = d["causes"]
                if causes:
                    _note_causes(state, d["agent"], causes)
            try:
                handler = handlers[t]
            except KeyError:  # a type the fold does not know: only counted
                pass
            else:
                try:
                    handler(state, d)
                except malformed:
                    _bump(m.ignored, "malformed")
            if "key" in d:
                key = d["key"]
                if key is not None:
                    f = facts.get(key)
                    if f is not None:
                        f.version = d["seq"]
                    elif key == _SYNTH_KEY:
                        state.synth_version = d["seq"]
            done += 1
    finally:
        n = len(run)
        if not count_first:
            if done == n:
                _count(state, run, types)
            else:
                _count(state, run[: done + 1], types[: done + 1])
        folded = run if done == n else run[:done]
        if folded:
            state.last_seq = folded[-1]["seq"]
            ts = max(map(_get_ts, folded))
            if ts > state.last_ts:
                state.last_ts = ts


def fold(events: Iterable[Event], state: SwarmState | None = None) -> SwarmState:
    """Fold ``events`` (in seq order) into ``state`` or a fresh default state."""
    s = state if state is not None else SwarmState()
    return fold_dicts(s, (ev.envelope for ev in events))
