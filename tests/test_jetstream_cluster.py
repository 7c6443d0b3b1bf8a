"""A 3-node JetStream cluster (R3): the stream leader is killed mid-run, appends go on.

Acceptance 4 of the JetStream issue: after re-election appends continue; every
acknowledged event is still there at the seq it was acknowledged with; no event is stored
twice even though the writer retries (same ids) whatever timed out around the kill.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmlog import Event, LogUnavailable, SwarmlogError, VerifyReport
from swarmlog.jetstream import JetStreamLog, ensure_stream
from tests.natsserver import NatsCluster

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[NatsCluster]:
    c = NatsCluster(tmp_path)
    c.start()
    try:
        yield c
    finally:
        c.stop()


def _init_r3(target: str, within: float = 30.0) -> None:
    """Create the R3 stream once the cluster has elected its meta leader (bounded)."""
    deadline = time.monotonic() + within
    while True:
        try:
            ensure_stream(target, replicas=3, timeout=2.0)
            return
        except SwarmlogError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _leader(log: JetStreamLog) -> str:
    info = log._run(log._c.stream_info())
    assert info is not None
    return str(info["cluster"]["leader"])


def _verify_after_failover(log: JetStreamLog, within: float = 30.0) -> VerifyReport:
    """``log.verify()`` once the cluster answers again. Every stream the dead server led
    elects a new leader; the redaction side stream, idle while the writer ran, may still
    be without one, and an API call to it then times out (LogUnavailable, a clear
    error), as the writer's appends did until the log stream had its leader: retried
    like them, within ``within`` seconds, never skipped."""
    deadline = time.monotonic() + within
    while True:
        try:
            return log.verify()
        except LogUnavailable:
            if time.monotonic() > deadline:
                raise


@pytest.mark.timeout(120)
def test_kill_stream_leader_mid_run(cluster: NatsCluster) -> None:
    target = f"{cluster.url}/R3"
    _init_r3(target)
    acked: dict[str, int] = {}
    retries = 0
    killed = threading.Event()
    after_kill = 0
    stop = threading.Event()

    def writer() -> None:
        nonlocal retries, after_kill
        with JetStreamLog(target, timeout=2.0) as log:
            i = 0
            while not stop.is_set():
                e = Event(agent="w", type="test.event", id=f"ev-{i}", key=f"k{i % 7}")
                while True:  # retry the same event until acknowledged: ids make it safe
                    try:
                        got = log.append(e)
                        break
                    except LogUnavailable:
                        retries += 1
                        if stop.is_set():
                            return
                acked[got.id] = got.seq or 0
                if killed.is_set():
                    after_kill += 1
                i += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        with JetStreamLog(target, timeout=2.0) as probe:
            assert probe.replicas == 3
            time.sleep(1.0)
            leader = _leader(probe)
        before = len(acked)
        assert before > 0
        cluster.by_name(leader).kill()
        killed.set()
        deadline = time.monotonic() + 30
        while after_kill < 200 and time.monotonic() < deadline and t.is_alive():
            time.sleep(0.2)
    finally:
        stop.set()
        t.join(30)
    print(f"acked {len(acked)} ({before} before the kill, {after_kill} after), {retries} retries")
    assert after_kill >= 200, f"appends did not resume after the leader died ({after_kill})"
    survivors = ",".join(s.url for s in cluster.servers if s.running)
    with JetStreamLog(f"{survivors}/R3", timeout=5.0) as log:
        assert _leader(log) != leader
        stored = list(log.read())
        ids = [e.id for e in stored]
        assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
        assert len(set(ids)) == len(ids), "an event was stored twice"
        by_id = {e.id: e.seq for e in stored}
        lost = [i for i, s in acked.items() if by_id.get(i) != s]
        assert not lost, f"{len(lost)} acknowledged events lost or moved: {lost[:5]}"
        assert _verify_after_failover(log).ok
