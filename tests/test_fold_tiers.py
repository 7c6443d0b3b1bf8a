"""CONFORMANCE "Tiers and consolidation" (seed 003), case by case, in event time."""

from __future__ import annotations

import math

import pytest

from synthesizer import SynthConfig
from synthesizer import events as T
from synthesizer.config import TierConfig
from synthesizer.state import tiers
from synthesizer.state.facts import Fact
from tests.test_fold_facts import Stream

H = 3600.0


def hot(st: Stream, fid: str, n: int, agent: str = "a1") -> None:
    """``n`` recalls of ``fid`` at the same instant (no decay between them)."""
    for _ in range(n):
        st.recall([fid], agent=agent, dt=0.0)


def test_new_memory_is_working_with_energy_one() -> None:
    st = Stream()
    f = st.state.facts[st.fact("x")]
    assert (f.tier, f.energy, f.energy_ts) == ("working", 1.0, st.ts)


def test_energy_decays_exponentially_per_tier() -> None:
    cfg = TierConfig()
    assert tiers.decayed_energy(1.0, "working", 2 * H, cfg) == pytest.approx(math.exp(-1.0))
    assert tiers.decayed_energy(3.0, "short_term", 10 * H, cfg) == pytest.approx(3 * math.exp(-0.5))
    assert tiers.decayed_energy(6.0, "long_term", 100 * H, cfg) == pytest.approx(6 * math.exp(-0.1))
    assert tiers.decayed_energy(2.0, "working", -5.0, cfg) == 2.0


def test_access_adds_one_after_decaying() -> None:
    st = Stream()
    fid = st.fact("x")
    st.recall([fid], dt=H)
    f = st.state.facts[fid]
    assert f.energy == pytest.approx(math.exp(-0.5) + 1.0)
    assert f.access_count == 1 and f.energy_ts == st.ts


def test_clock_never_runs_backwards() -> None:
    st = Stream()
    fid = st.fact("x")
    f = st.state.facts[fid]
    st.recall([fid], dt=-600.0)  # a writer with a slow clock
    assert f.energy == 2.0 and f.energy_ts == st.ts + 600.0


def test_promotion_thresholds_are_strict() -> None:
    st = Stream()
    fid = st.fact("x")
    f = st.state.facts[fid]
    hot(st, fid, 1)
    assert (f.energy, f.tier) == (2.0, "working")  # not above 2.0
    hot(st, fid, 1)
    assert (f.energy, f.tier) == (3.0, "short_term")
    hot(st, fid, 2)
    assert (f.energy, f.tier) == (5.0, "short_term")  # not above 5.0
    hot(st, fid, 1)
    assert (f.energy, f.tier) == (6.0, "long_term")
    assert st.state.metrics.promotions == 2


def test_short_term_decays_slower_than_working() -> None:
    st = Stream()
    w = st.fact("w")
    s = st.fact("s", dt=0.0)
    hot(st, s, 2)  # 3.0 short_term
    hot(st, w, 1)  # 2.0 working
    st.tick(dt=H)
    fw, fs = st.state.facts[w], st.state.facts[s]
    assert fw.energy == pytest.approx(2.0 * math.exp(-0.5))
    assert fs.energy == pytest.approx(3.0 * math.exp(-0.05))


def test_session_end_promotion() -> None:
    st = Stream()
    warm = st.fact("warm", session="s1")
    cold = st.fact("cold", session="s1", dt=0.0)
    other = st.fact("other", session="s2", dt=0.0)
    hot(st, warm, 1)  # 2.0: working (not above 2.0)
    hot(st, other, 1)  # 2.0 but session s2
    st.ev(T.SESSION_ENDED, {}, session="s1", dt=0.0)
    facts = st.state.facts
    assert facts[warm].tier == "short_term"
    assert facts[cold].tier == "working" and facts[other].tier == "working"
    st.ev(T.SESSION_ENDED, {"session": "s2"}, agent="orchestrator", dt=0.0)
    assert facts[other].tier == "short_term"


def test_session_end_decays_first() -> None:
    st = Stream()
    fid = st.fact("x", session="s1")
    hot(st, fid, 1)  # 2.0
    st.ev(T.SESSION_ENDED, {}, session="s1", dt=H)  # 2 e^-0.5 = 1.21 <= 1.5
    assert st.state.facts[fid].tier == "working"


def test_session_end_threshold_is_strict() -> None:
    st = Stream(SynthConfig(tiers={"session_end_promote": 2.0}))
    fid = st.fact("x", session="s1")
    hot(st, fid, 1)  # exactly 2.0
    st.ev(T.SESSION_ENDED, {}, session="s1", dt=0.0)
    assert st.state.facts[fid].tier == "working"


