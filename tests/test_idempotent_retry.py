"""Ambiguous JetStream appends do not duplicate (robustness work, defect 7).

The server is paused (SIGSTOP) past the client timeout while an agent shares: the
publish sits in the server's socket and is stored when it resumes, but the client has
long given up. ``agent.share()`` retries with the same event id, and when it gives up it
says the append may have landed and that calling it again is safe; calling it again
after the server is back stores nothing new. Same for a board write. A real nats-server.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarmlog import LogUnavailable
from synthesizer import Swarm
from tests.natsserver import NatsServer, server_binary

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)

TIMEOUT = 0.5


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NatsServer]:
    try:
        server_binary()
    except Exception as e:  # pragma: no cover - the test extra installs it
        pytest.skip(f"no nats-server: {e}")
    srv = NatsServer(tmp_path / "nats")
    srv.start()
    try:
        yield srv
    finally:
        if srv.proc is not None and srv.proc.poll() is None:
            os.kill(srv.proc.pid, signal.SIGCONT)
        srv.stop()


def _state(pid: int) -> str:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


def _pause(srv: NatsServer) -> None:
    """SIGSTOP the server and wait (bounded by the test timeout) until it is stopped."""
    assert srv.proc is not None
    os.kill(srv.proc.pid, signal.SIGSTOP)
    while _state(srv.proc.pid) not in "Tt":
        threading.Event().wait(0.01)


def _resume(srv: NatsServer) -> None:
    assert srv.proc is not None
    os.kill(srv.proc.pid, signal.SIGCONT)


def _count(sw: Swarm, content: str) -> int:
    return sum(
        1
        for ev in sw.log.read(1)
        if ev.type == "memory.shared" and ev.body.get("content") == content
    )


def test_share_after_an_ambiguous_timeout_is_stored_once(server: NatsServer) -> None:
    with Swarm.open(f"{server.url}/retry", timeout=TIMEOUT) as sw:
        agent = sw.agent("a1")
        agent.share("warm-up")
        _pause(server)
        try:
            with pytest.raises(LogUnavailable) as exc:
                agent.share("the cache is stale after deploys", importance=0.7)
        finally:
            _resume(server)
        stored = agent.share("the cache is stale after deploys", importance=0.7)  # retry
        assert stored.seq is not None
        assert _count(sw, "the cache is stale after deploys") == 1
        e = exc.value
        assert e.maybe_stored
        assert "may or may not be stored" in str(e) and "again" in str(e) and "safe" in str(e)
        assert "\n" not in str(e)
        assert len(sw.appends) == 0  # forgotten once the retry was answered
        # a new call with other arguments is a new memory, as always
        agent.share("the cache is stale after deploys", importance=0.9)
        assert _count(sw, "the cache is stale after deploys") == 2


def test_share_during_a_pause_shorter_than_its_retries_is_stored_once(
    server: NatsServer,
) -> None:
    """The API's own retries reuse the id: a pause longer than the client timeout but
    shorter than the retries ends in one stored event (whichever attempt landed)."""
    with Swarm.open(f"{server.url}/retry2", timeout=TIMEOUT) as sw:
        agent = sw.agent("a1")
        agent.share("warm-up")
        out: list[object] = []

        def share() -> None:
            try:
                out.append(agent.share("uploads over 2 GB time out"))
            except LogUnavailable as e:
                out.append(e)

        _pause(server)
        t = threading.Thread(target=share)
        t.start()
        done = threading.Event()
        done.wait(4 * TIMEOUT)  # past the client timeout, inside the API's retries
        _resume(server)
        t.join(60)
        assert not t.is_alive()
        if isinstance(out[0], LogUnavailable):  # the machine was slow: retry as told
            agent.share("uploads over 2 GB time out")
        assert _count(sw, "uploads over 2 GB time out") == 1


def test_board_write_after_an_ambiguous_timeout_is_stored_once(server: NatsServer) -> None:
    """A CAS that may have landed, called again: the same event, so no conflict with itself
    and no second write (creating a fact reads nothing first, so the append is what waits)."""
    with Swarm.open(f"{server.url}/retry3", timeout=TIMEOUT) as sw:
        sw.agent("a1").share("warm-up")
        _pause(server)
        try:
            with pytest.raises(LogUnavailable) as exc:
                sw.board.cas("port", 0, content="api port", value="8080")
        finally:
            _resume(server)
        v = sw.board.cas("port", 0, content="api port", value="8080")  # the same call again
        assert v > 0 and sw.board.get("port").value == "8080"
        assert len([ev for ev in sw.log.read(1) if ev.key == "port"]) == 1
        assert exc.value.maybe_stored
