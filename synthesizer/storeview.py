"""The key-value store kept in the swarm log: its event types and its projection.

A store item lives in the log as ``store.item.put`` / ``store.item.deleted`` events keyed
``store.<hash of namespace and key>``, so the log's per-key versions are the items'
versions and a conditional write is an append with ``expect``. ``store.item.touched``
(unkeyed, so reading never bumps a version) moves a TTL item's expiry. ``StoreView``
folds those events, in log order, into namespaces and items; every process that follows
the log builds the same view. It orders like LangGraph's ``InMemoryStore``: namespaces by
when they got their first item, items by when their key was first written.

Used by ``synthesizer.integrations.langgraph.SwarmStore``; nothing here imports LangGraph.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field

from swarmlog import Event, Log
from swarmlog.envelope import register_body

ITEM_PUT = "store.item.put"
ITEM_DELETED = "store.item.deleted"
ITEM_TOUCHED = "store.item.touched"
STORE_TYPES = frozenset((ITEM_PUT, ITEM_DELETED, ITEM_TOUCHED))

Namespace = tuple[str, ...]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    ns: list[str] = Field(min_length=1)
    key: str


class ItemPut(_Body):
    """A whole item value, its vectors by field path and their embedding space, its TTL
    (minutes) and expiry."""

    value: dict[str, Any]
    vectors: dict[str, list[float]] = Field(default_factory=dict)
    space: str | None = None
    ttl: float | None = Field(None, gt=0.0, allow_inf_nan=False)
    expires_at: float | None = Field(None, allow_inf_nan=False)


class ItemDeleted(_Body):
    """The item is gone."""


class ItemTouched(_Body):
    """A read refreshed the TTL of the item at ``version``."""

    version: int = Field(ge=1)
    expires_at: float


register_body(ITEM_PUT, ItemPut)
register_body(ITEM_DELETED, ItemDeleted)
register_body(ITEM_TOUCHED, ItemTouched)


def item_key(namespace: Namespace, key: str) -> str:
    """The log key of an item: a fixed-width digest (labels may hold any character)."""
    digest = hashlib.blake2b(orjson.dumps([list(namespace), key]), digest_size=16)
    return "store." + digest.hexdigest()


def put_event(
    agent: str,
    namespace: Namespace,
    key: str,
    value: Mapping[str, Any],
    vectors: Mapping[str, list[float]],
    space: str | None,
    ttl: float | None,
    now: float,
) -> Event:
    """A ``store.item.put`` (``expires_at`` = now + ttl minutes); ``space`` names the
    embedder of the vectors."""
    body: dict[str, Any] = {"ns": list(namespace), "key": key, "value": dict(value)}
    if vectors:
        body["vectors"] = dict(vectors)
        body["space"] = space
    if ttl is not None:
        body["ttl"] = float(ttl)
        body["expires_at"] = now + 60.0 * float(ttl)
    return Event(agent=agent, type=ITEM_PUT, key=item_key(namespace, key), body=body, ts=now)


def delete_event(agent: str, namespace: Namespace, key: str) -> Event:
    """A ``store.item.deleted``."""
    body = {"ns": list(namespace), "key": key}
    return Event(agent=agent, type=ITEM_DELETED, key=item_key(namespace, key), body=body)


@dataclass
class StoredItem:
    """One live item of the view."""

    namespace: Namespace
    key: str
    value: dict[str, Any]
    created: float
    updated: float
    version: int
    vectors: dict[str, list[float]] = field(default_factory=dict)
    ttl: float | None = None
    expires_at: float | None = None
    space: str | None = None

    def live(self, now: float) -> bool:
        """Not expired at ``now``."""
        return self.expires_at is None or self.expires_at > now


def touch_event(agent: str, item: StoredItem, now: float) -> Event:
    """A ``store.item.touched`` moving the item's expiry to now + its TTL."""
    body = {
        "ns": list(item.namespace),
        "key": item.key,
        "version": item.version,
        "expires_at": now + 60.0 * (item.ttl or 0.0),
    }
    return Event(agent=agent, type=ITEM_TOUCHED, body=body, ts=now)


# ---------------------------------------------------------------- filters (as InMemoryStore)


