"""The append fast paths give the same bytes, events and errors as the plain per-event path."""

from __future__ import annotations

import math
import os
import threading
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from swarmlog import Event, FileLog, _fast
from swarmlog import chain as hashchain
from swarmlog import envelope as env
from swarmlog.errors import InvalidEvent
from swarmlog.file.log import _MARK


def _segment_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((root / "segments").iterdir()))


def _plain_members(ev: Event, swarm: str) -> bytes:
    """The reference encoding: a copied dict with the body as a sorted Fragment."""
    d = {k: v for k, v in ev.envelope.items() if k != "seq"}
    if "swarm" not in d:
        d = {"id": d["id"], "ts": d["ts"], "swarm": swarm, **d}
    d["body"] = orjson.Fragment(orjson.dumps(d["body"], option=orjson.OPT_SORT_KEYS))
    return orjson.dumps(d)[1:-1]


BODIES: list[dict[str, Any]] = [
    {},
    {"b": 1, "a": 2},
    {"z": {"y": [{"d": 1, "c": 2}], "x": 1.5}, "a": '},\u0000,{"id":'},
    {"text": 'quote " backslash \\ newline \n ,"agent": null', "n": None},
    {"agent": "nested", "a": 1},
    {"content": "ünïcödé ✓", "importance": 0.25, "tags": ["x", "y"]},
    {"_private": True, "big": 2**62, "neg": -0.0},
]


def _events(tag: str, **extra: Any) -> list[Event]:
    return [
        Event(agent=f"a{i}", type="fast.test", id=f"{tag}{i}", body=b, **extra)
        for i, b in enumerate(BODIES)
    ]


@pytest.mark.parametrize("extra", [{}, {"swarm": "other"}, {"session": "s", "key": "k"}])
def test_batch_members_match_per_event_encoding(extra: dict[str, Any]) -> None:
    evs = _events("e", **extra)
    sw = orjson.dumps("logname")
    per_event = [_fast.record_members(e.envelope, sw) for e in evs]
    assert per_event == [_plain_members(e, "logname") for e in evs]
    # clean bodies (no null, no "agent" key to confuse the swarm splice) take the
    # one-call path; the others make it decline, never encode differently
    got = _fast.batch_members([e.envelope for e in evs], sw)
    assert got is None or got == per_event
    clean = [e for e in evs if b"null" not in orjson.dumps(e.body) and "agent" not in e.body]
    got = _fast.batch_members([e.envelope for e in clean], sw)
    assert got == [_plain_members(e, "logname") for e in clean]


def test_batch_members_declines_what_it_cannot_vouch_for() -> None:
    sw = b'"s"'
    with_null = [Event(agent="a", type="t.x", body={"v": None}), Event(agent="b", type="t.x")]
    assert _fast.batch_members([e.envelope for e in with_null], sw) is None
    nan = [Event(agent="a", type="t.x", body={"v": math.nan}), Event(agent="b", type="t.x")]
    assert _fast.batch_members([e.envelope for e in nan], sw) is None
    mixed = [Event(agent="a", type="t.x", swarm="x"), Event(agent="b", type="t.x")]
    assert _fast.batch_members([e.envelope for e in mixed], sw) is None
    fake = [
        Event(agent="a", type="t.x", body={"f": orjson.Fragment(b'{"a":1},\x00,{"b":2}')}),
        Event(agent="b", type="t.x"),
    ]
    assert _fast.batch_members([e.envelope for e in fake], sw) is None


