"""The seeds' vocabulary: the facades' event types and the store's forget-by-prefix.

The facades (``synthesizer/compat/``: pool from seed 000, store from 001, bank from 004)
write these types next to the fold's own (``synthesizer/events.py``), and the same
``apply`` folds them (handlers in ``synthesizer/state/seeds.py``). The names live here,
on the floor beside ``events.py``, because the fold, the forget plan and the body checks
need them and none of those may import the facades (docs/design.md §1).
``synthesizer/compat/events.py`` and ``synthesizer/compat/nsprefix.py`` re-export them.
Bodies are validated at append by the pydantic models in ``synthesizer/compat/models.py``,
built when a body of the type is first appended (``synthesizer/bodies.py`` registers them).

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

Store identities forget by prefix (seed 001: ``forget(identity)`` is DELETE WHERE
prefix). A store namespace is the JSON array ``[tenant, principal, conversation_id]``
(``synthesizer/compat/store.py``). A forget names an identity whose *trailing* absent
fields are wildcards: ``[acme, u7, null]`` covers every conversation of principal u7 of
tenant acme (and u7's entries with no conversation); ``[acme, null, null]`` the whole
tenant. ``covers`` is used by the fold (``synthesizer/state/seeds.py``) and by the
forget plan (``synthesizer/forget/erase.py``) alike.
"""

from __future__ import annotations

from functools import lru_cache

import orjson

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


@lru_cache(maxsize=4096)
def _parts(ns: str) -> tuple[object, ...] | None:
    try:
        v = orjson.loads(ns)
    except orjson.JSONDecodeError:
        return None
    return tuple(v) if isinstance(v, list) else None


def pattern(ns: str) -> tuple[object, ...] | None:
    """The fields of forget request ``ns`` that must match (trailing nulls dropped)."""
    p = _parts(ns)
    if p is None:
        return None
    n = len(p)
    while n and p[n - 1] is None:
        n -= 1
    return p[:n]


def covers(request: str, ns: str) -> bool:
    """Whether a forget of store identity ``request`` covers namespace ``ns``."""
    if request == ns:
        return True
    p = pattern(request)
    if not p:  # (no field named: covers nothing; forget refuses such a request)
        return False
    n = _parts(ns)
    return n is not None and n[: len(p)] == p


__all__ = [
    "BANK_CONSOLIDATED",
    "BANK_PRUNED",
    "BANK_STORED",
    "FACADE_OF",
    "MEMORY_TYPES",
    "POOL_RESET",
    "POOL_SHARED",
    "STORE_ACCESSED",
    "STORE_DELETED",
    "STORE_FEEDBACK",
    "STORE_FORGOTTEN",
    "STORE_PUT",
    "STORE_SIGNATURE",
    "covers",
    "pattern",
]
