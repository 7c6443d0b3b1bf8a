"""CONFORMANCE "Memory pool" (seed 000), case by case, through the fold and pool.py."""

from __future__ import annotations

import math

import pytest

from swarmlog.envelope import Event, validate_for_append
from swarmlog.errors import InvalidEvent
from synthesizer import SynthConfig
from synthesizer import events as T
from synthesizer.state import pool
from synthesizer.state.facts import Fact
from tests.test_fold_facts import Stream


def cfg(**pool_kw: float) -> SynthConfig:
    """A config with some pool settings changed."""
    return SynthConfig(pool=pool_kw)


# ---------------------------------------------------------------- initial strength


def test_new_memory_starts_at_full_strength() -> None:
    st = Stream()
    assert st.state.facts[st.fact("x")].strength == 1.0


def test_max_strength_below_one_caps_the_start() -> None:
    st = Stream(cfg(max_strength=0.8))
    fid = st.fact("x")
    assert st.state.facts[fid].strength == 0.8
    st.reinforce(fid, "b")
    assert st.state.facts[fid].strength == 0.8
    assert pool.initial_strength(0.5) == 0.5 and pool.initial_strength(3.0) == 1.0


def test_board_created_fact_respects_cap_too() -> None:
    st = Stream(cfg(max_strength=0.6))
    st.ev(T.FACT_UPDATED, {"content": "c"}, key="k1")
    assert st.state.facts["k1"].strength == 0.6


# ---------------------------------------------------------------- importance


def test_importance_defaults_and_range() -> None:
    st = Stream()
    assert st.state.facts[st.fact("x")].importance == 0.5
    for bad in (-0.01, 1.01):
        with pytest.raises(InvalidEvent):
            validate_for_append(
                Event(agent="a", type=T.MEMORY_SHARED, body={"content": "x", "importance": bad})
            )
    for ok in (0, 1, 0.0, 1.0):
        validate_for_append(
            Event(agent="a", type=T.MEMORY_SHARED, body={"content": "x", "importance": ok})
        )


# ---------------------------------------------------------------- reinforcement


def test_reinforcement_once_per_agent() -> None:
    st = Stream(cfg(decay_rate=0.1))
    fid = st.fact("x")
    st.tick()
    f = st.state.facts[fid]
    assert f.strength == pytest.approx(0.9)
    st.reinforce(fid, "b")
    assert (f.strength, f.reinforcements, f.reinforced_by) == (1.0, 1, ["b"])
    st.reinforce(fid, "b")  # repeat: no change
    assert (f.strength, f.reinforcements) == (1.0, 1)
    st.reinforce("f999", "b")  # unknown: no change
    assert st.state.metrics.ignored == {"memory.reinforced": 2}
    assert st.state.metrics.reinforcements == 1


def test_reinforcement_counts_at_cap() -> None:
    st = Stream()
    fid = st.fact("x")
    for agent in ("b", "c", "d"):
        st.reinforce(fid, agent)
    f = st.state.facts[fid]
    assert f.strength == 1.0 and f.reinforcements == 3


def test_boost_is_added_and_capped() -> None:
    st = Stream(cfg(decay_rate=0.5, boost=0.2))
    fid = st.fact("x")
    st.tick()  # 0.5
    st.reinforce(fid, "b")
    assert st.state.facts[fid].strength == pytest.approx(0.7)
    assert pool.boosted(0.9, 0.2, 1.0) == 1.0 and pool.boosted(0.5, 0.2, 1.0) == 0.7


def test_reinforcer_is_the_original_author_counts_once() -> None:
    st = Stream()
    fid = st.fact("x", agent="a1")
    st.reinforce(fid, "a1")
    st.reinforce(fid, "a1")
    assert st.state.facts[fid].reinforcements == 1


# ---------------------------------------------------------------- decay


def test_one_tick_rate_point_one() -> None:
    st = Stream(cfg(decay_rate=0.1))
    fid = st.fact("x")
    st.tick()
    assert st.state.facts[fid].strength == pytest.approx(0.9)
    st.tick()
    assert st.state.facts[fid].strength == pytest.approx(0.81)


def test_decay_with_five_reinforcements_uses_natural_log() -> None:
    st = Stream()
    fid = st.fact("x")
    for agent in ("b", "c", "d", "e", "g"):
        st.reinforce(fid, agent)
    st.tick()
    expected = 1.0 - 0.05 / (1.0 + math.log(6))
    assert st.state.facts[fid].strength == expected
    assert expected == pytest.approx(0.98209, abs=1e-5)
    assert pool.decay_factor(0.05, 20) == pytest.approx(1 - 0.05 / (1 + math.log(21)))
    assert pool.decay_factor(0.05, 0) == 0.95