def test_append_many_bytes_equal_single_appends(tmp_path: Path) -> None:
    evs = _events("m") + _events("n", session="s2", key="kk") + _events("o", swarm="sw")
    with FileLog(tmp_path / "many", name="s", notify=False, clock=lambda: 1234.5) as log:
        out = log.append_many(evs)
    with FileLog(tmp_path / "one", name="s", notify=False) as log:
        tip = b""
        for i, e in enumerate(evs):
            more = len(evs) - 1 - i
            # the reference: the event as written, with the log's ts in place of the writer's,
            # plus the hash chain (chain.py)
            line = env.encode(e.replace(ts=1234.5), seq=i + 1, swarm=e.swarm or "s", more=more)
            head = line[: line.rindex(env.CRC_SEP)]
            tip = hashchain.link(tip, head)
            head += b',"chain":"%s"' % tip
            log._write(head + b',"crc":%d}\n' % zlib.crc32(head), i + 1, 1)
    assert _segment_bytes(tmp_path / "many") == _segment_bytes(tmp_path / "one")
    with FileLog(tmp_path / "many", notify=False) as log:
        back = list(log.read())
        assert log.verify().ok
    assert out == back
    assert [list(e.envelope) for e in out] == [list(e.envelope) for e in back]  # envelope order
    assert [e.to_dict() for e in out] == [e.to_dict() for e in back]
    assert [e.seq for e in out] == list(range(1, len(evs) + 1))
    assert {e.swarm for e in out} == {"s", "sw"}


def test_appended_events_are_lazy_but_complete(tmp_path: Path) -> None:
    with FileLog(tmp_path / "l", name="s", notify=False) as log:
        a = log.append(Event(agent="a", type="t.x", id="one", key="k", body={"x": 1}))
        assert isinstance(a, Event)
        assert (a.seq, a.id, a.swarm, a.key, a.body) == (1, "one", "s", "k", {"x": 1})
        assert list(a.to_dict()) == ["seq", "id", "ts", "swarm", "agent", "type", "key", "body"]
        assert a == next(iter(log.read()))
        assert hash(a) == hash("one")
        # re-appending a returned (stored) event is an idempotent no-op
        assert log.append(a) == a
        assert log.append_many([a, Event(agent="b", type="t.x", id="two")])[0] == a
        assert log.version("k") == 1


def test_batch_errors_are_raised_in_batch_order(tmp_path: Path) -> None:
    class Strict(BaseModel):
        n: int

    env.register_body("fast.strict", Strict)
    try:
        with FileLog(tmp_path / "l", notify=False, limits=env.Limits(max_content=64)) as log:
            ok = Event(agent="a", type="t.x")
            cases = [
                ([ok, Event(agent="b", type="fast.strict", body={"n": "x"})], "fast.strict body"),
                ([ok, Event(agent="b", type="t.x", body={"v": math.inf})], "not a finite"),
                ([ok, Event(agent="b", type="t.x", body={"content": "x" * 65})], "content is 65"),
                ([ok, Event(agent="b", type="t.x", body={"s": {1, 2}})], "not JSON-serializable"),
                ([ok, Event(agent="b", type="t.x", body={1: 2})], "non-string key"),  # type: ignore[dict-item]
                ([ok, Event(agent="b", type="t.x", id=ok.id)], "appears twice"),
                ([ok, "nope"], "takes Event objects"),  # type: ignore[list-item]
            ]
            for batch, msg in cases:
                with pytest.raises(InvalidEvent, match=msg):
                    log.append_many(batch)
            assert log.last_seq == 0
            # a valid registered body goes through the fast path
            log.append_many([ok, Event(agent="b", type="fast.strict", body={"n": 3})])
            assert log.last_seq == 2
    finally:
        env._BODIES.pop("fast.strict", None)


def test_group_commit_covers_every_writer(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    FileLog(root, notify=False).close()
    logs = [FileLog(root, durability="fsync", notify=False) for _ in range(4)]
    barrier = threading.Barrier(4)

    def writer(i: int) -> None:
        barrier.wait()
        for j in range(25):
            logs[i].append(Event(agent=f"w{i}", type="t.x", id=f"w{i}-{j}"))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    syncs = sum(log.sync_count for log in logs)
    state = logs[0]._sync._sync_state()
    assert _MARK.unpack_from(state, 16)[0] == 100  # every append returned durable
    assert 1 <= syncs <= 100
    for log in logs:
        log.close()
    with FileLog(root, notify=False) as log:
        assert [e.seq for e in log.read()] == list(range(1, 101))
    assert os.path.exists(root / "sync.lock")
