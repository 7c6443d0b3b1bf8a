"""Redacted records: one record line rewritten in place of another (docs/design.md §9).

``Log.redact`` turns a record into a *tombstone* (body ``{}``) or a *scrubbed* record (a
body given by the caller). Either keeps the whole envelope (seq, id, ts, swarm, agent,
session, thread, type, key, causes, more; a ``Rewrite`` replaces ``RENAMABLE`` members)
and gains one member just before ``chain`` (or ``crc``)::

    ..."body":{},"redacted":"tombstone:<32 hex>","chain":"<32 hex>","crc":N}
    ..."body":{…},"redacted":"scrubbed:<32 hex>","chain":"<32 hex>","crc":N}

A FileLog pads a redacted record that came out shorter than its original with spaces
after the marker (JSON whitespace), so a rewritten segment never shrinks: a segment
below the log's segment size is always the last one, and writers rely on that. The hex
after the kind is the hash of the *original* record: its ``chain`` value when it
had one (so the record keeps that value and the next record's link still holds), else
the 16-byte BLAKE2b of the original line up to its ``,"crc":``. A record redacted twice
keeps the hash of the first original. The CRC is recomputed over the new line. Every
backend writes the same bytes through ``redact_line``; docs/record-format.md has the
format and why the chain stays verifiable.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Mapping
from typing import Any

import orjson

from swarmlog.envelope import CRC_SEP
from swarmlog.errors import InvalidEvent

TOMBSTONE = "tombstone"
SCRUBBED = "scrubbed"
MEMBER = "redacted"
"""The envelope member that marks a redacted record (readers keep it in the dict)."""

_SORT = orjson.OPT_SORT_KEYS
_TAIL = re.compile(rb',"redacted":"(tombstone|scrubbed):([0-9a-f]{32})"$')
_ORDER = ("seq", "id", "ts", "swarm", "agent", "session", "thread", "type", "key")


def kind_of(d: Mapping[str, Any]) -> str | None:
    """ "tombstone", "scrubbed" or None for a stored record's dict (or Event envelope)."""
    v = d.get(MEMBER)
    if type(v) is not str:
        return None
    return v.partition(":")[0] or None


def is_tombstone(d: Mapping[str, Any]) -> bool:
    """True for a redaction tombstone (its body was erased)."""
    v = d.get(MEMBER)
    return type(v) is str and v.startswith(TOMBSTONE)


def marker(head: bytes) -> tuple[str, bytes] | None:
    """(kind, hash hex) when record bytes ``head`` (up to ``,"chain":`` or ``,"crc":``)
    end with the redaction member, else None. Only the last member is looked at, so a
    body key named "redacted" cannot pass for the marker (the body ends in ``}``)."""
    head = head.rstrip(b" ")  # (padding, see redact_line)
    if not head.endswith(b'"'):
        return None
    m = _TAIL.search(head, max(0, len(head) - 64))
    return (m.group(1).decode(), m.group(2)) if m else None


def original_hash(line: bytes, d: Mapping[str, Any]) -> str:
    """The hash a redaction of ``line`` (parsed as ``d``) carries (see module docstring)."""
    prior = d.get(MEMBER)
    if type(prior) is str and ":" in prior:
        return prior.partition(":")[2]
    chain = d.get("chain")
    if type(chain) is str:
        return chain
    cut = line.rfind(CRC_SEP)
    return hashlib.blake2b(line[:cut], digest_size=16).hexdigest()


RENAMABLE = ("agent", "session", "thread", "id", "key")
"""Envelope strings a redaction may replace (by pseudonyms: a forgotten agent's name, and
names, event ids and keys it chose). Renaming an id or a key changes what a backend
indexes by them: ``renames_index`` tells the backend to rebuild those indexes."""


def renames_index(changes: Mapping[int, Any]) -> bool:
    """Whether any of ``changes`` renames an event id or a key."""
    return any(
        isinstance(b, Rewrite) and ("id" in b.envelope or "key" in b.envelope)
        for b in changes.values()
    )


class Rewrite(dict[str, Any]):
    """A redaction's body (``None``: a tombstone) that also replaces envelope names
    (``envelope``: field -> new name, only ``RENAMABLE`` fields the record has).

    A dict, so ``Log.redact`` takes it where it takes a body on every backend."""

    def __init__(self, body: Mapping[str, Any] | None, envelope: Mapping[str, str]) -> None:
        super().__init__(body or {})
        self.tombstone = body is None
        self.envelope = {k: v for k, v in envelope.items() if k in RENAMABLE}


def redact_line(line: bytes, body: Mapping[str, Any] | None, pad_to: int = 0) -> bytes | None:
    """The redacted form of record ``line`` (newline included), or None when the record
    already is what was asked (idempotent re-runs). ``body`` None makes a tombstone; a
    tombstone is never turned back into a scrubbed record. ``pad_to``: the new line is
    at least that long, spaces after the marker making up the difference (FileLog: a
    full segment must stay full, see redact.py)."""
    try:
        d = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise InvalidEvent(f"record is not valid JSON: {e}") from None
    prior = kind_of(d)
    env: dict[str, str] = {}
    if isinstance(body, Rewrite):
        env = {k: v for k, v in body.envelope.items() if k in d}
        body = None if body.tombstone else dict(body)
    if body is None or prior == TOMBSTONE:
        kind, new_body = TOMBSTONE, {}
    else:
        if not isinstance(body, Mapping):
            raise InvalidEvent(f"seq {d.get('seq')}: a scrubbed body must be an object")
        kind, new_body = SCRUBBED, dict(body)
    if prior == kind and d.get("body") == new_body and all(d[k] == v for k, v in env.items()):
        return None
    out: dict[str, Any] = {k: d[k] for k in _ORDER if k in d}
    out.update(env)
    try:
        out["body"] = orjson.Fragment(orjson.dumps(new_body, option=_SORT))
    except TypeError as e:
        raise InvalidEvent(f"seq {d.get('seq')}: body is not JSON-serializable: {e}") from None
    for k in ("causes", "more"):
        if k in d:
            out[k] = d[k]
    out[MEMBER] = f"{kind}:{original_hash(line, d)}"
    head = orjson.dumps(out)[:-1]
    chain = b',"chain":"%s"' % d["chain"].encode() if "chain" in d else b""
    pad = 0
    while True:  # (twice at most: the crc's digits are the only unknown length)
        rec = head + b" " * pad + chain
        new = rec + b',"crc":%d}\n' % zlib.crc32(rec)
        if len(new) >= pad_to:
            return new
        pad += pad_to - len(new)


def check_changes(changes: Mapping[int, Mapping[str, Any] | None]) -> dict[int, Any]:
    """``changes`` validated (seqs >= 1, bodies objects or None) as a plain dict."""
    out: dict[int, Any] = {}
    for seq, body in changes.items():
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise InvalidEvent(f"redact: seq must be an integer >= 1, got {seq!r}")
        if body is not None and not isinstance(body, Mapping):
            raise InvalidEvent(f"redact: seq {seq}: body must be an object or None")
        out[seq] = body
    return out


__all__ = [
    "MEMBER",
    "RENAMABLE",
    "SCRUBBED",
    "TOMBSTONE",
    "Rewrite",
    "check_changes",
    "is_tombstone",
    "kind_of",
    "marker",
    "original_hash",
    "redact_line",
    "renames_index",
]
