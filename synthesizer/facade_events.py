"""Event types of the seeds' facades (pool 000, store 001, bank 004) and their bodies.

The facades write these next to the fold's own types (``events.py``); the same
``apply`` folds them (handlers in ``facade_fold.py``). Importing this module registers
the body models, so a log validates them at append.

* ``pool.memory.shared`` (content, category, importance, signature?, dup_of?): a new
  fact ``f<seq>`` at once (no synthesizer pass); ``dup_of``: evidence for a live fact;
* ``pool.reset``: every live fact evicted (reason ``reset``); the pool's count restarts;
* ``memstore.put`` (key ``ms.<hash>`` for one entry; ns, entries, expected?): entries
  written; with ``expected``, only if the stored version still equals it;
* ``memstore.deleted`` (key ``ms.<hash>``; ns, id): the entry removed (signatures stay);
* ``memstore.accessed`` (ns, id): a get hit, access count + 1 at the event's time;
* ``memstore.feedback`` (ns, id, usefulness): aggregated, clamped to [-1, 1];
* ``memstore.signature`` (ns, signature): recorded for ``seen``;
* ``memstore.forgotten`` (ns): every entry, signature and feedback of the identity gone;
* ``bank.memory.stored`` (content, memory_type, embedding?, embedder?, metadata?): a
  fact ``f<seq>`` owned by the envelope's agent, in its thread;
* ``bank.consolidated`` (older_than_days, merges): absorbed memories merged into the kept
  one (their evidence and ids kept), re-checked at the event's time;
* ``bank.pruned`` (older_than_days): the agent's memories older than the cutoff removed.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from swarmlog.envelope import register_body

from .body_models import Content, Finite, Importance, Name, Vector, _Body

POOL_SHARED = "pool.memory.shared"
POOL_RESET = "pool.reset"
STORE_PUT = "memstore.put"
STORE_DELETED = "memstore.deleted"
STORE_ACCESSED = "memstore.accessed"
STORE_FEEDBACK = "memstore.feedback"
STORE_SIGNATURE = "memstore.signature"
STORE_FORGOTTEN = "memstore.forgotten"
BANK_STORED = "bank.memory.stored"
BANK_CONSOLIDATED = "bank.consolidated"
BANK_PRUNED = "bank.pruned"

FACADE_OF = {
    POOL_SHARED: "pool",
    POOL_RESET: "pool",
    STORE_PUT: "store",
    STORE_DELETED: "store",
    STORE_ACCESSED: "store",
    STORE_FEEDBACK: "store",
    STORE_SIGNATURE: "store",
    STORE_FORGOTTEN: "store",
    BANK_STORED: "bank",
    BANK_CONSOLIDATED: "bank",
    BANK_PRUNED: "bank",
}
"""Which facade each type belongs to (the dashboard counts events per facade)."""

MEMORY_TYPES = ("insight", "fact", "relationship", "conclusion")

Namespace = Annotated[str, Field(min_length=2, max_length=4096)]
EntryId = Annotated[str, Field(min_length=1, max_length=1024)]
Days = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


class PoolShared(_Body):
    """A seed-000 share: its own memory unless ``dup_of`` names a live duplicate."""

    content: Content
    category: Name = "general"
    importance: Importance = 0.5
    signature: Annotated[str, Field(max_length=256)] | None = None
    dup_of: Name | None = None


class PoolReset(_Body):
    """Empty the pool; no fields."""


class StorePut(_Body):
    """Entries of one identity namespace (encoded identity); conditional with ``expected``."""

    ns: Namespace
    entries: Annotated[list[dict[str, Any]], Field(min_length=1)]
    expected: Annotated[int, Field(ge=0)] | None = None


class StoreRef(_Body):
    """One entry of a namespace (deleted / accessed)."""

    ns: Namespace
    id: EntryId


class StoreFeedback(_Body):
    """Usefulness of an entry (finite; clamped to [-1, 1] by the fold)."""

    ns: Namespace
    id: EntryId
    usefulness: Finite


class StoreSignature(_Body):
    """A signature recorded for ``seen``."""

    ns: Namespace
    signature: Annotated[str, Field(min_length=1, max_length=1024)]


class StoreForgotten(_Body):
    """Erase one identity namespace."""

    ns: Namespace


class BankStored(_Body):
    """A seed-004 memory of the envelope's agent (and thread)."""

    content: Content
    memory_type: Annotated[str, Field(pattern="^(insight|fact|relationship|conclusion)$")]
    embedding: Vector | None = None
    embedder: Name | None = None
    metadata: dict[str, Any] | None = None


class BankConsolidated(_Body):
    """Merges decided by the facade: ``[[kept id, [absorbed ids]]]``, re-checked by the fold."""

    older_than_days: Days
    merges: list[tuple[Name, list[Name]]]


class BankPruned(_Body):
    """Remove the agent's memories older than the cutoff."""

    older_than_days: Days


BODY_MODELS: dict[str, type[BaseModel]] = {
    POOL_SHARED: PoolShared,
    POOL_RESET: PoolReset,
    STORE_PUT: StorePut,
    STORE_DELETED: StoreRef,
    STORE_ACCESSED: StoreRef,
    STORE_FEEDBACK: StoreFeedback,
    STORE_SIGNATURE: StoreSignature,
    STORE_FORGOTTEN: StoreForgotten,
    BANK_STORED: BankStored,
    BANK_CONSOLIDATED: BankConsolidated,
    BANK_PRUNED: BankPruned,
}

for _type, _model in BODY_MODELS.items():
    register_body(_type, _model)
