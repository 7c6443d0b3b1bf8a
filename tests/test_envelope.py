"""Acceptance 7: envelope round-trips byte for byte, and the crc rejects any one-byte change."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmlog import Event, InvalidEvent
from swarmlog.envelope import (
    check_crc,
    decode,
    decode_dict,
    encode,
    from_stored,
)
from swarmlog.file.segment import parse_record

NAME = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp", "Cf", "Co", "Cn"),
        blacklist_characters="/\\",
    ),
    min_size=1,
    max_size=20,
).filter(lambda s: s not in (".", "..") and s.isprintable())
TYPE = st.from_regex(r"\A[a-z][a-z0-9_]{0,8}(\.[a-z0-9_]{1,8}){0,2}\Z")
SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
JSON = st.recursive(
    SCALAR,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def events(draw: st.DrawFn) -> tuple[Event, int, int]:
    opt = lambda s: draw(st.none() | s)  # noqa: E731
    ev = Event(
        agent=draw(NAME),
        type=draw(TYPE),
        body=draw(st.dictionaries(st.text(max_size=10), JSON, max_size=5)),
        id=draw(NAME),
        ts=draw(st.floats(min_value=0, max_value=4e9)),
        swarm=opt(NAME),
        session=opt(NAME),
        thread=opt(NAME),
        key=opt(NAME),
        causes=opt(st.lists(st.integers(min_value=1, max_value=2**40), max_size=4)),
    )
    return ev, draw(st.integers(min_value=1, max_value=2**53)), draw(st.integers(0, 1000))


@settings(max_examples=150, deadline=None)
@given(events())
def test_round_trip_bytes_identical(case: tuple[Event, int, int]) -> None:
    ev, seq, more = case
    line = encode(ev, seq=seq, swarm=ev.swarm or "sw", more=more)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert check_crc(line)
    back, m = decode(line)
    assert m == more and back.seq == seq
    assert encode(back, more=more) == line
    assert back.body == orjson.loads(orjson.dumps(ev.body))
    d = parse_record(line[:-1])
    assert d is not None and d.get("more", 0) == more
    # the same event always has the same bytes, and key order is the envelope order
    assert encode(from_stored(decode_dict(line)) if not more else back, more=more) == line
    keys = list(orjson.loads(line))
    assert keys[0] == "seq" and keys[-1] == "crc"


@pytest.mark.slow
@settings(max_examples=250, deadline=None)
@given(events(), st.data())
def test_any_single_byte_change_is_rejected(case: tuple[Event, int, int], data: Any) -> None:
    ev, seq, more = case
    line = encode(ev, seq=seq, swarm="sw", more=more)
    pos = data.draw(st.integers(0, len(line) - 1))
    new = data.draw(st.integers(0, 255).filter(lambda b: b != line[pos]))
    bad = line[:pos] + bytes([new]) + line[pos + 1 :]
    assert not check_crc(bad)
    with pytest.raises(InvalidEvent):
        decode(bad)
    assert parse_record(bad.rstrip(b"\n")) is None or bad.count(b"\n") != 1


def test_event_defaults_and_validation() -> None:
    e = Event(agent="a1", type="memory.shared", body={"content": "x"})
    assert len(e.id) == 32 and e.ts > 0 and e.seq is None and e.swarm is None
    with pytest.raises(InvalidEvent):
        Event(agent="a/b", type="x")
    with pytest.raises(InvalidEvent):
        Event(agent="a", type="Not.A.Type")
    with pytest.raises(InvalidEvent):
        Event(agent="a", type="x", ts=float("nan"))
    with pytest.raises(InvalidEvent):
        Event(agent="a", type="x", causes=[0])
    with pytest.raises(AttributeError):
        e.agent = "b"  # type: ignore[misc]
    assert e.replace(agent="b").agent == "b"
    with pytest.raises(InvalidEvent):
        e.canonical_bytes()  # not stored yet


def test_decode_rejects_non_records() -> None:
    for raw in (b"", b"{}", b'[1,"crc":1]', b'{"a":1,"crc":0}\n', b"\xff" * 10):
        with pytest.raises(InvalidEvent):
            decode(raw)


def test_default_ids_are_uuid4_hex() -> None:
    """The fast id generator gives what ``uuid.uuid4().hex`` would: version 4, RFC variant."""
    import uuid

    ids = {Event(agent="a", type="t.x").id for _ in range(2000)}
    assert len(ids) == 2000
    for h in ids:
        u = uuid.UUID(hex=h)
        assert (u.version, u.variant, u.hex) == (4, uuid.RFC_4122, h)
