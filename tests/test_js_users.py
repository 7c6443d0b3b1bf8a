"""Who may write what on JetStream: per-agent NATS users the server enforces (trust work).

One real nats-server runs with the authorization block ``swarmlog init --agents … --write``
generated (included by its config, as an operator would); the operator's user creates the
stream with ``swarmlog init``. Agents connect as their own users through
``nats://user:password@host/STREAM``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from swarmlog import Event, LogUnavailable, VersionConflict
from swarmlog.errors import SwarmlogError
from swarmlog.jetstream import JetStreamLog, stream_config
from swarmlog.jetstream.auth import authorization
from swarmlog.jetstream.proto import prepare
from swarmlog.jetstream.subjects import META_SUBJECTS, NO_AGENT, Subjects
from synthesizer import events as T
from synthesizer.state import SwarmState, fold_dicts
from synthesizer.worker.lease import LEASE_KEY
from tests.cli_util import run_cli
from tests.natsserver import NatsServer

pytestmark = pytest.mark.timeout(120)

_n = itertools.count(1)


@dataclass
class Users:
    """The server and each user's target URL (without the stream)."""

    server: NatsServer
    urls: dict[str, str]

    def target(self, user: str, stream: str) -> str:
        return self.urls[user].rsplit("/", 1)[0] + "/" + stream


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    d = tmp_path_factory.mktemp("natsauth")
    conf = d / "swarm-users.conf"
    srv = NatsServer(d / "srv")
    # every stream of this module is named U…: the block is for stream "U" but the
    # permissions are per stream, so each test's stream gets its own block below
    r = run_cli("init", "--url", f"{srv.url}/U", "--agents", "a,b", "--write", str(conf), "--json")
    assert r.code == 0, r.err
    out = orjson.loads(r.out)
    assert out["file"] == str(conf) and set(out["users"]) == {"a", "b", "synthesizer", "operator"}
    assert oct(conf.stat().st_mode & 0o777) == "0o600"
    srv.include = conf
    srv.start()
    try:
        yield Users(srv, out["users"])
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def stream(users: Users) -> str:
    """The stream "U", created by the operator's user through ``swarmlog init``."""
    r = run_cli("init", "--url", users.target("operator", "U"))
    assert r.code == 0, r.err
    return "U"


def open_as(users: Users, user: str, stream: str = "U") -> JetStreamLog:
    return JetStreamLog(users.target(user, stream), create=False)


def shared(agent: str, content: str, **kw: Any) -> Event:
    return Event(agent=agent, type=T.MEMORY_SHARED, body={"content": content}, **kw)


def fold(log: JetStreamLog) -> SwarmState:
    st = SwarmState()
    for batch in log.read_batches():
        fold_dicts(st, batch)
    return st


# ---------------------------------------------------------------- the server refuses


def test_agent_appends_reads_and_follows_as_itself(users: Users, stream: str) -> None:
    with open_as(users, "a") as a:
        first = a.last_seq
        assert a.subjects.per_agent  # the server vouches for writers
        e = a.append(shared("a", f"a writes {next(_n)}", key=f"k{first}"))
        assert e.author is None and e.seq == first + 1  # no mark: written by its agent
        got = list(a.read(e.seq or 0))
        assert got == [e] and got[0].envelope == e.to_dict()
        assert a.version(f"k{first}") == e.seq
        with pytest.raises(VersionConflict):  # CAS still works across the per-agent subjects
            a.append(shared("a", "stale"), expect={f"k{first}": 0})
        followed = next(iter(a.follow(e.seq or 0, timeout=10)))
        assert followed == e
        assert a.verify().ok


def test_agent_b_cannot_publish_as_agent_a(users: Users, stream: str) -> None:
    with open_as(users, "b") as b:
        before = b.last_seq
        with pytest.raises(
            LogUnavailable, match=r"^permission denied: publish to swarmlog\.U\.a\.a\.e"
        ):
            b.append(shared("a", "b pretends to be a"))
        with pytest.raises(LogUnavailable, match="permission denied"):  # an atomic batch too
            b.append_many([shared("b", "mine"), shared("a", "not mine", key="x")])
        with pytest.raises(LogUnavailable, match="permission denied"):
            b.append(shared("a", "keyed", key="fact-1"))
        assert b.last_seq == before  # nothing stored
        e = b.append(shared("b", "b as itself"))  # the connection still works
        assert e.seq == before + 1 and e.author is None


