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

import math
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic comes only with a registered model (see register_body)
    from pydantic import BaseModel, ValidationError

from swarmlog import codec
from swarmlog.codec import CRC_SEP as CRC_SEP  # (re-exported: the format lives in codec)
from swarmlog.codec import check_crc as check_crc
from swarmlog.depth import check_depth
from swarmlog.errors import InvalidEvent
from swarmlog.names import check_name, check_type


@dataclass(frozen=True)
class Limits:
    """Size limits enforced at append (bytes of UTF-8)."""

    max_content: int = 16 * 1024
    max_event: int = 1024 * 1024


DEFAULT_LIMITS = Limits()


_UUID4_KEEP = 0xFFFFFFFF_FFFF_0FFF_3FFF_FFFFFFFFFFFF  # all but the version and variant bits
_UUID4_SET = 0x00000000_0000_4000_8000_000000000000  # version 4, RFC 4122 variant


def _new_id() -> str:
    """A random uuid4 as 32 hex digits, like ``uuid.uuid4().hex`` at a third of the cost."""
    n = int.from_bytes(os.urandom(16), "big") & _UUID4_KEEP | _UUID4_SET
    return n.to_bytes(16, "big").hex()


_ORDER = ("seq", "id", "ts", "swarm", "agent", "session", "thread", "type", "key", "body", "causes")


class Event:
    """One event: an immutable view over its envelope dict.

    ``seq`` is set by the log; ``id`` (uuid4 hex), ``ts`` (now) and ``swarm`` (the log's
    name) have defaults. ``ts`` here is only the writer's claim: the log stamps its own
    when it assigns seq (see ``swarmlog.clock``), so a stored event carries the log's time
    and a writer's clock never reaches the fold; a non-finite ``ts`` is refused here, any
    finite one is accepted and replaced. Construction validates names, type, ts and
    causes; the body is checked by its type's registered check at append. Stored
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
        check_depth(body)
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
    def author(self) -> str | None:
        """The writer the log's transport vouches for, when it is not ``agent``; else None.

        A reader sets it (envelope member ``author``, never part of the stored bytes) on
        a backend that authenticates writers: JetStream with per-agent subjects, from the
        message's subject (``subjects.py``; ``""`` for a subject naming no agent). There an
        event without it was published by its own ``agent``; one with it claims another
        agent, and the fold refuses it. FileLog never sets it: there the OS user who can
        write the log's directory is the trust boundary (docs/trust.md).
        """
        return self._d.get("author")

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
        return (from_stored if "seq" in self._d else _unpickled, (dict(self._d),))

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



class StoredEvent(Event):
    """An event as a log stored it: ``seq`` (and the log's ``ts`` and ``swarm``) set.

    What ``Log.append``/``append_many`` return and what a log's reads give: the same
    immutable view as Event, typed so that ``seq`` is an int, never None
    (``agent.share(...).seq + 1`` type-checks).
    """

    __slots__ = ()

    @property
    def seq(self) -> int:
        return self._d["seq"]


def type_name(v: object) -> str:
    """A short JSON-ish name of a value's type, for error messages."""
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(v), type(v).__name__
    )


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

BodyCheck = Callable[[dict[str, Any]], "str | None"]
"""A body check: None when the body is valid, else one line saying why."""

_BODIES: dict[str, BodyCheck] = {}


def register_check(type_name: str, check: BodyCheck) -> None:
    """Declare the check of bodies of ``type_name`` at append (plain Python: no model
    needs importing, so an append stays cheap)."""
    _BODIES[check_type(type_name)] = check


def register_body(type_name: str, model: type[BaseModel]) -> None:
    """Declare the pydantic model that validates bodies of ``type_name`` at append."""
    register_check(type_name, model_check(model))


def model_check(model: type[BaseModel]) -> BodyCheck:
    """The body check of a pydantic model (pydantic is imported by the model's module,
    not by ``import swarmlog``)."""

    def check(body: dict[str, Any]) -> str | None:
        from pydantic import ValidationError

        try:
            model.__pydantic_validator__.validate_python(body)
        except ValidationError as e:
            return one_line(e)
        return None

    return check


