"""Determinism and time travel: checkpoint + rest == from the start == the live worker."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog import Event, MemoryLog, open_log
from synthesizer.replay import save_checkpoint, state_at
from synthesizer.state import SwarmState, fold
from synthesizer.swarm import Swarm
from synthesizer.worker.synth import Synthesizer
from tests.conftest import LogTarget

WORDS = ["cache", "port", "login", "crash", "export", "retry", "token", "proxy", "locale"]
AGENTS = ["a1", "a2", "a3"]

op = st.one_of(
    st.tuples(
        st.just("share"),
        st.sampled_from(AGENTS),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        st.floats(0, 1),
    ),
    st.tuples(st.just("claim"), st.sampled_from(AGENTS), st.sampled_from(["8080", "3000"])),
    st.tuples(st.just("tick")),
    st.tuples(st.just("synth")),
    st.tuples(st.just("recall"), st.sampled_from(AGENTS), st.sampled_from(WORDS)),
    st.tuples(st.just("reinforce"), st.sampled_from(AGENTS), st.integers(0, 20)),
    st.tuples(st.just("feedback"), st.sampled_from(AGENTS), st.integers(0, 20), st.floats(-2, 2)),
    st.tuples(st.just("end"), st.sampled_from(["s1", "s2"])),
)


def _run(sw: Swarm, ops: list[tuple]) -> None:  # type: ignore[type-arg]
    for o in ops:
        kind = o[0]
        facts = sorted(sw.state().facts)
        if kind == "share":
            sw.agent(o[1], session="s1").share(" ".join(o[2]), importance=o[3])
        elif kind == "claim":
            sw.agent(o[1], session="s2").share(f"port {o[2]}", subject="port", value=o[2])
        elif kind == "tick":
            sw.tick()
        elif kind == "synth":
            sw.synthesize()
        elif kind == "recall":
            sw.agent(o[1], session="s1").recall(o[2], limit=3)
        elif kind == "reinforce" and facts:
            sw.agent(o[1]).reinforce(facts[o[2] % len(facts)])
        elif kind == "feedback" and facts:
            sw.agent(o[1]).feedback(facts[o[2] % len(facts)], o[3])
        elif kind == "end":
            sw.end_session(o[1])


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=40), cut=st.floats(0, 1))
def test_checkpoint_plus_rest_equals_from_start_equals_live(ops: list, cut: float) -> None:  # type: ignore[type-arg]
    log = MemoryLog()  # the fold's property, whatever the backend: the in-memory reference
    sw = Swarm(log)
    _run(sw, ops)
    sw.synthesize()
    live = sw.state().digest()
    k = int(cut * log.last_seq)
    save_checkpoint(log, state_at(log, at_seq=k, from_start=True))
    from_start = state_at(log, from_start=True)
    via_ckpt = state_at(log)
    assert from_start.digest() == via_ckpt.digest() == live
    # and a fresh worker on its own handle (a process-equivalent) agrees
    w = Synthesizer(log.handle())
    w.catch_up()
    assert w.state.digest() == live
    sw.close()


def test_state_at_seq_is_the_fold_of_the_first_k_events(log_target: LogTarget) -> None:
    sw = Swarm(log_target.open())
    for i in range(12):
        sw.agent(f"a{i % 3}").share(f"finding number {i % 5} about the cache")
        if i % 4 == 3:
            sw.synthesize()
            sw.tick()
    sw.synthesize()
    events = list(sw.log.read())
    sw.checkpoint()
    for k in (0, 1, 5, len(events) // 2, len(events)):
        expected = fold(events[:k], SwarmState(sw.config)).digest()
        assert sw.state(at_seq=k).digest() == expected
        assert state_at(sw.log, at_seq=k, from_start=True).digest() == expected
    sw.close()


def test_at_time_picks_the_last_event_with_ts_at_most_t(log_target: LogTarget) -> None:
    """``at_time`` reads the log's clock (the stored ts), never the writers' claims."""
    log = open_log(log_target.target)
    claims = [100.0, 200.0, 150.0, 300.0, 250.0]  # writers' clocks: ignored by the log
    for i, ts in enumerate(claims):
        log.append(Event(agent="a", type="memory.shared", ts=ts, body={"content": f"m{i}"}))
        time.sleep(0.002)
    stored = [ev.ts for ev in log.read()]
    assert stored == sorted(stored) and not set(stored) & set(claims)
    assert state_at(log, at_time=stored[0] - 1).last_seq == 0
    for t in stored:
        want = max(i + 1 for i, s in enumerate(stored) if s <= t)
        assert state_at(log, at_time=t).last_seq == want
    assert state_at(log, at_time=1e12).last_seq == 5
    assert state_at(log, at_time=200.0).last_seq == 0  # a writer's claim means nothing
