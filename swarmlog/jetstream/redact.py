"""``JetStreamLog.redact``: erase records of a JetStream stream, keeping every seq served.

JetStream cannot rewrite a stored message. Each record to redact goes in three steps,
each idempotent, so a run killed at any point is completed by running it again:

1. store the redacted record (redaction.py: tombstone or scrubbed body, same id, same
   chain value) in the side stream (side.py), acknowledged before anything is removed;
2. delete the original with ``$JS.API.STREAM.MSG.DELETE`` and ``no_erase: false``: the
   server overwrites the message's bytes in its block file with random data before
   forgetting it (a plain delete only marks it deleted and leaves the bytes until the
   block is compacted);
3. erase the older redaction records of that seq (a record redacted twice).

Between 1 and 2 a reader sees the original (still stored); after 2 it finds the seq
missing and reads the redacted record instead (read.py), so no reader ever sees a
hole. The redacted record carries the original's chain value (seal/chain.py), so the seal
stream, ``verify`` and the chain head are unaffected.

Why message delete with erase, and what it needs: it is the only JetStream operation
that removes one message's bytes and leaves every other seq as it was (a purge drops a
whole prefix or subject, a rollup replaces by subject, and neither erases). It needs the
stream's ``deny_delete`` off, which ``ensure_stream`` now sets (deletes by anyone with API
access then show up in ``verify`` as seqs missing without a redaction record). A stream
created with ``deny_delete`` on cannot be changed (the server refuses "stream
configuration update can not cancel deny message deletes"), so redacting on it fails
with a one-line error; its events must be copied to a new stream.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson

from swarmlog.errors import InvalidEvent, SwarmlogError
from swarmlog.jetstream.client import Raw
from swarmlog.jetstream.core import StreamCorruption
from swarmlog.jetstream.proto import (
    ERR_NO_MESSAGE,
    ApiError,
    decode_payload,
    encode_payload,
    ns_ts,
    rfc3339_ns,
)
from swarmlog.jetstream.seal.chain import full_line, payload_of
from swarmlog.jetstream.side import erase
from swarmlog.jetstream.skip import stand_in, why_skipped
from swarmlog.jetstream.subjects import NO_AGENT
from swarmlog.redaction import Rewrite, check_changes, redact_line

if TYPE_CHECKING:
    from swarmlog.jetstream.read import JsReader


def redact(log: JsReader, changes: Mapping[int, Mapping[str, Any] | None]) -> int:
    """``JetStreamLog.redact`` (see ``Log.redact`` and the module docstring)."""
    todo = check_changes(changes)
    if not todo:
        return 0
    last, values = log._run(_prepare(log), 10 * log.timeout + 1, "redact")
    past = [q for q in todo if q > last]
    if past:
        raise SwarmlogError(f"redact: seq {min(past)} is past the end of the log")
    n = 0
    for q in sorted(todo):
        n += log._run(_one(log, q, todo[q], values[q]), 6 * log.timeout + 1, "redact")
    return n


async def _prepare(log: JsReader) -> tuple[int, dict[int, bytes]]:
    """Check the stream allows erasure, make the side stream, seal every record (an
    erased one's chain value cannot be computed afterwards); the stream's last seq and
    the chain values."""
    info = await log._c.stream_info()
    if info is None:
        raise SwarmlogError(f"stream {log.stream} does not exist")
    if info["config"].get("deny_delete"):
        raise SwarmlogError(
            f"stream {log.stream} denies message deletes (made before erasure existed; "
            "JetStream cannot lift that setting): its records cannot be erased in place"
        )
    await log._side.ensure()
    await log._side.refresh()
    last = int(info["state"]["last_seq"])
    await log._sealer.seal(last)
    return last, await log._sealer.values()


async def _one(log: JsReader, seq: int, body: Mapping[str, Any] | None, value: bytes) -> int:
    """Redact one record (the three steps of the module docstring); 1 if it changed."""
    side = log._side
    stand = side.get(seq)
    orig = await _stored(log, seq)
    cur = stand if stand is not None else orig  # a killed run may have left both
    if cur is None:
        raise StreamCorruption(log.stream, seq, "missing (deleted, and no redaction record)")
    new = redact_line(full_line(seq, _record(log, cur), value), body)
    if new is not None:
        await side.put(_moved(log, cur, new, body), payload_of(new))
    elif stand is None:  # the stored message already is such a record: keep it served
        await side.put(cur, cur.data)
    if orig is not None:
        await erase(log._c, log.stream, seq)
    await side.refresh()
    await side.erase_stale(seq)
    return 0 if new is None else 1


def _moved(log: JsReader, r: Raw, new: bytes, body: Mapping[str, Any] | None) -> Raw:
    """``r``, on the subject its new envelope calls for when the redaction renames the
    agent (a forgotten agent's pseudonym) or the key (a key the forgotten identity
    created): the side record keeps no subject naming the old one, readers
    find its author and envelope agreeing, and the key's version moves to the new key
    (``JsSide.by_key`` reads it from the subject)."""
    if not isinstance(body, Rewrite) or not ({"agent", "key"} & body.envelope.keys()):
        return r
    d = orjson.loads(new)
    subjects = log.subjects
    if not subjects.per_agent:
        subject = subjects.of("", d.get("key"))
    else:
        who = d["agent"] if "agent" in body.envelope else subjects.author(r.subject)
        if not who or who == NO_AGENT:
            return r
        subject = subjects.of(who, d.get("key"))
    return r if subject == r.subject else dataclasses.replace(r, subject=subject)


def _record(log: JsReader, r: Raw) -> bytes:
    """The payload to redact for message ``r``: its own, or, for a message readers skip
    (not a record, or on the wrong subject: skip.py), its stand-in's, so that erasing
    its author's records replaces the bytes it published."""
    try:
        d = decode_payload(r.seq, r.data, r.ts)
        if why_skipped(log.subjects, r, d) is None:
            return r.data
        reason = why_skipped(log.subjects, r, d) or ""
    except InvalidEvent as e:
        reason = str(e).partition(": ")[2] or str(e)
    d = stand_in(r, log.name, log.subjects, reason)
    del d["seq"]
    return encode_payload(d)


async def _stored(log: JsReader, seq: int) -> Raw | None:
    """The message at ``seq`` with its headers, asked of the leader; None if gone."""
    try:
        resp = await log._c.api(f"STREAM.MSG.GET.{log.stream}", {"seq": seq})
    except ApiError as e:
        if e.err_code == ERR_NO_MESSAGE or e.code == 404:
            return None
        raise
    m = resp["message"]
    data = base64.b64decode(m.get("data", ""))
    hdrs = _headers(base64.b64decode(m.get("hdrs", "") or ""))
    return Raw(seq, str(m["subject"]), data, hdrs, ns_ts(rfc3339_ns(m["time"])))


def _headers(block: bytes) -> dict[str, str]:
    """A NATS header block (``NATS/1.0`` line, then ``Name: value`` lines) as a dict."""
    out: dict[str, str] = {}
    for line in block.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep and name.strip():
            out[name.strip().decode("ascii", "replace")] = value.strip().decode("utf-8", "replace")
    return out
