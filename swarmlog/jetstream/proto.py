"""The JetStream mapping of the log: targets, subjects, record payloads, expectation headers.

Subjects (stream ``S``, all under ``swarmlog.S.>``)::

    swarmlog.S.e                 events without a key
    swarmlog.S.k.<escaped key>   one subject per key (its version = the last seq on it)

Keys may hold ``.``, ``*``, ``>`` and any other printable character, so a key becomes one
subject token by escaping: ``[A-Za-z0-9_-]`` stay, every other UTF-8 byte becomes ``%XX``
(readable in ``nats stream subjects``, and injective).

Payload: the envelope record *without* ``seq``, CRC-32 last, the same JSON layout as a
FileLog line otherwise::

    {"id":"…","ts":1.5,"swarm":"s","agent":"a",…,"body":{…},"crc":123}

JetStream assigns the stream sequence only when it stores the message, so the seq cannot
be inside the bytes the publisher checksums; a reader takes ``seq`` from the message's
stream sequence (kept by the server with every message) and puts it first. ``verify()``
checks each payload's crc and that stream sequences run gapless from 1.

The same holds for ``ts`` (docs/design.md §2: the log's clock): the payload's ``ts`` is only the
writer's claim; a stored event carries the server's timestamp of the message (the stream
leader's clock when it stored it, kept with the message and given by Direct Get, message
get and consumer deliveries alike), so no writer's clock reaches the fold.
"""

from __future__ import annotations

import calendar
import re
import time
import zlib
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote

import orjson

from swarmlog.envelope import Event, Limits, StoredEvent, from_stored, validate_for_append
from swarmlog.errors import InvalidEvent, LogUnavailable

FORMAT = "swarmlog-jetstream/1"
MAX_BATCH = 1000
"""nats-server's limit on messages in one atomic batch."""

H_MSG_ID = "Nats-Msg-Id"
H_EXP_SUBJ_SEQ = "Nats-Expected-Last-Subject-Sequence"
H_EXP_SUBJ = "Nats-Expected-Last-Subject-Sequence-Subject"
H_EXP_LAST_SEQ = "Nats-Expected-Last-Sequence"
H_EXP_LAST_ID = "Nats-Expected-Last-Msg-Id"
H_BATCH_ID = "Nats-Batch-Id"
H_BATCH_SEQ = "Nats-Batch-Sequence"
H_BATCH_COMMIT = "Nats-Batch-Commit"

# JetStream API error codes the log reacts to
ERR_WRONG_LAST_SEQ = 10071
ERR_WRONG_LAST_SEQ_BATCH = 10164
ERR_WRONG_LAST_MSG_ID = 10070
ERR_BATCH_DUP_ID = 10201
ERR_BATCH_DISABLED = 10174
ERR_MSG_TOO_BIG = 10054
ERR_STREAM_NOT_FOUND = 10059
ERR_NO_MESSAGE = 10037
ERR_STREAM_NAME_IN_USE = 10058  # a create raced another handle's: the stream exists
CONFLICT_CODES = (ERR_WRONG_LAST_SEQ, ERR_WRONG_LAST_SEQ_BATCH)

_STREAM_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


@dataclass(frozen=True)
class Target:
    """A parsed ``nats://host:port[,host:port…]/STREAM`` target."""

    servers: list[str]
    stream: str

    @property
    def prefix(self) -> str:
        return f"swarmlog.{self.stream}"

    @property
    def url(self) -> str:
        return ",".join(self.servers)


def parse_target(target: str) -> Target:
    """Split a target into server URLs and the stream name (validated)."""
    scheme, sep, rest = target.partition("://")
    if not sep or scheme not in ("nats", "tls"):
        raise LogUnavailable(f"not a NATS target: {target!r} (want nats://host:port/STREAM)")
    hosts, slash, stream = rest.rpartition("/")
    if not slash or not hosts:
        raise LogUnavailable(f"NATS target {target!r} names no stream (nats://host:port/STREAM)")
    stream = unquote(stream)
    if not _STREAM_RE.match(stream):
        raise LogUnavailable(f"stream name {stream!r} must be 1-128 of [A-Za-z0-9_-]")
    servers = []
    for h in hosts.split(","):
        h = h.strip()
        if not h:
            continue
        servers.append(h if "://" in h else f"{scheme}://{h}")
    return Target(servers, stream)


