"""Rediscovery revives: an evicted fact shared again comes back, same id, recallable."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dashboards import fmt
from swarmlog import Event
from synthesizer.config import PoolConfig, SynthConfig
from synthesizer.metrics import compute
from synthesizer.replay import state_at
from synthesizer.swarm import Swarm
from tests.conftest import LogTarget

# four ticks at rate 0.5 take a fresh fact from 1.0 to 0.0625, below the 0.1 threshold
FAST = SynthConfig(pool=PoolConfig(decay_rate=0.5))
TEXT = "The nightly export skips archived projects"


@pytest.fixture
def swarm(log_target: LogTarget) -> Iterator[Swarm]:
    sw = Swarm(log_target.open(), config=FAST)
    yield sw
    sw.close()


def _evict(sw: Swarm, fid: str) -> None:
    for _ in range(12):  # decay: evicted within 4 ticks, 8 if reinforced once
        if fid not in sw.state().facts:
            break
        sw.tick()
    st = sw.state()
    assert fid not in st.facts and fid in st.evicted


def test_an_evicted_fact_comes_back_when_shared_again(swarm: Swarm) -> None:
    a1, a2 = swarm.agent("a1", session="s1"), swarm.agent("a2", session="s2")
    first = a1.share(TEXT, importance=0.9).seq
    swarm.synthesize()
    fid = f"f{first}"
    swarm.agent("a3").reinforce(fid)
    _evict(swarm, fid)
    assert all(h.fact.id != fid for h in swarm.search("nightly export archived projects"))
    again = a2.share("the nightly export skips ARCHIVED projects!").seq
    assert swarm.synthesize() == 1
    st = swarm.state()
    f = st.facts[fid]  # same id, live again
    assert f.status == "active"
    assert f.strength == 1.0 and f.tier == "working" and f.energy == 1.0
    assert [e.seq for e in f.evidence] == [first, again]  # old evidence kept, new added
    assert f.reinforcements == 1  # its own history stays
    assert fid not in st.evicted
    assert f"f{again}" not in st.facts  # no second fact for the same content
    assert st.metrics.revivals == 1
    revived = [e for e in swarm.log.read() if e.type == "fact.revived"]
    assert [(e.key, e.body["evidence"]) for e in revived] == [(fid, again)]
    # recallable again
    hits = a2.recall("nightly export archived projects", limit=3)
    assert hits and hits[0].fact.id == fid
    # the dashboards count it
    m = compute(st)
    assert m.revivals == 1
    assert ("revivals", "1 evicted fact brought back by rediscovery") in fmt.metric_rows(m)
    # a third share is plain evidence for the live fact
    third = swarm.agent("a4").share(TEXT).seq
    swarm.synthesize()
    assert [e.seq for e in swarm.state().facts[fid].evidence] == [first, again, third]
    assert swarm.state().metrics.revivals == 1


def test_revival_replays_the_same_from_start_and_from_a_checkpoint(swarm: Swarm) -> None:
    a = swarm.agent("a1")
    fid = f"f{a.share(TEXT).seq}"
    swarm.synthesize()
    swarm.checkpoint()  # the evicted fact is kept in checkpoints too
    _evict(swarm, fid)
    swarm.checkpoint()
    a.share(TEXT)
    a.share(TEXT)  # two in one batch: one revival, then evidence
    swarm.synthesize()
    live = swarm.state()
    assert live.metrics.revivals == 1 and len(live.facts[fid].evidence) == 3
    for at in (None, live.last_seq - 1):
        full = state_at(swarm.log, at_seq=at, from_start=True)
        ck = state_at(swarm.log, at_seq=at)
        assert full.digest() == ck.digest()
    assert state_at(swarm.log, from_start=True).digest() == live.digest()


def test_revived_claim_keeps_its_id_and_is_resolved_again(swarm: Swarm) -> None:
    a1, a2 = swarm.agent("a1"), swarm.agent("a2")
    s1 = a1.share("api port is 8080", subject="api.port", value="8080").seq
    swarm.synthesize()
    _evict(swarm, f"f{s1}")
    s2 = a2.share("api port is 3000", subject="api.port", value="3000").seq
    swarm.synthesize()
    a2.share("API port is 8080.", subject="api.port", value="8080")
    a1.share("api port is 8080", subject="api.port", value="8080")
    swarm.synthesize()
    st = swarm.state()
    assert st.facts[f"f{s1}"].status == "active"  # 2 agents now back 8080
    assert st.facts[f"f{s2}"].status == "superseded"
    assert st.subjects["api.port"] == [f"f{s2}", f"f{s1}"]


def test_erasure_reaches_evicted_facts_and_revivable_bounds_them(log_target: LogTarget) -> None:
    cfg = SynthConfig(pool=PoolConfig(decay_rate=0.5, revivable=1))
    sw = Swarm(log_target.open(), config=cfg)
    try:
        a, b = sw.agent("a"), sw.agent("b")
        f1 = f"f{a.share('first finding about caches').seq}"
        f2 = f"f{b.share('second finding about queues').seq}"
        sw.synthesize()
        for _ in range(4):
            sw.tick()
        st = sw.state()
        assert list(st.evicted) == [f2] and f1 not in st.evicted  # at most 1 kept
        # a fact evicted beyond what is kept: its rediscovery is a new fact
        again = a.share("first finding about caches").seq
        sw.synthesize()
        assert f"f{again}" in sw.state().facts and f1 not in sw.state().facts
        # erasure of b removes its evicted fact and the signature
        sw.log.append(Event(agent="operator", type="identity.forgotten", body={"agent": "b"}))
        st = sw.state()
        assert f2 not in st.evicted
        b.share("second finding about queues")
        sw.synthesize()
        assert sw.state().metrics.revivals == 0  # nothing of b was left to revive
    finally:
        sw.close()
