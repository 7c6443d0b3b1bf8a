"""Erasure on JetStream (trust work, acceptance 3 and 4): ``JetStreamLog.redact`` leaves no
byte of the erased content in the server's store directory, every other event is still
served in order, and the hash chain survives it.

Each test runs its own ``nats-server`` whose store directory it controls, and scans every
file under that directory for the marker strings the erased events carried, before and
after (and after a server restart, which rebuilds the stream's index from the blocks).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarmlog import Event, SwarmlogError, VersionConflict
from swarmlog.jetstream import JetStreamLog
from swarmlog.jetstream.redact import _one, _prepare
from tests.natsserver import NatsServer
from tests.test_jetstream_read import StaleEnd

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NatsServer]:
    srv = NatsServer(tmp_path / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _target(srv: NatsServer) -> str:
    return f"{srv.url}/ERASE"


def _hits(root: Path, markers: list[bytes]) -> dict[str, list[str]]:
    """For each marker, the files under ``root`` holding it (server logs and configs
    aside: they never see payloads)."""
    out: dict[str, list[str]] = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            if name.endswith((".log", ".conf")):
                continue
            data = (Path(dirpath) / name).read_bytes()
            for m in markers:
                if m in data:
                    out.setdefault(m.decode(), []).append(str(Path(dirpath, name)))
    return out


def ev(agent: str, content: str, **kw: Any) -> Event:
    return Event(agent=agent, type="test.event", body={"content": content}, **kw)


def _fill(lg: JetStreamLog) -> dict[str, int]:
    """Events of agents a and victim, markers in the victim's; returns marker -> seq."""
    seqs: dict[str, int] = {}
    for i in range(6):
        lg.append(ev("a", f"plain {i}", key="k-a" if i % 2 else None))
        m = f"MARKER-single-{i}"
        seqs[m] = lg.append(ev("victim", m, key="k-v" if i % 2 else None)).seq or 0
        batch = [
            ev("a", f"batch {i} first"),
            ev("victim", f"MARKER-batch-{i}"),
            ev("a", f"batch {i} last: quoting MARKER-quoted-{i}"),
        ]
        out = lg.append_many(batch)
        seqs[f"MARKER-batch-{i}"] = out[1].seq or 0
        seqs[f"MARKER-quoted-{i}"] = out[2].seq or 0
    seqs["MARKER-last"] = lg.append(ev("victim", "MARKER-last", key="k-v")).seq or 0
    return seqs


def _envelopes(lg: JetStreamLog) -> list[dict[str, Any]]:
    return [dict(e.envelope) for e in lg.read()]


@pytest.mark.slow
def test_redact_leaves_no_marker_in_the_store_and_serves_every_seq(server: NatsServer) -> None:
    store = server.dir / "js"
    with JetStreamLog(_target(server)) as lg:
        seqs = _fill(lg)
        markers = [m.encode() for m in seqs]
        ck = lg.checkpoints
        ck.save(1, b"state before the victim " * 10, "f")
        ck.save(lg.last_seq, b"fold state holding " + b" ".join(markers), "f")
        before = _envelopes(lg)
        rep0 = lg.verify()
        assert rep0.ok and rep0.head_seq == lg.last_seq == len(before)
        assert set(_hits(store, markers)) == {m.decode() for m in markers}  # they were there

        # the victim's own events become tombstones; the derived ones quoting it scrubbed
        changes: dict[int, dict[str, Any] | None] = {}
        for m, q in seqs.items():
            changes[q] = {"content": "[erased]"} if "quoted" in m else None
        assert lg.redact(changes) == len(changes)
        first = min(changes)
        assert ck.invalidate_after(first) == 1  # the checkpoint after the first erased seq
        assert [i.seq for i in ck.list()] == [1]

        assert _hits(store, markers) == {}
        after = _envelopes(lg)
        assert [e["seq"] for e in after] == list(range(1, len(before) + 1))
        for old, new in zip(before, after, strict=True):
            q = old["seq"]
            if q not in changes:
                assert new == old  # every other event exactly as before, time included
                continue
            assert new["id"] == old["id"] and new["ts"] == old["ts"]
            assert new["type"] == old["type"] and new.get("key") == old.get("key")
            if changes[q] is None:
                assert new["body"] == {} and new["redacted"].startswith("tombstone:")
            else:
                assert new["body"] == {"content": "[erased]"}
                assert new["redacted"].startswith("scrubbed:")
        assert [r for b in lg.read_batches() for r in b] == after
        assert [dict(e.envelope) for e in lg.follow(1, timeout=1.0)] == after
        assert all(lg.record_id(q) == before[q - 1]["id"] for q in changes)
        # seq, versions and the chain are as they were
        assert lg.last_seq == len(before)  # the last record was erased: last_seq stays
        assert lg.version("k-v") == seqs["MARKER-last"]
        rep = lg.verify()
        assert rep.ok, rep.problems
        assert (rep.head, rep.head_seq) == (rep0.head, rep0.head_seq)
        assert lg.redact(changes) == 0  # idempotent

        # appending goes on from the erased last record: one chain, no fork
        nxt = lg.append(
            ev("a", "after the erasure", key="k-v"), expect={"k-v": seqs["MARKER-last"]}
        )
        assert nxt.seq == len(before) + 1
        with pytest.raises(VersionConflict):
            lg.append(ev("a", "stale"), expect={"k-v": seqs["MARKER-last"]})
        assert lg.verify().ok
        n = lg.last_seq

    server.stop()
    assert _hits(store, markers) == {}
    server.start()
    with JetStreamLog(_target(server)) as lg:
        assert lg.last_seq == n and [e["seq"] for e in _envelopes(lg)] == list(range(1, n + 1))
        assert _envelopes(lg)[: len(before)] == after
        assert lg.verify().ok
    assert _hits(store, markers) == {}


