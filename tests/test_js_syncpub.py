"""Appends published on the caller's own thread (JetStream write-path work), on a real nats-server.

A single append goes out on the handle's blocking connection (syncpath/), which waits
for the PubAck and the republished stamp on its own socket; whatever that path cannot
see through goes to the async client with the same ``Nats-Msg-Id``. Each test checks
what an append returns against what the stream holds: nothing lost, nothing twice,
conflicts and refusals as on the async path, the chain sealed.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarmlog import Event, LogUnavailable, VersionConflict
from swarmlog.errors import EventIdReused
from swarmlog.jetstream import JetStreamLog
from swarmlog.jetstream.syncpath.conn import Fallback, SyncConn
from swarmlog.jetstream.syncpath.fast import RETRY
from tests.cli_util import run_cli
from tests.natsserver import NatsServer, free_port

pytestmark = pytest.mark.timeout(180)
_n = itertools.count(1)


def stream_name(tag: str) -> str:
    return f"SY{tag}{os.getpid()}x{next(_n)}"


def ev(agent: str = "a", i: int = 0, **kw: Any) -> Event:
    return Event(agent=agent, type="test.event", body={"i": i}, **kw)


def stats(log: JetStreamLog) -> dict[str, Any]:
    assert log._fast is not None, "a stream made by this version has the sync path"
    return log._fast.stats()


def same_as_read(log: JetStreamLog, out: list[Event]) -> None:
    """Every returned event is the stored one (seq, content, the server's time to the ns)."""
    by_seq = {e.seq: e for e in log.read()}
    for e in out:
        assert by_seq[e.seq] == e and by_seq[e.seq].ts == e.ts


def test_single_appends_go_on_the_callers_thread(nats_url: str) -> None:
    """Acked on the sync path: the loop thread does not run the append (no task), the
    returned event is the stored one, the seal chain covers it."""
    with JetStreamLog(f"{nats_url}/{stream_name('A')}") as log:
        ran = []
        real = log._append_stamped

        async def spy(*a: Any) -> Any:
            ran.append(1)
            return await real(*a)

        log._append_stamped = spy  # type: ignore[method-assign]
        out = [log.append(ev("a", i)) for i in range(50)]
        out += [log.append(ev("b", i, key=f"k{i % 3}")) for i in range(10)]
        assert ran == [] and stats(log)["sync"] == 60 and stats(log)["fell_back"] == 0
        assert [e.seq for e in out] == list(range(1, 61))
        same_as_read(log, out)
        assert abs(out[-1].ts - time.time()) < 60  # the server's clock, in seconds
        rep = log.verify()
        assert rep.ok and rep.events == 60, rep


def test_short_reads_and_last_seq_skip_the_loop(nats_url: str) -> None:
    """A follower's refresh (the last seq, then a short read) goes on the caller's own
    connection: no hand-off to the loop thread, and the same events as the async path
    reads (an atomic batch whole)."""
    target = f"{nats_url}/{stream_name('Q')}"
    with JetStreamLog(target) as log, JetStreamLog(target, sync_publish=False) as plain:
        out = [log.append(ev("a", i)) for i in range(20)]
        out += log.append_many([ev("b", i) for i in range(5)])
        hops = []
        run, submit = log._lt.run, log._lt.submit
        log._lt.run = lambda *a, **k: hops.append("run") or run(*a, **k)  # type: ignore
        log._lt.submit = lambda *a, **k: hops.append("submit") or submit(*a, **k)  # type: ignore
        assert log.last_seq == 25
        got = list(log.read(18))
        assert hops == [] and got == out[17:]
        assert [e.ts for e in got] == [e.ts for e in out[17:]]
        assert got == list(plain.read(18)) and plain.last_seq == 25
        assert list(log.read(1)) == out  # 25 <= SYNC_READ: one batch on the connection
        assert list(log.read(26)) == []


def test_a_duplicate_id_returns_the_original(nats_url: str) -> None:
    """An id stored before: the server answers "duplicate" to the sync publish, the async
    path fetches the original; other content under that id is refused."""
    with JetStreamLog(f"{nats_url}/{stream_name('D')}") as log:
        asked = ev("a", 1)
        e = log.append(asked)
        again = log.append(asked)  # the caller's retry
        assert again == e and again.seq == 1 and log.last_seq == 1
        assert stats(log)["fell_back"] == 1
        with pytest.raises(EventIdReused):
            log.append(ev("a", 2, id=e.id))
        assert log.last_seq == 1
        assert log.append(ev("a", 3)).seq == 2  # the connection is still good
        assert stats(log)["sync"] == 2


def test_a_wrong_expected_version_is_a_conflict(nats_url: str) -> None:
    with JetStreamLog(f"{nats_url}/{stream_name('C')}") as log:
        a = log.append(ev("a", 1, key="k"), expect={"k": 0})
        b = log.append(ev("a", 2, key="k"), expect={"k": a.seq or 0})
        assert (a.seq, b.seq) == (1, 2) and stats(log)["sync"] == 2
        with pytest.raises(VersionConflict) as ei:
            log.append(ev("a", 3, key="k"), expect={"k": 1})
        assert ei.value.actual == 2
        with pytest.raises(VersionConflict):  # an expected key the event does not write
            log.append(ev("a", 4, key="other"), expect={"k": 0})
        assert log.last_seq == 2 and log.version("k") == 2
        c = log.append(ev("a", 5, key="other"), expect={"k": 2, "other": 0})
        assert c.seq == 3 and log.version("other") == 3
        same_as_read(log, [a, b, c])


def test_a_lost_ack_on_the_sync_path_is_settled_by_the_async_one(
    nats_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The publish landed, its PubAck never came (dropped here): the async path publishes
    again with the same id and CAS header, gets "wrong last sequence", probes, and
    returns the landed event: stored once, no false conflict."""
    with JetStreamLog(f"{nats_url}/{stream_name('L')}") as log:
        log.append(ev("a", 0, key="k"))
        real = SyncConn.request
        dropped = []

        def lossy(self: SyncConn, *a: Any) -> bytes:
            data = real(self, *a)
            if not dropped:
                dropped.append(data)
                raise Fallback("ack lost")
            return data

        monkeypatch.setattr(SyncConn, "request", lossy)
        e = ev("a", 1, key="k")
        got = log.append(e, expect={"k": 1})
        assert dropped and got.id == e.id and got.seq == 2
        assert log.last_seq == 2 and log.version("k") == 2
        time.sleep(RETRY + 0.1)  # a failed connection is tried again after RETRY s
        assert log.append(ev("a", 2)).seq == 3
        assert stats(log)["fell_back"] == 1 and stats(log)["sync"] == 2  # reconnected
        same_as_read(log, [got])


def test_threads_share_the_handle(nats_url: str) -> None:
    """Threads of one process: one publishes on the sync connection, the others find it
    busy and pipeline on the async client; every append stored once, as returned."""
    with JetStreamLog(f"{nats_url}/{stream_name('T')}") as log:
        out: list[Event] = []
        lock = threading.Lock()

        def work(k: int) -> None:
            for i in range(40):
                e = log.append(ev(f"t{k % 3}", i, key=f"k{k}" if i % 2 else None))
                with lock:
                    out.append(e)

        ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert sorted(e.seq or 0 for e in out) == list(range(1, 321))
        assert stats(log)["sync"] > 0
        same_as_read(log, out)
        assert log.verify().ok


@pytest.mark.slow
def test_server_restart_mid_publish_loses_nothing(tmp_path: Path) -> None:
    """nats-server killed (-9) and restarted under a writer appending in a loop: each
    append returns or says it may be stored; retried with the same event until it
    returns, every event is in the stream exactly once, and the sync path is back."""
    srv = NatsServer(tmp_path / "srv", port=free_port())
    srv.start()
    target = f"{srv.url}/{stream_name('R')}"
    acked: list[Event] = []
    errors: list[str] = []
    stop = threading.Event()
    try:
        with JetStreamLog(target, timeout=2.0) as log:

            def writer() -> None:
                i = 0
                while not stop.is_set() or i < 300:
                    e = ev("w", i, key=f"k{i % 5}" if i % 3 == 0 else None)
                    while True:
                        try:
                            acked.append(log.append(e))
                            break
                        except LogUnavailable as err:
                            errors.append(str(err))
                            assert err.maybe_stored or "cannot reach" in str(err), err
                            time.sleep(0.05)
                    i += 1

            th = threading.Thread(target=writer)
            th.start()
            while len(acked) < 100:
                time.sleep(0.01)
            srv.kill()
            time.sleep(1.0)
            srv.start()
            stop.set()
            th.join(120)
            assert not th.is_alive()
            assert stats(log)["sync"] > 100 and stats(log)["fell_back"] >= 1
            before = stats(log)["sync"]
            last = log.append(ev("w", -1))
            assert stats(log)["sync"] == before + 1  # the sync connection is back
            stored = list(log.read())
            ids = [e.id for e in stored]
            assert len(ids) == len(set(ids)), "an event stored twice"
            assert {e.id for e in acked} | {last.id} == set(ids)  # nothing lost, no extra
            same_as_read(log, acked[-50:])
    finally:
        stop.set()
        srv.stop()


@pytest.mark.slow
def test_idle_connection_answers_the_servers_pings(tmp_path: Path) -> None:
    """A server that PINGs every second and drops a client after two unanswered ones:
    the idle sync connection is read by the loop thread, stays up, and the next append
    goes on it without falling back."""
    srv = NatsServer(tmp_path / "srv", extra='ping_interval: "1s"\nping_max: 2\n')
    srv.start()
    try:
        with JetStreamLog(f"{srv.url}/{stream_name('P')}") as log:
            log.append(ev("a", 1))
            assert log._fast is not None and log._fast.conn.connected
            time.sleep(5.0)
            assert log._fast.conn.connected
            log.append(ev("a", 2))
            assert stats(log) == {"sync": 2, "fell_back": 0, "off": ""}
    finally:
        srv.stop()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_never_writes_on_the_parents_socket(nats_url: str) -> None:
    """A child forked with an open log cannot use it (the loop thread stayed with the
    parent): it gets a one-line error, and the parent's connection is untouched."""
    with JetStreamLog(f"{nats_url}/{stream_name('F')}") as log:
        log.append(ev("a", 1))
        pid = os.fork()
        if pid == 0:  # the child: report through the exit code only
            code = 3
            try:
                log.append(ev("a", 2))
            except LogUnavailable:
                code = 0
            except BaseException:
                code = 4
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert log.append(ev("a", 3)).seq == 2  # nothing stored by the child
        assert stats(log)["sync"] == 2 and stats(log)["fell_back"] == 0


# ---------------------------------------------------------------- credentials


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[NatsServer, dict[str, str]]]:
    """A server with one user per agent (``swarmlog init --agents``), stream "V"."""
    d = tmp_path_factory.mktemp("syncauth")
    conf = d / "users.conf"
    srv = NatsServer(d / "srv")
    r = run_cli("init", "--url", f"{srv.url}/V", "--agents", "a,b", "--write", str(conf), "--json")
    assert r.code == 0, r.err
    import orjson

    urls = orjson.loads(r.out)["users"]
    srv.include = conf
    srv.start()
    try:
        r = run_cli("init", "--url", urls["operator"])
        assert r.code == 0, r.err
        yield srv, urls
    finally:
        srv.stop()


def test_per_agent_users_publish_on_the_sync_path(
    users: tuple[NatsServer, dict[str, str]],
) -> None:
    """user/password from the URL: an agent's appends go on the sync path; a publish as
    another agent is refused with the async path's message, nothing stored, and the
    agent's own appends stay on the sync path."""
    _, urls = users
    with JetStreamLog(urls["b"], create=False) as b:
        first = b.append(ev("b", 1))
        assert stats(b)["sync"] == 1
        before = b.last_seq
        denied = r"^permission denied: publish to swarmlog\.V\.a\.a"
        with pytest.raises(LogUnavailable, match=denied):
            b.append(ev("a", 2))
        assert b.last_seq == before
        e = b.append(ev("b", 3, key="mine"))
        assert e.seq == before + 1 and stats(b)["sync"] == 2 and stats(b)["off"] == ""
        same_as_read(b, [first, e])


def test_a_token_and_a_wrong_password(tmp_path: Path) -> None:
    srv = NatsServer(tmp_path / "srv", extra='authorization { token: "s3cret-t0ken" }\n')
    srv.start()
    try:
        host = srv.url.split("://")[1]
        with JetStreamLog(f"nats://s3cret-t0ken@{host}/{stream_name('K')}") as log:
            e = log.append(ev("a", 1))
            assert stats(log)["sync"] == 1
            same_as_read(log, [e])
        conn = SyncConn([f"nats://wrong@{host}"], 2.0, "X")
        with pytest.raises(Fallback, match=r"(?i)authorization"):
            conn.connect()
        assert not conn.connected
    finally:
        srv.stop()


def test_tls_stays_on_the_async_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that requires TLS: the sync path says so once and steps aside; appends
    work over the async client's TLS connection."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    tls = f'tls {{\n  cert_file: "{cert}"\n  key_file: "{key}"\n}}\n'
    srv = NatsServer(tmp_path / "srv", extra=tls)
    srv.start()
    try:
        host = srv.url.split("://")[1]
        with JetStreamLog(f"tls://{host}/{stream_name('S')}") as log:
            out = [log.append(ev("a", i)) for i in range(3)]
            s = stats(log)
            assert s["sync"] == 0 and "tls" in s["off"].lower()
            same_as_read(log, out)
        conn = SyncConn([f"nats://{host}"], 2.0, "X")  # a nats:// URL, TLS required
        with pytest.raises(Fallback, match="requires TLS") as ei:
            conn.connect()
        assert ei.value.unsupported
    finally:
        srv.stop()