def test_working_memory_expires_below_point_one() -> None:
    st = Stream()
    t0 = st.ts + 1.0
    w = st.create(st.share("w", at=t0), dt=0.0)
    s = st.create(st.share("s", dt=0.0), dt=0.0)
    hot(st, s, 2)  # short_term, energy 3
    # e^(-0.5 h) < 0.1  <=>  h > 2 ln 10 = 4.605
    st.tick(at=t0 + 4.6 * H)
    assert st.state.facts[w].energy == pytest.approx(math.exp(-2.3))
    assert w in st.state.facts
    st.tick(at=t0 + 4.7 * H)
    assert w not in st.state.facts and s in st.state.facts
    assert st.state.metrics.evictions == {"expired": 1}


def test_coactivation_forms_cluster_above_threshold() -> None:
    st = Stream()
    a = st.fact("a")
    b = st.fact("b")
    for _ in range(3):
        st.recall([a, b])
    fa, fb = st.state.facts[a], st.state.facts[b]
    assert st.state.coact[a][b] == st.state.coact[b][a] == 3
    assert fa.cluster is None  # weight 3 is not above 3
    st.recall([b, a])
    cid = f"c{fa.created_seq}"
    assert fa.cluster == fb.cluster == cid
    assert st.state.clusters == {cid: [a, b]}


def test_third_fact_joins_and_clusters_merge() -> None:
    st = Stream()
    a, b, c, d, e = (st.fact(x) for x in "abcde")
    seq = {fid: st.state.facts[fid].created_seq for fid in (a, b, c, d, e)}
    for _ in range(4):
        st.recall([a, b])
        st.recall([d, e])
    assert set(st.state.clusters) == {f"c{seq[a]}", f"c{seq[d]}"}
    for _ in range(4):
        st.recall([c, a])
    assert st.state.clusters[f"c{seq[a]}"] == [a, b, c]
    for _ in range(4):
        st.recall([e, c])
    assert st.state.clusters == {f"c{seq[a]}": [a, b, c, d, e]}
    assert {st.state.facts[x].cluster for x in (a, b, c, d, e)} == {f"c{seq[a]}"}


def test_eviction_leaves_graph_and_cluster() -> None:
    st = Stream(SynthConfig(pool={"capacity": 2}))
    a = st.fact("a")
    b = st.fact("b")
    for _ in range(4):
        st.recall([a, b])
    cid = st.state.facts[a].cluster
    assert cid is not None
    st.fact("c")  # evicts a (oldest at equal strength)
    assert a not in st.state.coact and a not in st.state.coact.get(b, {})
    assert st.state.clusters == {cid: [b]}


def test_retroactive_strengthening() -> None:
    st = Stream()
    old = st.fact("old")
    hot(st, old, 2)  # short_term, 3.0
    young = st.fact("young", dt=0.0)  # working
    st.create(st.share("new", dt=0.0), related=[[old, 0.8], [young, 0.95]], dt=0.0)
    assert st.state.facts[old].energy == pytest.approx(3.0 + 0.5 * 0.8)
    assert st.state.facts[young].energy == 1.0  # working memories are not strengthened
    st.create(st.share("new2", dt=0.0), related=[[old, 0.7]], dt=0.0)  # not above 0.7
    assert st.state.facts[old].energy == pytest.approx(3.4)
    assert st.state.metrics.retro == 1


def test_retro_strengthening_can_promote() -> None:
    st = Stream()
    old = st.fact("old")
    hot(st, old, 4)  # 5.0 short_term (not above 5.0)
    st.create(st.share("n", dt=0.0), related=[[old, 0.9], ["f404", 0.99]], dt=0.0)
    assert st.state.facts[old].tier == "long_term"


def test_tier_constants_are_configuration() -> None:
    cfg = SynthConfig(tiers={"promote_short": 1.5, "access_energy": 0.25, "working_decay": 0.0})
    st = Stream(cfg)
    fid = st.fact("x")
    hot(st, fid, 2)
    f = st.state.facts[fid]
    assert (f.energy, f.tier) == (1.5, "working")
    hot(st, fid, 1)
    assert f.tier == "short_term"
    st.tick(dt=100 * H)
    assert fid in st.state.facts


def test_promote_pure() -> None:
    f = Fact(id="x", content="", category="c", importance=0.5, created_seq=1, created_ts=0.0,
             version=1, energy=9.0)  # fmt: skip
    assert tiers.promote(f, TierConfig()) and f.tier == "long_term"
    assert not tiers.promote(f, TierConfig())
