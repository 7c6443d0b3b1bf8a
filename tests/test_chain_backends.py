"""The hash chain on MemoryLog and JetStreamLog (trust work, acceptance 4; FileLog's is in
test_chain.py): every record links to the one before, an edited record (CRC recomputed)
or a removed one is named by seq in ``verify``, concurrent JetStream appenders extend one
chain (the expected-last-sequence guard), and a redacted record keeps its link."""

from __future__ import annotations

import itertools
import os
import threading
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

from swarmlog import Event, MemoryLog
from swarmlog import chain as hashchain
from swarmlog.contract import Log
from swarmlog.envelope import CRC_SEP
from swarmlog.jetstream import JetStreamLog
from swarmlog.jetstream.seal.chain import line_of, payload_of
from swarmlog.jetstream.side import erase

pytestmark = pytest.mark.timeout(180)
_n = itertools.count(1)


def ev(i: int, **kw: Any) -> Event:
    return Event(agent="a", type="test.event", body={"i": i, "text": f"record {i}"}, **kw)


def _recrc(line: bytes) -> bytes:
    head = line[: line.rfind(CRC_SEP)]
    return head + b',"crc":%d}\n' % zlib.crc32(head)


def _fill(log: Log, n: int = 12) -> None:
    for i in range(0, n, 3):
        log.append(ev(i))
        log.append_many([ev(i + 1), ev(i + 2, key="k")])


# ---------------------------------------------------------------- MemoryLog


def test_memory_records_are_chained() -> None:
    log = MemoryLog()
    _fill(log)
    records = log._shared.records
    head, broken = hashchain.check(enumerate(records, start=1))
    assert broken is None and all(hashchain.stored(r) for r in records)
    rep = log.verify()
    assert rep.ok and (rep.head, rep.head_seq) == (head.decode(), 12)
    assert "chain" not in next(log.read()).envelope  # a storage detail, never handed out


def test_memory_edit_with_recomputed_crc_is_named() -> None:
    log = MemoryLog()
    _fill(log)
    s = log._shared
    s.records[6] = _recrc(s.records[6].replace(b"record 6", b"record X"))  # seq 7
    rep = log.verify()
    assert not rep.ok and rep.problems[0].startswith("seq 7: hash chain broken")
    assert rep.head_seq == 6


def test_memory_removed_record_is_named_even_renumbered() -> None:
    log = MemoryLog()
    _fill(log)
    s = log._shared
    del s.records[4]  # seq 5 gone; later records renumbered, CRCs recomputed
    for i in range(4, len(s.records)):
        s.records[i] = _recrc(
            s.records[i].replace(b'{"seq":%d,' % (i + 2), b'{"seq":%d,' % (i + 1))
        )
    rep = log.verify()
    assert not rep.ok and rep.problems[0].startswith("seq 5: hash chain broken")


@pytest.mark.skipif(
    MemoryLog.redact is Log.redact, reason="MemoryLog.redact comes with the erasure branch"
)
def test_memory_chain_survives_redact() -> None:
    log = MemoryLog()
    _fill(log)
    head = log.verify().head
    assert log.redact({4: None, 12: {"text": "scrubbed"}}) == 2
    rep = log.verify()
    assert rep.ok and rep.head == head
    assert log.append(ev(99)).seq == 13 and log.verify().ok


# ---------------------------------------------------------------- JetStream


@pytest.fixture
def target(nats_url: str) -> str:
    return f"{nats_url}/C{os.getpid()}x{next(_n)}"


@pytest.fixture
def jlog(target: str) -> Iterator[JetStreamLog]:
    lg = JetStreamLog(target)
    try:
        yield lg
    finally:
        lg.close()


def _payloads(lg: JetStreamLog) -> list[tuple[int, bytes]]:
    return [(r.seq, r.data) for raws in lg._read_raw(1, None) for r in raws]


def test_jetstream_records_are_sealed_into_one_chain(jlog: JetStreamLog) -> None:
    _fill(jlog)
    rep = jlog.verify()  # waits for this handle's background sealing
    sealed = jlog._run(jlog._sealer.values(), 10)
    assert sorted(sealed) == list(range(1, 13))
    prev = hashchain.GENESIS
    for q, payload in _payloads(jlog):
        head = line_of(q, payload)
        head = head[: head.rfind(CRC_SEP)]  # the FileLog record's bytes, seq included
        prev = hashchain.link(prev, head)
        assert sealed[q] == prev
    assert rep.ok and (rep.head, rep.head_seq) == (prev.decode(), 12)
    assert "chain" not in next(jlog.read()).envelope


def test_jetstream_edited_record_is_named(jlog: JetStreamLog) -> None:
    """A message cannot be rewritten in place; the side path is to delete it and serve an
    edited copy (CRC recomputed, chain value kept) as if it were a redaction record."""
    _fill(jlog)
    seq, payload = _payloads(jlog)[6]
    edited = payload.replace(b"record 6", b"record X")
    edited = payload_of(_recrc(line_of(seq, edited)))
    orig = jlog._run(jlog._c.get(seq))
    assert orig is not None
    jlog._run(jlog._side.ensure())
    jlog._run(jlog._side.put(orig, edited))
    jlog._run(erase(jlog._c, jlog.stream, seq))
    assert [e.body["text"] for e in jlog.read(7, 7)] == ["record X"]  # served, but…
    rep = jlog.verify()
    assert not rep.ok and rep.problems[0].startswith(f"seq {seq}: hash chain broken")


def test_jetstream_removed_and_republished_record_is_named(jlog: JetStreamLog) -> None:
    _fill(jlog)
    seq, payload = _payloads(jlog)[4]
    jlog._run(erase(jlog._c, jlog.stream, seq))  # removed without a redaction record
    rep = jlog.verify()
    assert not rep.ok and f"seq {seq}" in rep.problems[0]

    async def republish(nc: Any) -> None:  # the same bytes again, at the end
        await nc.request(f"{jlog.prefix}.e", payload, timeout=5)

    jlog._run(republish(jlog._c.conn), 10)
    rep = jlog.verify()
    assert not rep.ok and f"seq {seq}" in rep.problems[0]


def test_jetstream_concurrent_appenders_seal_one_chain(target: str) -> None:
    logs = [JetStreamLog(target) for _ in range(4)]
    errors: list[BaseException] = []

    def work(lg: JetStreamLog, w: int) -> None:
        try:
            for i in range(15):
                if i % 3:
                    lg.append(ev(i, key=f"k{w}"))
                else:
                    lg.append_many([ev(i), ev(i + 100)])
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(lg, w)) for w, lg in enumerate(logs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    try:
        assert not errors
        for lg in logs[1:]:
            lg.close()  # waits for its background sealing
        rep = logs[0].verify()
        assert rep.ok and not rep.notes, (rep.problems, rep.notes)
        assert rep.head_seq == rep.last_seq == 4 * (10 + 2 * 5)
        assert [logs[0].version(f"k{w}") for w in range(4)] == [
            max(e.seq or 0 for e in logs[0].read() if e.key == f"k{w}") for w in range(4)
        ]
    finally:
        for lg in logs:
            lg.close()


def test_jetstream_chain_survives_redact(jlog: JetStreamLog) -> None:
    _fill(jlog)
    rep0 = jlog.verify()
    assert jlog.redact({3: None, 7: {"text": "scrubbed"}, 12: None}) == 3
    rep = jlog.verify()
    assert rep.ok and (rep.head, rep.head_seq) == (rep0.head, rep0.head_seq)
    assert jlog.append(ev(99)).seq == 13
    assert jlog.verify().ok
