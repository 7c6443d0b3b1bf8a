"""JetStream-specific behaviour of JetStreamLog (the shared contract is in test_log_contract.py).

Runs against a real nats-server started on loopback (fixture ``nats_url`` in conftest).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from swarmlog import Event, InvalidEvent, LogUnavailable, SwarmlogError, VersionConflict, open_log
from swarmlog.jetstream import JetStreamLog, StreamCorruption, ensure_stream
from swarmlog.jetstream.client import Unreachable
from swarmlog.jetstream.proto import escape_key, key_subject, unescape_key
from swarmlog.jetstream.setup import stream_config
from tests.natsserver import NatsServer, free_port

_n = itertools.count(1)


def ev(**kw: Any) -> Event:
    return Event(agent="a1", type="test.event", **kw)


@pytest.fixture
def target(nats_url: str) -> str:
    return f"{nats_url}/J{os.getpid()}x{next(_n)}"


@pytest.fixture
def log(target: str) -> Iterator[JetStreamLog]:
    lg = JetStreamLog(target)
    try:
        yield lg
    finally:
        lg.close()


def raw(lg: JetStreamLog, coro_fn: Any) -> Any:
    """Run ``coro_fn(nc)`` on the log's own loop with its raw nats-py connection."""
    return lg._run(coro_fn(lg._c.conn), 10)


# ---------------------------------------------------------------- atomic batches


def test_batch_all_or_nothing(log: JetStreamLog) -> None:
    log.append(ev(key="a"))
    evs = [ev(key="a"), ev(key="b"), ev(), ev(key="c")]
    with pytest.raises(VersionConflict) as ei:  # the last expectation fails: none stored
        log.append_many(evs, expect={"a": 1, "c": 0, "zz": 7})
    assert (ei.value.key, ei.value.expected, ei.value.actual) == ("zz", 7, 0)
    assert log.last_seq == 1 and log.version("b") == 0
    out = log.append_many(evs, expect={"a": 1, "c": 0, "zz": 0})
    assert [e.seq for e in out] == [2, 3, 4, 5]
    assert log.version("a") == 2 and log.version("c") == 5


def test_batch_limit_and_big_batch(log: JetStreamLog) -> None:
    out = log.append_many([ev(body={"i": i}) for i in range(1000)])
    assert [e.seq for e in out] == list(range(1, 1001))
    with pytest.raises(InvalidEvent, match="at most 1000"):
        log.append_many([ev() for _ in range(1001)])
    assert log.last_seq == 1000


def test_expectations_overflow_use_a_stream_fence(log: JetStreamLog) -> None:
    """Three expected keys on one event: checked together via Nats-Expected-Last-Sequence."""
    a = log.append(ev(key="x"))
    b = log.append(ev(key="y"))
    got = log.append(ev(key="x"), expect={"x": a.seq or 0, "y": b.seq or 0, "z": 0})
    assert got.seq == 3
    with pytest.raises(VersionConflict) as ei:
        log.append(ev(key="x"), expect={"x": got.seq, "y": 1, "z": 0})
    assert (ei.value.key, ei.value.actual) == ("y", b.seq)
    assert log.last_seq == 3


@pytest.mark.slow
def test_non_atomic_stream_refuses_batches(target: str) -> None:
    lg = JetStreamLog(target)
    try:

        async def off(nc: Any) -> None:
            info = await lg._c.stream_info()
            assert info is not None
            cfg = dict(info["config"], allow_atomic=False)
            await lg._c.api(f"STREAM.UPDATE.{lg.stream}", cfg)

        raw(lg, off)
    finally:
        lg.close()
    with JetStreamLog(target) as lg2:
        assert isinstance(lg2, JetStreamLog) and not lg2.atomic
        with pytest.raises(SwarmlogError, match="atomic"):
            lg2.append_many([ev(), ev()])
        assert lg2.last_seq == 0
        assert lg2.append_many([ev()])[0].seq == 1  # one event is atomic by itself
    ensure_stream(target)  # init turns it back on
    with JetStreamLog(target) as lg3:
        assert isinstance(lg3, JetStreamLog) and lg3.atomic
        assert [e.seq for e in lg3.append_many([ev(), ev()])] == [2, 3]


# ---------------------------------------------------------------- idempotency & ambiguity


