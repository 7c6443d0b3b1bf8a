"""A Direct Get reply's seq, subject and time, read the fast way (swarmlog/_fast.py:
``direct_fields``, ``direct_seq``) against the full header parse (``header_lines``).

Generated header blocks mix the server's own lines with what a hostile publisher may put
in a message's headers (the same names again, other spacing, case, tabs, unicode, digits
``int`` would take in other forms); the fast readers either agree with the full parse or
step aside (None). On a real server, a message published with forged ``Nats-Sequence`` /
``Nats-Time-Stamp`` headers reads back with its true seq through both read paths.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmlog import Event
from swarmlog._fast import direct_fields, direct_seq
from swarmlog.jetstream import JetStreamLog
from swarmlog.jetstream.client import Raw, _Collect, direct_raw, header_lines
from swarmlog.jetstream.proto import ns_ts, rfc3339_ns
from tests.natsserver import NatsServer

NAMES = ["Nats-Sequence", "Nats-Subject", "Nats-Time-Stamp", "Nats-Msg-Id", "nats-sequence"]
_values = st.one_of(
    st.from_regex(r"[0-9]{1,6}", fullmatch=True),
    st.sampled_from(["2026-11-26T16:31:32.038127368Z", "1_0", "\uff11", " 7 ", "", "a.b.c"]),
    st.text(st.characters(blacklist_characters="\r\n"), max_size=8),
)
_seps = st.sampled_from([": ", ":", " : ", ":  ", ":\t", "\t: "])
_names = st.one_of(st.sampled_from(NAMES), st.sampled_from([" Nats-Sequence", "Nats Sequence"]))


@st.composite
def blocks(draw: st.DrawFn) -> bytes:
    """A header block: hostile lines, then (mostly) the server's three, maybe more."""

    def line(name: str, sep: str, value: str) -> bytes:
        return f"{name}{sep}{value}".encode("utf-8", "surrogatepass")

    lines = [line(draw(_names), draw(_seps), draw(_values)) for _ in range(draw(st.integers(0, 4)))]
    if draw(st.booleans()) or draw(st.booleans()):
        seq = draw(st.integers(1, 10**12))
        lines += [
            b"Nats-Stream: S",
            line("Nats-Subject", ": ", draw(st.sampled_from(["swarmlog.S.a.a.e", "x"]))),
            line("Nats-Sequence", ": ", str(seq)),
            b"Nats-Time-Stamp: 2026-11-26T16:31:32.038127368Z",
        ]
        draw(st.randoms()).shuffle(lines)
    lines += [
        line(draw(_names), draw(_seps), draw(_values)) for _ in range(draw(st.integers(0, 2)))
    ]
    return b"NATS/1.0\r\n" + b"".join(x + b"\r\n" for x in lines) + b"\r\n"


def reference(block: bytes) -> tuple[int, str, str] | None:
    """What the full parse gives (None: it has no such seq or time, or int() fails)."""
    h = header_lines(block)
    try:
        return int(h["Nats-Sequence"]), h.get("Nats-Subject", ""), h["Nats-Time-Stamp"]
    except (KeyError, ValueError):
        return None


@settings(max_examples=400, deadline=None)
@given(blocks())
def test_fast_fields_agree_with_the_full_parse_or_step_aside(block: bytes) -> None:
    ref = reference(block)
    got = direct_fields(block)
    if got is not None:
        assert got == ref
    seq = direct_seq(block)
    if seq is not None:
        assert seq == int(header_lines(block)["Nats-Sequence"])


def test_the_servers_plain_block_is_read_the_fast_way() -> None:
    """The common case is taken by the fast readers (else they would save nothing)."""
    block = (
        b"NATS/1.0\r\nNats-Msg-Id: 83f7\r\nNats-Stream: P\r\nNats-Subject: swarmlog.P.a.a.e\r\n"
        b"Nats-Sequence: 6\r\nNats-Time-Stamp: 2026-11-26T16:32:38.519766984Z\r\n"
        b"Nats-Num-Pending: 994\r\nNats-Last-Sequence: 5\r\n\r\n"
    )
    assert direct_fields(block) == (6, "swarmlog.P.a.a.e", "2026-11-26T16:32:38.519766984Z")
    assert direct_seq(block) == 6
    raw = direct_raw(b"{}", block)
    stamp = "2026-11-26T16:32:38.519766984Z"
    assert raw == Raw(6, "swarmlog.P.a.a.e", b"{}", header_lines(block), ns_ts(rfc3339_ns(stamp)))
    assert dict(raw.headers) == header_lines(block)


