"""One sealer of the hash chain at a time on JetStream, with real processes.

Writers no longer all seal: one handle holds the seal lease and seals everybody's
records, the others stand by (swarmlog/jetstream/seal/lease.py, swarmlog/jetstream/seal/role.py).
Each seal names its
sealer (``by``), so the tests can see who sealed what.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from swarmlog import Event
from swarmlog.errors import LogUnavailable
from swarmlog.jetstream import JetStreamLog
from swarmlog.jetstream.seal.lease import LEASE_TTL

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parents[1]
_n = itertools.count(1)


def worker(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.jsworkers", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def seals(log: JetStreamLog) -> list[dict[str, object]]:
    """Every seal of the log's seal stream, in order."""
    out: list[dict[str, object]] = []
    nxt = 1
    while raws := log._run(log._c.direct_batch(nxt, 256, stream=f"{log.stream}-chain")):
        out += [orjson.loads(r.data) for r in raws]
        nxt = raws[-1].seq + 1
    return out


def contiguous(ss: list[dict[str, object]]) -> bool:
    """Each seal starts right after the one before: no gap, no record sealed twice."""
    k = 0
    for s in ss:
        if s["first"] != k + 1:
            return False
        k += len(s["values"])  # type: ignore[arg-type]
    return True


def sealed_any(log: JetStreamLog) -> bool:
    """Whether the log's seal stream exists and holds a seal."""
    try:
        return bool(seals(log))
    except LogUnavailable:  # no seal stream yet
        return False


def wait_for(cond: object, limit: float) -> None:
    deadline = time.monotonic() + limit
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


@pytest.mark.slow
def test_one_sealer_a_second_stands_by_and_takes_over_after_kill9(nats_url: str) -> None:
    target = f"{nats_url}/SEAL{os.getpid()}x{next(_n)}"
    with JetStreamLog(target) as probe:
        p1 = worker("steady", target, "w1")
        p2 = None
        try:
            tok1 = p1.stdout.readline().strip()  # type: ignore[union-attr]
            p2 = worker("steady", target, "w2")
            tok2 = p2.stdout.readline().strip()  # type: ignore[union-attr]
            assert tok1 and tok2 and tok1 != tok2
            n0 = len(seals(probe))
            wait_for(lambda: len(seals(probe)) >= n0 + 5, 30)  # both append; seals go on
            by = {s["by"] for s in seals(probe)[n0:]}
            assert by == {tok1}, by  # only the holder seals; the second stands by
            os.kill(p1.pid, signal.SIGKILL)
            p1.wait(10)
            killed = len(seals(probe))
            wait_for(lambda: any(s["by"] == tok2 for s in seals(probe)[killed:]), 4 * LEASE_TTL)
            last = probe.last_seq
            wait_for(lambda: sum(len(s["values"]) for s in seals(probe)) >= last, 10)
        finally:
            for p in (p1, p2):
                if p is not None and p.poll() is None:
                    p.send_signal(signal.SIGTERM)
                    p.wait(10)
        ss = seals(probe)
        assert contiguous(ss)
        assert {s["by"] for s in ss[killed:]} == {tok2}
        rep = probe.verify()
        assert rep.ok, rep.problems


@pytest.mark.slow
def test_verify_after_16_concurrent_writers_finds_the_chain_complete(nats_url: str) -> None:
    target = f"{nats_url}/SIXTEEN{os.getpid()}x{next(_n)}"
    JetStreamLog(target).close()
    procs = [worker("burst", target, f"w{i}", "40") for i in range(16)]
    for p in procs:
        assert p.wait(240) == 0
    with JetStreamLog(target) as log:
        assert log.last_seq == 16 * 40
        rep = log.verify()
        assert rep.ok, rep.problems
        assert rep.head_seq == log.last_seq, rep.notes  # every record sealed
        ss = seals(log)
        assert contiguous(ss) and sum(len(s["values"]) for s in ss) == 16 * 40  # type: ignore[misc]


