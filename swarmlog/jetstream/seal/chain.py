"""The hash chain on JetStream: each record's chain value, kept in a seal stream.

A record's *line* is its payload with the seq put back in front (``{"seq":N,`` then the
payload after its ``{``): byte for byte the FileLog record of the same event, without
``more`` and ``chain``. Its chain value is the FileLog one (chain.py): the 16-byte BLAKE2b
of the previous record's chain value and the line up to ``,"crc":``. So the value commits
to the seq, the bytes and, through the previous value, to every record before it.

Where the values live: the server assigns a message's seq only when it stores it, so a
publisher could put the value into its payload only by pinning the stream's last seq
(``Nats-Expected-Last-Sequence``) on every append, which makes concurrent appenders take
turns (measured: 3x slower with 6 writers). Instead the values go to the *seal stream*
``S-chain`` (subject ``swarmlog-chain.S``): each message (a seal) holds the values of a run
of consecutive records, ``{"first": k, "values": [hex, …], "by": sealer}``. Seals are published with
``Nats-Expected-Last-Sequence`` on the seal stream, so two sealers cannot both extend it
from the same point: the chain never forks, and a sealer that lost reads the new tip and
goes on from there. The seal stream denies deletes and purges. A seal that does not hold
(forged, where anybody may publish on the seal stream) is skipped when a sealer looks for
the tip (``_tip_at``) and by ``verify`` (swarmlog/jetstream/verify.py).

Who seals: the one handle that holds the seal lease (lease.py, role.py) links
every record, whoever appended it, in the background; the other appending handles stand
by and take over when it stops. ``redact`` seals everything first (an erased record's value
cannot be computed afterwards: its redaction record keeps it, redaction.py), and
``verify`` (which recomputes every value and names the first seq that does not match)
waits for its own handle's sealing and notes records not sealed yet.

The server's time stamp of a message (the stored event's ``ts``) is not in the line: it is
the server's own record of the message.
"""

from __future__ import annotations

import asyncio
import base64
import re
import zlib
from typing import TYPE_CHECKING, Any

import orjson

from swarmlog import chain
from swarmlog.envelope import CRC_SEP
from swarmlog.errors import SwarmlogError
from swarmlog.jetstream.proto import (
    CONFLICT_CODES,
    ERR_NO_MESSAGE,
    ERR_STREAM_NOT_FOUND,
    H_EXP_LAST_SEQ,
    ApiError,
    companion_config,
    parse_reply,
)
from swarmlog.redaction import marker

if TYPE_CHECKING:
    from swarmlog.jetstream.client import JsClient
    from swarmlog.jetstream.side import SideStore

PREFIX = "swarmlog-chain"
SEAL_MAX = 1000
"""Most values in one seal."""
_WRONG_LAST = re.compile(r"wrong last sequence: (\d+)")


def seal_name(stream: str) -> str:
    """The seal stream of ``stream``."""
    return f"{stream}-chain"


def seal_config(stream: str, replicas: int) -> dict[str, Any]:
    """The seal stream's configuration: nothing ages out, nothing can be removed."""
    return companion_config(
        seal_name(stream), [f"{PREFIX}.{stream}"], replicas, {"swarmlog.chain-of": stream}
    )


# ---------------------------------------------------------------- values


def line_of(seq: int, payload: bytes) -> bytes:
    """The record line (no newline) of ``payload`` stored at ``seq``; its crc is the
    payload's, so only chain checks (which stop before ``,"crc":``) may use it as is."""
    return b'{"seq":%d,%s' % (seq, payload[1:])


def record_head(seq: int, payload: bytes) -> tuple[bytes, bytes | None]:
    """The bytes a record's link hashes and the ``chain`` member it carries, if any (a
    redaction record does: the value of the original it stands in for)."""
    line = line_of(seq, payload)
    head = line[: line.rfind(CRC_SEP)]
    i = head.rfind(chain.SEP)
    if i < 0 or len(head) != i + len(chain.SEP) + chain.HEX_LEN + 1 or not head.endswith(b'"'):
        return head, None
    return head[:i], head[i + len(chain.SEP) : -1]


def value_of(prev: bytes, seq: int, payload: bytes) -> bytes:
    """The chain value of the record ``payload`` at ``seq`` after value ``prev``. A
    redaction record's is the value it carries, when its marker names that same value."""
    head, carried = record_head(seq, payload)
    if carried is not None:
        m = marker(head)
        if m is not None and m[1] == carried:
            return carried
    return chain.link(prev, head)


def full_line(seq: int, payload: bytes, value: bytes) -> bytes:
    """The record line of ``payload`` at ``seq`` with ``value`` as its ``chain`` member, its
    own crc and a newline (what ``redaction.redact_line`` takes)."""
    head, _ = record_head(seq, payload)
    head += b'%s%s"' % (chain.SEP, value)
    return head + b',"crc":%d}\n' % zlib.crc32(head)


