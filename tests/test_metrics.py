"""Metrics computed from a SwarmState (docs/design.md §13): exact numbers on a scripted log, the
empty swarm, and a live swarm driven through the agent API and the synthesizer."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import VersionConflict, open_log
from synthesizer import SwarmState, SynthConfig
from synthesizer.config import PoolConfig
from synthesizer.metrics import compute, percentile, top_facts
from synthesizer.replay import state_at
from synthesizer.swarm import Swarm
from tests.swarmscript import script_clock, write_script


def _scripted(tmp_path: Path) -> SwarmState:
    log = open_log(tmp_path / "s", clock=script_clock())
    try:
        write_script(log)
        return state_at(log)
    finally:
        log.close()


def test_percentile_is_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0], 99) == 3.0
    vals = [float(i) for i in range(1, 101)]
    assert percentile(vals, 50) == 50.0
    assert percentile(vals, 99) == 99.0
    assert percentile(vals, 100) == 100.0


def test_empty_state() -> None:
    m = compute(SwarmState(), swarm="none")
    assert m.empty
    assert m.events_total == 0 and m.facts_total == 0
    assert m.rate is None and m.latency_p50 is None and m.latency_p99 is None
    assert m.duplication_rate == 0.0 and m.correlation_lift == 0.0
    assert m.contests == [] and m.agents == [] and m.top == []
    assert m.strength_hist == [0] * 10
    d = m.to_dict()
    assert d["contests_open"] == 0 and d["swarm"] == "none"


def test_scripted_numbers(tmp_path: Path) -> None:
    m = compute(_scripted(tmp_path), swarm="s")
    assert (m.last_seq, m.events_total, m.progress, m.event_lag, m.undecided) == (16, 16, 4, 12, 1)
    assert m.span_s == 8.0 and m.rate == 2.0
    assert m.raw_total == 5 and m.duplicates == {"exact": 1} and m.duplication_rate == 0.2
    assert m.rediscoveries == 1
    assert (m.with_causes, m.cites_peers, m.correlation_lift) == (1, 1, 0.2)
    assert (m.latency_n, m.latency_p50, m.latency_p99) == (4, 1.0, 2.0)
    assert (m.cas_attempts, m.cas_successes, m.cas_conflicts) == (3, 2, 1)
    assert m.by_status == {"active": 3, "superseded": 1}
    assert m.by_tier == {"working": 4}
    assert sum(m.strength_hist) == m.facts_total == 4
    assert m.contests_resolved == 1 and m.contests_open == 0 and m.resolutions == 1
    (c,) = m.contests
    assert c.subject == "db.pool_size" and c.winner == "f3"
    assert {(cl.id, cl.value, cl.status) for cl in c.claims} == {
        ("f3", "10", "active"),
        ("f4", "20", "superseded"),
    }
    agents = {a.agent: a for a in m.agents}
    assert set(agents) == {"a1", "a2", "a3"}  # the synthesizer is not an agent row
    assert (agents["a2"].cas_attempts, agents["a2"].cas_conflicts) == (2, 1)
    assert (agents["a3"].recalls, agents["a3"].cites_peers, agents["a3"].shared) == (1, 1, 1)
    assert agents["a1"].discovered == 3  # f1, f3 and the plan
    assert m.top[0].id == "f1" and m.top[0].support == 2


def test_metrics_survive_a_checkpoint_round_trip(tmp_path: Path) -> None:
    st = _scripted(tmp_path)
    again = SwarmState.from_bytes(st.to_bytes())
    assert compute(again).to_dict() == compute(st).to_dict()


def test_live_swarm_metrics(tmp_path: Path) -> None:
    cfg = SynthConfig(pool=PoolConfig(decay_rate=0.5))
    with Swarm.open(tmp_path / "live", config=cfg) as swarm:
        a, b, c = (swarm.agent(n, session="s") for n in ("ann", "bob", "cy"))
        a.share("The importer drops rows with an empty SKU", importance=0.9)
        b.share("The importer drops rows with an empty SKU.", importance=0.9)
        c.share("Importer drops the rows that have an empty SKU", importance=0.9)
        a.share("A lonely note nobody else repeats about fonts", importance=0.1)
        swarm.synthesize()
        hits = c.recall("importer empty SKU rows")
        top = hits[0].fact
        peers = [e.seq for e in top.evidence if e.agent != "cy"]
        c.share("Rejecting empty SKUs at the API fixes the importer", causes=peers)
        c.reinforce(top.id)
        swarm.synthesize()
        swarm.board.cas("plan", 0, content="Fix the importer", agent="ann")
        with pytest.raises(VersionConflict):
            swarm.board.cas("plan", 0, content="Fix it", agent="bob")
        for _ in range(4):
            swarm.tick()
        st = swarm.state()
        m = compute(st, swarm=swarm.name)
        survivors = {f.id for f in top_facts(st, 100)}
    assert m.duplicates_total == 2 and m.raw_total == 5
    assert m.rediscoveries >= 1
    assert m.cites_peers == 1 and m.correlation_lift == pytest.approx(1 / 5)
    assert m.latency_n == 5 and m.latency_p50 is not None and m.latency_p50 >= 0
    assert m.cas_conflicts == 1 and m.cas_attempts == 2
    assert m.evictions_total >= 1 and m.evictions.get("decay", 0) >= 1
    assert sum(m.strength_hist) == m.facts_total
    assert top.id in survivors  # reinforced, so it decays slower and survives


def test_each_name_means_one_thing_in_text_and_json(tmp_path: Path) -> None:
    """A word of the rendered text that is also a key of ``stats --json`` carries that
    key's value: "undecided" is memories not decided yet, "event lag" (``event_lag``)
    events past the progress mark; no key is a text field's name with another meaning."""
    from dashboards import fmt

    m = compute(_scripted(tmp_path), swarm="s")
    assert m.event_lag != m.undecided  # (12 and 1: a mix-up shows)
    d = m.to_dict()
    assert "lag" not in d and "lag" not in fmt.header(m).split()
    assert f"· {d['undecided']} undecided ·" in fmt.header(m)
    rows = dict(fmt.metric_rows(m))
    checked = 0
    for label, text in rows.items():
        key = label.replace(" ", "_")
        if key in d and isinstance(d[key], int):
            assert text.startswith(f"{d[key]} "), (label, text, d[key])
            checked += 1
    assert checked >= 2 and rows["event lag"].startswith("12 events")