def _operator(value: Any, op: str, arg: Any) -> bool:
    """One comparison; an ordering against a missing or non-numeric value is no match."""
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValueError(f"unsupported filter operator {op!r}: use $eq $ne $gt $gte $lt $lte")
    try:
        a, b = float(value), float(arg)
    except (TypeError, ValueError):
        return False
    if op == "$gt":
        return a > b
    if op == "$gte":
        return a >= b
    if op == "$lt":
        return a < b
    return a <= b


def field_value(value: Mapping[str, Any], key: str) -> Any:
    """The value a filter key names: a dotted key (``"user.access-level"``) is a JSON
    path into nested objects, as the SQLite and Postgres stores read it; a literal key
    holding the dot is used when the path finds nothing (InMemoryStore's reading)."""
    if "." in key:
        node: Any = value
        for part in key.split("."):
            if not isinstance(node, Mapping) or part not in node:
                return value.get(key)
            node = node[part]
        return node
    return value.get(key)


def matches(value: Any, want: Any) -> bool:
    """JSONB-like match of an item value against a filter value (nested dicts, lists)."""
    if isinstance(want, dict):
        if any(isinstance(k, str) and k.startswith("$") for k in want):
            return all(_operator(value, k, v) for k, v in want.items())
        if not isinstance(value, dict):
            return False
        return all(matches(value.get(k), v) for k, v in want.items())
    if isinstance(want, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(want)
            and all(matches(a, b) for a, b in zip(value, want, strict=True))
        )
    return bool(value == want)


def namespace_matches(kind: str, path: tuple[str, ...], ns: Namespace) -> bool:
    """A prefix or suffix condition, ``*`` matching any one label."""
    if len(ns) < len(path):
        return False
    if kind == "prefix":
        pairs = zip(ns, path, strict=False)
    elif kind == "suffix":
        pairs = zip(reversed(ns), reversed(path), strict=False)
    else:
        raise ValueError(f"unsupported match type {kind!r}: use prefix or suffix")
    return all(p == "*" or k == p for k, p in pairs)


def cosine(query: list[float], rows: list[list[float]]) -> list[float]:
    """Cosine of ``query`` with each row (0 for a zero row), in float64."""
    if not rows:
        return []
    q = np.array(query)
    m = np.array(rows)
    qn = np.linalg.norm(q)
    norms = np.linalg.norm(m, axis=1)
    mask = norms != 0
    out = np.zeros_like(norms)
    out[mask] = np.dot(m[mask], q) / (norms[mask] * qn)
    result: list[float] = out.tolist()
    return result


def similarity(distance: str, query: list[float], rows: list[list[float]]) -> list[float]:
    """The score of each row for ``query`` under an index's ``distance_type``, as the
    Postgres store gives it: "cosine" (the default), "inner_product" (the dot product)
    or "l2" (the negated Euclidean distance: nearer scores higher)."""
    if distance == "cosine" or not rows:
        return cosine(query, rows)
    m, q = np.array(rows), np.array(query)
    out = np.dot(m, q) if distance == "inner_product" else -np.linalg.norm(m - q, axis=1)
    result: list[float] = out.tolist()
    return result


DISTANCES = ("cosine", "inner_product", "l2")
"""The ``distance_type`` values an index config may name."""


# ---------------------------------------------------------------- the view


