"""``SwarmStore``: LangGraph's ``BaseStore`` over a swarm log (extra ``langgraph``).

Items are events in the log (see ``storeview``), so every process that opens the same
swarm shares one store, and a store reopened later replays it. Behaviour follows
LangGraph's ``InMemoryStore`` (namespaces, filters with ``$eq $ne $gt $gte $lt $lte``,
limit/offset, semantic ``query`` through an index config, namespace listing with
prefix/suffix conditions and ``*``), with what LangGraph lacks on top:

* every returned item carries ``version`` (the seq of the last write to it);
* ``put(..., expected_version=v)`` / ``delete(..., expected_version=v)`` write only if
  the item is still at version ``v`` (0: never written), else raise ``ItemConflict``
  with the current version, and write nothing. ``version(namespace, key)`` reads it.

Deliberate differences from ``InMemoryStore``: namespaces without items are never
listed (langgraph #8734); an item's vectors are replaced on every put (``index=False``
drops them); an ordering filter on a missing or non-numeric field is no match rather
than an error; ``created_at`` survives updates. An index config without ``embed`` uses
the swarm's own embedder. Reads in a batch see the state before the batch's writes,
and a batch's writes (one per key, the last wins) are one atomic append.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

try:
    from langgraph.store.base import (
        NOT_PROVIDED,
        BaseStore,
        GetOp,
        IndexConfig,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        NotProvided,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
        ensure_embeddings,
        get_text_at_path,
        tokenize_path,
        validate_op_namespace,
    )
except ModuleNotFoundError as e:  # one clear line instead of a bare "No module named"
    from swarmlog.extras import missing

    need = missing("synthesizer.integrations.langgraph", "langgraph")
    raise ModuleNotFoundError(need, name=e.name) from None

from swarmlog import Event, Log, VersionConflict, open_log
from synthesizer.integrations.storelex import RANKINGS, lexical_boost
from synthesizer.storeview import (
    DISTANCES,
    Namespace,
    StoredItem,
    StoreView,
    delete_event,
    item_key,
    put_event,
    touch_event,
)

STORE_AGENT = "langgraph"


class ItemConflict(VersionConflict):
    """A conditional put or delete found the item at another version; nothing was written."""

    def __init__(self, namespace: Namespace, key: str, expected: int, actual: int) -> None:
        super().__init__(item_key(namespace, key), expected, actual)
        self.namespace = namespace
        self.item = key
        self.args = (
            f"item {key!r} in {namespace} is at version {actual}, not {expected}; "
            "get it again and retry",
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (ItemConflict, (self.namespace, self.item, self.expected, self.actual))


# The mixin's base is Item for the type checker only: at run time a plain object, so
# each versioned class below has one slotted base (two would conflict in layout).
if TYPE_CHECKING:
    _ItemBase = Item
else:
    _ItemBase = object


class _Versioned(_ItemBase):
    """Adds ``version`` (the seq of the last write) to an Item or a SearchItem."""

    __slots__ = ()
    version: int

    def __init__(self, *, version: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.version = version  # type: ignore[misc]  # (the slot is in each subclass)

    def dict(self) -> dict[str, Any]:
        return {**super().dict(), "version": self.version}


class VersionedItem(_Versioned, Item):
    """An Item with ``version``: the seq of the last write to it."""

    __slots__ = ("version",)


class VersionedSearchItem(_Versioned, SearchItem):
    """A SearchItem with ``version``."""

    __slots__ = ("version",)


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=timezone.utc)


def _check_put_namespace(ns: tuple[str, ...], public: bool = True) -> None:
    """What ``BaseStore.put`` checks. Ops given to ``batch`` directly get only the empty
    check: as upstream, the reserved ``langgraph`` root is refused by the public ``put``
    and open below it (LangGraph's own components write there through ``batch``)."""
    if not ns:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    if public and ns[0] == "langgraph":
        raise InvalidNamespaceError(f'Root label for namespace cannot be "langgraph". Got: {ns}')


class _SwarmEmbeddings:
    """The swarm's embedder behind LangChain's ``Embeddings`` calls."""

    def __init__(self, embedder: Any) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = self.embedder.embed(texts).astype(float).tolist()
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class SwarmStore(BaseStore):
    """A LangGraph store kept in the swarm log at ``target`` (see module docstring)."""

    supports_ttl = True

    def __init__(
        self,
        target: str | os.PathLike[str] | Log,
        *,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        agent: str = STORE_AGENT,
        ranking: str = "dense",
    ) -> None:
        if ranking not in RANKINGS:
            raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}, not {ranking!r}")
        self.ranking = ranking
        """``dense`` ranks a query as InMemoryStore does (the upstream suites hold it to
        that); ``hybrid`` adds the items' words as ``agent.recall`` does (storelex)."""
        self._owns_log = not isinstance(target, Log)
        self.log: Log = open_log(target) if not isinstance(target, Log) else target
        self.agent = agent
        self.ttl_config = ttl
        self.view = StoreView()
        self._lock = threading.RLock()
        self.index_config: dict[str, Any] | None = None
        self.embeddings: Any = None
        self.space: str | None = None
        """Which embedder made this store's vectors; a search scores only those."""
        if index:
            cfg: dict[str, Any] = dict(index)
            embed = cfg.get("embed")
            if embed is None:  # the embedder the swarm's configuration names
                from synthesizer.configlog import log_config
                from synthesizer.search.embed import embedder_for

                emb = embedder_for(log_config(self.log).config.embedder)
                self.embeddings = _SwarmEmbeddings(emb)
                self.space = f"swarm:{emb.id}"
            else:
                self.embeddings = ensure_embeddings(embed)
                self.space = f"index:{cfg.get('dims', '?')}"
            if (cfg.get("distance_type") or "cosine") not in DISTANCES:
                raise ValueError(
                    f"index distance_type must be one of {', '.join(DISTANCES)},"
                    f" not {cfg['distance_type']!r}"
                )
            if ranking == "hybrid" and (cfg.get("distance_type") or "cosine") != "cosine":
                raise ValueError("ranking='hybrid' adds to a cosine: it needs distance_type cosine")
            cfg["__tokenized_fields"] = [
                (p, tokenize_path(p)) if p != "$" else (p, p) for p in (cfg.get("fields") or ["$"])
            ]
            self.index_config = cfg
        self.refresh()

    def close(self) -> None:
        """Close the log handle (if this store opened it)."""
        if self._owns_log:
            self.log.close()

    def __enter__(self) -> SwarmStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading the log

    def refresh(self) -> None:
        """Fold the store events appended since the last look (by any process)."""
        with self._lock:
            self.view.follow(self.log)

    def version(self, namespace: tuple[str, ...], key: str) -> int:
        """The item's current version (seq of its last write; 0 if never written)."""
        return self.log.version(item_key(tuple(namespace), str(key)))

    # ------------------------------------------------------------------ batch

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops: reads against the state before the batch, then its writes."""
        return self._batch(list(ops), None)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` on a worker thread (the log and the embedder are blocking)."""
        return await asyncio.to_thread(self._batch, list(ops), None)

    def _batch(
        self, ops: list[Op], expect: Mapping[tuple[Namespace, str], int] | None
    ) -> list[Result]:
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, PutOp) and op.value is not None:
                _check_put_namespace(op.namespace, public=False)
        with self._lock:
            self.refresh()
            now = time.time()
            results: list[Result] = []
            puts: dict[tuple[Namespace, str], PutOp] = {}
            touched: list[StoredItem] = []
            for op in ops:
                if isinstance(op, GetOp):
                    it = self.view.get(tuple(op.namespace), op.key, now)
                    if it is not None and op.refresh_ttl:
                        touched.append(it)
                    results.append(None if it is None else self._item(it))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op, now, touched))
                elif isinstance(op, ListNamespacesOp):
                    conds = [(c.match_type, tuple(c.path)) for c in op.match_conditions or ()]
                    results.append(
                        self.view.namespaces(conds, op.max_depth, op.limit, op.offset, now)
                    )
                elif isinstance(op, PutOp):
                    puts[(tuple(op.namespace), op.key)] = op
                    results.append(None)
                else:
                    raise ValueError(f"Unknown operation type: {type(op)}")
            events = self._touches(touched, now) + self._writes(puts, now)
            if events:
                self._append(events, expect)
            return results

    def _append(
        self, events: list[Event], expect: Mapping[tuple[Namespace, str], int] | None
    ) -> None:
        exp = {item_key(ns, k): v for (ns, k), v in (expect or {}).items()}
        try:
            self.log.append_many(events, expect=exp or None)
        except VersionConflict as e:
            for (ns, k), v in (expect or {}).items():
                if item_key(ns, k) == e.key:
                    raise ItemConflict(ns, k, v, e.actual) from None
            raise
        self.refresh()

    def _touches(self, items: list[StoredItem], now: float) -> list[Event]:
        refresh = (self.ttl_config or {}).get("refresh_on_read", True)
        if not refresh:
            return []
        seen: set[tuple[Namespace, str]] = set()
        out = []
        for it in items:
            if it.ttl is not None and (it.namespace, it.key) not in seen:
                seen.add((it.namespace, it.key))
                out.append(touch_event(self.agent, it, now))
        return out

    def _writes(self, puts: dict[tuple[Namespace, str], PutOp], now: float) -> list[Event]:
        texts: list[str] = []
        where: list[tuple[int, str]] = []
        staged: list[tuple[PutOp, dict[str, list[float]]]] = []
        for op in puts.values():
            vectors: dict[str, list[float]] = {}
            if op.value is not None:
                for path, text in self._texts(op):
                    where.append((len(staged), path))
                    texts.append(text)
            staged.append((op, vectors))
        if texts:
            assert self.embeddings is not None
            for (i, path), vec in zip(where, self.embeddings.embed_documents(texts), strict=True):
                staged[i][1][path] = [float(x) for x in vec]
        out = []
        for op, vectors in staged:
            ns = tuple(op.namespace)
            if op.value is None:
                if ns:
                    out.append(delete_event(self.agent, ns, op.key))
            else:
                out.append(
                    put_event(self.agent, ns, op.key, op.value, vectors, self.space, op.ttl, now)
                )
        return out

    def _texts(self, op: PutOp) -> list[tuple[str, str]]:
        """(path, text) pairs to embed for a put, as the index config or ``index`` says."""
        if self.index_config is None or op.index is False or op.value is None:
            return []
        if op.index is None:
            paths = self.index_config["__tokenized_fields"]
        else:
            paths = [(p, tokenize_path(p)) for p in op.index]
        out: list[tuple[str, str]] = []
        for path, field in paths:
            found = get_text_at_path(op.value, field)
            if len(found) > 1:
                out.extend((f"{path}.{i}", t) for i, t in enumerate(found))
            elif found:
                out.append((path, found[0]))
        return out

    def _search(self, op: SearchOp, now: float, touched: list[StoredItem]) -> list[SearchItem]:
        if op.limit < 0 or op.offset < 0:
            raise ValueError("limit and offset must be >= 0")
        cands = list(self.view.candidates(tuple(op.namespace_prefix), op.filter, now))
        query = None
        if op.query and self.embeddings is not None and cands:
            query = [float(x) for x in self.embeddings.embed_query(op.query)]
        distance = (self.index_config or {}).get("distance_type") or "cosine"
        boost = None
        if query is not None and self.ranking == "hybrid":
            boost = lexical_boost(cands, self._indexed_text, str(op.query))
        page = self.view.ranked(cands, query, op.limit, op.offset, self.space, distance, boost)
        if op.refresh_ttl:
            touched.extend(it for it, _ in page)
        return [
            VersionedSearchItem(
                namespace=it.namespace,
                key=it.key,
                value=it.value,
                created_at=_dt(it.created),
                updated_at=_dt(it.updated),
                score=score,
                version=it.version,
            )
            for it, score in page
        ]

    def _indexed_text(self, it: StoredItem) -> str:
        """The words of an item that its vectors were made from (the index's fields)."""
        if not it.vectors or self.index_config is None:
            return ""
        found: list[str] = []
        for _, field in self.index_config["__tokenized_fields"]:
            found.extend(get_text_at_path(it.value, field))
        return " ".join(found)

    @staticmethod
    def _item(it: StoredItem) -> VersionedItem:
        return VersionedItem(
            value=it.value,
            key=it.key,
            namespace=it.namespace,
            created_at=_dt(it.created),
            updated_at=_dt(it.updated),
            version=it.version,
        )

    # ------------------------------------------------------------------ conditional writes

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
        expected_version: int | None = None,
    ) -> None:
        """Store an item; with ``expected_version``, only if it is still at that version
        (0: never written), else ItemConflict."""
        self._batch(
            [self._put_op(namespace, key, value, index, ttl)],
            _expect(namespace, key, expected_version),
        )

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
        expected_version: int | None = None,
    ) -> None:
        """Async ``put`` (conditional with ``expected_version``)."""
        op = self._put_op(namespace, key, value, index, ttl)
        await asyncio.to_thread(self._batch, [op], _expect(namespace, key, expected_version))

    def delete(
        self, namespace: tuple[str, ...], key: str, *, expected_version: int | None = None
    ) -> None:
        """Delete an item; with ``expected_version``, only if it is still at that version."""
        op = PutOp(tuple(namespace), str(key), None, ttl=None)
        self._batch([op], _expect(namespace, key, expected_version))

    async def adelete(
        self, namespace: tuple[str, ...], key: str, *, expected_version: int | None = None
    ) -> None:
        """Async ``delete`` (conditional with ``expected_version``)."""
        op = PutOp(tuple(namespace), str(key), None, ttl=None)
        await asyncio.to_thread(self._batch, [op], _expect(namespace, key, expected_version))

    def _put_op(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None,
        ttl: float | NotProvided | None,
    ) -> PutOp:
        _check_put_namespace(tuple(namespace))
        if ttl is NOT_PROVIDED:
            ttl = (self.ttl_config or {}).get("default_ttl")
        if ttl is not None and not (isinstance(ttl, (int, float)) and 0 < ttl < float("inf")):
            raise ValueError(f"ttl must be a positive number of minutes or None, got {ttl!r}")
        return PutOp(tuple(namespace), str(key), value, index=index, ttl=ttl)


def _expect(
    namespace: Sequence[str], key: str, version: int | None
) -> dict[tuple[Namespace, str], int] | None:
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError(f"expected_version must be an integer >= 0, got {version!r}")
    return {(tuple(namespace), str(key)): version}


__all__ = ["ItemConflict", "SwarmStore", "VersionedItem", "VersionedSearchItem"]
