"""SwarmStore where LangGraph's other stores differ from a naive reading (polish work):
``batch`` writes below the reserved ``langgraph`` root as upstream's stores do (only the
public ``put`` refuses it), and a dotted filter key is a JSON path, as the SQLite and
Postgres stores resolve it."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langgraph.store.base")

from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from synthesizer.integrations.langgraph import SwarmStore


def test_batch_writes_below_the_reserved_root_like_upstream(tmp_path: Path) -> None:
    ns = ("langgraph", "checkpoints")
    ops = [PutOp(ns, "k", {"v": 1}), ]
    upstream = InMemoryStore()
    upstream.batch(ops)  # upstream allows it below the public put
    with SwarmStore(tmp_path / "s") as s:
        assert s.batch(ops) == [None]
        got = s.batch([GetOp(ns, "k")])[0]
        assert got is not None and got.value == {"v": 1}
        assert upstream.batch([GetOp(ns, "k")])[0].value == got.value  # type: ignore[union-attr]
        with pytest.raises(InvalidNamespaceError, match="langgraph"):
            s.put(ns, "k2", {"v": 2})  # the public put still refuses the root
        with pytest.raises(InvalidNamespaceError):
            upstream.put(ns, "k2", {"v": 2})
    with SwarmStore(tmp_path / "s") as again:  # it is in the log: a reopened store has it
        item = again.get(ns, "k")
        assert item is not None and item.value == {"v": 1}


def test_dotted_filter_keys_are_json_paths(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s") as s:
        s.put(("users",), "ann", {"user": {"access-level": "admin", "age": 40}})
        s.put(("users",), "bob", {"user": {"access-level": "viewer", "age": 20}})
        s.put(("users",), "cy", {"user.access-level": "admin"})  # a literal dotted key

        def keys(filt: dict[str, object]) -> list[str]:
            return sorted(i.key for i in s.search(("users",), filter=filt))

        assert keys({"user.access-level": "admin"}) == ["ann", "cy"]  # was: only cy
        assert keys({"user.access-level": {"$ne": "admin"}}) == ["bob"]
        assert keys({"user.age": {"$gte": 30}}) == ["ann"]
        assert keys({"user": {"access-level": "viewer"}}) == ["bob"]  # nested dicts still
        assert keys({"user.missing": "x"}) == []
        got = s.batch([SearchOp(("users",), filter={"user.age": {"$lt": 30}})])[0]
        assert [i.key for i in got] == ["bob"]  # type: ignore[union-attr]


def test_a_filter_key_written_as_sql_finds_nothing(tmp_path: Path) -> None:
    """The key of upstream's SQLite ``test_sql_injection_vulnerability`` (which SQLite
    refuses, since it splices keys into SQL): SwarmStore builds no SQL, and the key is a
    path no value has, so it matches nothing and leaks nothing."""
    with SwarmStore(tmp_path / "s") as s:
        s.put(("docs",), "public", {"access": "public", "data": "public info"})
        s.put(("docs",), "private", {"access": "private", "data": "secret", "password": "123"})
        bad = "access') = 'public' OR '1'='1' OR json_extract(value, '$."
        assert s.search(("docs",), filter={bad: "dummy"}) == []
        assert [i.key for i in s.search(("docs",), filter={"access": "public"})] == ["public"]


def test_index_distance_type_scores_as_postgres(tmp_path: Path) -> None:
    """``distance_type`` of an index config (Postgres' option): l2 scores the negated
    Euclidean distance, inner_product the dot product; anything else is refused."""

    from langchain_core.embeddings import Embeddings

    class Fixed(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[3.0, 0.0] if t == "far" else [1.0, 1.0] for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return [1.0, 0.0]

    def scores(distance: str) -> dict[str, float]:
        idx = {"dims": 2, "embed": Fixed(), "distance_type": distance, "fields": ["t"]}
        with SwarmStore(tmp_path / distance, index=idx) as s:  # type: ignore[arg-type]
            s.put(("d",), "far", {"t": "far"})
            s.put(("d",), "near", {"t": "near"})
            return {i.key: i.score for i in s.search(("d",), query="q")}  # type: ignore[misc]

    assert scores("l2") == pytest.approx({"far": -2.0, "near": -1.0})
    assert scores("inner_product") == pytest.approx({"far": 3.0, "near": 1.0})
    assert scores("cosine") == pytest.approx({"far": 1.0, "near": 2**-0.5})
    with pytest.raises(ValueError, match="distance_type must be one of"):
        SwarmStore(tmp_path / "x", index={"dims": 2, "embed": Fixed(), "distance_type": "dot"})  # type: ignore[typeddict-item]