def test_strict_eviction_threshold() -> None:
    st = Stream(cfg(decay_rate=0.5, eviction_threshold=0.25))
    fid = st.fact("x")
    st.tick()  # 0.5
    st.tick()  # 0.25: equal to the threshold, kept
    assert st.state.facts[fid].strength == 0.25
    assert not pool.evictable(0.25, 0.25) and pool.evictable(0.2499, 0.25)
    st.tick()  # 0.125 -> evicted
    assert fid not in st.state.facts
    assert st.state.metrics.evictions == {"decay": 1}
    assert st.state.stats().evictions == 1


def test_tick_evicts_every_weak_fact_and_counts_them() -> None:
    st = Stream(cfg(decay_rate=0.5, eviction_threshold=0.3))
    for i in range(3):
        st.fact(f"w{i}")
    strong = st.fact("s")
    st.tick()  # all 0.5
    for agent in ("b", "c"):
        st.reinforce(strong, agent)  # 0.7, then 0.9, decays slower
    st.tick()  # weak: 0.25 < 0.3 evicted; strong: 0.9 * (1 - 0.5/(1+ln 3))
    assert list(st.state.facts) == [strong]
    assert st.state.metrics.evictions == {"decay": 3}
    assert pool.select_evictions([], 0.1) == []


def test_decay_survives_other_events_between_ticks() -> None:
    st = Stream(cfg(decay_rate=0.1))
    fid = st.fact("x")
    st.recall([fid])
    st.ev(T.MEMORY_FEEDBACK, {"target": fid, "usefulness": 1.0})
    assert st.state.facts[fid].strength == 1.0  # only ticks decay strength


# ---------------------------------------------------------------- capacity


def test_full_pool_evicts_oldest_on_tie() -> None:
    st = Stream(cfg(capacity=2))
    a = st.fact("a")
    b = st.fact("b")
    c = st.fact("c")
    assert list(st.state.facts) == [b, c]
    assert st.state.metrics.evictions == {"capacity": 1}
    assert a in st.state.signatures.values()


def test_full_pool_evicts_weakest() -> None:
    st = Stream(cfg(capacity=3, decay_rate=0.1))
    a = st.fact("a")
    b = st.fact("b")
    st.tick()  # a, b: 0.9
    st.reinforce(a, "z")  # a: 1.0
    c = st.fact("c")  # 1.0
    st.fact("d")  # full: b is the weakest
    assert b not in st.state.facts and {a, c} <= set(st.state.facts)


def test_capacity_victim_pure() -> None:
    def mk(fid: str, s: float, seq: int) -> Fact:
        return Fact(
            id=fid, content="", category="c", importance=0.5,
            created_seq=seq, created_ts=0.0, version=seq, strength=s,
        )  # fmt: skip

    assert pool.capacity_victim([]) is None
    assert pool.capacity_victim([mk("x", 0.5, 9), mk("y", 0.5, 3), mk("z", 0.6, 1)]) == "y"
    assert pool.capacity_victim([mk("x", 0.4, 9), mk("y", 0.5, 3)]) == "x"


# ---------------------------------------------------------------- queries and stats


def test_by_agent_in_insertion_order() -> None:
    st = Stream()
    a1 = st.fact("one", agent="a")
    st.fact("two", agent="b")
    a3 = st.fact("three", agent="a")
    assert [f.id for f in st.state.by_agent("a")] == [a1, a3]
    assert st.state.by_category("general")[0].id == a1


def test_stats_of_fresh_pool() -> None:
    st = Stream()
    st.fact("a", agent="x", category="discovery")
    st.fact("b", agent="y", category="discovery")
    st.fact("c", agent="x", category="proposal")
    s = st.state.stats()
    assert s.total == 3 and s.average_strength == 1.0
    assert s.by_category == {"discovery": 2, "proposal": 1}
    assert s.by_agent == {"x": 2, "y": 1}
    assert s.by_tier == {"working": 3} and s.by_status == {"active": 3}
    assert (s.total_reinforcements, s.near_eviction, s.evictions) == (0, 0, 0)
    assert s.as_dict()["total"] == 3


def test_stats_after_decay() -> None:
    st = Stream(cfg(decay_rate=0.5, eviction_threshold=0.1))
    a = st.fact("a")
    st.fact("b")
    st.tick()
    st.tick()
    st.tick()  # 0.125 < 0.2: near eviction
    st.reinforce(a, "z")  # a: 0.325
    s = st.state.stats()
    assert s.average_strength == pytest.approx((0.325 + 0.125) / 2)
    assert s.near_eviction == 1 and s.total_reinforcements == 1


def test_empty_pool_stats() -> None:
    s = Stream().state.stats()
    assert s.total == 0 and s.average_strength == 0.0 and s.by_agent == {}


def test_ids_never_repeat() -> None:
    st = Stream(cfg(capacity=1))
    ids = [st.fact(f"m{i}") for i in range(5)]
    assert len(set(ids)) == 5 and len(st.state.facts) == 1