def test_erasing_the_last_record_survives_a_restart(server: NatsServer) -> None:
    with JetStreamLog(_target(server)) as lg:
        lg.append(ev("a", "keep"))
        lg.append(ev("victim", "MARKER-tail", key="k"))
        lg.redact({2: None})
        head = lg.verify().head
    server.stop()
    server.start()
    with JetStreamLog(_target(server)) as lg:
        assert lg.last_seq == 2 and lg.version("k") == 2
        assert [e.body for e in lg.read()] == [{"content": "keep"}, {}]
        rep = lg.verify()
        assert rep.ok and rep.head == head
        assert lg.append(ev("a", "next")).seq == 3 and lg.verify().ok
    assert _hits(server.dir, [b"MARKER-tail"]) == {}


def test_a_redaction_killed_midway_is_finished_by_running_it_again(server: NatsServer) -> None:
    with JetStreamLog(_target(server)) as lg:
        lg.append_many([ev("a", "x"), ev("victim", "MARKER-mid"), ev("a", "y")])
        before = _envelopes(lg)
        # step 1 only (the redaction record stored), as if killed before the delete
        _, values = lg._run(_prepare(lg), 10)
        lg._side.put = _stop_after(lg._side.put)  # type: ignore[method-assign]
        with pytest.raises(_Killed):
            lg._run(_one(lg, 2, None, values[2]), 10)
        with JetStreamLog(_target(server)) as other:  # a reader meanwhile sees the original
            assert _envelopes(other) == before
            rep = other.verify()
            assert rep.ok and any("did not finish" in n for n in rep.notes)
        assert _hits(server.dir, [b"MARKER-mid"])  # not erased yet
    with JetStreamLog(_target(server)) as lg:
        assert lg.redact({2: None}) == 0  # already redacted that way: only the rest is done
        rep = lg.verify()
        assert rep.ok and not rep.notes
        assert [e.body for e in lg.read()] == [{"content": "x"}, {}, {"content": "y"}]
    assert _hits(server.dir, [b"MARKER-mid"]) == {}


def test_redacting_again_erases_the_earlier_redaction_record(server: NatsServer) -> None:
    with JetStreamLog(_target(server)) as lg:
        lg.append(ev("a", "MARKER-one and MARKER-two"))
        assert lg.redact({1: {"content": "MARKER-two only"}}) == 1
        assert list(_hits(server.dir, [b"MARKER-one", b"MARKER-two"])) == ["MARKER-two"]
        assert lg.redact({1: None}) == 1
        assert lg.redact({1: {"content": "again"}}) == 0  # a tombstone stays a tombstone
        assert _hits(server.dir, [b"MARKER-one", b"MARKER-two"]) == {}
        rep = lg.verify()
        assert rep.ok and not rep.notes
        assert next(lg.read()).envelope["redacted"].startswith("tombstone:")


def test_redact_refuses_seqs_past_the_end(server: NatsServer) -> None:
    with JetStreamLog(_target(server)) as lg:
        lg.append(ev("a", "x"))
        with pytest.raises(SwarmlogError, match="seq 5 is past the end"):
            lg.redact({5: None})
        assert lg.redact({}) == 0 and lg.verify().ok


class _Killed(Exception):
    pass


def _stop_after(put: Any) -> Any:
    async def wrapped(*a: Any) -> None:
        await put(*a)
        raise _Killed

    return wrapped


def test_reads_never_end_inside_a_batch_whose_records_were_erased(server: NatsServer) -> None:
    """An atomic batch stays whole for readers when its records (its last, commit
    record included) are served by redaction records."""
    with JetStreamLog(_target(server)) as lg:
        lg.append(ev("a", "one"))
        lg.append_many([ev("victim", f"MARKER-b{i}") for i in range(2, 7)])  # seqs 2..6
        lg.append(ev("a", "seven"))
        assert lg.redact({q: None for q in (3, 4, 6)}) == 3
    for seen in (2, 3, 4, 5):
        with StaleEnd(_target(server), read_batch=2) as r:
            r.seen = seen  # the reader saw the stream's end inside the batch
            assert [e.seq for e in r.read()] == [1, 2, 3, 4, 5, 6]
            assert [d["seq"] for c in r.read_batches(seen) for d in c] == list(range(seen, 7))
    with JetStreamLog(_target(server)) as lg:
        assert [e.seq for e in lg.read()] == list(range(1, 8)) and lg.verify().ok
    assert _hits(server.dir, [b"MARKER-b3", b"MARKER-b4", b"MARKER-b6"]) == {}
