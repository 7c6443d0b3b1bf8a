"""The event envelope: one JSON object per line, fixed key order, CRC-32 as the last key.

Record format (one line, UTF-8)::

    {"seq":7,"id":"…","ts":1.5,"swarm":"s","agent":"a","session":"…","thread":"…",
     "type":"memory.shared","key":"…","body":{…sorted keys…},"causes":[3,5],"more":2,"crc":123}\n

Optional keys (session, thread, key, causes, more) are left out when empty. ``crc`` is the
CRC-32 of the line's bytes before its ``,"crc":``. ``more`` is a storage detail of batches
(how many records of the same batch follow); it never reaches an Event. The whole format,
with a worked example, is docs/record-format.md.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import operator
import os
import re
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import orjson

if TYPE_CHECKING:  # pydantic comes with the first registered body model (see register_body)
    from pydantic import BaseModel, ValidationError

from .depth import SCALARS as _SCALARS
from .depth import check_depth
from .errors import InvalidEvent
from .names import check_name, check_type

CRC_SEP = b',"crc":'
_SORT = orjson.OPT_SORT_KEYS


@dataclass(frozen=True)
class Limits:
    """Size limits enforced at append (bytes of UTF-8)."""

    max_content: int = 16 * 1024
    max_event: int = 1024 * 1024


DEFAULT_LIMITS = Limits()


_urandom = os.urandom
_UUID4_KEEP = 0xFFFFFFFF_FFFF_0FFF_3FFF_FFFFFFFFFFFF  # all but the version and variant bits
_UUID4_SET = 0x00000000_0000_4000_8000_000000000000  # version 4, RFC 4122 variant


def _new_id() -> str:
    """A random uuid4 as 32 hex digits, like ``uuid.uuid4().hex`` at a third of the cost."""
    n = int.from_bytes(_urandom(16), "big") & _UUID4_KEEP | _UUID4_SET
    return n.to_bytes(16, "big").hex()


_OPTIONAL = ("swarm", "session", "thread", "key")
_ORDER = ("seq", "id", "ts", "swarm", "agent", "session", "thread", "type", "key", "body", "causes")


class Event:
    """One event: an immutable view over its envelope dict.

    ``seq`` is set by the log; ``id`` (uuid4 hex), ``ts`` (now) and ``swarm`` (the log's
    name) have defaults. ``ts`` here is only the writer's claim: the log stamps its own
    when it assigns seq (see ``swarmlog.clock``), so a stored event carries the log's time
    and a writer's clock never reaches the fold; a non-finite ``ts`` is refused here, any
    finite one is accepted and replaced. Construction validates names, type, ts and
    causes; the body is validated against its type's pydantic model at append. Stored
    events read back from a log skip validation (their crc vouches for them), which keeps
    reads cheap.
    """

    __slots__ = ("_d",)
    _d: dict[str, Any]

    def __init__(
        self,
        *,
        agent: str,
        type: str,
        body: dict[str, Any] | None = None,
        id: str | None = None,
        ts: float | None = None,
        swarm: str | None = None,
        session: str | None = None,
        thread: str | None = None,
        key: str | None = None,
        causes: list[int] | None = None,
        seq: int | None = None,
    ) -> None:
        d: dict[str, Any] = {}
        if seq is not None:
            if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
                raise InvalidEvent(f"seq must be an integer >= 1, got {seq!r}")
            d["seq"] = seq
        d["id"] = _new_id() if id is None else check_name("id", id)
        if ts is None:
            ts = time.time()
        elif isinstance(ts, bool) or not isinstance(ts, (int, float)) or not math.isfinite(ts):
            raise InvalidEvent(f"ts must be a finite number of unix seconds, got {ts!r}")
        d["ts"] = float(ts)
        if swarm is not None:
            d["swarm"] = check_name("swarm", swarm)
        d["agent"] = check_name("agent", agent)
        if session is not None:
            d["session"] = check_name("session", session)
        if thread is not None:
            d["thread"] = check_name("thread", thread)
        d["type"] = check_type(type)
        if key is not None:
            d["key"] = check_name("key", key)
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise InvalidEvent(f"body must be an object, got {type_name(body)}")
        for v in body.values():  # (inlined: a flat body costs one set lookup per value)
            if v.__class__ not in _SCALARS:  # (``type`` is a parameter here)
                check_depth(body)
                break
        d["body"] = body
        if causes:
            if not isinstance(causes, (list, tuple)) or any(
                isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in causes
            ):
                raise InvalidEvent("causes must be a list of seqs (integers >= 1)")
            d["causes"] = list(causes)
        object.__setattr__(self, "_d", d)

    # read-only attributes -------------------------------------------------
    @property
    def seq(self) -> int | None:
        return self._d.get("seq")

    @property
    def id(self) -> str:
        return self._d["id"]

    @property
    def ts(self) -> float:
        return self._d["ts"]

    @property
    def swarm(self) -> str | None:
        return self._d.get("swarm")

    @property
    def agent(self) -> str:
        return self._d["agent"]

    @property
    def session(self) -> str | None:
        return self._d.get("session")

    @property
    def thread(self) -> str | None:
        return self._d.get("thread")

    @property
    def type(self) -> str:
        return self._d["type"]

    @property
    def key(self) -> str | None:
        return self._d.get("key")

    @property
    def body(self) -> dict[str, Any]:
        return self._d["body"]

    @property
    def causes(self) -> list[int] | None:
        return self._d.get("causes")

    @property
    def envelope(self) -> dict[str, Any]:
        """The event's envelope mapping as the log holds it (seq first once stored).

        Why: the fold reads fields by dict lookup, a chunk of thousands at a time, and
        ``Log.read_batches`` hands it these same mappings without building an Event per
        record. It is shared, not copied: treat it as read-only (``to_dict()`` is a copy).
        """
        return self._d

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Event is immutable; use .replace(...)")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self._d == other._d

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._d.items())
        return f"Event({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (from_stored, (dict(self._d),))

    def replace(self, **changes: Any) -> Event:
        """A validated copy with some fields changed."""
        d: dict[str, Any] = {k: self._d.get(k) for k in _ORDER}
        d.update(changes)
        return Event(**d)

    def to_dict(self) -> dict[str, Any]:
        """The envelope as a plain dict in envelope order, empty optionals left out."""
        return {k: self._d[k] for k in _ORDER if k in self._d}

    def canonical_bytes(self) -> bytes:
        """The record line this event is stored as (with crc and trailing newline)."""
        if self.seq is None or self.swarm is None:
            raise InvalidEvent("only a stored event (with seq and swarm) has canonical bytes")
        return encode(self)

    @classmethod
    def from_line(cls, line: bytes) -> Event:
        """Parse and CRC-check one record line; raises InvalidEvent when it does not hold."""
        ev, _ = decode(line)
        return ev

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        """Validate a dict (e.g. a JSONL line a user wrote) into an Event."""
        if not isinstance(d, dict):
            raise InvalidEvent(f"an event must be a JSON object, got {type_name(d)}")
        unknown = set(d) - set(_ORDER) - {"crc"}
        if unknown:
            raise InvalidEvent(f"unknown envelope field(s): {', '.join(sorted(unknown))}")
        if "agent" not in d or "type" not in d:
            missing = "agent" if "agent" not in d else "type"
            raise InvalidEvent(f"event is missing the required field {missing!r}")
        return cls(**{k: v for k, v in d.items() if k != "crc"})


def type_name(v: object) -> str:
    """A short JSON-ish name of a value's type, for error messages."""
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(v), type(v).__name__
    )


