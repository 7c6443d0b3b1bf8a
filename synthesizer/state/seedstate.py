"""The part of the folded state that only the seeds' facades use.

``SwarmState.ext`` holds one ``Facades``; it is empty (and then absent from the
state's serialization, so digests of swarms without facade events do not change)
until a facade event is folded. Plain JSON values only, so it round-trips exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_PUT_SEQS = 16
"""Put seqs remembered per store entry (list cursors place an entry updated mid-listing
where it stood when the listing began, as long as it was re-put fewer times than this)."""


@dataclass
class Facades:
    """Store namespaces, signatures, feedback, bank ownership and provenance, counts.

    * ``counts``: events per facade (pool, store, bank);
    * ``pool_base``: the swarm's eviction total at the last ``pool.reset``;
    * ``store``: encoded identity -> entry id -> entry dict (with ``_seqs``: its put seqs);
    * ``keyver``: store CAS key -> seq of the last event on it (kept after forget);
    * ``sigs`` / ``feedback``: per encoded identity;
    * ``bank``: fact id -> owning agent; ``absorbed``: kept fact id -> merged ids;
      ``metadata``: fact id -> the caller's metadata;
    * ``gen``: encoded identity -> seq of its last put or delete (search caches).
    """

    counts: dict[str, int] = field(default_factory=dict)
    pool_base: int = 0
    store: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    keyver: dict[str, int] = field(default_factory=dict)
    sigs: dict[str, set[str]] = field(default_factory=dict)
    feedback: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    bank: dict[str, str] = field(default_factory=dict)
    absorbed: dict[str, list[str]] = field(default_factory=dict)
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    gen: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.counts)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (sets as sorted lists)."""
        return {
            "counts": self.counts,
            "pool_base": self.pool_base,
            "store": self.store,
            "keyver": self.keyver,
            "sigs": {ns: sorted(s) for ns, s in self.sigs.items()},
            "feedback": self.feedback,
            "bank": self.bank,
            "absorbed": self.absorbed,
            "metadata": self.metadata,
            "gen": self.gen,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Facades:
        """Inverse of ``to_dict`` (None: empty)."""
        if not d:
            return cls()
        return cls(
            counts=d["counts"],
            pool_base=d["pool_base"],
            store=d["store"],
            keyver=d["keyver"],
            sigs={ns: set(v) for ns, v in d["sigs"].items()},
            feedback=d["feedback"],
            bank=d["bank"],
            absorbed=d["absorbed"],
            metadata=d["metadata"],
            gen=d["gen"],
        )