def payload_of(line: bytes) -> bytes:
    """The payload of a record line: seq taken out, crc recomputed."""
    body = line.rstrip(b"\n")
    i = body.index(b",", 7)  # after {"seq":N
    head = b"{" + body[i + 1 : body.rfind(CRC_SEP)]
    return head + b',"crc":%d}' % zlib.crc32(head)


# ---------------------------------------------------------------- sealing


class Sealer:
    """Extends one log's seal stream (runs on the log's loop thread)."""

    def __init__(self, c: JsClient, stream: str, replicas: int, side: SideStore) -> None:
        self.c = c
        self.stream = stream
        self.name = seal_name(stream)
        self.subject = f"{PREFIX}.{stream}"
        self.replicas = replicas
        self.side = side
        self.tip: tuple[int, bytes, int] | None = None
        """(last sealed record seq, its value, the seal stream's last seq) as last seen."""
        self.known: dict[int, bytes] = {}
        """Payloads of records this handle appended and has not sealed yet."""
        self.skipped: set[int] = set()
        """Seals found not to hold when looking for the tip (forged; see ``_tip_at``)."""
        self.by = ""
        """Who seals (the seal lease's token of this handle, lease.py): kept in each
        seal, so that who sealed what can be audited; readers ignore it."""

    @property
    def tip_seq(self) -> int:
        """The last sealed record seq as last seen (0 before the tip was read)."""
        return self.tip[0] if self.tip is not None else 0

    async def seal(self, upto: int) -> None:
        """Make the seal stream cover records 1..``upto`` (all stored)."""
        while True:
            if self.tip is None:
                self.tip = await self.fetch_tip()
            k, v, last = self.tip
            if k >= upto:
                self.known = {q: p for q, p in self.known.items() if q > k}
                return
            hi = min(upto, k + SEAL_MAX)
            payloads = await self._payloads(k + 1, hi)
            values = []
            for q in range(k + 1, hi + 1):
                v = value_of(v, q, payloads[q])
                values.append(v.decode())
            data = orjson.dumps({"first": k + 1, "values": values, "by": self.by})
            msg = await self.c.request(self.subject, data, {H_EXP_LAST_SEQ: str(last)})
            try:
                ack = parse_reply(msg.data)
            except ApiError as e:
                if e.err_code not in CONFLICT_CODES:
                    raise
                # another sealer came first: go on from its tip (the refusal names it)
                m = _WRONG_LAST.search(e.description)
                self.tip = await self._tip_at(int(m.group(1))) if m else None
                continue
            self.tip = (hi, v, int(ack["seq"]))

    async def fetch_tip(self) -> tuple[int, bytes, int]:
        """The seal stream's tip (creating the stream if it does not exist yet)."""
        info = await self._info()
        if info is None:
            await self.c.create_stream(seal_config(self.stream, self.replicas))
            return 0, chain.GENESIS, 0
        return await self._tip_at(int(info["state"]["last_seq"]))

    async def last_seal(self) -> tuple[int, str] | None:
        """The last record seq the newest seal claims to cover and who sealed it ((0, '')
        : no seal; None: the newest is not a seal), read as one message and not checked
        against the records (``fetch_tip`` checks): a cheap look for a handle waiting
        for the holder's seals."""
        try:
            resp = await self.c.api(f"STREAM.MSG.GET.{self.name}", {"last_by_subj": self.subject})
        except ApiError as e:
            if e.err_code in (ERR_STREAM_NOT_FOUND, ERR_NO_MESSAGE) or e.code == 404:
                return 0, ""
            raise
        try:
            data = base64.b64decode(resp["message"].get("data", ""))
            first, values = _parse(data)
            by = orjson.loads(data).get("by")
        except (ValueError, KeyError, TypeError, AttributeError, orjson.JSONDecodeError):
            return None  # not a seal (forged): the full look skips it
        return first + len(values) - 1, by if isinstance(by, str) else ""

    async def _info(self) -> dict[str, Any] | None:
        """The seal stream's info, None if it does not exist; SwarmlogError if a stream of
        that name is something else (another swarm named ``S-chain``)."""
        try:
            info = await self.c.api(f"STREAM.INFO.{self.name}")
        except ApiError as e:
            if e.err_code == ERR_STREAM_NOT_FOUND or e.code == 404:
                return None
            raise
        if (info["config"].get("metadata") or {}).get("swarmlog.chain-of") != self.stream:
            raise SwarmlogError(
                f"stream {self.name} exists but is not the seal stream of {self.stream}"
            )
        return info

    async def _tip_at(self, last: int) -> tuple[int, bytes, int]:
        """The tip when the seal stream's last seal is ``last``: the end of the newest seal
        that holds. A seal that does not parse, covers records not stored, or whose values
        do not follow from the records is skipped (forged: with per-agent users nobody but
        the sealer and the operator may publish one, elsewhere anybody may), and the next
        seal is still published after ``last``, so it covers the same records again."""
        s = last
        stored: int | None = None
        while s > 0:
            got = await self._seal_or_none(s)
            if got is not None:
                first, values = got
                end = first + len(values) - 1
                if stored is None:
                    stored = await self.c.last_seq()
                if end <= stored and await self._holds(s, first, values):
                    return end, values[-1], last
            self.skipped.add(s)
            s -= 1
        return 0, chain.GENESIS, last

    async def _seal_or_none(self, seal_seq: int) -> tuple[int, list[bytes]] | None:
        try:
            return await self.get(seal_seq)
        except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            return None

    async def _holds(self, seal_seq: int, first: int, values: list[bytes]) -> bool:
        """Whether seal ``seal_seq``'s values follow from the records they cover (its first
        value from the seal before, when that one ends right before it)."""
        if not values or first < 1:
            return False
        prev: bytes | None = chain.GENESIS if first == 1 else None
        if prev is None and seal_seq > 1:
            before = await self._seal_or_none(seal_seq - 1)
            if before is not None and before[0] + len(before[1]) == first:
                prev = before[1][-1]
        payloads = await self._payloads(first, first + len(values) - 1)
        for i, v in enumerate(values):
            if prev is not None and value_of(prev, first + i, payloads[first + i]) != v:
                return False
            prev = v
        return True

    async def seals(self) -> tuple[list[tuple[int, int, list[bytes]]], int]:
        """Every seal in order as (seal seq, first record, values), and how many seals do
        not parse (what ``verify`` walks, swarmlog/jetstream/verify.py)."""
        out: list[tuple[int, int, list[bytes]]] = []
        bad = 0
        if await self._info() is None:
            return out, bad  # nothing sealed yet
        nxt = 1
        while raws := await self.c.direct_batch(nxt, 256, stream=self.name):
            for r in raws:
                try:
                    first, vals = _parse(r.data)
                    out.append((r.seq, first, vals))
                except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
                    bad += 1
                nxt = r.seq + 1
        return out, bad

    async def get(self, seal_seq: int) -> tuple[int, list[bytes]]:
        """The seal at ``seal_seq``: its first record seq and values."""
        resp = await self.c.api(f"STREAM.MSG.GET.{self.name}", {"seq": seal_seq})
        return _parse(base64.b64decode(resp["message"].get("data", "")))

    async def values(self) -> dict[int, bytes]:
        """Every sealed value by record seq (what ``verify`` compares against)."""
        out: dict[int, bytes] = {}
        if await self._info() is None:
            return out  # nothing sealed yet
        nxt = 1
        while True:
            raws = await self.c.direct_batch(nxt, 256, stream=self.name)
            if not raws:
                return out
            for r in raws:
                nxt = r.seq + 1
                try:
                    first, vals = _parse(r.data)
                except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
                    continue  # not a seal (forged): verify reports it
                for i, v in enumerate(vals):
                    out.setdefault(first + i, v)

    async def _payloads(self, lo: int, hi: int) -> dict[int, bytes]:
        """Payloads of records ``lo..hi`` (appended here, else read; erased ones'
        redaction records)."""
        out = {q: self.known[q] for q in range(lo, hi + 1) if q in self.known}
        nxt = lo
        for _ in range(100):
            while nxt <= hi and nxt in out:
                nxt += 1
            if nxt > hi:
                return out
            for q, data in await self.c.direct_payloads(nxt, hi - nxt + 1):
                if q <= hi:
                    out.setdefault(q, data)
            while nxt <= hi and nxt not in out:
                stand = self.side.get(nxt)
                if stand is None:
                    await self.side.refresh()
                    stand = self.side.get(nxt)
                if stand is None:
                    break  # a replica behind the leader: ask again
                out[nxt] = stand.data
                nxt += 1
            await asyncio.sleep(0.01 if nxt <= hi and nxt not in out else 0)
        raise LookupError(f"record {nxt} of stream {self.stream} cannot be read for sealing")


def _parse(data: bytes) -> tuple[int, list[bytes]]:
    d = orjson.loads(data)
    values = d["values"]
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise TypeError("seal values are not a list of strings")
    return int(d["first"]), [v.encode() for v in values]


__all__ = [
    "Sealer",
    "full_line",
    "line_of",
    "payload_of",
    "record_head",
    "seal_config",
    "seal_name",
    "value_of",
]
