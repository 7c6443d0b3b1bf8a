"""The reference codec: docs/record-format.md as plain functions on dicts.

This is the format's specification in code, written to be read, not to be fast. The
append and read paths use the equivalents in ``_fast`` (same bytes, fewer cycles);
tests/test_fast_reference.py checks that they agree byte for byte, and
tests/data/golden_records.jsonl pins what both produce.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Mapping
from typing import Any

import orjson

KEY_ORDER = (
    "seq",
    "id",
    "ts",
    "swarm",
    "agent",
    "session",
    "thread",
    "type",
    "key",
    "body",
    "causes",
    "more",
    "chain",
    "crc",
)
"""The order of a record's members (an absent one is left out)."""

CRC_SEP = b',"crc":'
"""What introduces the crc member, the last of a record."""

CHAIN_SEP = b',"chain":"'
"""What introduces the chain member (FileLog segments only)."""

NO_CHAIN = b""
"""The chain value before the first record."""


class RecordError(ValueError):
    """A line that is not a valid record (bad crc, not JSON, not an object with a seq)."""


def crc(data: bytes) -> int:
    """The CRC-32 a record carries: of every byte of the line before ``,"crc":``."""
    return zlib.crc32(data)


def chain_link(prev: bytes, head: bytes) -> bytes:
    """The chain value of a record whose bytes before ``,"chain":"`` are ``head``: hex of
    the 16-byte BLAKE2b of the previous record's chain value followed by ``head``."""
    return hashlib.blake2b(prev + head, digest_size=16).hexdigest().encode()


def json_value(value: Any) -> bytes:
    """One member's value as a record writes it (object keys sorted, at every depth)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def encode_record(d: Mapping[str, Any], more: int = 0, prev_chain: bytes | None = None) -> bytes:
    """One record line (newline included) of the stored event ``d``.

    The members of ``d`` named in ``KEY_ORDER`` are written in that order (``more``,
    ``chain`` and ``crc`` from here, not from ``d``); ``more`` is written when not 0;
    with ``prev_chain`` (the previous record's chain value) the record is chained.
    """
    members = []
    for key in KEY_ORDER[: KEY_ORDER.index("more")]:
        if key in d:
            members.append(b'"%s":%s' % (key.encode(), json_value(d[key])))
    if more:
        members.append(b'"more":%d' % more)
    head = b"{" + b",".join(members)
    if prev_chain is not None:
        head += b'%s%s"' % (CHAIN_SEP, chain_link(prev_chain, head))
    return head + b"%s%d}\n" % (CRC_SEP, crc(head))


def encode_batch(
    ds: list[Mapping[str, Any]], prev_chain: bytes | None = None
) -> tuple[bytes, bytes | None]:
    """The bytes of an atomic batch (``more`` counting down to the last record) and the
    chain value of its last record (None when unchained)."""
    lines = []
    for i, d in enumerate(ds):
        line = encode_record(d, len(ds) - 1 - i, prev_chain)
        if prev_chain is not None:
            prev_chain = stored_chain(line)
        lines.append(line)
    return b"".join(lines), prev_chain


def stored_chain(line: bytes) -> bytes | None:
    """The chain value a record line carries, or None."""
    i = line.rfind(CHAIN_SEP)
    if i < 0:
        return None
    start = i + len(CHAIN_SEP)
    return line[start : line.index(b'"', start)]


def check_crc(line: bytes) -> bool:
    """True when ``line`` (with or without its newline) carries a matching crc."""
    end = len(line) - 1 if line.endswith(b"\n") else len(line)
    i = line.rfind(CRC_SEP, 0, end)
    if i < 0 or line[end - 1 : end] != b"}":
        return False
    digits = line[i + len(CRC_SEP) : end - 1]
    if not digits.isdigit():
        return False
    return crc(line[:i]) == int(digits)


def decode_record(line: bytes) -> dict[str, Any]:
    """The members of a record line as a dict (``more`` and ``chain`` kept, ``crc``
    removed); raises RecordError when the line is not a valid record."""
    if not check_crc(line):
        raise RecordError("record fails its crc check")
    try:
        d = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        raise RecordError(f"record is not valid JSON: {e}") from None
    if not isinstance(d, dict) or "seq" not in d:
        raise RecordError("record is not an event object")
    del d["crc"]
    return d
