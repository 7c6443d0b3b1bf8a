"""``Log.redact`` on MemoryLog and FileLog, and the redacted record format.

The same behaviour on both backends: a tombstone keeps seq, id, ts, type, key and the
rest of the envelope with an empty body; a scrubbed record gets the given body; both are
marked with the hash of the original; re-running is a no-op; seqs past the end are
refused before anything is written. On FileLog the hash chain keeps verifying (and a
forged marker does not).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, FileLog, Log, MemoryLog
from swarmlog.errors import InvalidEvent, SwarmlogError
from swarmlog.redaction import SCRUBBED, TOMBSTONE, kind_of, marker, redact_line


@pytest.fixture(params=["memory", "file"])
def log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Log]:
    lg: Log = MemoryLog("t") if request.param == "memory" else FileLog(tmp_path, segment_bytes=4096)
    try:
        yield lg
    finally:
        lg.close()


def fill(log: Log, n: int = 60) -> None:
    for i in range(n):
        log.append(
            Event(
                agent="a" if i % 2 else "v",
                type="x.note",
                key=f"k{i % 5}",
                body={"text": f"secret number {i}", "n": i},
                causes=[i] if i else None,
            )
        )


def test_tombstones_and_scrubbed_records(log: Log) -> None:
    fill(log)
    before = {ev.seq: ev for ev in log.read()}
    versions = {f"k{i}": log.version(f"k{i}") for i in range(5)}
    assert log.redact({1: None, 3: {"n": 2}, 60: None}) == 3
    got = {ev.seq: ev for ev in log.read()}
    assert list(got) == list(before)
    for q in (1, 60):
        ev = got[q]
        assert ev.body == {} and kind_of(ev.envelope) == TOMBSTONE
        assert (ev.id, ev.ts, ev.type, ev.key, ev.agent, ev.causes) == (
            before[q].id,
            before[q].ts,
            before[q].type,
            before[q].key,
            before[q].agent,
            before[q].causes,
        )
    assert got[3].body == {"n": 2} and kind_of(got[3].envelope) == SCRUBBED
    assert all(got[q] == before[q] for q in got if q not in (1, 3, 60))
    assert {k: log.version(k) for k in versions} == versions
    assert log.verify().ok
    # idempotent; a tombstone stays one; a scrubbed record can become a tombstone
    assert log.redact({1: None, 3: {"n": 2}}) == 0
    assert log.redact({1: {"n": 0}}) == 0
    assert log.redact({3: None}) == 1
    assert next(iter(log.read(3, 3))).body == {}
    appended = log.append(Event(agent="a", type="x.note", body={"after": True}))
    assert appended.seq == 61 and log.verify().ok


def test_bad_redactions_change_nothing(log: Log) -> None:
    fill(log, 5)
    with pytest.raises(SwarmlogError, match="past the end"):
        log.redact({2: None, 9: None})
    with pytest.raises(InvalidEvent):
        log.redact({0: None})
    with pytest.raises(InvalidEvent):
        log.redact({2: ["not", "a", "body"]})  # type: ignore[dict-item]
    assert all(kind_of(ev.envelope) is None for ev in log.read())
    assert log.redact({}) == 0


def test_the_marker_hash_is_the_original_chain_value(tmp_path: Path) -> None:
    log = FileLog(tmp_path, segment_bytes=4096)
    try:
        fill(log)
        head = log.verify()
        lines = b"".join(p.read_bytes() for p in sorted((tmp_path / "segments").glob("*.jsonl")))
        original = orjson.loads(lines.splitlines()[4])
        log.redact({5: None})
        rep = log.verify()
        assert rep.ok and (rep.head, rep.head_seq) == (head.head, head.head_seq)
    finally:
        log.close()
    line = next(
        ln
        for p in sorted((tmp_path / "segments").glob("*.jsonl"))
        for ln in p.read_bytes().splitlines()
        if ln.startswith(b'{"seq":5,')
    )
    d = orjson.loads(line)
    assert d["chain"] == original["chain"]
    assert d["redacted"] == f"tombstone:{original['chain']}"
    assert len(line) >= len(orjson.dumps(original)), "padded: a segment never shrinks"


def test_a_forged_marker_breaks_the_chain(tmp_path: Path) -> None:
    """Marking a record redacted with a hash other than its chain value is caught."""
    log = FileLog(tmp_path, segment_bytes=1 << 20)
    try:
        fill(log, 10)
    finally:
        log.close()
    seg = next((tmp_path / "segments").glob("*.jsonl"))
    lines = seg.read_bytes().splitlines(keepends=True)
    new = redact_line(lines[3], None)
    assert new is not None
    forged = re.sub(rb"tombstone:[0-9a-f]{32}", b"tombstone:" + b"0" * 32, new)
    body = forged[: forged.rindex(b',"crc":')]
    forged = body + b',"crc":%d}\n' % zlib.crc32(body)
    lines[3] = forged
    seg.write_bytes(b"".join(lines))
    log = FileLog(tmp_path)
    try:
        rep = log.verify()
        assert not rep.ok and any("seq 4" in p and "chain" in p for p in rep.problems)
    finally:
        log.close()


def test_marker_reads_only_the_last_member() -> None:
    h = "ab" * 16
    assert marker(b'{"body":{},"redacted":"tombstone:' + h.encode() + b'"') == (
        TOMBSTONE,
        h.encode(),
    )
    assert marker(b'{"body":{},"redacted":"scrubbed:' + h.encode() + b'"   ') == (
        SCRUBBED,
        h.encode(),
    )
    # a body member of that name is not the marker (a body ends with "}")
    assert marker(b'{"body":{"redacted":"tombstone:' + h.encode() + b'"}') is None
    assert marker(b'{"body":{},"more":1') is None