def test_agent_b_cannot_publish_synthesizer_events(users: Users, stream: str) -> None:
    with open_as(users, "b") as b:
        before = b.last_seq
        forged = Event(
            agent=T.SYNTH_AGENT, type=T.SYNTH_PROGRESS, key=LEASE_KEY, body={"upto": 10**6}
        )
        with pytest.raises(LogUnavailable, match="permission denied"):
            b.append(forged)
        # under its own name it may not move the lease key either (a denied subject)
        own = Event(agent="b", type=T.SYNTH_PROGRESS, key=LEASE_KEY, body={"upto": 10**6})
        with pytest.raises(LogUnavailable, match="permission denied"):
            b.append(own)
        assert b.last_seq == before
        # unkeyed, under its own name: stored (history), refused by the fold and counted
        e = b.append(Event(agent="b", type=T.SYNTH_PROGRESS, body={"upto": 10**6}))
        st = fold(b)
        assert st.progress < e.seq  # type: ignore[operator]
        assert st.metrics.ignored.get(f"refused:{T.SYNTH_PROGRESS}", 0) >= 1


def test_synthesizer_user_writes_synth_events(users: Users, stream: str) -> None:
    from synthesizer.worker.synth import Synthesizer

    marker = f"the deploy key rotates every {next(_n)} days"
    with open_as(users, "a") as a:
        assert a.checkpoints.list() == []  # no bucket yet: listing does not try to create it
        a.append(shared("a", marker))
    with open_as(users, T.SYNTH_AGENT) as s:
        w = Synthesizer(s)
        assert w.run_once() >= 1  # its batch: lease key, fact.created… under its subjects
        assert w.maybe_checkpoint(force=True)  # and the checkpoint bucket
        st = fold(s)
    assert any(f.content == marker for f in st.facts.values())
    assert st.metrics.ignored.get(f"refused:{T.FACT_CREATED}", 0) == 0
    with open_as(users, "a") as a:  # agents read the synthesizer's checkpoints
        assert a.checkpoints.latest() is not None


# ---------------------------------------------------------------- the fold refuses


def test_body_claiming_another_agent_on_own_subject_is_ignored(users: Users, stream: str) -> None:
    marker = f"forged-{next(_n)}"
    with open_as(users, "b") as b:

        class BsSubjects(Subjects):
            def of(self, agent: str, key: str | None) -> str:
                return super().of("b", key)  # publish a's event on b's own subject

        ps = prepare([shared("a", marker)], b.name, BsSubjects(b.prefix), b.limits)
        ack = b._run(b._c.publish(ps[0]))
        seq = int(ack["seq"])
        ev = next(iter(b.read(seq, seq)))
        assert (ev.agent, ev.author) == ("a", "b")
        st = fold(b)
        assert st.metrics.ignored.get(f"refused:{T.MEMORY_SHARED}", 0) == 1
        assert all(r.content != marker for r in st.pending.values())
        rep = b.verify()
        assert rep.ok and any(f"seq {seq}: claims agent 'a'" in n for n in rep.notes)
    r = run_cli("--url", users.target("a", stream), "stats", "--json")
    assert r.code == 0, r.err
    assert orjson.loads(r.out)["refused"][T.MEMORY_SHARED] == 1  # the dashboard's counter


# ---------------------------------------------------------------- layouts and the block


