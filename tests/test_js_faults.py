"""JetStream data safety (faults work items 5, 9 and the cache part of 3), on a real nats-server.

* 22.5: one agent publishing bytes that are not a record (or a keyed record on an unkeyed
  subject) on its own permitted subject halts no reader: every reader skips it with one
  note naming the agent, ``verify`` lists it, the fold goes on; and no agent may publish
  a seal (the server refuses it: only the sealer and the operator may).
* 22.9: erasure leaves no readable bytes of a re-put or deleted checkpoint object in
  the server's store directory (scanned after a server restart).
* 22.3: a corrupted file in the per-machine cache of side files is discarded and fetched
  again, never served.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from swarmlog import Event, LogUnavailable
from swarmlog.jetstream import JetStreamLog
from swarmlog.jetstream.proto import encode_payload
from synthesizer import events as T
from tests.cli_util import run_cli
from tests.natsserver import NatsServer

pytestmark = pytest.mark.timeout(180)

_n = itertools.count(1)


@dataclass
class Users:
    server: NatsServer
    urls: dict[str, str]

    def target(self, user: str, stream: str = "F") -> str:
        return self.urls[user].rsplit("/", 1)[0] + "/" + stream


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    d = tmp_path_factory.mktemp("natsfaults")
    conf = d / "swarm-users.conf"
    srv = NatsServer(d / "srv")
    r = run_cli("init", "--url", f"{srv.url}/F", "--agents", "a,b", "--write", str(conf), "--json")
    assert r.code == 0, r.err
    srv.include = conf
    srv.start()
    try:
        u = Users(srv, orjson.loads(r.out)["users"])
        assert run_cli("init", "--url", u.target("operator")).code == 0
        yield u
    finally:
        srv.stop()


def shared(agent: str, content: str, **kw: Any) -> Event:
    return Event(agent=agent, type=T.MEMORY_SHARED, body={"content": content}, **kw)


def publish_raw(log: JetStreamLog, subject: str, data: bytes) -> int:
    """Publish bytes as they are (what any client of the agent's user can do)."""
    msg = log._run(log._c.request(subject, data))
    return int(orjson.loads(msg.data)["seq"])


def test_an_agents_bad_message_halts_no_reader(
    users: Users, caplog: pytest.LogCaptureFixture
) -> None:
    word = f"zebracrossing{next(_n)}"
    with JetStreamLog(users.target("a"), create=False) as a:
        a.append(shared("a", f"before the bad write {word}"))
        junk = publish_raw(a, a.subjects.of("a", None), b"not a record")
        keyed = encode_payload(
            {"id": "f" * 32, "ts": 1.0, "swarm": a.name, "agent": "a", "type": T.MEMORY_SHARED,
             "key": "fact-x", "body": {"content": "keyed on the unkeyed subject"}}
        )
        sneaky = publish_raw(a, a.subjects.of("a", None), keyed)
        a.append(shared("a", "after the bad writes"))
    with JetStreamLog(users.target("b"), create=False) as b:
        b.append(shared("b", "b is here"))
        with caplog.at_level(logging.WARNING, logger="swarmlog.jetstream"):
            evs = list(b.read())
            list(b.read())  # one note per message, not per read
        assert [e.seq for e in evs] == list(range(1, len(evs) + 1))  # gapless
        bad = {e.seq: e for e in evs if e.type == "swarmlog.skipped"}
        assert set(bad) == {junk, sneaky}
        assert all(e.agent == "a" and e.key is None for e in bad.values())
        notes = [r.getMessage() for r in caplog.records if "skipping seq" in r.getMessage()]
        assert len(notes) == 2 and all("agent 'a'" in n for n in notes), notes
        assert b.version("fact-x") == 0
        rep = b.verify()
        assert rep.ok, rep.problems
        assert any(f"seq {junk}: skipped by readers" in n and "'a'" in n for n in rep.notes)
        assert any(f"seq {sneaky}: skipped by readers" in n and "unkeyed" in n for n in rep.notes)
    for user, args in (
        ("b", ("tail",)),
        ("b", ("search", word)),
        ("b", ("stats", "--json")),
        ("synthesizer", ("synth",)),
    ):
        r = run_cli("--url", users.target(user), *args)
        assert r.code == 0, (args, r.err)
    r = run_cli("--url", users.target("operator"), "forget", "--agent", "a")
    assert r.code == 0, r.err
    with JetStreamLog(users.target("b"), create=False) as b:
        rep = b.verify()
        assert rep.ok, rep.problems
        assert not [e for e in b.read() if e.agent == "a"]  # a pseudonym replaced it
        gone = {e.agent for e in b.read() if e.agent.startswith("~erased-")}
        left = [e for e in b.read() if e.agent in gone]
        assert left and all(e.envelope.get("redacted") for e in left)
        assert all(b"not a record" not in b._run(b._c.get(e.seq or 0)).data  # erased
                   for e in left if b._run(b._c.get(e.seq or 0)) is not None)


def test_no_agent_may_publish_a_seal(users: Users) -> None:
    with JetStreamLog(users.target("a"), create=False) as a:
        a.append(shared("a", "something to seal"))
        last = a.last_seq
        forged = orjson.dumps({"first": last + 1, "values": ["0" * 32]})
        with pytest.raises(LogUnavailable, match="permission denied"):
            a._run(a._c.request(f"swarmlog-chain.{a.stream}", forged))
    with JetStreamLog(users.target("synthesizer"), create=False) as s:
        s.append(Event(agent=T.SYNTH_AGENT, type="test.event", body={}))
    with JetStreamLog(users.target("b"), create=False) as b:
        rep = b.verify()
        assert rep.ok, rep.problems


# ---------------------------------------------------------------- 22.9: erasure erases


def _scan(root: Path, words: list[bytes]) -> list[str]:
    """Files under ``root`` holding any of ``words`` (name: word)."""
    hits = []
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            hits += [f"{p.relative_to(root)}: {w.decode()}" for w in words if w in data]
    return hits


def test_erased_checkpoint_objects_leave_no_bytes_on_the_servers_disk(tmp_path: Path) -> None:
    srv = NatsServer(tmp_path / "srv")
    srv.start()
    try:
        target = f"{srv.url}/ER"
        w1, w2, w3, w4 = (f"ckptword{i}{next(_n)}xq".encode() for i in range(4))
        with JetStreamLog(target) as log:
            log.append(shared("a", "one event"))
            store = log.checkpoints
            store.save(1, b"state " + w1 * 50, "fmt/1")
            store.save(1, b"state " + w2 * 50, "fmt/1")  # the same name written twice
            assert store.load(store.list()[-1]).data.endswith(w2)
            side = store.local_dir() / "vectors-1.bin"
            side.write_bytes(b"vec " + w3 * 50)
            store.publish(side.name)
            side.write_bytes(b"vec " + w4 * 50)
            store.publish(side.name)  # a side file published twice
            side.unlink()
            assert store.fetch(side.name) and side.read_bytes().endswith(w4)
            side.unlink()
            for info in store.list():
                store.delete(info)
            assert store.unpublish(set()) == 1
            assert store.list() == []
        srv.stop()
        srv.start()  # the server rewrites what it keeps at start; the bytes must be gone
        with JetStreamLog(target, create=False) as log:
            assert log.last_seq == 1
        srv.stop()
        assert _scan(tmp_path / "srv", [w1, w2, w3, w4]) == []
    finally:
        srv.stop()


# ---------------------------------------------------------------- 22.3: the cache is checked


def test_a_corrupted_cached_side_file_is_fetched_again(
    nats_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = f"{nats_url}/CACHE{next(_n)}x{tmp_path.name[-6:].replace('-', '')}"
    good = b"vectors " + bytes(range(256)) * 64
    monkeypatch.setenv("SWARMLOG_CACHE_DIR", str(tmp_path / "writer"))
    with JetStreamLog(target) as log:
        log.append(shared("a", "x"))
        store = log.checkpoints
        (store.local_dir() / "vec-1.bin").write_bytes(good)
        store.publish("vec-1.bin")
    monkeypatch.setenv("SWARMLOG_CACHE_DIR", str(tmp_path / "reader"))
    with JetStreamLog(target) as log:
        store = log.checkpoints
        assert store.fetch("vec-1.bin")
        path = store.local_dir() / "vec-1.bin"
        assert path.read_bytes() == good
        bad = bytearray(good)
        bad[100] ^= 0xFF  # rot (or a swapped-in file) of the same size
        path.write_bytes(bytes(bad))
    with JetStreamLog(target) as log:  # the next process that maps it
        store = log.checkpoints
        assert store.fetch("vec-1.bin")
        assert path.read_bytes() == good  # discarded and fetched again, never served
        assert not store.fetch("vec-2.bin")  # no object: nothing to serve
        (store.local_dir() / "vec-2.bin").write_bytes(good)
        assert not store.fetch("vec-2.bin")  # a cached file nothing vouches for


@pytest.mark.slow
def test_forged_seals_on_an_open_server_are_ignored_and_reported(nats_url: str) -> None:
    """Without per-agent users anybody may publish on the seal stream: a forged tip that
    claims records not stored yet, and bytes that are no seal, are skipped by the sealer
    and by ``verify`` (noted), and the real records are still sealed."""
    target = f"{nats_url}/FORGE{next(_n)}"
    with JetStreamLog(target) as log:
        for i in range(3):
            log.append(shared("a", f"real {i}"))
    with JetStreamLog(target) as log:
        seal_subject = f"swarmlog-chain.{log.stream}"
        publish_raw(log, seal_subject, orjson.dumps({"first": 4, "values": ["0" * 32] * 5}))
        publish_raw(log, seal_subject, b"not a seal")
    with JetStreamLog(target) as log:  # a new sealer takes over and skips the forgery
        for i in range(3):
            log.append(shared("a", f"after {i}"))
    with JetStreamLog(target) as log:
        rep = log.verify()
        assert rep.ok, rep.problems
        assert rep.head_seq == log.last_seq == 6, rep.notes
        assert any("ignored" in n for n in rep.notes), rep.notes
        assert any("not seals" in n for n in rep.notes), rep.notes
