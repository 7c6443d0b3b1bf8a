"""Seed 001's MemoryStore over the log, case by case (CONFORMANCE "Store over identity
namespaces"), on a private in-memory log and on a FileLog. Cross-process cases (the
8-process put_if_version race, two processes on one root) are in test_facade_procs.py.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from synthesizer import MemoryEntry, MemoryIdentity, MemoryStore
from synthesizer.compat import events as FE
from synthesizer.compat.store import encode_identity

A = MemoryIdentity(tenant="A", principal="u1", conversation_id="c1")
B = MemoryIdentity(tenant="B", principal="u1", conversation_id="c1")


@pytest.fixture
def store(facade_where: str | None) -> Iterator[MemoryStore]:
    s = MemoryStore(facade_where)
    yield s
    s.close()


def _now_ms() -> int:
    return int(time.time() * 1000)


def test_same_conversation_id_in_two_tenants_is_two_namespaces(store: MemoryStore) -> None:
    store.put(A, MemoryEntry("m", "tenant A"))
    store.put(B, MemoryEntry("m", "tenant B"))
    assert store.get(A, "m").value == "tenant A"  # type: ignore[union-attr]
    assert store.get(B, "m").value == "tenant B"  # type: ignore[union-attr]
    store.delete(A, "m")
    assert store.get(A, "m") is None and store.get(B, "m") is not None


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"tenant": "a", "principal": "b/c"}, {"tenant": "a/b", "principal": "c"}),
        ({"principal": "p"}, {"tenant": "anon", "principal": "p"}),
        ({"principal": "p"}, {"tenant": "_", "principal": "p"}),
        ({"principal": "p"}, {"tenant": "", "principal": "p"}),
        ({"tenant": "__proto__"}, {"tenant": "constructor"}),
        ({"tenant": "t", "principal": None}, {"tenant": "t", "principal": "null"}),
        ({"tenant": "a:b"}, {"tenant": "a", "principal": "b"}),
    ],
)
def test_identities_never_collide(
    store: MemoryStore, one: dict[str, Any], other: dict[str, Any]
) -> None:
    store.put(one, MemoryEntry("k", "one"))
    assert store.get(other, "k") is None
    store.put(other, MemoryEntry("k", "other"))
    assert store.get(one, "k").value == "one"  # type: ignore[union-attr]
    assert MemoryIdentity(**{"conversation_id": None, **one}) != MemoryIdentity(**other)


def test_dict_and_dataclass_identities_are_the_same(store: MemoryStore) -> None:
    store.put({"tenant": "A", "principal": "u1", "conversation_id": "c1"}, MemoryEntry("x", 1))
    assert store.get(A, "x") is not None
    assert store.get({"tenant": "A", "principal": "u1", "conversationId": "c1"}, "x") is not None


def test_get_missing_expired_and_access_counting(store: MemoryStore) -> None:
    assert store.get(A, "nothing") is None
    store.put(A, MemoryEntry("gone", 1, ttl=_now_ms() - 1))
    store.put(A, MemoryEntry("zero", 1, ttl=0))
    assert store.get(A, "gone") is None and store.get(A, "zero") is None
    store.put(A, MemoryEntry("live", {"n": 1}, ttl=_now_ms() + 3_600_000))
    first = store.get(A, "live")
    second = store.get(A, "live")
    assert first is not None and second is not None
    assert (first.access_count, second.access_count) == (1, 2)
    assert second.last_accessed_at is not None and second.last_accessed_at >= first.created_at  # type: ignore[operator]
    types = [ev.type for ev in store.log.read(1)]
    assert types.count(FE.STORE_ACCESSED) == 2  # a hit is an event; misses write nothing


def test_expired_entry_is_reusable(store: MemoryStore) -> None:
    store.put(A, MemoryEntry("e", "old", version=4, ttl=0))
    assert store.put_if_version(A, MemoryEntry("e", "new", version=1), 0).applied
    assert store.get(A, "e").value == "new"  # type: ignore[union-attr]
    store.put(A, MemoryEntry("f", "old", ttl=0))
    store.put(A, MemoryEntry("f", "fresh"))
    assert store.get(A, "f").value == "fresh"  # type: ignore[union-attr]


def test_put_if_version(store: MemoryStore) -> None:
    r = store.put_if_version(A, MemoryEntry("x", "v1", version=1), 1)
    assert (r.applied, r.current_version) == (False, 0)  # nothing stored: only 0 applies
    r = store.put_if_version(A, MemoryEntry("x", "v1", version=1), 0)
    assert (r.applied, r.current_version) == (True, 1)
    r = store.put_if_version(A, MemoryEntry("x", "dup", version=9), 0)
    assert (r.applied, r.current_version) == (False, 1)
    r = store.put_if_version(A, MemoryEntry("x", "v2", version=2), 1)
    assert (r.applied, r.current_version) == (True, 2)
    r = store.put_if_version(A, MemoryEntry("x", "stale", version=3), 1)
    assert (r.applied, r.current_version) == (False, 2)
    assert store.get(A, "x").value == "v2"  # type: ignore[union-attr]
    store.delete(A, "x")
    assert store.put_if_version(A, MemoryEntry("x", "again", version=1), 0).applied


def test_caller_chosen_versions_and_tiers(store: MemoryStore) -> None:
    store.put(A, MemoryEntry("x", "hot one", version=41, tier="hot"))
    e = store.get(A, "x")
    assert e is not None and (e.version, e.tier) == (41, "hot")  # the caller's own label
    assert store.put_if_version(A, MemoryEntry("x", "warm", version=42, tier="warm"), 41).applied


def test_put_many_last_write_wins(store: MemoryStore) -> None:
    store.put_many(A, [MemoryEntry("k", "first"), MemoryEntry("j", "j"), MemoryEntry("k", "last")])
    assert store.get(A, "k").value == "last"  # type: ignore[union-attr]
    assert {e.id for e in store.list(A).entries} == {"k", "j"}


def test_feedback_clamped_and_averaged(store: MemoryStore) -> None:
    assert store.get_feedback(A, "x") is None
    for u in (1, -1, 1):
        store.feedback(A, "x", u)
    fb = store.get_feedback(A, "x")
    assert fb is not None and fb.count == 3 and fb.average == pytest.approx(1 / 3)
    store.feedback(B, "y", 7.5)
    store.feedback(B, "y", -3)
    fb = store.get_feedback(B, "y")
    assert fb is not None and (fb.average, fb.count) == (0.0, 2)


def test_non_finite_feedback_raises_and_records_nothing(store: MemoryStore) -> None:
    before = store.log.last_seq
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError):
            store.feedback(A, "x", bad)
    assert store.log.last_seq == before and store.get_feedback(A, "x") is None


def test_signatures_survive_delete_not_forget(store: MemoryStore) -> None:
    store.put(A, MemoryEntry("x", 1))
    store.record_signature(A, "sha:abc")
    assert store.seen(A, "sha:abc") and not store.seen(B, "sha:abc")
    store.delete(A, "x")
    assert store.seen(A, "sha:abc")
    store.forget(A)
    assert not store.seen(A, "sha:abc")


def test_forget_removes_that_identity_only(store: MemoryStore) -> None:
    sub = MemoryIdentity(tenant="A", principal="u1")
    for ident in (A, B, sub):
        store.put(ident, MemoryEntry("x", str(ident)))
        store.record_signature(ident, "s")
        store.feedback(ident, "x", 0.5)
    store.forget(A)
    assert store.get(A, "x") is None and store.list(A).entries == []
    assert store.get_feedback(A, "x") is None and not store.seen(A, "s")
    for ident in (B, sub):
        assert store.get(ident, "x") is not None and store.seen(ident, "s")
        assert store.get_feedback(ident, "x") is not None
    ext = store.refresh().ext
    ns = encode_identity(A)
    assert ns not in ext.store and ns not in ext.sigs and ns not in ext.feedback


def test_list_pages_of_three_over_seven(store: MemoryStore) -> None:
    for i in range(7):
        store.put(A, MemoryEntry(f"e{i}", i))
    seen: list[str] = []
    cursor = None
    sizes = []
    while True:
        page = store.list(A, limit=3, cursor=cursor)
        sizes.append(len(page.entries))
        seen += [e.id for e in page.entries]
        cursor = page.cursor
        if cursor is None:
            break
    assert sizes == [3, 3, 1]
    assert seen == [f"e{i}" for i in range(6, -1, -1)]  # newest update first, disjoint


def test_list_cursor_stays_valid_while_others_write(facade_where: str | None) -> None:
    root = facade_where
    with MemoryStore(root) as s:
        other = MemoryStore(root) if root is not None else s
        for i in range(7):
            s.put(A, MemoryEntry(f"e{i}", i))
        p1 = s.list(A, limit=3)
        other.put(A, MemoryEntry("e1", "updated mid-listing"))  # not yet listed
        other.put(A, MemoryEntry("e6", "updated after listing"))  # already listed
        other.put(A, MemoryEntry("new", "made mid-listing"))
        p2 = s.list(A, limit=3, cursor=p1.cursor)
        p3 = s.list(A, limit=3, cursor=p2.cursor)
        ids = [e.id for p in (p1, p2, p3) for e in p.entries]
        assert sorted(ids) == sorted(f"e{i}" for i in range(7))  # complete and disjoint
        assert p3.cursor is None
        assert s.list(A).entries[0].id == "new"  # a fresh listing sees the newest first
        if other is not s:
            other.close()


def test_bad_cursor_starts_from_the_beginning(store: MemoryStore) -> None:
    for i in range(4):
        store.put(A, MemoryEntry(f"e{i}", i))
    first = [e.id for e in store.list(A, limit=2).entries]
    for bad in ("zz", "", "00", "5b315d", "not a cursor at all"):
        assert [e.id for e in store.list(A, limit=2, cursor=bad).entries] == first


def test_list_skips_expired_and_filters_tiers(store: MemoryStore) -> None:
    store.put(A, MemoryEntry("h", 1, tier="hot"))
    store.put(A, MemoryEntry("c", 1, tier="cold"))
    store.put(A, MemoryEntry("x", 1, tier="hot", ttl=0))
    assert [e.id for e in store.list(A, tiers=["hot"]).entries] == ["h"]
    assert {e.id for e in store.list(A).entries} == {"h", "c"}


def test_search(store: MemoryStore) -> None:
    store.put_many(
        A,
        [
            MemoryEntry("b", 1, embedding=(1.0, 0.0), embedder_id="m1", tier="hot"),
            MemoryEntry("a", 1, embedding=(2.0, 0.0), embedder_id="m1", tier="hot"),  # tie
            MemoryEntry("c", 1, embedding=(0.6, 0.8), embedder_id="m1", tier="warm"),
            MemoryEntry("d", 1, embedding=(1.0, 0.0, 0.0), embedder_id="m1"),  # other dim
            MemoryEntry("e", 1, embedding=(1.0, 0.0), embedder_id="m2"),  # other embedder
            MemoryEntry("f", 1),  # no embedding
            MemoryEntry("g", 1, embedding=(1.0, 0.0), embedder_id="m1", ttl=0),  # expired
        ],
    )
    store.put(B, MemoryEntry("z", 1, embedding=(1.0, 0.0), embedder_id="m1"))
    hits = store.search(A, [1.0, 0.0], embedder_id="m1")
    assert [h.entry.id for h in hits] == ["a", "b", "c"]
    assert [round(h.score, 6) for h in hits] == [1.0, 1.0, 0.6]
    assert [h.entry.id for h in store.search(A, [1.0, 0.0], k=1, embedder_id="m1")] == ["a"]
    assert [h.entry.id for h in store.search(A, [1.0, 0.0], tiers=["warm"])] == ["c"]
    assert [h.entry.id for h in store.search(A, [1.0, 0.0], min_score=0.9, embedder_id="m1")] == [
        "a",
        "b",
    ]
    assert [h.entry.id for h in store.search(A, [1.0, 0.0])] == ["a", "b", "e", "c"]
    with pytest.raises(ValueError):
        store.search(A, [1.0, 0.0], k=0)


def test_replay_with_store_events_equals_live(
    tmp_path: Path, replays_to: Callable[[str, str], None]
) -> None:
    root = str(tmp_path / "swarm")
    with MemoryStore(root) as s:
        for i in range(10):
            s.put(A, MemoryEntry(f"e{i}", i, embedding=(1.0, float(i))))
        s.swarm.checkpoint()
        s.get(A, "e1")
        s.put_if_version(A, MemoryEntry("e2", "x", version=2), 1)
        s.feedback(A, "e2", 0.5)
        s.record_signature(B, "sig")
        s.delete(A, "e3")
        s.forget(B)
        live = s.refresh().digest()
    replays_to(root, live)


def test_values_come_back_as_the_log_holds_them(tmp_path: Path) -> None:
    root = str(tmp_path / "swarm")
    with MemoryStore(root) as s, MemoryStore(root) as other:
        s.put(A, MemoryEntry("t", {"pair": (1, 2), "n": 1.5}))
        assert s.get(A, "t").value == other.get(A, "t").value == {"pair": [1, 2], "n": 1.5}  # type: ignore[union-attr]
        assert s.refresh().digest() == other.refresh().digest()
        with pytest.raises(ValueError):
            s.put(A, MemoryEntry("bad", {1, 2}))


def test_search_ties_and_filters_past_the_first_candidates(store: MemoryStore) -> None:
    same = [MemoryEntry(f"s{i:03d}", i, embedding=(1.0, 0.0), tier="cold") for i in range(60)]
    weaker = [MemoryEntry(f"w{i:03d}", i, embedding=(1.0, 0.5), tier="hot") for i in range(60)]
    store.put_many(A, list(reversed(same)) + weaker)
    hits = store.search(A, [1.0, 0.0], k=10)
    assert [h.entry.id for h in hits] == [f"s{i:03d}" for i in range(10)]  # ties by id
    hot = store.search(A, [1.0, 0.0], k=5, tiers=["hot"])  # all 60 best rows filtered out
    assert [h.entry.id for h in hot] == [f"w{i:03d}" for i in range(5)]
    assert len(store.search(A, [1.0, 0.0], k=500)) == 120
