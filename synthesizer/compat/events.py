"""Event types of the seeds' facades (pool 000, store 001, bank 004) and their bodies.

The facades write these next to the fold's own types (``events.py``); the same
``apply`` folds them (handlers in ``synthesizer/state/seeds.py``). Their bodies are validated at
append by the pydantic models in ``facade_models``, built when a body of the type is
first appended (``synthesizer.bodies`` registers them).

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
