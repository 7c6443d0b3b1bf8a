"""``SwarmStore(ranking="hybrid")``: a store search ranks as ``agent.recall`` does.

The default stays the upstream ranking (InMemoryStore's: the parity suites hold it);
``hybrid`` adds the items' words (BM25, an identifier held whole first)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("langgraph.store.base")

from synthesizer.integrations.langgraph import SwarmStore

DOCS = {
    "a": "Billing reports fail with ORA-00904 invalid identifier on the invoices table",
    "b": "Billing reports fail with ORA-00942 table or view does not exist",
    "c": "The nightly export to the warehouse finishes in under ten minutes",
    "d": "Support tickets about refunds are routed to the payments team",
}


def _fill(store: SwarmStore) -> None:
    for key, text in DOCS.items():
        store.put(("docs",), key, {"text": text, "n": len(key)})


def test_hybrid_ranks_the_exact_identifier_first(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s", index={"fields": ["text"]}, ranking="hybrid") as s:
        _fill(s)
        hits = s.search(("docs",), query="ORA-00942", limit=4)
        assert hits[0].key == "b"
        assert hits[0].score is not None and hits[1].score is not None
        keys = [h.key for h in s.search(("docs",), query="refunds routed payments", limit=2)]
        assert keys[0] == "d"


def test_hybrid_adds_the_words_to_the_dense_score(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with SwarmStore(root, index={"fields": ["text"]}) as dense:
        _fill(dense)
        plain = {h.key: h.score for h in dense.search(("docs",), query="nightly export", limit=4)}
    with SwarmStore(root, index={"fields": ["text"]}, ranking="hybrid") as hybrid:
        mixed = {h.key: h.score for h in hybrid.search(("docs",), query="nightly export", limit=4)}
    assert set(plain) == set(mixed) == set(DOCS)
    # the one item holding both words gains the whole lexical share; items without them, nothing
    assert mixed["c"] == pytest.approx(plain["c"] + 0.5)  # type: ignore[operator]
    assert mixed["d"] == pytest.approx(plain["d"])


def test_a_search_without_a_query_or_an_index_is_unchanged(tmp_path: Path) -> None:
    with SwarmStore(tmp_path / "s", index={"fields": ["text"]}, ranking="hybrid") as s:
        _fill(s)
        assert [h.key for h in s.search(("docs",), limit=4)] == list(DOCS)
        assert all(h.score is None for h in s.search(("docs",), limit=4))


def test_a_bad_ranking_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="ranking must be one of dense, hybrid, not 'bm25'"):
        SwarmStore(tmp_path / "s", ranking="bm25")
    with pytest.raises(ValueError, match="needs distance_type cosine"):
        SwarmStore(
            tmp_path / "t",
            index={"fields": ["text"], "distance_type": "l2"},
            ranking="hybrid",
        )
