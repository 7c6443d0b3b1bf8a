"""Seed 000's SharedMemoryPool over the log, case by case (CONFORMANCE "Memory pool").

Each case runs on a private in-memory log (``target=None``) and on a FileLog; the
cross-process cases are in ``test_facade_procs.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from synthesizer import SharedMemoryPool
from synthesizer import events as T
from synthesizer.compat import events as FE
from synthesizer.configlog import ConfigError


@pytest.fixture
def make(facade_where: str | None) -> Iterator[Any]:
    """A factory of pools on ``facade_where``; closes them after the test."""
    made: list[SharedMemoryPool] = []

    def _make(**kw: Any) -> SharedMemoryPool:
        p = SharedMemoryPool(facade_where, **kw)
        made.append(p)
        return p

    yield _make
    for p in made:
        p.close()


def test_new_memory_starts_at_one_and_at_a_lower_cap(make: Any) -> None:
    pool = make()
    m = pool.share("analyst-1", "The dataset has a 12-month cycle", "discovery", 0.8)
    assert pool.get_strength(m.id) == 1.0
    assert (m.source_agent_id, m.category, m.importance) == ("analyst-1", "discovery", 0.8)
    assert len(m.embedding) == pool.swarm.embedder.dim


def test_strength_starts_at_max_strength_below_one(tmp_path: Path) -> None:
    with SharedMemoryPool(max_strength=0.6) as pool:  # fixed: the seed exceeded the cap
        m = pool.share("a", "capped memory")
        assert pool.get_strength(m.id) == 0.6


def test_importance_defaults_and_range(make: Any) -> None:
    pool = make()
    assert pool.share("a", "plain").importance == 0.5
    for bad in (-0.1, 1.5, math.nan):
        with pytest.raises(ValueError):
            pool.share("a", "out of range", importance=bad)
    assert pool.size == 1


def test_every_share_is_its_own_memory(make: Any) -> None:
    pool = make()
    a = pool.share("a", "same words")
    b = pool.share("b", "same words")
    assert a.id != b.id and pool.size == 2


def test_dedup_true_merges_exact_duplicates(tmp_path: Path) -> None:
    with SharedMemoryPool(dedup=True) as pool:
        a = pool.share("a", "Same words.")
        b = pool.share("b", "same   WORDS")
        assert a.id == b.id and pool.size == 1
        f = pool.refresh().facts[a.id]
        assert [e.agent for e in f.evidence] == ["a", "b"]


def test_reinforce_once_per_agent(make: Any) -> None:
    pool = make()
    m = pool.share("a", "reinforce me")
    assert pool.reinforce("b", m.id) is True
    assert pool.reinforce("b", m.id) is False  # second vote of the same agent
    assert pool.reinforce("b", "f999999") is False  # unknown id
    f = pool.refresh().facts[m.id]
    assert f.reinforcements == 1 and f.strength == 1.0  # counted even at the cap


def test_three_reinforcing_agents_boost_and_slow_decay(make: Any) -> None:
    pool = make(decay_rate=0.5)
    m = pool.share("a", "valued")
    other = pool.share("a", "unvalued")
    pool.decay()
    s0 = pool.get_strength(m.id)
    for agent in ("x", "y", "z"):
        assert pool.reinforce(agent, m.id)
    assert pool.get_strength(m.id) == pytest.approx(min(1.0, s0 + 0.6))
    pool.decay()
    assert pool.refresh().facts[m.id].reinforcements == 3
    assert pool.get_strength(m.id) == pytest.approx(1.0 * (1 - 0.5 / (1 + math.log(4))))
    assert pool.get_strength(other.id) == pytest.approx(0.25)
    assert pool.stats().total_reinforcements == 3


def test_one_tick_at_rate_point_one(make: Any) -> None:
    pool = make(decay_rate=0.1)
    m = pool.share("a", "decays")
    assert pool.decay() == 0
    assert pool.get_strength(m.id) == pytest.approx(0.9)
    types = [ev.type for ev in pool.log.read(1)]
    assert types.count(T.POOL_TICK) == 1  # decay() is one pool.tick


def test_eviction_within_five_decays(make: Any) -> None:
    pool = make(decay_rate=0.3, eviction_threshold=0.5)
    m = pool.share("a", "fading")
    evicted = [pool.decay() for _ in range(5)]
    assert sum(evicted) == 1 and evicted[1] == 1  # 0.7, then 0.49 < 0.5 (strict)
    assert pool.get(m.id) is None and pool.stats().evicted_total == 1


def test_capacity_evicts_weakest_then_oldest(make: Any) -> None:
    pool = make(max_capacity=3, decay_rate=0.1)
    a, b, c = (pool.share("a", w) for w in ("first", "second", "third"))
    d = pool.share("a", "fourth")  # full, all at 1.0: the oldest goes
    assert pool.get(a.id) is None and pool.size == 3
    pool.decay()  # b, c, d at 0.9
    pool.reinforce("x", b.id)
    pool.reinforce("x", d.id)  # b, d back at 1.0: c is the weakest
    e = pool.share("a", "fifth")
    assert pool.get(c.id) is None
    assert [m.id for m in pool.get_by_agent("a")] == [b.id, d.id, e.id]
    assert pool.stats().evicted_total == 2


def test_search_ranks_by_cosine_importance_strength(make: Any) -> None:
    pool = make()
    assert pool.search("anything") == []
    hi = pool.share("a", "seasonal patterns in sales data", importance=0.9)
    lo = pool.share("b", "seasonal patterns in sales data", importance=0.3)
    pool.share("c", "an unrelated note about cats")
    hits = pool.search("seasonal patterns in sales", limit=2)
    assert [h.memory.id for h in hits] == [hi.id, lo.id]
    for h in hits:
        assert h.relevance == pytest.approx(h.similarity * h.memory.importance * h.strength)
    assert [h.memory.id for h in pool.search("seasonal", 5, category="general")][:1] == [hi.id]
    assert pool.search("seasonal", category="nope") == []
    for bad in (0, -1):
        with pytest.raises(ValueError):
            pool.search("x", limit=bad)


def test_get_by_agent_and_category_in_insertion_order(make: Any) -> None:
    pool = make()
    ids = [pool.share("a", f"note {i}", category="c1" if i % 2 else "c2").id for i in range(4)]
    pool.share("b", "other agent")
    assert [m.id for m in pool.get_by_agent("a")] == ids
    assert [m.id for m in pool.get_by_category("c1")] == [ids[1], ids[3]]


def test_stats(make: Any) -> None:
    pool = make(decay_rate=0.5, eviction_threshold=0.3)
    s = pool.stats()
    assert (s.total_memories, s.evicted_total) == (0, 0)
    pool.share("a", "one", "x")
    pool.share("b", "two", "y")
    pool.share("b", "three", "y")
    s = pool.stats()
    assert s.total_memories == 3 and s.average_strength == 1.0
    assert s.category_counts == {"x": 1, "y": 2} and s.agent_counts == {"a": 1, "b": 2}
    pool.decay()  # 0.5: below 2 x 0.3 -> near eviction
    assert pool.stats().near_eviction == 3
    assert pool.decay() == 3 and pool.stats().evicted_total == 3


def test_reset_empties_and_ids_never_repeat(make: Any) -> None:
    pool = make(decay_rate=0.9)
    first = {pool.share("a", f"m{i}").id for i in range(3)}
    pool.decay()
    pool.decay()
    assert pool.stats().evicted_total == 3
    pool.share("a", "survivor")
    pool.reset()
    assert pool.size == 0 and pool.stats().evicted_total == 0  # counts since the reset
    again = {pool.share("a", f"m{i}").id for i in range(3)}
    assert not (first & again)
    assert sum(1 for ev in pool.log.read(1) if ev.type == FE.POOL_RESET) == 1


def test_vector_memory_adapter(make: Any) -> None:
    pool = make()
    vm = pool.to_vector_memory()
    mid = vm.store("model weights drift after retraining")
    mid2 = vm.store("drift monitors", {"agent": "ops", "category": "alerts", "importance": 0.9})
    hits = vm.search("weights drift", limit=10)
    assert {h.id for h in hits} == {mid, mid2}
    md = {h.id: h.metadata for h in hits}
    assert md[mid] == {"agent": "system", "category": "general", "importance": "0.5"}
    assert md[mid2] == {"agent": "ops", "category": "alerts", "importance": "0.9"}
    assert all(isinstance(v, str) for h in hits for v in h.metadata.values())
    assert vm.reinforce(mid) is True and vm.reinforce(mid) is False
    assert pool.refresh().facts[mid].reinforced_by == ["system"]
    assert vm.decay() == 0


def test_share_visible_to_a_second_pool_after_refresh(tmp_path: Path) -> None:
    root = str(tmp_path / "swarm")
    with SharedMemoryPool(root) as p1, SharedMemoryPool(root) as p2:
        m = p1.share("a", "seen by the other handle")
        assert p2.get(m.id) is not None and p2.size == 1
        assert p2.reinforce("b", m.id)
        assert p1.refresh().facts[m.id].reinforcements == 1


def test_pool_numbers_are_the_swarms_configuration(tmp_path: Path) -> None:
    root = str(tmp_path / "swarm")
    with SharedMemoryPool(root, decay_rate=0.3, max_capacity=7) as pool:
        assert pool.config.pool.decay_rate == 0.3 and pool.config.pool.capacity == 7
    with pytest.raises(ConfigError):
        SharedMemoryPool(root, decay_rate=0.2)
    with SharedMemoryPool(root, decay_rate=0.3, max_capacity=7) as again:
        assert again.config.pool.capacity == 7


def test_replay_with_pool_events_equals_live(
    tmp_path: Path, replays_to: Callable[[str, str], None]
) -> None:
    root = str(tmp_path / "swarm")
    with SharedMemoryPool(root, decay_rate=0.2) as pool:
        ids = [pool.share(f"a{i % 3}", f"memory number {i}").id for i in range(12)]
        pool.swarm.checkpoint()
        pool.reinforce("z", ids[0])
        pool.decay()
        pool.reset()
        pool.share("a", "after reset")
        live = pool.refresh().digest()
    replays_to(root, live)


def test_memories_leave_by_strength_only_on_a_pool_log() -> None:
    """A new log opened by the pool turns off tier energy expiry (seed 000 evicts by
    strength alone): ten hours without access, one tick, the memory is still there."""
    from synthesizer.state import SwarmState, fold_dicts

    with SharedMemoryPool() as pool:
        cfg = pool.config
    assert cfg.tiers.working_expire == 0.0
    evs = [
        {"seq": 1, "ts": 0.0, "agent": "a", "type": FE.POOL_SHARED, "body": {"content": "x"}},
        {"seq": 2, "ts": 36000.0, "agent": "s", "type": T.POOL_TICK, "body": {}},
    ]
    assert "f1" in fold_dicts(SwarmState(cfg), [dict(e) for e in evs]).facts
    default = fold_dicts(SwarmState(), [dict(e) for e in evs])
    assert "f1" not in default.facts  # the swarm's default tiers would expire it


def test_search_is_dense_by_default_and_hybrid_when_asked(make: Any) -> None:
    pool = make()
    exact = pool.share("a", "Checkout fails with error PAY-4012 when the card is declined")
    pool.share("b", "Checkout fails with error PAY-4021 when the cart is empty")
    pool.share("c", "The release train leaves every second Tuesday")
    dense = pool.search("PAY-4012", limit=3)
    hybrid = pool.search("PAY-4012", limit=3, mode="hybrid")
    assert hybrid[0].memory.id == exact.id
    # dense: relevance is the seed's cosine x importance x strength, nothing added
    for r in dense:
        assert r.relevance == pytest.approx(r.similarity * r.memory.importance * r.strength)
    assert hybrid[0].relevance > next(r for r in dense if r.memory.id == exact.id).relevance
    with pytest.raises(ValueError, match="mode must be dense or hybrid, not 'bm25'"):
        pool.search("PAY-4012", mode="bm25")