class _LazyModelCheck:
    """The check of the pydantic model ``load`` returns, imported and built on first use
    (a process that never appends that type never imports pydantic for it)."""

    __slots__ = ("_check", "_load")

    def __init__(self, load: Callable[[], type[BaseModel]]) -> None:
        self._load = load
        self._check: BodyCheck | None = None

    def prime(self) -> BodyCheck:
        """Import and build the model now (its validator included)."""
        if self._check is None:
            model = self._load()
            model.model_rebuild()  # pydantic defers building the validator to first use
            self._check = model_check(model)
        return self._check

    def __call__(self, body: dict[str, Any]) -> str | None:
        return self.prime()(body)


def lazy_model_check(load: Callable[[], type[BaseModel]]) -> BodyCheck:
    """The check of the pydantic model ``load`` returns, built on first use (see
    ``prime_checks`` for a process that will append the type anyway)."""
    return _LazyModelCheck(load)


def prime_checks(type_names: Iterable[str]) -> None:
    """Build now the lazily built checks of these types. Why: a long-lived process that
    will append them (the synthesizer) should pay the model build at its start, not in
    the middle of its first batch, where every memory waiting on it waits too."""
    for name in type_names:
        check = _BODIES.get(name)
        if isinstance(check, _LazyModelCheck):
            check.prime()


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
        if t is float and math.isfinite(v):
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
    """Check a body by its type's registered check (unknown types pass)."""
    check = _BODIES.get(type_)
    if check is not None:
        why = check(body)
        if why is not None:
            raise InvalidEvent(f"{type_} body: {why}")


def _check_content(body: dict[str, Any], limits: Limits) -> None:
    content = body.get("content")
    if isinstance(content, str) and len(content) * 4 > limits.max_content:
        n = len(content.encode("utf-8"))  # only when it may be over: 4 bytes/char at most
        if n > limits.max_content:
            raise InvalidEvent(f"content is {n} bytes (max {limits.max_content})")


# ---------------------------------------------------------------- encode / decode


def encode(ev: Event, seq: int | None = None, swarm: str | None = None, more: int = 0) -> bytes:
    """Serialize to one record line (crc and newline included); ``seq``/``swarm`` override.

    The reference encoding (``codec.encode_record``), unchained."""
    src = ev._d
    d: dict[str, Any] = {**src, "seq": src.get("seq") if seq is None else seq}
    if swarm is not None:
        d["swarm"] = swarm
    try:
        return codec.encode_record(d, more)
    except TypeError as e:
        raise InvalidEvent(f"body is not JSON-serializable: {e}") from None


def decode_dict(line: bytes) -> dict[str, Any]:
    """CRC-check and parse a record line into its dict (crc and chain removed, ``more``
    kept)."""
    try:
        d = codec.decode_record(line)
    except codec.RecordError as e:
        raise InvalidEvent(str(e)) from None
    d.pop("chain", None)  # a FileLog's hash chain link (chain.py): a storage detail
    return d


def decode(line: bytes) -> tuple[StoredEvent, int]:
    """Parse a record line into (StoredEvent, more)."""
    d = decode_dict(line)
    more = d.pop("more", 0)
    return from_stored(d), more


def from_stored(d: dict[str, Any]) -> StoredEvent:
    """Wrap a stored, CRC-checked dict (it has a seq) as a StoredEvent without
    re-validating it.

    The read paths use ``_fast.from_stored`` (same result, fewer cycles)."""
    ev = StoredEvent.__new__(StoredEvent)
    object.__setattr__(ev, "_d", d)
    return ev


def _unpickled(d: dict[str, Any]) -> Event:
    """An Event not stored yet (no seq), as a pickle brings it back."""
    ev = Event.__new__(Event)
    object.__setattr__(ev, "_d", d)
    return ev
