"""An append's server time without a second round trip, on a real nats-server.

A stream made by this version republishes each stored message's headers on
``swarmlog-stamp.<S>.…`` (stampfeed.stamp_config); a handle subscribes to its agents'
stamp subjects before publishing, and the server sends the stamp before the PubAck. The
time an append returns must be the time a read gives, on every path: the stamps, the
consumer feed of older streams, the read-back of a user who may not subscribe to stamps.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swarmlog import Event, LogUnavailable
from swarmlog._fast import rfc3339_ns as fast_rfc3339_ns
from swarmlog.jetstream import JetStreamLog, ensure_stream, stream_config
from swarmlog.jetstream.auth import authorization
from swarmlog.jetstream.loop import LoopThread
from swarmlog.jetstream.proto import rfc3339_ns
from swarmlog.jetstream.stampfeed import stamp_config
from tests.natsserver import NatsServer

pytestmark = pytest.mark.timeout(120)
_n = itertools.count(1)


def stream_name(tag: str) -> str:
    return f"ST{tag}{os.getpid()}x{next(_n)}"


def ev(agent: str, i: int) -> Event:
    return Event(agent=agent, type="test.event", body={"i": i})


class Counted:
    """Counts the read-backs (Direct Gets for the server time) of a handle."""

    def __init__(self, log: JetStreamLog) -> None:
        self.n = 0
        get = log._readback.get

        async def counted(seqs: list[int]) -> Any:
            self.n += len(seqs)
            return await get(seqs)

        log._readback.get = counted  # type: ignore[method-assign]


def same_as_read(log: JetStreamLog, out: list[Event]) -> None:
    by_seq = {e.seq: e for e in log.read()}
    for e in out:
        assert by_seq[e.seq] == e and by_seq[e.seq].ts == e.ts  # the server's time, to the ns


def test_appends_take_the_server_time_from_republished_headers(nats_url: str) -> None:
    """From the very first append on: no read-back, no consumer; what an append returns
    is what a read gives (threads of one process too)."""
    # the async client's stamp subscriptions (the sync path's: test_js_syncpub.py)
    with JetStreamLog(f"{nats_url}/{stream_name('R')}", sync_publish=False) as log:
        rp = log._run(log._c.stream_info(), 10)["config"]["republish"]
        assert rp["dest"] == stamp_config(log.stream)["dest"] and rp["headers_only"]
        rb = Counted(log)
        out = [log.append(ev("a", i)) for i in range(5)]

        def work(k: int) -> None:
            for i in range(20):
                out.append(log.append(ev(f"t{k % 3}", i)))

        ts = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert rb.n == 0  # every time came with its PubAck
        assert len(log._feed.subs) == 4 and not log._feed.broken
        assert len(out) == 5 + 6 * 20
        same_as_read(log, out)
        assert [e.ts for e in log.read()] == sorted(e.ts for e in log.read())


def test_a_stream_without_republish_still_gets_server_times(nats_url: str) -> None:
    """An older stream (no ``republish``): the consumer feed and read-backs, as before."""
    name = stream_name("O")
    with JetStreamLog(f"{nats_url}/{name}") as maker:
        cfg = stream_config(name + "x", "old", 1, 600.0, maker.limits, "i" * 32)
        cfg.pop("republish")
        maker._run(maker._c.api(f"STREAM.CREATE.{name}x", cfg), 10)
    with JetStreamLog(f"{nats_url}/{name}x", create=False) as log:
        assert not log._feed.republished
        out = [log.append(ev("a", i)) for i in range(10)]
        same_as_read(log, out)
    ensure_stream(f"{nats_url}/{name}x")  # swarmlog init --url: adds the setting
    with JetStreamLog(f"{nats_url}/{name}x", create=False) as log:
        assert log._feed.republished
        rb = Counted(log)
        out = [log.append(ev("a", i)) for i in range(10)]
        assert rb.n == 0
        same_as_read(log, out)


@pytest.fixture(scope="module")
def auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[NatsServer, str]]:
    """A server whose block lets agent ``a`` subscribe to its stamps, and ``old`` (as a
    block written before the stamps) only to ``_INBOX.>``."""
    d = tmp_path_factory.mktemp("stampauth")
    stream = "STAUTH"
    az = authorization(stream, ["a", "old"], passwords={"a": "pa", "old": "po", "operator": "op"})
    old = next(u for u in az.users if u.name == "old")
    old.subscribe = ["_INBOX.>"]
    conf = d / "users.conf"
    conf.write_text(az.block())
    srv = NatsServer(d / "srv", include=conf)
    srv.start()
    try:
        host = srv.url.split("://", 1)[1]
        ensure_stream(f"nats://operator:op@{host}/{stream}")
        yield srv, f"{host}/{stream}"
    finally:
        srv.stop()


def test_an_agent_user_gets_its_stamps(auth: tuple[NatsServer, str]) -> None:
    with JetStreamLog(f"nats://a:pa@{auth[1]}", create=False) as log:
        rb = Counted(log)
        out = [log.append(ev("a", i)) for i in range(5)]
        assert rb.n == 0 and not log._feed.broken
        same_as_read(log, out)


def test_a_user_who_may_not_subscribe_to_stamps_reads_back(auth: tuple[NatsServer, str]) -> None:
    """The server refuses the stamp subscription: the handle reads the times back, at
    once (not after a wait per append), and they are the same times."""
    with JetStreamLog(f"nats://old:po@{auth[1]}", create=False) as log:
        rb = Counted(log)
        t = time.monotonic()
        out = [log.append(ev("old", i)) for i in range(5)]
        assert time.monotonic() - t < 5.0  # no 0.5 s wait per append
        assert log._feed.broken and rb.n == 5
        same_as_read(log, out)


@given(
    st.datetimes(min_value=datetime.datetime(1971, 1, 1)),
    st.integers(0, 999_999_999),
    st.integers(0, 9),
)
def test_fast_rfc3339_equals_the_reference(dt: Any, ns: int, cut: int) -> None:
    frac = f"{ns:09d}"[: 9 - cut].rstrip("0")  # the server trims trailing zeros
    stamp = dt.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "Z"
    assert fast_rfc3339_ns(stamp) == rfc3339_ns(stamp)


def test_loop_thread_run_hands_back_results_errors_and_timeouts() -> None:
    lt = LoopThread("t")
    try:

        async def value() -> int:
            await asyncio.sleep(0)
            return 7

        async def boom() -> None:
            raise KeyError("k")

        cancelled = threading.Event()

        async def slow() -> None:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        assert lt.run(value(), 5) == 7
        with pytest.raises(KeyError):
            lt.run(boom(), 5)
        with pytest.raises(LogUnavailable, match="timed out"):
            lt.run(slow(), 0.2)
        assert cancelled.wait(5)  # the timed-out coroutine is cancelled on the loop
    finally:
        lt.stop()
    with pytest.raises(LogUnavailable, match="closed"):
        lt.run(value(), 5)


@pytest.mark.slow
def test_r3_stamps_come_once_from_the_leader(tmp_path: Any) -> None:
    """On a 3-node cluster the stamps come with the PubAcks too (no read-back), and
    the times are the replicas' common stored time."""
    from tests.natsserver import NatsCluster
    from tests.test_jetstream_cluster import _init_r3

    c = NatsCluster(tmp_path)
    c.start()
    try:
        target = f"{c.url}/R3ST"
        _init_r3(target)
        with JetStreamLog(target, create=False) as log:
            rb = Counted(log)
            out = [log.append(ev("a", i)) for i in range(20)]
            assert rb.n == 0
            same_as_read(log, out)
    finally:
        c.stop()
