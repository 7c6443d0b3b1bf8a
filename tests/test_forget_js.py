"""Erasure on JetStream through the Swarm (merge-rule and trust work): after ``forget`` a byte
scan of the server's store directory finds none of the agent's words, its name (issue
27: a pseudonym replaces it) nor the session and thread names only it used; the
co-shared fact keeps the other agent's words; the log verifies; seqs do not move;
replay from a checkpoint equals replay from the start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from synthesizer import Swarm
from synthesizer.replay import state_at
from tests.natsserver import NatsServer
from tests.test_js_redact import _hits

pytestmark = pytest.mark.timeout(180)

WORDS = "ZQXJS the vault combination is orange seven falcon"
SHARED_V = "Deploys are FROZEN on Fridays."
SHARED_O = "deploys are frozen on fridays"
SESSION, THREAD = "session-ZQXSESS-divorce", "thread-ZQXTHR-divorce"
VICTIM = "victim-ZQXAGENT"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NatsServer]:
    srv = NatsServer(tmp_path / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


@pytest.mark.slow
def test_forget_on_jetstream_leaves_no_byte_of_the_agent(server: NatsServer) -> None:
    target = f"{server.url}/FORGETJS"
    store = server.dir / "js"
    sw = Swarm.open(target)
    try:
        v = sw.agent(VICTIM, session=SESSION, thread=THREAD)
        v.share(WORDS, category="note")
        v.share(SHARED_V, category="policy")
        sw.synthesize()
        sw.agent("other", session="o").share(SHARED_O, category="ops")
        sw.synthesize()
        fid = next(f.id for f in sw.refresh().facts.values() if f.content == SHARED_V)
        sw.checkpoint()
        before = [(e.seq, e.type) for e in sw.log.read()]
    finally:
        sw.close()
    needles = [b"ZQXJS", b"ZQXSESS", b"ZQXTHR", b"FROZEN", b"ZQXAGENT"]
    assert set(_hits(store, needles)) == {n.decode() for n in needles}
    sw = Swarm.open(target)
    try:
        sw.forget(agent=VICTIM)
        st = sw.refresh()
        assert st.facts[fid].content == SHARED_O
        after = [(e.seq, e.type) for e in sw.log.read()]
        assert after[: len(before)] == before
        assert sw.log.verify().ok
        assert state_at(sw.log).digest() == state_at(sw.log, from_start=True).digest()
    finally:
        sw.close()
    assert _hits(store, needles) == {}


def test_forget_on_jetstream_renames_the_keys_and_ids_it_chose(server: NatsServer) -> None:
    """The trust work: a board key the agent created (its subject on the per-agent layout) and
    an event id it chose (``Nats-Msg-Id``) leave the store directory too; another
    agent's later write on the key moves to the same pseudonym."""
    from swarmlog import Event

    target = f"{server.url}/FORGETKEY"
    store = server.dir / "js"
    sw = Swarm.open(target)
    try:
        v1 = sw.board.cas("door-ZQXKEY", 0, content="door code", agent=VICTIM)
        sw.board.cas("door-ZQXKEY", v1, value="changed", agent="other")
        sw.log.append(
            Event(agent=VICTIM, type="memory.shared", id="req-ZQXID-1", body={"content": "x y"})
        )
        sw.agent("other", session="o").share("an unrelated finding", category="ops")
        sw.synthesize()
        before = [(e.seq, e.type) for e in sw.log.read()]
    finally:
        sw.close()
    needles = [b"ZQXKEY", b"ZQXID", b"ZQXAGENT"]
    assert set(_hits(store, needles)) == {n.decode() for n in needles}
    sw = Swarm.open(target)
    try:
        sw.forget(agent=VICTIM)
        evs = list(sw.log.read())
        assert [(e.seq, e.type) for e in evs][: len(before)] == before
        keyed = [e for e in evs if e.key is not None and e.key.startswith("~erased-")]
        assert len({e.key for e in keyed}) == 1 and len(keyed) == 2
        assert sw.log.version("door-ZQXKEY") == 0
        assert sw.log.version(keyed[0].key or "") == keyed[-1].seq
        assert sw.log.verify().ok
        assert state_at(sw.log).digest() == state_at(sw.log, from_start=True).digest()
    finally:
        sw.close()
    assert _hits(store, needles) == {}
