"""The faults work, item 7: one writer's clock step cannot move (or freeze) the FileLog swarm clock.

The log stamps ``ts`` with the writer's clock reading, never below the last stored ts
and never above a ceiling kept in the shared writer index: the swarm's own readings +
``MAX_STEP``, growing at most ``SLEW`` times real time (CLOCK_BOOTTIME) while a larger
jump is absorbed (docs/architecture.md, "The swarm clock"). On main a writer 10 h ahead
stamped +10 h, every later event took that ts, and the next decay tick expired every
working-tier fact.
"""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from swarmlog import Event, FileLog
from swarmlog.clock import MAX_STEP, SLEW, bounded_stamp
from synthesizer import events as T
from synthesizer.state.facts import WORKING
from synthesizer.swarm import Swarm

AHEAD = 10 * 3600.0
ROOT = Path(__file__).resolve().parent.parent


def bound(t0: float) -> float:
    """The most swarm time may be ahead of real time, for a run that began at ``t0``."""
    return MAX_STEP + SLEW * (time.time() - t0) + 1.0


def test_a_writer_ten_hours_ahead_moves_swarm_time_at_most_max_step(tmp_path: Path) -> None:
    root = tmp_path / "log"
    t0 = time.time()
    with FileLog(root, notify=False) as honest:
        honest.append(Event(agent="h", type="clock.test"))
        with FileLog(root, notify=False, clock=lambda: time.time() + AHEAD) as rogue:
            for _ in range(50):
                got = rogue.append(Event(agent="r", type="clock.test"))
                assert got.ts - time.time() <= bound(t0)
            rogue.append_many([Event(agent="r", type="clock.test") for _ in range(3)])
        after = honest.append(Event(agent="h", type="clock.test"))
        assert after.ts - time.time() <= bound(t0)  # not frozen 10 h ahead
        ts = [e.ts for e in honest.read()]
    assert ts == sorted(ts)
    assert max(ts) - time.time() <= bound(t0)


def test_no_working_memory_expires_because_of_a_writers_clock_step(tmp_path: Path) -> None:
    root = tmp_path / "log"
    with Swarm.open(root) as swarm:
        for i, who in enumerate(("ann", "bob", "cid")):
            swarm.agent(who).share(f"Finding number {i} about the cache", importance=0.7)
        assert swarm.synthesize() > 0
        live = swarm.state()
        assert len(live.facts) == 3 and all(f.tier == WORKING for f in live.facts.values())
        with FileLog(root, notify=False, clock=lambda: time.time() + AHEAD) as stepped:
            tick = stepped.append(Event(agent="ticker", type=T.POOL_TICK, body={}))
        assert tick.ts < time.time() + 2 * MAX_STEP
        after = swarm.state()
        assert set(after.facts) == set(live.facts)
        assert all(f.tier == WORKING for f in after.facts.values())
        assert "expired" not in after.metrics.evictions


WRITER = """
import sys, time
from swarmlog import Event, FileLog
root, ahead, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
with FileLog(root, notify=False, clock=lambda: time.time() + ahead) as log:
    for i in range(n):
        log.append(Event(agent=f"w{ahead}", type="clock.test", body={"i": i}))
"""


def test_real_processes_one_of_them_ten_hours_ahead(tmp_path: Path) -> None:
    root = tmp_path / "log"
    FileLog(root, notify=False).close()
    with FileLog(root, notify=False) as log:
        log.append(Event(agent="first", type="clock.test"))  # (a ceiling exists)
    t0 = time.time()
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(ahead), "300"], cwd=ROOT)
        for ahead in (0.0, AHEAD, 0.0)
    ]
    for p in procs:
        assert p.wait(300) == 0
    with FileLog(root, notify=False) as log:
        ts = [e.ts for e in log.read()]
    assert len(ts) == 901 and ts == sorted(ts)
    assert max(ts) - time.time() <= bound(t0)


def test_the_ceiling_survives_an_index_rebuild(tmp_path: Path) -> None:
    root = tmp_path / "log"
    t0 = time.time()
    with FileLog(root, notify=False) as log:
        log.append(Event(agent="h", type="clock.test"))
    data = bytearray((root / "index").read_bytes())
    data[100] ^= 0x40  # both end records' CRCs fail (the tip fields): rebuilt
    data[300] ^= 0x40
    (root / "index").write_bytes(bytes(data))
    with FileLog(root, notify=False, clock=lambda: time.time() + AHEAD) as rogue:
        assert rogue.append(Event(agent="r", type="clock.test")).ts - time.time() <= bound(t0)
        assert rogue.index_rebuilds == 1


finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)


@given(
    reading=st.one_of(finite, st.just(math.nan), st.just(math.inf)),
    last=finite,
    cap=finite,
    at=st.integers(min_value=0, max_value=10**15),
    dt=st.integers(min_value=0, max_value=10**13),
)
def test_bounded_stamp(reading: float, last: float, cap: float, at: int, dt: int) -> None:
    ts, (new_cap, new_at) = bounded_stamp(reading, last, cap, at, at + dt)
    assert ts >= last and math.isfinite(ts) and new_at == at + dt
    assert new_cap >= ts
    if at:
        assert ts <= max(last, cap + SLEW * dt / 1e9)
        if last <= reading <= cap:
            assert ts == reading
    elif math.isfinite(reading):
        assert ts == max(reading, last)