def test_probe_finds_stored_ids_and_writes_nothing(log: JetStreamLog) -> None:
    from swarmlog.jetstream.proto import prepare

    a = log.append(ev())
    ps = prepare([ev(id=a.id), ev(id="never-stored")], log.name, log.subjects, log.limits)
    assert log._run(log._probe(ps)) == {a.id: 1}
    assert log.last_seq == 1
    assert log.append(ev(id="never-stored")).seq == 2  # the probe left no trace


def test_ambiguous_cas_timeout_returns_the_landed_event(
    log: JetStreamLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CAS publish that landed but whose ack was lost: the retry finds it, no conflict."""
    log.append(ev(key="k"))
    log._fast = None  # the async client's lost ack (the sync path's: test_js_syncpub.py)
    real = log._c.publish
    calls = []

    async def lossy(p: Any, headers: Any = None) -> Any:
        ack = await real(p, headers)
        calls.append(ack)
        if len(calls) == 1:
            raise Unreachable("ack lost")
        return ack

    monkeypatch.setattr(log._c, "publish", lossy)
    e = ev(key="k", body={"v": 1})
    got = log.append(e, expect={"k": 1})
    assert got.seq == 2 and got.id == e.id
    assert len(calls) == 1  # the retry was a conflict, settled by the probe
    assert log.last_seq == 2 and log.version("k") == 2


def test_retried_cas_after_caller_timeout_returns_original(log: JetStreamLog) -> None:
    e = ev(key="k")
    first = log.append(e, expect={"k": 0})
    log.append(ev(key="k"))
    assert log.append(e, expect={"k": 0}) == first  # the caller's retry: not a conflict
    batch = [ev(key="b"), ev(key="b")]
    out = log.append_many(batch, expect={"b": 0})
    assert log.append_many(batch, expect={"b": 0}) == out
    assert log.last_seq == 4


def test_idempotency_across_processes(target: str) -> None:
    code = (
        "import sys; from swarmlog import open_log, Event\n"
        "log = open_log(sys.argv[1])\n"
        "e = Event(agent='p', type='test.event', id='cross-1', body={'n': 1},"
        " ts=int(sys.argv[2]))\n"
        "e = log.append(e)\n"
        "print(e.seq, e.body['n']); log.close()\n"
    )
    outs = [
        subprocess.run(
            [sys.executable, "-c", code, target, str(i)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path(__file__).parent.parent,
        )
        for i in range(2)
    ]
    assert all(o.returncode == 0 for o in outs), [o.stderr for o in outs]
    assert outs[0].stdout == outs[1].stdout == "1 1\n"  # (the second process: a retry)


# ---------------------------------------------------------------- errors, bounded


@pytest.mark.timeout(30)  # bounded: a hang fails the test instead of stalling CI
def test_unavailable_server_is_one_line_and_bounded() -> None:
    with pytest.raises(LogUnavailable) as ei:
        open_log(f"nats://127.0.0.1:{free_port()}/NOPE", timeout=1.0)
    assert "cannot reach NATS" in str(ei.value) and "\n" not in str(ei.value)


def test_stream_missing(nats_url: str) -> None:
    with pytest.raises(LogUnavailable, match="swarmlog init") as ei:
        open_log(f"{nats_url}/MISSING{os.getpid()}", create=False)
    assert "\n" not in str(ei.value)


def test_not_a_swarmlog_stream(log: JetStreamLog, nats_url: str) -> None:
    async def mk(nc: Any) -> None:
        await log._c.api("STREAM.CREATE.FOREIGN", {"name": "FOREIGN", "subjects": ["foreign.>"]})

    raw(log, mk)
    with pytest.raises(LogUnavailable, match="not a swarmlog stream"):
        open_log(f"{nats_url}/FOREIGN")


@pytest.mark.slow
@pytest.mark.timeout(60)  # bounded: a hang fails the test instead of stalling CI
def test_server_dies_mid_session(tmp_path: Path) -> None:
    srv = NatsServer(tmp_path)
    srv.start()
    try:
        lg = JetStreamLog(f"{srv.url}/DIES", timeout=1.0)
        lg.append(ev())
        srv.kill()
        with pytest.raises(LogUnavailable):
            lg.append(ev())
        with pytest.raises(LogUnavailable):
            _ = lg.last_seq
        lg.close()
    finally:
        srv.stop()


@pytest.mark.timeout(60)  # bounded: a hang fails the test instead of stalling CI
def test_permission_denied(tmp_path: Path) -> None:
    extra = (
        "authorization {\n  users = [\n"
        "    {user: admin, password: pw}\n"
        '    {user: ro, password: pw, permissions: {publish: {deny: ["$JS.API.>"]}}}\n'
        "  ]\n}\n"
    )
    srv = NatsServer(tmp_path, extra=extra)
    srv.start()
    try:
        host = srv.url.removeprefix("nats://")
        with pytest.raises(LogUnavailable, match="permission denied") as ei:
            open_log(f"nats://ro:pw@{host}/P", timeout=3.0)
        assert "\n" not in str(ei.value)
        with open_log(f"nats://admin:pw@{host}/P") as lg:
            assert lg.append(ev()).seq == 1
    finally:
        srv.stop()


def test_close_stops_the_loop_thread(target: str) -> None:
    before = threading.active_count()
    lg = JetStreamLog(target)
    lg.append(ev())
    list(lg.follow(1, timeout=0.1))
    lg.close()
    lg.close()
    assert threading.active_count() == before
    with pytest.raises(LogUnavailable, match="closed"):
        lg.append(ev())


# ---------------------------------------------------------------- configuration


def test_ensure_stream_configures_and_denies_purge(target: str) -> None:
    cfg = ensure_stream(target, name="myswarm", duplicate_window=120)
    assert cfg["deny_purge"] and cfg["allow_atomic"]
    # erasure deletes messages with erase (swarmlog/jetstream/redact.py)
    assert not cfg["deny_delete"]
    assert cfg["allow_direct"] and not cfg.get("allow_rollup_hdrs")
    assert cfg["duplicate_window"] == 120 * 10**9 and cfg["num_replicas"] == 1
    assert cfg["subjects"] == [f"swarmlog.{target.rsplit('/', 1)[1]}.>"]
    assert len(cfg["metadata"]["swarmlog.id"]) == 32  # the identity checkpoints carry
    assert ensure_stream(target, duplicate_window=120) == cfg  # idempotent, keeps name and id
    with JetStreamLog(target, create=False) as lg:
        assert lg.name == "myswarm"
        lg.append_many([ev(), ev(), ev()])

        async def purge(nc: Any) -> str:
            r = await nc.request(f"$JS.API.STREAM.PURGE.{lg.stream}", b"", timeout=5)
            return str(r.data)

        assert raw(lg, purge).count('"error"') == 1
        assert lg.last_seq == 3 and lg.verify().ok

        async def delete(nc: Any) -> str:  # a delete that is not a redaction
            r = await nc.request(f"$JS.API.STREAM.MSG.DELETE.{lg.stream}", b'{"seq":2}', timeout=5)
            return str(r.data)

        assert '"success":true' in raw(lg, delete)
        rep = lg.verify()
        assert (
            not rep.ok and "seq 2" in rep.problems[0] and "no redaction record" in rep.problems[0]
        )
        with pytest.raises(StreamCorruption, match="seq 2"):
            list(lg.read())


def test_a_stream_made_before_erasure_keeps_deny_delete(target: str) -> None:
    """The server cannot lift deny_delete: ``init`` on an old stream keeps it, and
    redacting there fails with one line instead of half-erasing."""
    stream = target.rsplit("/", 1)[1]
    with JetStreamLog(target) as lg:

        async def old(nc: Any) -> None:
            await nc.request(f"$JS.API.STREAM.DELETE.{stream}", b"", timeout=5)
            cfg = {**stream_config(stream, "old", 1, 600, lg.limits, "x" * 32), "deny_delete": True}
            await nc.request(f"$JS.API.STREAM.CREATE.{stream}", orjson.dumps(cfg), timeout=5)

        raw(lg, old)
    cfg = ensure_stream(target)
    assert cfg["deny_delete"]
    with JetStreamLog(target) as lg:
        lg.append(ev())
        with pytest.raises(SwarmlogError, match="denies message deletes"):
            lg.redact({1: None})
        assert [e.seq for e in lg.read()] == [1] and lg.verify().ok


# ---------------------------------------------------------------- mapping details


def test_keys_with_subject_characters(log: JetStreamLog) -> None:
    keys = ["a.b", "a*", "a>", "a%2E", "ключ", "a b"[0:1] + "_-", "x" * 128]
    for k in keys:
        assert unescape_key(escape_key(k)) == k
        assert " " not in escape_key(k) and "." not in escape_key(k)
    assert len({key_subject("p", k) for k in keys}) == len(keys)
    for k in keys:
        log.append(ev(key=k))
    assert [log.version(k) for k in keys] == list(range(1, len(keys) + 1))
    assert log.version("a") == 0


def test_verify_and_read_catch_a_foreign_message(log: JetStreamLog) -> None:
    log.append(ev())

    async def junk(nc: Any) -> None:
        await nc.request(f"{log.prefix}.e", b'{"not":"a record"}', timeout=5)

    raw(log, junk)
    log.append(ev())
    # a bad write, not damage: noted, and readers skip it (swarmlog/jetstream/skip.py)
    rep = log.verify()
    assert rep.ok and rep.events == 3, rep.problems
    assert any(n.startswith("seq 2: skipped by readers") for n in rep.notes)
    got = list(log.read())
    assert [e.seq for e in got] == [1, 2, 3] and got[1].type == "swarmlog.skipped"
    assert got[1].agent == "?" and got[1].body["subject"] == f"{log.prefix}.e"


def test_checkpoints_in_object_store(log: JetStreamLog) -> None:
    cs = log.checkpoints
    assert cs.list() == [] and cs.latest() is None
    log.append_many([ev() for _ in range(20)])
    cs.save(0, b"", "f/1")
    cs.save(10, b"ten" * 1000, "f/1", "cfg")
    cs.save(20, b"twenty", "f/2")
    assert [i.seq for i in cs.list()] == [0, 10, 20]
    got = cs.latest(at_or_below=15, format="f/1")
    assert got is not None and got.seq == 10 and got.data == b"ten" * 1000
    assert cs.invalidate_after(10) == 2
    assert [i.seq for i in cs.list()] == [0]
    # checkpoints carry the stream's identity (kept in its metadata) and the event id
    info = cs.save(5, b"five", "f/1", keep=1)
    assert len(log.swarm_id) == 32 and info.swarm == log.swarm_id
    assert info.event == next(log.read(5, 5)).id
    assert [i.seq for i in cs.list()] == [5]  # retention: the newest 1


def test_checkpoint_that_does_not_fit_says_what_is_kept(log: JetStreamLog) -> None:
    """The bucket full (the server's storage limit): a one-line CheckpointNotWritten
    naming the checkpoint kept, and that one still loads (robustness work, defect 8)."""
    from swarmlog import CheckpointNotWritten

    async def small_bucket(nc: Any) -> None:
        from nats.js.api import ObjectStoreConfig

        await nc.jetstream().create_object_store(
            f"{log.stream}-ckpt", config=ObjectStoreConfig(max_bytes=256 * 1024)
        )

    raw(log, small_bucket)
    log.append_many([ev() for _ in range(3)])
    log.checkpoints.save(2, b"small", "f/1")
    with pytest.raises(CheckpointNotWritten) as ei:
        log.checkpoints.save(3, os.urandom(1 << 20), "f/1")
    msg = str(ei.value)
    assert "checkpoint not written" in msg and "the previous checkpoint at seq 2 is kept" in msg
    assert "\n" not in msg
    got = log.checkpoints.latest()
    assert got is not None and got.seq == 2 and got.data == b"small"


def test_wait_for_change_wakes_on_append(log: JetStreamLog, target: str) -> None:
    assert log.wait_for_change(0.2) is False
    with JetStreamLog(target) as other:
        writer = threading.Timer(0.2, lambda: other.append(ev()))
        writer.start()
        assert log.wait_for_change(5.0) is True
        writer.join()  # the append is done (it reads its stored time back) before closing


def test_sync_facade_concurrent_appends(log: JetStreamLog) -> None:
    """Many threads share one log object (one loop): all appends land, gapless."""
    out: list[int] = []

    def work() -> None:
        for _ in range(50):
            out.append(log.append(ev()).seq or 0)

    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(out) == list(range(1, 401))
    assert asyncio.iscoroutinefunction(log._c.publish)