def escape_key(key: str) -> str:
    """A key as one subject token (injective, readable for plain keys)."""
    out = []
    for b in key.encode("utf-8"):
        out.append(chr(b) if b in _SAFE else f"%{b:02X}")
    return "".join(out)


def unescape_key(token: str) -> str:
    """Inverse of ``escape_key``."""
    return unquote(token, errors="strict")


def key_subject(prefix: str, key: str | None) -> str:
    """The subject an event with ``key`` is published on (the shared layout)."""
    return f"{prefix}.e" if key is None else f"{prefix}.k.{escape_key(key)}"


class SubjectMap(Protocol):
    """Where events go and where a key's version is read (``subjects.Subjects``)."""

    def of(self, agent: str, key: str | None) -> str:
        """The subject an event by ``agent`` with ``key`` is published on."""
        ...

    def key(self, key: str) -> str:
        """The subject (filter) whose last seq is ``key``'s version."""
        ...


# ---------------------------------------------------------------- payloads


@dataclass
class Prepared:
    """One validated event, ready to publish: its payload, subject and stored dict."""

    event: Event
    payload: bytes
    subject: str
    d: dict[str, Any]

    def stored(self, seq: int) -> StoredEvent:
        return from_stored({"seq": seq, **self.d})


def prepare(evs: list[Event], swarm: str, subjects: SubjectMap, limits: Limits) -> list[Prepared]:
    """Validate events and encode their payloads (everything that needs no seq)."""
    seen: set[str] = set()
    out = []
    for ev in evs:
        if not isinstance(ev, Event):
            raise InvalidEvent(f"append takes Event objects, got {type(ev).__name__}")
        if ev.id in seen:
            raise InvalidEvent(f"event id {ev.id!r} appears twice in one batch")
        seen.add(ev.id)
        validate_for_append(ev, limits)
        d = ev.to_dict()
        d.pop("seq", None)
        if "swarm" not in d:
            d = {"id": d["id"], "ts": d["ts"], "swarm": swarm, **d}
        payload = encode_payload(d)
        if len(payload) + 32 > limits.max_event:
            raise InvalidEvent(
                f"event {ev.id} is {len(payload)} bytes encoded (max {limits.max_event})"
            )
        out.append(Prepared(ev, payload, subjects.of(d["agent"], d.get("key")), d))
    return out


def encode_payload(d: dict[str, Any]) -> bytes:
    """The record without seq: JSON in envelope order, body keys sorted, crc last."""
    enc = dict(d)
    try:
        enc["body"] = orjson.Fragment(orjson.dumps(d["body"], option=orjson.OPT_SORT_KEYS))
        head = orjson.dumps(enc)[:-1]
    except TypeError as e:
        raise InvalidEvent(f"body is not JSON-serializable: {e}") from None
    return head + b',"crc":%d}' % zlib.crc32(head)


def decode_payload(seq: int, data: bytes, ts: float) -> dict[str, Any]:
    """A stored payload as the event dict with ``seq`` first and the server's ``ts`` (the
    message's stored time) in place of the writer's; InvalidEvent if it fails."""
    i = data.rfind(b',"crc":')
    if i < 0 or not data.endswith(b"}"):
        raise InvalidEvent(f"seq {seq}: payload is not a swarmlog record")
    digits = data[i + 7 : -1]
    if not digits.isdigit() or zlib.crc32(memoryview(data)[:i]) != int(digits):
        raise InvalidEvent(f"seq {seq}: payload fails its crc check")
    try:
        d = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        raise InvalidEvent(f"seq {seq}: payload is not valid JSON: {e}") from None
    if not isinstance(d, dict) or "id" not in d:
        raise InvalidEvent(f"seq {seq}: payload is not an event object")
    del d["crc"]
    d.pop("chain", None)  # a redaction record's hash chain value (seal/chain.py): storage detail
    out = {"seq": seq, **d}
    out["ts"] = ts
    return out


# ---------------------------------------------------------------- the server's clock


def ns_ts(ns: int) -> float:
    """Unix nanoseconds (how the server keeps a message's time) as the stored ``ts``."""
    return ns / 1e9


