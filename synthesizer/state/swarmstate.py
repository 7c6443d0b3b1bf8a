"""``SwarmState``: everything the fold keeps, its queries and its canonical bytes.

The rules that change it live in ``handlers.py`` (one function per event type) and the
loop that feeds them events in ``loop.py``; ``state.py`` gathers the three.
Same events in seq order -> same state, byte for byte (``digest()``), whether folded from
seq 1 or from ``SwarmState.from_bytes`` of a checkpoint.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableMapping
from dataclasses import dataclass, field, fields
from typing import Any

import orjson

from synthesizer.config import SynthConfig
from synthesizer.state import pool, revival, tiers
from synthesizer.state._fast import Knobs, facts_from_rows, paused_gc
from synthesizer.state.erasure import FORGOTTEN
from synthesizer.state.facts import FACT_FIELDS, Fact, RawMemory
from synthesizer.state.judging import Judging
from synthesizer.state.seedstate import Facades
from synthesizer.state.table import FactTable, fact_array

FORMAT = 4
"""Serialization format of ``to_bytes``; bump on incompatible changes."""

LATENCY_WINDOW = 4096
"""Visibility latencies kept: the most recent 4,096 to 8,192 samples (bounded state)."""

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


def bump(d: dict[str, int], key: str, n: int = 1) -> None:
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


class SwarmState:
    """Everything folded from the log: live facts, pending raw memories, indexes, metrics.

    * ``facts``: live facts by id (evicted ones are removed): a ``dict`` when folded,
      a ``FactTable`` (parsed on first access, same order) when loaded from a checkpoint;
    * ``signatures``: content signature -> fact id, kept after eviction (exact dedup);
    * ``evicted``: evicted facts kept for revival, oldest eviction first (see revival);
    * ``pending``: raw ``memory.shared`` events by seq, until a synth event consumes them;
    * ``subjects``: subject -> ids of live facts claiming it;
    * ``coact`` / ``clusters``: co-activation weights (symmetric) and cluster members;
    * ``recalled``: agent -> seqs of peers' evidence it has seen in recall hits;
    * ``accessed``: agent -> session -> ids of the facts its recalls accessed in that
      session, in order (co-activation per session, seed 003; dropped at session end);
    * ``progress``: the synthesizer's progress mark; ``last_seq``: last folded seq;
    * ``config_seq``: seq of the ``swarm.configured`` in force (0: the initial config);
    * ``words``: later evidence's words, for erasure to reword a fact (words.py);
    * ``owners``: session -> agent of its first event (who may forget it, authz.py);
    * ``judging``: questions to a judge, open (possible duplicates) and answered (judging.py).
    """

    __slots__ = (
        "_config",
        "_k",
        "accessed",
        "clusters",
        "coact",
        "config_seq",
        "evicted",
        "ext",
        "facts",
        "judging",
        "last_seq",
        "last_ts",
        "metrics",
        "origin_index",
        "owners",
        "pending",
        "progress",
        "promotion_waiting",
        "recalled",
        "redactions",
        "signatures",
        "subjects",
        "synth_version",
        "words",
    )

    def __init__(self, config: SynthConfig | None = None) -> None:
        self.config = config if config is not None else SynthConfig()
        self.facts: MutableMapping[str, Fact] = {}
        self.signatures: dict[str, str] = {}
        self.evicted: MutableMapping[str, Fact] = {}
        self.pending: dict[int, RawMemory] = {}
        self.subjects: dict[str, list[str]] = {}
        self.coact: dict[str, dict[str, int]] = {}
        self.clusters: dict[str, list[str]] = {}
        self.recalled: dict[str, set[int]] = {}
        self.accessed: dict[str, dict[str, list[str]]] = {}
        self.last_seq: int = 0
        self.last_ts: float = 0.0
        self.progress: int = 0
        self.config_seq: int = 0
        self.synth_version: int = 0  # seq of the last record keyed "synthesizer" (authz.py)
        # ended sessions whose facts wait for promotion (promotion.when=session_end):
        # session -> seq of its session.ended (see synthesizer.promotion.promote)
        self.promotion_waiting: dict[str, int] = {}
        # origin swarm id -> origin fact id -> the fact holding it (synthesizer.state.origins)
        self.origin_index: dict[str, dict[str, str]] = {}
        self.metrics: Metrics = Metrics()
        self.ext: Facades = Facades()  # the seeds' facades (seeds.py)
        self.words: dict[str, list[list[Any]]] = {}  # later evidence's words (words.py)
        self.owners: dict[str, str] = {}  # session -> agent of its first event (authz.py)
        self.judging: Judging = Judging()  # possible duplicates and a judge's answers
        # the log's redaction count when this state's fold began (runtime only, never
        # serialized; None: not known). replay.save_checkpoint_info compares it.
        self.redactions: int | None = None

    @property
    def config(self) -> SynthConfig:
        """The fold's configuration (assigning it refreshes the handlers' copy of it)."""
        return self._config

    @config.setter
    def config(self, config: SynthConfig) -> None:
        self._config = config
        self._k = Knobs(config)

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
        """Pool statistics in the seed's shape (average strength 0.0 when empty).

        Of a state loaded from a checkpoint, from the columns saved with its rows and the
        facts parsed since (``columns.py``): the same figures, no row parsed.
        """
        facts = self.facts
        if isinstance(facts, FactTable) and (saved := facts.saved_columns()) is not None:
            from synthesizer.state import columns  # numpy: only for a loaded state

            return self.stats_from(columns.frame(facts.entries(), saved))
        cats: dict[str, int] = {}
        agents: dict[str, int] = {}
        tiers_: dict[str, int] = {}
        statuses: dict[str, int] = {}
        total_s = 0.0
        reinf = 0
        near = 0
        near_level = 2.0 * self.config.pool.eviction_threshold
        for f in self.facts.values():
            bump(cats, f.category)
            bump(agents, f.agent if f.agent is not None else "")
            bump(tiers_, f.tier)
            bump(statuses, f.status)
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

    def stats_from(self, fr: Any) -> PoolStats:
        """``stats()`` computed from a ``columns.Frame`` of the facts (one a caller
        already has: ``metrics.compute``)."""
        from synthesizer.state.columns import ordered_counts, sequential_sum

        strength = fr.arrays["strength"]
        n = len(fr)
        return PoolStats(
            total=n,
            by_category=ordered_counts(fr, "category"),
            by_agent=ordered_counts(fr, "agent", none_as=""),
            by_tier=ordered_counts(fr, "tier"),
            by_status=ordered_counts(fr, "status"),
            average_strength=sequential_sum(strength) / n if n else 0.0,
            total_reinforcements=int(fr.arrays["reinforcements"].sum()),
            near_eviction=int((strength < 2.0 * self.config.pool.eviction_threshold).sum()),
            evictions=self.metrics.evictions_total,
        )

    # ------------------------------------------------------------ serialization

    def to_dict(self, with_facts: bool = True) -> dict[str, Any]:
        """The canonical content of the state as plain JSON values (the fact rows of
        ``facts`` and ``evicted`` left empty when not ``with_facts``: a checkpoint
        stores them apart, see ``synthesizer/state/payload.py``)."""
        return {
            "format": FORMAT,
            "config": self.config.model_dump(mode="json"),
            "last_seq": self.last_seq,
            "last_ts": self.last_ts,
            "progress": self.progress,
            "config_seq": self.config_seq,
            "fact_fields": list(FACT_FIELDS),
            "facts": fact_array(self.facts) if with_facts else [],
            "signatures": self.signatures,
            "evicted": fact_array(self.evicted) if with_facts else [],
            "pending": [r.to_dict() for r in self.pending.values()],
            "subjects": self.subjects,
            "coact": self.coact,
            "clusters": self.clusters,
            "recalled": {a: sorted(s) for a, s in self.recalled.items()},
            "metrics": self.metrics.to_dict(),
            **({"facades": self.ext.to_dict()} if self.ext else {}),
            **({"synth_version": self.synth_version} if self.synth_version else {}),
            **({"accessed": self.accessed} if self.accessed else {}),
            **({"words": self.words} if self.words else {}),
            **({"owners": self.owners} if self.owners else {}),
            **({"promotion_waiting": self.promotion_waiting} if self.promotion_waiting else {}),
            **({"origin_index": self.origin_index} if self.origin_index else {}),
            **({"judging": self.judging.to_dict()} if self.judging else {}),
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
        s.accessed = d.get("accessed", {})
        s.words = d.get("words", {})
        s.owners = d.get("owners", {})
        s.promotion_waiting = d.get("promotion_waiting", {})
        s.origin_index = d.get("origin_index", {})
        s.judging = Judging.from_dict(d.get("judging"))
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
        if fid not in self.evicted:
            self.words.pop(fid, None)
        if f.subject is not None:
            self._unindex_subject(f)
        tiers.forget_fact(f, self.coact, self.clusters)
        bump(self.metrics.evictions, reason)

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
        """At capacity, evict the weakest fact (ties: the oldest). A MemoryBank's memories
        neither count against the capacity nor make room (seed 004: only its prune and
        consolidation remove them)."""
        cap = self.config.pool.capacity
        facts, bank = self.facts, self.ext.bank
        if len(facts) < cap:
            return
        held = sum(1 for fid in bank if fid in facts) if bank else 0
        while len(facts) - held >= cap:
            pooled = facts.values() if not held else (f for f in facts.values() if f.id not in bank)
            victim = pool.capacity_victim(pooled)
            if victim is None:
                return
            self._evict(victim, CAPACITY)

    def _add_fact(self, f: Fact) -> None:
        self._make_room()
        self.facts[f.id] = f
        self._index_subject(f)