@pytest.mark.parametrize(
    "forged",
    [
        b"Nats-Sequence: 999\r\nNats-Time-Stamp: 1999-01-01T00:00:00Z\r\n",
        b"Nats-Sequence:999\r\nNats-Subject: nope\r\n",
    ],
)
def test_forged_server_headers_do_not_change_what_is_read(tmp_path: Path, forged: bytes) -> None:
    """A publisher's own ``Nats-Sequence`` header (hostile) does not move the record:
    ``direct_batch`` and the sealer's ``direct_payloads`` see the stored seq, and the
    chain seals and verifies over it."""
    srv = NatsServer(tmp_path)
    srv.start()
    try:
        with JetStreamLog(f"{srv.url}/F") as log:
            log.append(Event(type="note", agent="a", body={"n": 0}))
            subject = log.subjects.of("a", None)  # where agent a's unkeyed events go
            payload = b'{"type":"note","agent":"a","body":{}}'
            hdrs = dict(line.decode().split(":", 1) for line in forged.split(b"\r\n") if line)

            async def forge() -> None:
                await log._c.conn.publish(subject, payload, headers=hdrs)
                await log._c.conn.flush()

            log._run(forge(), 10)
            last = log._run(log._c.last_seq(), 10)
            raws = log._run(log._c.direct_batch(1, 10), 10)
            pairs = log._run(log._c.direct_payloads(1, 10), 10)
            assert [r.seq for r in raws] == list(range(1, last + 1))
            assert [q for q, _ in pairs] == list(range(1, last + 1))
            assert [d for _, d in pairs] == [r.data for r in raws]
            assert all(r.ts > 1e9 and r.ts != 915148800.0 for r in raws)
    finally:
        srv.stop()


def test_direct_reads_have_no_leftover_collectors(tmp_path: Path) -> None:
    """Each batch's collector is dropped when it ends (no growth over many reads)."""
    srv = NatsServer(tmp_path)
    srv.start()
    try:
        with JetStreamLog(f"{srv.url}/G") as log:
            for i in range(3):
                log.append(Event(type="note", agent="a", body={"n": i}))

            async def many() -> int:
                for _ in range(50):
                    await log._c.direct_payloads(1, 3)
                    await log._c.direct_batch(2, 2)
                await asyncio.sleep(0)
                return len(log._c._batches)

            assert log._run(many(), 30) == 0
    finally:
        srv.stop()


@pytest.mark.parametrize("payloads", [False, True])
@pytest.mark.parametrize(
    "block",
    [
        b"NATS/1.0\r\nNats-Stream: S\r\n\r\n",  # no seq, no time
        b"NATS/1.0\r\nNats-Sequence: x\r\nNats-Time-Stamp: 2026-11-26T16:31:32Z\r\n\r\n",
        b"NATS/1.0\r\nNats-Sequence: 3\r\nNats-Subject: s\r\nNats-Time-Stamp: soon\r\n\r\n",
    ],
)
def test_a_malformed_reply_ends_the_batch_with_an_error_not_an_exception(
    block: bytes, payloads: bool
) -> None:
    """A message on a batch's inbox that no server sent (no seq or time, or unreadable
    ones) ends the batch with a status, so ``direct_batch`` raises LogUnavailable; it is
    never raised on the read loop, where it would break the connection."""

    async def go() -> tuple[str | None, list[object]]:
        col = _Collect(5, payloads)
        col.add(b"{}", block)
        return (col.done.result() if col.done.done() else None), col.out

    status, out = asyncio.run(go())
    if payloads and b"Nats-Sequence: 3" in block:  # (the sealer needs no time: a record)
        assert status is None and out == [(3, b"{}")]
        return
    assert status and out == []