def rfc3339_ns(stamp: str) -> int:
    """Nanoseconds of an RFC 3339 time as the server writes it (``…T12:00:00.123456789Z``)."""
    s = stamp.strip()
    if not s.endswith("Z"):
        raise ValueError(f"not a UTC time stamp: {stamp!r}")
    whole, _, frac = s[:-1].partition(".")
    secs = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    return secs * 1_000_000_000 + int((frac + "000000000")[:9])


def ack_ns(reply: str) -> int:
    """Nanoseconds of a consumer delivery's stored time, from its ``$JS.ACK…`` reply subject
    (v1: 9 tokens, time at 7; v2: 11 or 12 tokens, time at 9)."""
    tokens = reply.split(".")
    return int(tokens[7] if len(tokens) == 9 else tokens[9])


# ---------------------------------------------------------------- expectations


def plan_expectations(
    prepared: list[Prepared], expect: dict[str, int], subjects: SubjectMap
) -> list[dict[str, str]] | None:
    """Per-message expectation headers for a batch, or None if they do not fit.

    The server checks every expectation at commit, under its lock, against the stream as
    it was before the batch; each message can carry one subject check, and a check on a
    subject must come no later than the batch's first write to it. So an expected key
    the batch writes is checked on its first message (plain header); an expected key the
    batch does not write is checked on any message without a check of its own, naming
    the key's subject in ``Nats-Expected-Last-Subject-Sequence-Subject``. More expected
    keys than messages can carry → None (the caller falls back to a stream-wide fence).
    """
    hdrs: list[dict[str, str]] = [{} for _ in prepared]
    first: dict[str, int] = {}
    for i, p in enumerate(prepared):
        k = p.d.get("key")
        if k is not None and k not in first:
            first[k] = i
    rest: list[tuple[str, int]] = []
    for key, want in expect.items():
        j = first.get(key)
        if j is None:
            rest.append((key, want))
        else:
            hdrs[j][H_EXP_SUBJ_SEQ] = str(want)
            hdrs[j][H_EXP_SUBJ] = subjects.key(key)
    free = [i for i, h in enumerate(hdrs) if not h]
    if len(rest) > len(free):
        return None
    for (key, want), i in zip(rest, free, strict=False):
        hdrs[i][H_EXP_SUBJ_SEQ] = str(want)
        hdrs[i][H_EXP_SUBJ] = subjects.key(key)
    return hdrs


def check_expect(expect: dict[str, int]) -> dict[str, int]:
    """Validate an ``expect`` mapping (key -> version >= 0)."""
    out = {}
    for k, v in expect.items():
        if not isinstance(k, str) or not k:
            raise InvalidEvent(f"expect keys must be non-empty strings, got {k!r}")
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidEvent(f"expected version of {k!r} must be an integer >= 0, got {v!r}")
        out[k] = v
    return out


# ---------------------------------------------------------------- API replies


class ApiError(Exception):
    """An error reply of the JetStream API (code, err_code, description)."""

    def __init__(self, code: int, err_code: int, description: str) -> None:
        super().__init__(f"{description} (code {code}, err_code {err_code})")
        self.code = code
        self.err_code = err_code
        self.description = description


def parse_reply(data: bytes) -> dict[str, Any]:
    """Parse a JSON API reply, raising ApiError for an error reply."""
    try:
        resp = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ApiError(0, 0, f"unparsable JetStream reply {data[:80]!r}") from None
    if not isinstance(resp, dict):
        raise ApiError(0, 0, f"unexpected JetStream reply {data[:80]!r}")
    err = resp.get("error")
    if err:
        raise ApiError(
            int(err.get("code", 0)), int(err.get("err_code", 0)), str(err.get("description"))
        )
    return resp


def companion_config(
    name: str,
    subjects: list[str],
    replicas: int,
    metadata: dict[str, str],
    max_msgs: int = -1,
    deny_delete: bool = True,
) -> dict[str, Any]:
    """A companion stream's configuration (seal, seal lease, redaction side stream): file
    storage, nothing ages out, no purge; ``max_msgs`` and deletes as its role needs."""
    return {
        "name": name,
        "subjects": subjects,
        "retention": "limits",
        "storage": "file",
        "discard": "old",
        "max_msgs": max_msgs,
        "max_bytes": -1,
        "max_age": 0,
        "num_replicas": replicas,
        "deny_delete": deny_delete,
        "deny_purge": True,
        "allow_direct": True,
        "metadata": metadata,
    }