def test_threads_share_one_connection_and_get_the_server_time_pushed(nats_url: str) -> None:
    """Appends from 8 threads of one process are in flight together on its one
    connection; their server times come from the pushed deliveries (no Direct Get read
    back after a handle's first append), and each returned event is what a read gives."""
    import asyncio
    import threading

    from swarmlog import Event

    target = f"{nats_url}/PIPE{os.getpid()}x{next(_n)}"
    with JetStreamLog(target) as log:
        c = log._c
        inflight, most, readbacks = [0], [0], [0]
        publish, get = c.publish, log._readback.get

        async def counted(*a: object, **kw: object) -> object:
            inflight[0] += 1
            most[0] = max(most[0], inflight[0])
            try:
                await asyncio.sleep(0)  # let the other appends of this turn go out too
                return await publish(*a, **kw)  # type: ignore[arg-type]
            finally:
                inflight[0] -= 1

        async def counted_get(seqs: list[int]) -> object:
            readbacks[0] += len(seqs)
            return await get(seqs)

        c.publish = counted  # type: ignore[method-assign]
        log._readback.get = counted_get  # type: ignore[method-assign]
        out: list[Event] = []
        for agent in ("t0", "t1"):  # the first append of an agent reads back
            out.append(log.append(Event(agent=agent, type="test.event", body={})))
        first = readbacks[0]

        def work(i: int) -> None:
            for j in range(40):
                out.append(log.append(Event(agent=f"t{i % 2}", type="test.event", body={"j": j})))

        ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert most[0] > 1  # in flight together
        assert readbacks[0] == first  # no read-back once the feed runs
        by_seq = {e.seq: e for e in log.read()}
        assert len(by_seq) == len(out) == 2 + 8 * 40
        assert all(by_seq[e.seq] == e for e in out)  # same ts, same everything


def test_a_stand_by_sees_its_appends_sealed_by_the_holder_without_taking_the_lease(
    nats_url: str,
) -> None:
    """A handle that does not hold the lease flushes (as on close) by waiting for the
    holder's seals: it finds them, checked, and never takes the lease. (Before, it never
    kept the tip it read, so it waited until the holder let go or its limit passed.)"""
    target = f"{nats_url}/STANDBY{os.getpid()}x{next(_n)}"
    with JetStreamLog(target) as probe:
        p1 = worker("steady", target, "w1")
        try:
            tok1 = p1.stdout.readline().strip()  # type: ignore[union-attr]
            wait_for(lambda: sealed_any(probe), 30)  # w1 holds the lease and seals
            with JetStreamLog(target) as mine:
                last = [
                    mine.append(Event(agent="w2", type="test.event", body={"i": i}))
                    for i in range(5)
                ][-1]
                sealed = mine._run(mine._seals.flush(limit=8.0), 30)
                assert sealed is True, mine._seals.error
                assert not mine._seals.lease.holding
                assert mine._seals.lease.other == tok1  # the holder it saw
            ss = seals(probe)
            assert {s["by"] for s in ss} == {tok1}  # only the holder sealed
            assert sum(len(s["values"]) for s in ss) >= (last.seq or 0)  # type: ignore[misc]
        finally:
            p1.send_signal(signal.SIGTERM)
            p1.wait(10)
            p1.stdout.close()  # type: ignore[union-attr]


def test_a_stand_by_does_not_take_a_seal_by_somebody_else_on_trust(nats_url: str) -> None:
    """A seal that claims this handle's appends but is not the holder's (forged: anybody
    may publish on the seal subject where per-agent users are not configured) is checked
    against the records; the stand-by waits for the holder's real seal after it."""
    target = f"{nats_url}/FORGED{os.getpid()}x{next(_n)}"
    with JetStreamLog(target) as probe:
        p1 = worker("steady", target, "w1")
        try:
            tok1 = p1.stdout.readline().strip()  # type: ignore[union-attr]
            wait_for(lambda: sealed_any(probe), 30)
            with JetStreamLog(target) as mine:
                last = [
                    mine.append(Event(agent="w2", type="test.event", body={"i": i}))
                    for i in range(5)
                ][-1]
                n = (last.seq or 0) + 5
                forged = orjson.dumps({"first": 1, "values": ["0" * 32] * n, "by": "forger"})
                mine._run(mine._c.request(f"swarmlog-chain.{mine.stream}", forged, {}), 10)
                forged_at = len(seals(probe))
                assert mine._run(mine._seals.flush(limit=8.0), 30) is True, mine._seals.error
                ss = seals(probe)
                real = [i for i, s in enumerate(ss) if s["by"] == tok1 and i >= forged_at]
                assert real, "flush returned on the forged seal"
                s = ss[real[-1]]
                assert s["first"] + len(s["values"]) - 1 >= (last.seq or 0)  # type: ignore[operator,arg-type]
        finally:
            p1.send_signal(signal.SIGTERM)
            p1.wait(10)
            p1.stdout.close()  # type: ignore[union-attr]
