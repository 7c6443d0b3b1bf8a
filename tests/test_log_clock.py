"""The swarm's clock is the log's (docs/design.md §2: a writer's clock cannot move ``ts``).

``ts`` is stamped by the log when it assigns seq (FileLog: ``max(clock, last ts)`` under
its lock; JetStream: the server's stored time of the message), never decreasing along seq.
A writer's own clock — 10 hours ahead, negative, 1e20 — never becomes the stored ts, and
NaN or infinity is refused when the event is built; so one agent's clock cannot expire
everybody's working memory.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from swarmlog import Event, FileLog, InvalidEvent
from synthesizer import events as T
from synthesizer.state import SwarmState, fold
from synthesizer.state.facts import WORKING
from synthesizer.swarm import Swarm
from tests.conftest import LogTarget

AHEAD = 10 * 3600.0
CLAIMS = (AHEAD, -5.0, 1e20, 0.0)


def _claim(now: float, c: float) -> float:
    return now + c if c == AHEAD else c


def test_a_writers_clock_never_becomes_the_stored_ts(log_target: LogTarget) -> None:
    with log_target.open() as log:
        before = time.time()
        returned = [log.append(Event(agent="a", type="clock.test", body={"i": 0}))]
        for i, c in enumerate(CLAIMS, 1):
            ev = Event(agent="a", type="clock.test", ts=_claim(before, c), body={"i": i})
            returned.append(log.append(ev))
        batch = [
            Event(agent="b", type="clock.test", ts=_claim(before, c), body={"j": j})
            for j, c in enumerate(CLAIMS)
        ]
        returned += log.append_many(batch)
        after = time.time()
        stored = list(log.read())
    ts = [ev.ts for ev in stored]
    assert len(stored) == 1 + 2 * len(CLAIMS)
    assert ts == sorted(ts), "ts decreases along seq"
    # the log's clock (this machine's, for both backends here), not any writer's claim
    assert all(before - 5.0 <= t <= after + 5.0 for t in ts), ts
    assert [ev.ts for ev in returned] == ts  # what append returned is what was stored
    assert all(isinstance(t, float) and math.isfinite(t) for t in ts)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_ts_is_refused_when_the_event_is_built(bad: float) -> None:
    with pytest.raises(InvalidEvent, match="ts must be a finite number"):
        Event(agent="a", type="clock.test", ts=bad)
    with pytest.raises(InvalidEvent, match="ts must be a finite number"):
        Event.from_dict({"agent": "a", "type": "clock.test", "ts": bad})


def test_no_working_memory_expires_because_of_a_writers_clock(log_target: LogTarget) -> None:
    with Swarm.open(log_target.target) as swarm:
        for i, who in enumerate(("ann", "bob", "cid")):
            swarm.agent(who).share(f"Finding number {i} about the cache", importance=0.7)
        assert swarm.synthesize() > 0
        live = swarm.state()
        assert len(live.facts) == 3 and all(f.tier == WORKING for f in live.facts.values())
        rogue = Event(agent="rogue", type=T.POOL_TICK, ts=time.time() + AHEAD, body={})
        tick = swarm.log.append(rogue)
        assert tick.ts < time.time() + 60.0
        after = swarm.state()
        assert set(after.facts) == set(live.facts)
        assert all(f.tier == WORKING for f in after.facts.values())
        assert "expired" not in after.metrics.evictions
        events = list(swarm.log.read())
    # the threat is real: folding the writer's claim instead would expire all three
    claimed = [*events[:-1], rogue.replace(seq=len(events), swarm=events[-1].swarm)]
    assert fold(claimed, SwarmState()).facts == {}


def test_filelog_clock_never_runs_backwards(tmp_path: Path) -> None:
    # (steps within the swarm clock's MAX_STEP: larger ones are bounded, test_swarm_clock)
    readings = iter([100.0, 50.0, 105.0, math.nan, 101.0])
    with FileLog(tmp_path / "l", notify=False, clock=readings.__next__) as log:
        for _ in range(3):
            log.append(Event(agent="a", type="clock.test"))
        log.append_many([Event(agent="a", type="clock.test") for _ in range(2)])
        log.append(Event(agent="a", type="clock.test"))
        assert [ev.ts for ev in log.read()] == [100.0, 100.0, 105.0, 105.0, 105.0, 105.0]


def test_filelog_writers_with_slower_clocks_share_one_clock(tmp_path: Path) -> None:
    """A second writer whose clock lags stamps no earlier than what is stored already."""
    root = tmp_path / "l"
    with FileLog(root, notify=False, clock=lambda: 5000.0) as fast:
        fast.append(Event(agent="a", type="clock.test"))
        with FileLog(root, notify=False, clock=lambda: 10.0) as slow:
            assert slow.append(Event(agent="b", type="clock.test")).ts == 5000.0
            assert slow.append_many([Event(agent="b", type="clock.test")])[0].ts == 5000.0
        assert fast.append(Event(agent="a", type="clock.test")).ts == 5000.0
        assert [ev.ts for ev in fast.read()] == [5000.0] * 4
