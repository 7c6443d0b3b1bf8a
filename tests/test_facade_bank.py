"""Seed 004's MemoryBank over the log, case by case (CONFORMANCE "Recall"), on a
private in-memory log and on a FileLog. Two processes on one root: test_facade_procs.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest

from synthesizer import MemoryBank
from synthesizer.compat import events as FE

SEASONAL = "The sales data shows a strong twelve month seasonal cycle"


@pytest.fixture
def bank(facade_where: str | None) -> Iterator[MemoryBank]:
    b = MemoryBank(facade_where)
    yield b
    b.close()


def test_memory_types(bank: MemoryBank) -> None:
    for t in ("insight", "fact", "relationship", "conclusion"):
        bank.store_memory("a", f"a memory of type {t}", memory_type=t)
    with pytest.raises(ValueError, match="insight, fact, relationship, conclusion"):
        bank.store_memory("a", "not a type", memory_type="position")
    stats = bank.get_agent_memory_stats("a")
    assert stats["memories_by_type"] == {
        "insight": 1,
        "fact": 1,
        "relationship": 1,
        "conclusion": 1,
    }
    assert (
        bank.store_memory("a", "default type")
        and bank.get_agent_memory_stats("a")["memories_by_type"]["insight"] == 2
    )


def test_storing_never_merges(bank: MemoryBank) -> None:
    a = bank.store_memory("a", SEASONAL)
    b = bank.store_memory("a", SEASONAL)
    assert a != b and bank.get_agent_memory_stats("a")["total_memories"] == 2


def test_memories_belong_to_their_agent(bank: MemoryBank) -> None:
    mine = bank.store_memory("a", SEASONAL, thread_id="t1")
    bank.store_memory("b", SEASONAL, thread_id="t1")
    hits = bank.recall_memories("a", SEASONAL)
    assert [h.memory_id for h in hits] == [mine]
    assert [m.memory_id for m in bank.get_thread_memories("a", "t1")] == [mine]
    assert bank.get_agent_memory_stats("a")["total_memories"] == 1
    assert bank.recall_memories("nobody", SEASONAL) == []


def test_thread_first_recall_then_similarity_threshold_and_limit(bank: MemoryBank) -> None:
    close = bank.store_memory("a", SEASONAL + " in retail")
    closer = bank.store_memory("a", SEASONAL)
    in_thread = bank.store_memory("a", "seasonal cycle noted in this thread", thread_id="t9")
    bank.store_memory("a", "Cats sleep most of the day")
    bank.store_memory("a", SEASONAL + " again and again", thread_id="t9")
    hits = bank.recall_memories("a", SEASONAL, thread_id="t9", similarity_threshold=0.2)
    assert len(hits) == 3  # the default limit
    assert [h.thread_id for h in hits[:2]] == ["t9", "t9"]  # the thread's memories first
    assert hits[2].memory_id == closer  # then the rest by similarity
    assert hits[0].similarity >= hits[1].similarity
    assert in_thread in {h.memory_id for h in hits}
    plain = bank.recall_memories("a", SEASONAL, limit=10)  # default threshold 0.6
    assert plain and all(h.similarity >= 0.6 for h in plain)
    assert [h.memory_id for h in plain[:2]] == [closer, plain[1].memory_id]
    assert close in {h.memory_id for h in plain}
    assert "Cats" not in " ".join(h.content for h in plain)


def test_results_carry_the_seeds_columns(bank: MemoryBank) -> None:
    mid = bank.store_memory("a", SEASONAL, thread_id="t1", memory_type="fact")
    (hit,) = bank.recall_memories("a", SEASONAL)
    assert (hit.memory_id, hit.content, hit.memory_type, hit.thread_id) == (
        mid,
        SEASONAL,
        "fact",
        "t1",
    )
    assert 0.99 <= hit.similarity <= 1.0 + 1e-6 and isinstance(hit.created_at, datetime)
    (row,) = bank.get_thread_memories("a", "t1")
    assert not hasattr(row, "similarity") and row.memory_id == mid


def test_vector_queries_use_the_callers_vectors(bank: MemoryBank) -> None:
    x = bank.store_memory("a", "east", embedding=[1.0, 0.0, 0.0])
    bank.store_memory("a", "north", embedding=[0.0, 1.0, 0.0])
    bank.store_memory("a", "east by text only")
    hits = bank.recall_memories("a", [0.9, 0.1, 0.0])
    assert [h.memory_id for h in hits] == [x]


def test_thread_memories_chronological_and_stats(bank: MemoryBank) -> None:
    ids = [bank.store_memory("a", f"step {i} of the plan", thread_id="t1") for i in range(4)]
    bank.store_memory("a", "elsewhere", thread_id="t2")
    bank.store_memory("a", "no thread")
    rows = bank.get_thread_memories("a", "t1")
    assert [r.memory_id for r in rows] == ids
    assert [r.created_at for r in rows] == sorted(r.created_at for r in rows)
    s = bank.get_agent_memory_stats("a")
    assert s["total_memories"] == 6 and s["threads_with_memories"] == 2
    assert s["oldest_memory"] == rows[0].created_at and s["latest_memory"] >= rows[-1].created_at
    empty = bank.get_agent_memory_stats("nobody")
    assert empty["total_memories"] == 0 and empty["oldest_memory"] is None


def test_consolidation_above_point_nine_keeps_provenance(bank: MemoryBank) -> None:
    a = bank.store_memory("a", SEASONAL)
    b = bank.store_memory("a", SEASONAL + ".")  # near-identical
    c = bank.store_memory("a", "Cats sleep most of the day")
    other = bank.store_memory("z", SEASONAL)
    time.sleep(0.01)
    assert bank.consolidate_memories("a", older_than_days=0) == 1  # one remains
    assert bank.get_agent_memory_stats("a")["total_memories"] == 2
    prov = bank.provenance(a)
    assert prov["absorbed"] == [b]
    seqs = {ev.seq for ev in bank.log.read(1) if ev.type == FE.BANK_STORED}
    assert set(prov["events"]) <= seqs and len(prov["events"]) == 2  # both raw events
    assert bank.refresh().facts.get(c) is not None and bank.refresh().facts.get(other)
    assert bank.consolidate_memories("a", older_than_days=0) == 0
    assert bank.consolidate_memories("z", older_than_days=30) == 0  # too young


def test_prune_old_memories(bank: MemoryBank) -> None:
    for i in range(3):
        bank.store_memory("a", f"old memory {i}")
    bank.store_memory("b", "someone else's")
    assert bank.prune_old_memories("a", older_than_days=90) == 0  # nothing that old
    time.sleep(0.01)
    assert bank.prune_old_memories("a", older_than_days=0) == 3
    assert bank.get_agent_memory_stats("a")["total_memories"] == 0
    assert bank.get_agent_memory_stats("b")["total_memories"] == 1
    with pytest.raises(ValueError):
        bank.prune_old_memories("a", older_than_days=-1)


def test_replay_with_bank_events_equals_live(
    tmp_path: Path, replays_to: Callable[[str, str], None]
) -> None:
    root = str(tmp_path / "swarm")
    with MemoryBank(root) as bank:
        for i in range(6):
            bank.store_memory("a", f"{SEASONAL} {'!' * i}", thread_id=f"t{i % 2}")
        bank.swarm.checkpoint()
        bank.consolidate_memories("a", older_than_days=0)
        bank.store_memory("b", "kept")
        bank.prune_old_memories("b", older_than_days=0)
        live = bank.refresh().digest()
    replays_to(root, live)


def test_dashboard_counts_events_per_facade(tmp_path: Path) -> None:
    from dashboards import markdown
    from synthesizer import MemoryEntry, MemoryStore, SharedMemoryPool
    from synthesizer.metrics import compute

    root = str(tmp_path / "swarm")
    with SharedMemoryPool(root) as pool, MemoryStore(root) as store, MemoryBank(root) as bank:
        pool.share("a", "one")
        pool.share("a", "two")
        store.put({"tenant": "t"}, MemoryEntry("x", 1))
        bank.store_memory("a", "three")
        bank.prune_old_memories("a", 90)
        m = compute(bank.refresh(), swarm="s")
    assert m.facades == {"bank": 2, "pool": 2, "store": 1}
    assert "| seed facades | pool 2, store 1, bank 2 events |" in markdown.render(m)


def test_forgetting_an_agent_drops_its_bank_memories(tmp_path: Path) -> None:
    from swarmlog import Event
    from synthesizer import events as T

    with MemoryBank(str(tmp_path / "swarm")) as bank:
        gone = bank.store_memory("leaver", "a memory to erase")
        kept = bank.store_memory("stayer", "a memory to keep")
        forget = Event(agent="operator", type=T.IDENTITY_FORGOTTEN, body={"agent": "leaver"})
        bank.log.append(forget)
        state = bank.refresh()
        assert gone not in state.facts and gone not in state.ext.bank
        assert "leaver" not in state.ext.bank.values() and state.ext.bank[kept] == "stayer"
        assert bank.get_agent_memory_stats("leaver")["total_memories"] == 0