class StoreView:
    """Namespaces -> keys -> items, folded from the store events of a log."""

    def __init__(self) -> None:
        self.spaces: dict[Namespace, dict[str, StoredItem]] = {}
        self.last_seq = 0

    def fold(self, events: Iterable[Event]) -> None:
        """Apply events in seq order (anything not a store event is skipped)."""
        self.fold_dicts(ev.envelope for ev in events)

    def fold_dicts(self, dicts: Iterable[Mapping[str, Any]]) -> None:
        """``fold`` over stored envelope mappings (``Log.read_batches``: no Event each)."""
        last = self.last_seq
        for d in dicts:
            seq = d["seq"]
            if seq <= last:
                continue
            last = seq
            if d["type"] in STORE_TYPES:
                self._apply(d["type"], d["body"], seq, d["ts"])
        self.last_seq = last

    def follow(self, log: Log) -> None:
        """Fold what ``log`` holds after ``last_seq``, a chunk of stored mappings at a time."""
        for chunk in log.read_batches(self.last_seq + 1):
            self.fold_dicts(chunk)

    def _apply(self, kind: str, body: dict[str, Any], seq: int, ts: float) -> None:
        ns = tuple(body["ns"])
        key = body["key"]
        items = self.spaces.get(ns)
        if kind == ITEM_PUT:
            if items is None:
                items = self.spaces[ns] = {}
            old = items.get(key)
            items[key] = StoredItem(
                ns,
                key,
                body["value"],
                old.created if old is not None else ts,
                ts,
                seq,
                body.get("vectors") or {},
                body.get("ttl"),
                body.get("expires_at"),
                body.get("space"),
            )
        elif kind == ITEM_DELETED:
            if items is not None and items.pop(key, None) is not None and not items:
                del self.spaces[ns]
        elif items is not None:  # touched: only the version it was read at
            it = items.get(key)
            if it is not None and it.version == body["version"]:
                it.expires_at = body["expires_at"]

    def get(self, ns: Namespace, key: str, now: float) -> StoredItem | None:
        """The live item, or None."""
        it = self.spaces.get(ns, {}).get(key)
        return it if it is not None and it.live(now) else None

    def candidates(
        self, prefix: Namespace, filt: Mapping[str, Any] | None, now: float
    ) -> Iterator[StoredItem]:
        """Live items under ``prefix`` matching ``filt``, in view order."""
        n = len(prefix)
        for ns, items in self.spaces.items():
            if ns[:n] != prefix:
                continue
            for it in items.values():
                if not it.live(now):
                    continue
                if filt and not all(
                    matches(field_value(it.value, k), v) for k, v in filt.items()
                ):
                    continue
                yield it

    def ranked(
        self,
        cands: list[StoredItem],
        query: list[float] | None,
        limit: int,
        offset: int,
        space: str | None = None,
        distance: str = "cosine",
        boost: Mapping[tuple[Namespace, str], tuple[float, int]] | None = None,
    ) -> list[tuple[StoredItem, float | None]]:
        """A page of candidates: in order, or by best cosine when a query vector is given.

        As InMemoryStore: an item scores its best vector; items without vectors follow the
        scored ones (unscored, not offset) while the page has room. Only vectors of the
        query's embedding ``space`` and width count: another embedder's never mix in.
        ``boost`` (a hybrid search) adds a score to an item's and ranks the items holding
        more of the query's identifiers first.
        """
        if query is None:
            return [(it, None) for it in cands[offset : offset + limit]]
        flat_items: list[StoredItem] = []
        rows: list[list[float]] = []
        scoreless: list[StoredItem] = []
        width = len(query)
        for it in cands:
            found = False
            same = it.space == space
            for vec in it.vectors.values():
                if same and len(vec) == width:
                    flat_items.append(it)
                    rows.append(vec)
                    found = True
            if not found:
                scoreless.append(it)
        sims = similarity(distance, query, rows)
        if boost:
            extra = [boost.get((it.namespace, it.key), (0.0, 0)) for it in flat_items]
            sims = [float(s) + add for s, (add, _) in zip(sims, extra, strict=True)]
            first = [held for _, held in extra]
        else:
            first = [0] * len(flat_items)
        scored = [
            (score, it)
            for _, score, it in sorted(
                zip(first, sims, flat_items, strict=True),
                key=lambda x: (x[0], x[1]),
                reverse=True,
            )
        ]
        seen: set[tuple[Namespace, str]] = set()
        kept: list[tuple[StoredItem, float | None]] = []
        for score, it in scored:
            ident = (it.namespace, it.key)
            if ident in seen:
                continue
            rank = len(seen)
            seen.add(ident)
            if rank >= offset + limit:
                break
            if rank >= offset:
                kept.append((it, float(score)))
        if scoreless and len(kept) < limit:
            kept.extend((it, None) for it in scoreless[: limit - len(kept)])
        return kept

    def namespaces(
        self,
        conditions: Iterable[tuple[str, tuple[str, ...]]],
        max_depth: int | None,
        limit: int,
        offset: int,
        now: float,
    ) -> list[Namespace]:
        """Namespaces holding a live item, matching every condition, sorted, paged."""
        conds = list(conditions)
        found = [
            ns
            for ns, items in self.spaces.items()
            if any(it.live(now) for it in items.values())
            and all(namespace_matches(kind, path, ns) for kind, path in conds)
        ]
        if max_depth is not None:
            found = sorted({ns[:max_depth] for ns in found})
        else:
            found.sort()
        return found[offset : offset + limit]
