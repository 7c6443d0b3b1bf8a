"""The scale work, acceptance 2: the ranking columns beside the vectors equal the facts' own
fields after any sequence of events (shares, ticks, reinforcements, feedback, recalls,
evictions, TTL expiry, board writes, session ends, replay from a checkpoint), and a
recall through them ranks as a per-fact Python scan of the state does."""

from __future__ import annotations

import math
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog import Event, MemoryLog
from synthesizer import Swarm, SynthConfig
from synthesizer import events as T
from synthesizer.config import PoolConfig
from synthesizer.search.factindex import FactIndex
from synthesizer.search.recall import recall
from synthesizer.state.facts import RETRACTED, SUPERSEDED

WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "zeta"]
TIERS = {"working": 0, "short_term": 1, "long_term": 2}
STATUSES = {"active": 0, "contested": 1, "superseded": 2, "retracted": 3}


class Clock:
    """Event time the test controls (TTL expiry and energy decay are in event time)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def expected_rows(swarm: Swarm) -> dict[str, dict[str, Any]]:
    """What every live fact's row must hold, computed here from the facts alone."""
    state = swarm.refresh()
    w = state.config.importance_weight
    out = {}
    for f in state.facts.values():
        impf = 1.0 - w + w * f.importance
        out[f.id] = {
            "strength": f.strength,
            "impf": impf,
            "reinf": f.reinforcements,
            "status": STATUSES[f.status],
            "tier": TIERS[f.tier],
            "thread": f.thread,
            "category": f.category,
            "expires": math.inf if f.expires_at is None else f.expires_at,
            "weight": 0.0 if f.status in (RETRACTED, SUPERSEDED) else f.strength * impf,
        }
    return out


def check_columns(swarm: Swarm) -> None:
    """The index's columns equal the facts' fields, row for row, bit for bit."""
    index = swarm.index
    index.prepare(swarm.refresh())
    want = expected_rows(swarm)
    names = {code: name for name, code in index._codes.items()}
    seen: set[str] = set()
    for eid, dim in index.space.namespaces():
        ids, cols = index.columns(eid, dim)
        for i, fid in enumerate(ids):
            assert fid in want, f"row for evicted fact {fid}"
            seen.add(fid)
            exp = want[fid]
            for name in ("strength", "impf", "reinf", "status", "tier", "expires", "weight"):
                got = cols[name][i].item()
                assert got == exp[name], (fid, name, got, exp[name])
            for name in ("thread", "category"):
                code = int(cols[name][i])
                assert (None if code < 0 else names[code]) == exp[name], (fid, name)
    assert seen == set(want), "live facts missing from the index"


def python_recall(swarm: Swarm, query: str, limit: int, now: float, **flt: Any) -> list[str]:
    """Reference ranking: a per-fact Python scan of the state (the path before columns)."""
    state = swarm.refresh()
    w = state.config.importance_weight
    idx = swarm.index.default
    cos_all = idx.cosines(swarm.embedder.embed([query])[0])
    scored = []
    for f in state.facts.values():
        row = idx.row(f.id)
        if row is None or f.status in (RETRACTED, SUPERSEDED):
            continue
        if f.expires_at is not None and f.expires_at <= now:
            continue
        if any(getattr(f, k) != v for k, v in flt.items()):
            continue
        cos = cos_all[row]
        if cos <= 0.0:
            continue
        scored.append((-(cos * f.strength * (1.0 - w + w * f.importance)), f.id))
    return [fid for _, fid in sorted(scored)[:limit]]


step = st.one_of(
    st.tuples(
        st.just("share"),
        st.sampled_from(WORDS),
        st.sampled_from(WORDS),
        st.sampled_from(["discovery", "decision"]),
        st.sampled_from([0.1, 0.5, 0.9]),
        st.sampled_from([None, 0.5, 50.0]),
        st.sampled_from([None, "t1", "t2"]),
    ),
    st.tuples(st.just("synth")),
    st.tuples(st.just("tick"), st.sampled_from([0.0, 30.0, 4000.0])),
    st.tuples(st.just("reinforce"), st.integers(0, 50), st.sampled_from(["a1", "a2", "a3"])),
    st.tuples(st.just("feedback"), st.integers(0, 50), st.sampled_from([-1.0, 0.5])),
    st.tuples(st.just("recall"), st.sampled_from(WORDS), st.sampled_from(["a1", "a2"])),
    st.tuples(
        st.just("board"),
        st.sampled_from(["b1", "b2", "b3"]),
        st.sampled_from(WORDS),
        st.sampled_from([None, "active", "contested", "superseded", "retracted"]),
        st.sampled_from([0.2, 0.8]),
    ),
    st.tuples(st.just("retract"), st.integers(0, 50)),
    st.tuples(
        st.just("end_session"),
    ),
    st.tuples(
        st.just("checkpoint_reopen"),
    ),
)


