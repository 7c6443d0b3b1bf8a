"""The hash chain on JetStream: how a message payload carries its link (chain.py).

A payload is the record without ``seq`` (jsproto.py), because the server assigns the
stream sequence. Its *record line* puts the seq back in front: ``{"seq":N,`` followed by
the payload after its ``{``, which is byte for byte the FileLog record of the same event
(without ``more``). The payload's ``chain`` member (just before ``crc``) is the FileLog
chain value of that line: the 16-byte BLAKE2b of the previous record's chain value and
the line up to its ``,"chain":``. So the link commits to the seq as well, and
``chain.Walk`` checks a stream exactly as it checks segment files.

The appender can only know seq N before the server stores the message if it pins the
stream's last seq: it links from the record at seq L and publishes with
``Nats-Expected-Last-Sequence: L`` (jsappend.py). Two appenders that linked from the same
L cannot both be stored, so the chain never forks; the loser links again and retries.

The server's time stamp of a message (the stored event's ``ts``) is not in the payload
and so not in the chain: it is the server's own record of the message.
"""

from __future__ import annotations

import zlib

from . import chain
from .envelope import CRC_SEP

_CHAIN_MEMBER = b'%s,"chain":"%s"'


def line_of(seq: int, payload: bytes) -> bytes:
    """The record line (no newline) of ``payload`` stored at ``seq``; its crc is the
    payload's, so only chain checks (which stop before ``,"chain":``) may use it as is."""
    return b'{"seq":%d,%s' % (seq, payload[1:])


def full_line(seq: int, payload: bytes) -> bytes:
    """The record line of ``payload`` at ``seq`` with its own crc and newline (what
    ``redaction.redact_line`` takes)."""
    head = line_of(seq, payload)
    head = head[: head.rfind(CRC_SEP)]
    return head + b',"crc":%d}\n' % zlib.crc32(head)


def payload_of(line: bytes) -> bytes:
    """Inverse of ``full_line``: the payload of a record line, its crc recomputed."""
    body = line.rstrip(b"\n")
    i = body.index(b",", 7)  # after {"seq":N
    head = b"{" + body[i + 1 : body.rfind(CRC_SEP)]
    return head + b',"crc":%d}' % zlib.crc32(head)


def link_payloads(payloads: list[bytes], first: int, prev: bytes) -> tuple[list[bytes], bytes]:
    """``payloads`` (unchained, crc last) chained from ``prev`` as seqs ``first``, …:
    each gains its ``chain`` member and a new crc. Returns them and the last chain value."""
    out = []
    for i, p in enumerate(payloads):
        head = p[: p.rfind(CRC_SEP)]
        prev = chain.link(prev, b'{"seq":%d,%s' % (first + i, head[1:]))
        head = _CHAIN_MEMBER % (head, prev)
        out.append(head + b',"crc":%d}' % zlib.crc32(head))
    return out, prev


def value_of(payload: bytes) -> bytes:
    """A payload's stored chain value; the genesis value when it has none (a record
    written before the chain: the next record links from the start)."""
    parts = chain.stored(payload)
    return parts[1] if parts is not None else chain.GENESIS