def test_a_stream_with_the_shared_layout_still_opens(nats_url: str) -> None:
    """A stream created before per-agent subjects keeps its layout, also through init."""
    from swarmlog.envelope import DEFAULT_LIMITS

    name = f"OLD{os.getpid()}x{next(_n)}"
    target = f"{nats_url}/{name}"
    with JetStreamLog(f"{nats_url}/NEW{os.getpid()}x{next(_n)}") as new:
        assert new.subjects.per_agent  # what a new stream gets
        cfg = stream_config(name, name, 1, 600.0, DEFAULT_LIMITS, "id1")
        del cfg["metadata"][META_SUBJECTS]
        new._run(new._c.api(f"STREAM.CREATE.{name}", cfg))
    assert run_cli("init", "--url", target).code == 0  # an update keeps the layout
    with JetStreamLog(target, create=False) as log:
        assert not log.subjects.per_agent
        e = log.append(shared("anyone", "old layout", key="k"))
        assert e.author is None and log.version("k") == e.seq
        raw = log._run(log._c.get(e.seq or 0))
        assert raw.subject == f"swarmlog.{name}.k.k"
        with pytest.raises(VersionConflict):
            log.append(shared("anyone", "stale"), expect={"k": 0})
        assert log.verify().ok


def test_subjects_and_authors_round_trip() -> None:
    s = Subjects("swarmlog.S")
    for agent in ("a", "agent.with.dots", "a*b>c", "ключ", "50%"):
        for key in (None, "k", "x.y"):
            subj = s.of(agent, key)
            assert s.author(subj) == agent
            assert subj.count(".") == (4 if key is None else 5)
            if key is not None:
                assert subj.endswith(s.key(key).split("*", 1)[1])
    assert s.author("swarmlog.S.e") == NO_AGENT and s.author("swarmlog.S.a.x.z") == NO_AGENT
    assert Subjects("swarmlog.S", per_agent=False).author("swarmlog.S.e") is None


def test_authorization_block_rules() -> None:
    auth = authorization("S", ["a", "b"], passwords={"a": "pw-a"})
    text = auth.block()
    assert '"swarmlog.S.a.a.>"' in text and '"swarmlog.S.a.a.k.synthesizer"' in text
    assert "pw-a" in text and len({u.password for u in auth.users}) == 4
    assert auth.urls("nats://old:pw@h:4222/S")["a"] == "nats://a:pw-a@h:4222/S"
    for bad, why in (
        (["a", "a"], "twice"),
        (["synthesizer"], "reserved"),
        ([], "no agent"),
        (["bad name"], "forbidden"),
    ):
        with pytest.raises(SwarmlogError, match=why):
            authorization("S", bad)


def test_cli_prints_the_block_and_refuses_a_file_log(tmp_path: Path) -> None:
    r = run_cli("init", "--url", "nats://h:4222/S", "--agents", "x,y")
    assert r.code == 0, r.err
    assert r.out.startswith("# swarmlog: one NATS user per agent of stream S")
    assert "authorization {" in r.out and "#   x: nats://x:" in r.out
    r = run_cli("init", "--root", str(tmp_path / "s"), "--agents", "x")
    assert r.code == 1 and "trust boundary" in r.err and "Traceback" not in r.err
    f = tmp_path / "users.conf"
    f.write_text("keep")
    r = run_cli("init", "--url", "nats://h:4222/S", "--agents", "x", "--write", str(f))
    assert r.code == 1 and "exists" in r.err and f.read_text() == "keep"


def test_facade_board_cas_across_agent_users(users: Users, stream: str) -> None:
    """Agents' board writes on one fact go through the CAS across their own subjects."""
    from synthesizer.swarm import Swarm

    fid = f"fact-users-{next(_n)}"
    with Swarm.open(users.target("a", stream)) as sa, Swarm.open(users.target("b", stream)) as sb:
        v1 = sa.board.cas(fid, 0, content="port 8080", agent="a")
        with pytest.raises(VersionConflict):  # b's view is stale: a wrote on a's subject
            sb.board.cas(fid, 0, content="port 9090", agent="b")
        v2 = sb.board.cas(fid, v1, content="port 9090", agent="b")
        with pytest.raises(LogUnavailable, match="permission denied"):
            sb.board.cas(fid, v2, status="retracted", reason="b as a", agent="a")
        hist = sa.board.history(fid)
        assert [h.agent for h in hist] == ["a", "b"] and hist[-1].seq == v2
        assert sa.refresh().facts[fid].content == "port 9090"