def make_event(**fields: Any) -> Event:
    """Build an Event from keyword fields (kept for symmetry with ``Event.from_dict``)."""
    return Event(**fields)


def one_line(e: ValidationError) -> str:
    """pydantic's first error as one line: ``field: message (and N more)``."""
    err = e.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ())) or "event"
    msg = str(err.get("msg", "invalid"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
    return f"{loc}: {msg}{more}"


# ---------------------------------------------------------------- body registry

BodyCheck = Callable[[dict[str, Any]], None]
_BODIES: dict[str, type[BaseModel]] = {}


class _NoModels(Exception):
    """Stands for pydantic's ValidationError until a model is registered (never raised)."""


_ValidationError: type[Exception] = _NoModels


def register_body(type_name: str, model: type[BaseModel]) -> None:
    """Declare the pydantic model that validates bodies of ``type_name`` at append.

    pydantic is imported here, by the first registration, not by ``import swarmlog``: a
    process that appends only unregistered types (or none) never pays for it."""
    global _ValidationError
    from pydantic import ValidationError

    _ValidationError = ValidationError
    _BODIES[check_type(type_name)] = model


def body_model(type_name: str) -> type[BaseModel] | None:
    """The registered body model of a type, or None (unknown types are carried through)."""
    return _BODIES.get(type_name)


def _check_finite(obj: Any, path: str) -> None:
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise InvalidEvent(f"{path} is not a finite number")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(k, str):
                raise InvalidEvent(f"{path} has a non-string key {k!r}")
            _check_finite(v, f"{path}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _check_finite(v, f"{path}[{i}]")


def _flat_and_finite(body: dict[str, Any]) -> bool:
    """Fast path of the finiteness check: a flat body of str keys and finite scalars."""
    for k, v in body.items():
        t = type(v)
        if type(k) is not str:
            return False
        if t is str or t is int or t is bool or v is None:
            continue
        if t is float and v - v == 0.0:  # inf - inf and nan - nan are nan
            continue
        return False
    return True


def validate_for_append(ev: Event, limits: Limits = DEFAULT_LIMITS) -> None:
    """Checks that run at append: known body shape, finite numbers, content size."""
    body = ev._d["body"]
    if not _flat_and_finite(body):
        check_depth(body)  # (the body may have changed since the Event was made)
        _check_finite(body, "body")
    _check_body(ev._d["type"], body)
    _check_content(body, limits)


def _check_body(type_: str, body: dict[str, Any]) -> None:
    """Validate a body against its type's registered model (unknown types pass)."""
    model = _BODIES.get(type_)
    if model is not None:
        try:
            model.__pydantic_validator__.validate_python(body)
        except _ValidationError as e:
            why = one_line(cast("ValidationError", e))
            raise InvalidEvent(f"{type_} body: {why}") from None


def _check_content(body: dict[str, Any], limits: Limits) -> None:
    content = body.get("content")
    if isinstance(content, str) and len(content) * 4 > limits.max_content:
        n = len(content.encode("utf-8"))  # only when it may be over: 4 bytes/char at most
        if n > limits.max_content:
            raise InvalidEvent(f"content is {n} bytes (max {limits.max_content})")


# ---------------------------------------------------------------- encode / decode


def encode(ev: Event, seq: int | None = None, swarm: str | None = None, more: int = 0) -> bytes:
    """Serialize to one record line (crc and newline included); ``seq``/``swarm`` override."""
    src = ev._d
    d: dict[str, Any] = {"seq": src.get("seq") if seq is None else seq}
    for k in _ORDER[1:]:
        if k == "swarm" and swarm is not None:
            d["swarm"] = swarm
        elif k in src:
            d[k] = src[k]
    try:
        d["body"] = orjson.Fragment(orjson.dumps(src["body"], option=_SORT))
        if more:
            d["more"] = more
        head = orjson.dumps(d)
    except TypeError as e:
        raise InvalidEvent(f"body is not JSON-serializable: {e}") from None
    crc = zlib.crc32(memoryview(head)[:-1])
    return head[:-1] + b',"crc":%d}\n' % crc


@dataclass(init=False)
class _Members:
    """A view that makes orjson write an envelope dict in one call, without copying it.

    orjson writes a dataclass instance from its ``__dict__`` in insertion order and
    ``OPT_SORT_KEYS`` only sorts the plain dicts inside it, so an instance whose
    ``__dict__`` *is* the envelope dict serializes with the envelope's order and the
    body's keys sorted: exactly a record without its crc. ``_MEMBERS_OK`` checks this
    at import; without it the append path falls back to a body Fragment (same bytes).
    """

    # object's own (C) __init__: ``_Members()`` then costs less than ``object.__new__``
    __init__ = object.__init__


_new = object.__new__


def _members(d: dict[str, Any]) -> _Members:
    m = _Members()
    m.__dict__ = d
    return m


def _members_ok() -> bool:
    d = {"seq": 1, "id": "x", "body": {"b": [{"d": 1, "c": None}], "a": 1.5}, "agent": "a"}
    want = b'{"seq":1,"id":"x","body":{"a":1.5,"b":[{"c":null,"d":1}]},"agent":"a"}'
    try:
        return orjson.dumps(_members(d), option=_SORT) == want
    except Exception:  # pragma: no cover - an orjson that does not do this
        return False


_MEMBERS_OK = _members_ok()
_dumps = orjson.dumps
# the cheapest "b'null' in raw" (``in`` on bytes first tries the needle as an int and pays
# for an exception; a compiled search also beats ``bytes.find``'s argument parsing)
_has_null = re.compile(b"null").search
_AGENT = b',"agent":'


def record_members(d: dict[str, Any], swarm: bytes, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """Validate an event's dict for append and serialize it once (the append hot path).

    Returns the record's JSON members without braces, ``seq`` and ``crc``:
    ``"id":…,"ts":…,"swarm":…,…,"body":{…}`` with ``swarm`` (JSON bytes) filled in where
    the event has none. Runs the checks of ``validate_for_append`` plus the event size
    limit, with the same errors in the same order, but reads the serialized bytes to skip
    what cannot fail: orjson writes NaN and infinities as ``null`` (and refuses non-string
    keys), so the finiteness walk only runs when ``null`` occurs, and the size checks
    only when the record is longer than ``fast_limit(limits)``.
    """
    return members_with(d, _with_swarm(swarm), limits, fast_limit(limits))


def fast_limit(limits: Limits) -> int:
    """Longest serialized event (with braces and swarm) that no size limit can refuse.

    The content of a body is part of the record, so a record no longer than
    ``max_content`` has no content over it; ``+ 48`` is the room kept for seq and crc.
    """
    return min(limits.max_content, limits.max_event - 48)


def members_with(d: dict[str, Any], with_swarm: bytes, limits: Limits, fast: int) -> bytes:
    """``record_members`` with its per-log constants ready: ``with_swarm`` is
    ``_with_swarm(swarm)`` and ``fast`` is ``fast_limit(limits)`` (what ``FileLog``
    keeps, so a single append computes neither)."""
    if "seq" in d:
        d = {k: v for k, v in d.items() if k != "seq"}
    try:
        if _MEMBERS_OK:
            m = _Members()
            m.__dict__ = d
            raw = _dumps(m, None, _SORT)
        else:  # pragma: no cover
            body = d["body"]
            raw = orjson.dumps({**d, "body": orjson.Fragment(orjson.dumps(body, option=_SORT))})
    except TypeError as e:  # (orjson refuses nesting past 254 levels, among others)
        body = d["body"]
        check_depth(body)
        _check_finite(body, "body")
        _check_body(d["type"], body)
        _check_content(body, limits)
        raise InvalidEvent(f"body is not JSON-serializable: {e}") from None
    if _has_null(raw):
        check_depth(d["body"])
        _check_finite(d["body"], "body")
    if d["type"] in _BODIES:
        _check_body(d["type"], d["body"])
    if "swarm" not in d:
        # the first is the envelope's agent: only id and ts (no such bytes) come before it
        raw = raw.replace(_AGENT, with_swarm, 1)
    if len(raw) > fast:
        # may be over a limit (a swarm filled in only makes this test looser)
        if len(raw) > limits.max_content:
            _check_content(d["body"], limits)
        if len(raw) + 48 > limits.max_event:
            raise InvalidEvent(
                f"event {d['id']} is {len(raw)} bytes encoded (max {limits.max_event})"
            )
    return raw[1:-1]


@functools.lru_cache(maxsize=64)
def _with_swarm(swarm: bytes) -> bytes:
    """``,"swarm":<swarm>,"agent":`` — what a record without a swarm gets before its agent."""
    return b',"swarm":%s%s' % (swarm, _AGENT)


_SEP = orjson.Fragment(b"\x00")  # never in orjson's own output: it escapes control characters
_BOUNDARY = b"},\x00,{"


def batch_members(
    ds: list[dict[str, Any]], swarm: bytes, limits: Limits = DEFAULT_LIMITS
) -> list[bytes] | None:
    """``record_members`` of a whole batch in one orjson call, or None to do it one by one.

    The fast path covers batches of plain events (no ``seq``, all or none with a
    ``swarm``) whose bytes need no closer look: no ``null`` anywhere, nothing near a
    size limit, no body of a registered type failing validation. Anything else returns
    None and the caller takes the per-event path, which raises the same errors in order.
    """
    n = len(ds)
    if not _MEMBERS_OK or n < 2:
        return None
    has_swarm = sum(map(dict.__contains__, ds, _repeat("swarm", n)))
    if (has_swarm and has_swarm != n) or any(map(dict.__contains__, ds, _repeat("seq", n))):
        return None
    if not _BODIES.keys().isdisjoint(map(_get_type, ds)):
        try:
            for d in ds:
                _check_body(d["type"], d["body"])
        except InvalidEvent:
            return None
    items: list[Any] = [_SEP] * (2 * n - 1)
    items[::2] = map(_members, ds)
    try:
        raw = orjson.dumps(items, option=_SORT)
    except TypeError:
        return None
    if b"null" in raw:
        return None
    if not has_swarm:
        with_swarm = b',"swarm":%s%s' % (swarm, _AGENT)
        size = len(raw)
        raw = raw.replace(_AGENT, with_swarm)
        # every record has one envelope agent; n replacements means there was no other
        if len(raw) - size != n * (len(with_swarm) - len(_AGENT)):
            return None
    members = raw[2:-2].split(_BOUNDARY)
    if len(members) != n:
        return None
    longest = max(map(len, members))
    if longest > limits.max_content or longest + 50 > limits.max_event:
        return None
    return members


def _repeat(x: Any, n: int) -> Any:
    return itertools.repeat(x, n)


_get_type = operator.itemgetter("type")


def check_crc(line: bytes) -> bool:
    """True when ``line`` (with or without its newline) carries a matching crc."""
    end = len(line) - 1 if line.endswith(b"\n") else len(line)
    i = line.rfind(CRC_SEP, 0, end)
    if i < 0 or line[end - 1 : end] != b"}":
        return False
    digits = line[i + 7 : end - 1]
    if not digits.isdigit():
        return False
    return zlib.crc32(memoryview(line)[:i]) == int(digits)


def decode_dict(line: bytes) -> dict[str, Any]:
    """CRC-check and parse a record line into its dict (crc and chain removed, ``more``
    kept)."""
    if not check_crc(line):
        raise InvalidEvent("record fails its crc check")
    try:
        d = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise InvalidEvent(f"record is not valid JSON: {e}") from None
    if not isinstance(d, dict) or "seq" not in d:
        raise InvalidEvent("record is not an event object")
    del d["crc"]
    d.pop("chain", None)  # a FileLog's hash chain link (chain.py): a storage detail
    return d


def decode(line: bytes) -> tuple[Event, int]:
    """Parse a record line into (Event, more)."""
    d = decode_dict(line)
    more = d.pop("more", 0)
    return from_stored(d), more


_set_d = Event.__dict__["_d"].__set__  # the slot's setter: skips Event.__setattr__
_get_d = Event.__dict__["_d"].__get__


def from_stored(d: dict[str, Any]) -> Event:
    """Wrap a stored, CRC-checked dict as an Event without re-validating it (hot path)."""
    ev = _new(Event)
    _set_d(ev, d)
    return ev


class _Appended(Event):
    """A stored event as ``append`` returns it: its dict is built on first use.

    Appending knows the stored event as (seq, the event's own dict, the log's swarm
    when the event had none, the ts the log stamped); building the stored dict is left to
    the first reader, so a batch whose results are not looked at does not pay for a
    thousand dict copies.
    """

    __slots__ = ("_p",)
    _p: tuple[int, dict[str, Any], str | None, float]

    # ``_Appended()`` makes a bare instance at C level (cheaper than ``object.__new__``);
    # ``_p`` is then set through ``_set_p`` (Event's ``__setattr__`` refuses)
    __init__ = object.__init__

    @property
    def _d(self) -> dict[str, Any]:  # type: ignore[override]
        try:
            return cast("dict[str, Any]", _get_d(self, _Appended))
        except AttributeError:
            pass
        seq, src, swarm, ts = self._p
        d: dict[str, Any] = {"seq": seq}
        if swarm is not None:
            d["id"] = src["id"]
            d["ts"] = ts
            d["swarm"] = swarm
        d.update(src)
        d["seq"] = seq
        d["ts"] = ts  # the log's clock, never the writer's
        _set_d(self, d)
        return d


_set_p = _Appended.__dict__["_p"].__set__


def appended(seq: int, src: dict[str, Any], swarm: str | None, ts: float) -> Event:
    """The stored event of a just-appended one (``swarm``: the log's, if ``src`` has none;
    ``ts``: the time the log stamped)."""
    ev = _Appended()
    _set_p(ev, (seq, src, swarm, ts))
    return ev


def appended_batch(
    first: int, srcs: list[dict[str, Any]], swarms: Iterable[str | None], ts: float
) -> list[Event]:
    """``appended`` for a batch with seqs from ``first`` on, all stamped ``ts`` (C-level
    loops: no frames)."""
    n = len(srcs)
    out: list[Event] = list(map(_new, itertools.repeat(_Appended, n)))
    ps = zip(range(first, first + n), srcs, swarms, itertools.repeat(ts, n), strict=False)
    _drain(map(_set_p, out, ps))
    return out


_drain: Callable[[Iterable[Any]], None] = collections.deque(maxlen=0).extend