def _pick(swarm: Swarm, i: int) -> str | None:
    ids = sorted(swarm.refresh().facts)
    return ids[i % len(ids)] if ids else None


def run_step(swarm: Swarm, log: MemoryLog, clock: Clock, s: tuple[Any, ...]) -> Swarm:
    """Apply one generated step; returns the swarm to go on with (a reopen gives a new one)."""
    kind = s[0]
    clock.now += 1.0
    if kind == "share":
        _, w1, w2, cat, imp, ttl, thread = s
        swarm.agent("a1", session="s1").share(
            f"{w1} {w2}", category=cat, importance=imp, ttl_s=ttl, thread=thread
        )
    elif kind == "synth":
        swarm.synthesize()
    elif kind == "tick":
        clock.now += s[1]
        swarm.tick()
    elif kind in ("reinforce", "feedback", "retract"):
        fid = _pick(swarm, s[1])
        if fid is not None:
            if kind == "reinforce":
                swarm.agent(s[2]).reinforce(fid)
            elif kind == "feedback":
                swarm.agent("a1").feedback(fid, s[2])
            else:
                log.append(Event(agent="a1", type=T.FACT_RETRACTED, key=fid, body={}))
    elif kind == "recall":
        swarm.agent(s[2]).recall(s[1], limit=3)
    elif kind == "board":
        _, key, word, status, imp = s
        body: dict[str, Any] = {"content": f"board {word}", "importance": imp}
        if status is not None:
            body["status"] = status
        log.append(Event(agent="a2", session="s1", type=T.FACT_UPDATED, key=key, body=body))
    elif kind == "end_session":
        swarm.end_session("s1")
    elif kind == "checkpoint_reopen":
        swarm.checkpoint()
        fresh = Swarm(log.handle())
        assert fresh.refresh().digest() == swarm.refresh().digest()
        return fresh
    return swarm


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@pytest.mark.slow
@given(st.lists(step, min_size=1, max_size=40))
def test_columns_equal_fact_fields_after_any_events(steps: list[tuple[Any, ...]]) -> None:
    clock = Clock()
    log = MemoryLog(clock=clock)
    swarm = Swarm(log, config=SynthConfig(pool=PoolConfig(capacity=12)))
    assert len(swarm.index) == 0  # built first: every later event goes through observe
    for s in steps:
        swarm = run_step(swarm, log, clock, s)
        check_columns(swarm)
    index: FactIndex = swarm.index
    # the incremental path did not fall back to rebuilding after every event
    assert index.rebuilds <= 1 + sum(s[0] in ("end_session",) for s in steps)
    state = swarm.refresh()
    for word in WORDS[:3]:
        hits = swarm.agent("a3").recall(word, limit=4, log=False)
        assert [h.fact.id for h in hits] == python_recall(swarm, word, 4, time.time())
        vec = swarm.embedder.embed([word])[0]
        for flt in ({}, {"category": "decision"}, {"thread": "t1"}, {"tier": "working"}):
            got = recall(state, swarm.index, vec, limit=4, now=clock.now, **flt)
            want = python_recall(swarm, word, 4, clock.now, **flt)
            assert [h.fact.id for h in got] == want, (word, flt)


def test_a_tick_is_one_vector_step_not_a_rebuild() -> None:
    clock = Clock()
    log = MemoryLog(clock=clock)
    swarm = Swarm(log)
    for i in range(30):
        swarm.agent("a1").share(f"fact number {i} {WORDS[i % 8]}")
    swarm.synthesize()
    fid = sorted(swarm.refresh().facts)[0]
    swarm.agent("a2").reinforce(fid)
    check_columns(swarm)
    before = swarm.index.rebuilds
    for _ in range(3):
        swarm.tick()
        swarm.agent("a1").recall("alpha")
        check_columns(swarm)
    assert swarm.index.rebuilds == before
