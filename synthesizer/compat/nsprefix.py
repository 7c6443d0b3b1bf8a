"""Store identities forget by prefix (seed 001: ``forget(identity)`` is DELETE WHERE prefix).

A store namespace is the JSON array ``[tenant, principal, conversation_id]``
(facade_store.encode_identity). A forget names an identity whose *trailing* absent fields
are wildcards: ``[acme, u7, null]`` covers every conversation of principal u7 of tenant
acme (and u7's entries with no conversation); ``[acme, null, null]`` the whole tenant.
Used by the fold (facade_fold) and by the forget plan (forget.Identity.owns) alike.
"""

from __future__ import annotations

from functools import lru_cache

import orjson


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


__all__ = ["covers", "pattern"]
