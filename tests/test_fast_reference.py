"""The fast paths (swarmlog/_fast.py) against the reference codec (swarmlog/codec.py).

For generated events (unicode everywhere it may go, nested bodies with unsorted keys,
keys, causes, expectations, batches with ``more``, chained and unchained) the bytes a
FileLog writes through its fast append paths equal what the plain reference encoder
makes of the same stored events, byte for byte; and what the fast decoder reads back
equals what the reference decoder reads, record for record.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog import FileLog, InvalidEvent, _fast, codec
from swarmlog.envelope import DEFAULT_LIMITS, Event, from_stored, validate_for_append
from swarmlog.file import segment as seg

TS = 1767225600.25  # the log's clock in these tests: every stamp is this
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# printable, no whitespace, no path separators: what check_name accepts, unicode included
_name_chars = st.characters(
    blacklist_categories=("Cs", "Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp"),
    blacklist_characters="/\\",
)
names = st.text(_name_chars, min_size=1, max_size=10).filter(lambda s: s not in (".", ".."))
types = st.from_regex(r"[a-z][a-z0-9_]{0,6}(\.[a-z0-9_]{1,5}){0,2}", fullmatch=True)
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)
bodies = st.dictionaries(_text, _values, max_size=5)


@st.composite
def events(draw: st.DrawFn, swarm: bool | None = None) -> Event:
    """An Event with any mix of the optional fields (``swarm``: force it on or off)."""

    def maybe(strategy: st.SearchStrategy[Any]) -> Any:
        return draw(st.none() | strategy)

    has_swarm = draw(st.booleans()) if swarm is None else swarm
    return Event(
        id=draw(st.from_regex(r"[0-9a-f]{12}", fullmatch=True)),
        agent=draw(names),
        type=draw(types),
        body=draw(bodies),
        swarm=draw(names) if has_swarm else None,
        session=maybe(names),
        thread=maybe(names),
        key=maybe(names),
        causes=maybe(st.lists(st.integers(1, 10**12), min_size=1, max_size=3)),
        ts=draw(st.floats(0, 4e9)),  # the writer's claim: the log stamps its own
    )


def batches(swarm: bool | None = None) -> st.SearchStrategy[list[Event]]:
    return st.lists(events(swarm), min_size=1, max_size=6, unique_by=lambda e: e.id)


def stored(ev: Event, seq: int, log_name: str) -> dict[str, Any]:
    """The stored mapping of ``ev`` at ``seq``, built by hand (not by the log)."""
    return {"seq": seq, **ev.to_dict(), "ts": TS, "swarm": ev.swarm or log_name}


def _log(root: str) -> FileLog:
    return FileLog(Path(root) / "log", name="ref", notify=False, clock=lambda: TS)


def _segment_bytes(log: FileLog) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(log.segdir.iterdir()))


def _strip(d: dict[str, Any]) -> dict[str, Any]:
    """A decoded record without its storage details (what reaches an Event)."""
    return {k: v for k, v in d.items() if k not in ("more", "chain")}


@SETTINGS
@given(st.lists(events(), min_size=1, max_size=8, unique_by=lambda e: e.id))
def test_single_appends_write_the_reference_bytes(evs: list[Event]) -> None:
    """``append`` (serializer view, one %-format per record, chain) == encode_record."""
    with tempfile.TemporaryDirectory() as tmp, _log(tmp) as log:
        want = [stored(e, i + 1, log.name) for i, e in enumerate(evs)]
        got = [log.append(e).envelope for e in evs]
        expected, tip = b"", codec.NO_CHAIN
        for d in want:
            line = codec.encode_record(d, prev_chain=tip)
            tip = codec.stored_chain(line) or b""
            expected += line
        assert _segment_bytes(log) == expected
        assert got == want  # the lazily built stored dicts append returns
        assert [e.envelope for e in log.read()] == want
        assert [log.append(e).envelope for e in evs] == want  # retries: the stored ones


@pytest.mark.slow
@SETTINGS
@given(st.lists(batches(), min_size=1, max_size=4), st.booleans())
def test_batches_write_the_reference_bytes(groups: list[list[Event]], expect: bool) -> None:
    """``append_many`` (one orjson call per batch, more countdown, chain) == encode_batch."""
    ids: set[str] = set()
    groups = [[e for e in g if e.id not in ids and not ids.add(e.id)] for g in groups]
    groups = [g for g in groups if g]
    with tempfile.TemporaryDirectory() as tmp, _log(tmp) as log:
        expected, tip = b"", codec.NO_CHAIN
        seq = 0
        for g in groups:
            want = [stored(e, seq + 1 + i, log.name) for i, e in enumerate(g)]
            keys = {e.key for e in g if e.key is not None}
            if expect:  # a batch under expectations (all met) takes the same path
                versions = {k: log.version(k) for k in keys}
                assert [e.envelope for e in log.append_many(g, expect=versions)] == want
            else:
                assert [e.envelope for e in log.append_many(g)] == want
            data, last = codec.encode_batch(want, tip)
            assert last is not None
            expected, tip, seq = expected + data, last, seq + len(g)
        assert _segment_bytes(log) == expected
        assert [e.envelope for e in log.read()] == [
            _strip(codec.decode_record(line)) for line in expected.splitlines(keepends=True)
        ]


@SETTINGS
@given(batches(swarm=False), st.integers(1, 10**9), st.booleans())
def test_encode_batch_equals_reference(evs: list[Event], first: int, chained: bool) -> None:
    """``_fast.encode_batch`` on ``Serializer`` members, chained and unchained."""
    ser = _fast.Serializer(b'"sw"', DEFAULT_LIMITS)
    parts = [_split_ts(ser.checked(e.envelope)) for e in evs]
    tip = b"0" * 32 if chained else None
    data, last, end_tip = _fast.encode_batch(parts, first, b"%r" % TS, tip)
    want = [stored(e, first + i, "sw") for i, e in enumerate(evs)]
    assert (data, end_tip) == codec.encode_batch(want, tip)
    assert last == first + len(evs) - 1
    batch = ser.batch([e.envelope for e in evs])
    if batch is not None:  # the one-call batch serializer, where it applies, agrees
        assert batch == [ser.checked(e.envelope) for e in evs]


def _split_ts(inner: bytes) -> tuple[bytes, bytes]:
    i = inner.index(b',"ts":') + 6
    return inner[:i], inner[inner.index(b",", i) :]


@pytest.mark.slow
@SETTINGS
@given(st.lists(batches(swarm=True), min_size=1, max_size=4), st.booleans(), st.data())
def test_chunk_decoding_equals_reference(
    groups: list[list[Event]], chained: bool, data: st.DataObject
) -> None:
    """``segment.scan`` (fast: one parse per chunk) == the line-by-line scan == decode_record,
    for whole segments and for every way of cutting one short."""
    raw, tip, seq = b"", codec.NO_CHAIN if chained else None, 0
    for g in groups:
        chunk, tip = codec.encode_batch([stored(e, seq + 1 + i, "x") for i, e in enumerate(g)], tip)
        raw, seq = raw + chunk, seq + len(g)
    want = [_strip(codec.decode_record(line)) for line in raw.splitlines(keepends=True)]
    lines = raw.split(b"\n")[:-1]
    fast = _fast.parse_chunk(lines, 1, 0)
    assert fast is not None and [*map(_strip, fast.records)] == want
    assert seg.scan(raw, 0, 1, "s").records == want
    part = raw[: data.draw(st.integers(0, 10**6)) % (len(raw) + 1)]
    a = seg.scan(part, 0, 1, "s")
    b = seg._scan_lines(part, *_lines(part), 0, 1, "s", None, 0)
    assert (a.records, a.end, a.torn, a.pending, a.left, a.chain) == (
        b.records,
        b.end,
        b.torn,
        b.pending,
        b.left,
        b.chain,
    )


def _lines(data: bytes) -> tuple[list[bytes], bytes]:
    lines = data.split(b"\n")
    tail = lines.pop()
    return lines, tail


@SETTINGS
@given(events())
def test_events_built_without_init_equal_plain_ones(ev: Event) -> None:
    """``_fast.from_stored`` and ``_fast.appended`` == ``envelope.from_stored``."""
    d = stored(ev, 7, "sw")
    assert _fast.from_stored(dict(d)) == from_stored(dict(d))
    swarm = None if ev.swarm else "sw"
    assert _fast.appended(7, ev.envelope, swarm, TS) == from_stored(d)


@SETTINGS
@given(events(), st.sampled_from([math.nan, math.inf, -math.inf]), st.booleans())
def test_fast_validation_raises_what_the_plain_checks_raise(
    ev: Event, bad: float, nested: bool
) -> None:
    """A non-finite number skipped by the fast serializer's shortcut is still refused,
    with the message ``validate_for_append`` gives."""
    body = {**ev.body, "zz": [{"v": bad}] if nested else bad}
    d = {**ev.envelope, "body": body}
    with pytest.raises(InvalidEvent) as plain:
        validate_for_append(from_stored(d), DEFAULT_LIMITS)
    with pytest.raises(InvalidEvent) as fast:
        _fast.Serializer(b'"sw"', DEFAULT_LIMITS).members(d)
    assert str(fast.value) == str(plain.value)
