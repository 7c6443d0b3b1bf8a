"""Redaction records of a JetStream log: the side stream that stands in for erased messages.

JetStream cannot rewrite a stored message, so ``JetStreamLog.redact`` (redact.py)
stores the redacted record here first and then deletes the original with erase. Readers
find a deleted seq here and hand out the redacted record in its place, so every seq is
still served, in order.

The side stream of stream ``S`` is ``S-redact`` (subjects ``swarmlog-redact.S.<seq>``,
one message per redaction of a main-stream seq; the newest one for a seq counts, older
ones are erased). Each message's data is the redacted payload (same id, same ``chain``
value as the original, the ``redacted`` marker of redaction.py, crc recomputed) and its
headers keep what the erased message's metadata said: its subject, its stored time, and
whether it was a non-final message of an atomic batch (readers keep batches whole).

Versions: the server forgets an erased message's subject, so for a key whose last record
was erased its own ``Nats-Expected-Last-Subject-Sequence`` check sees the key's record
before. ``version`` takes the redaction records into account, and an append expecting a
key this handle knows to have an erased last record checks the versions itself under a
stream-wide fence (append.py). One race stays open: a caller expecting the version from
before a record that was appended *and* erased while it held that version is not refused.
"""

from __future__ import annotations

from typing import Any

import orjson

from swarmlog.errors import SwarmlogError
from swarmlog.jetstream.client import JsClient, Raw
from swarmlog.jetstream.proto import (
    ERR_NO_MESSAGE,
    ERR_STREAM_NOT_FOUND,
    H_BATCH_ID,
    ApiError,
    companion_config,
    parse_reply,
)

PREFIX = "swarmlog-redact"
H_SEQ = "Swarmlog-Seq"
H_SUBJECT = "Swarmlog-Subject"
H_TIME = "Swarmlog-Time"
"""The erased message's stored time as the log hands it out (``repr`` of the float)."""
H_MID = "Swarmlog-Mid-Batch"
META_OF = "swarmlog.redactions-of"


def side_name(stream: str) -> str:
    """The side stream of ``stream``."""
    return f"{stream}-redact"


def side_subject(stream: str, seq: int) -> str:
    """The subject of the redaction record of ``seq``."""
    return f"{PREFIX}.{stream}.{seq}"


def side_config(stream: str, replicas: int) -> dict[str, Any]:
    """The side stream's configuration: file storage, the log's replicas, nothing ages out;
    deletes allowed (a record replaced by a later redaction is erased), purges not."""
    return companion_config(
        side_name(stream), [f"{PREFIX}.{stream}.*"], replicas, {META_OF: stream}, deny_delete=False
    )


class SideStore:
    """What one log handle knows of its stream's redaction records (a cache, refreshed
    when a reader meets a seq it cannot find, and before every redaction)."""

    def __init__(self, c: JsClient, stream: str, replicas: int) -> None:
        self.c = c
        self.stream = stream
        self.name = side_name(stream)
        self.replicas = replicas
        self.by_seq: dict[int, tuple[int, Raw]] = {}
        """Main-stream seq -> (side seq, the redacted record as a message of the log)."""
        self.stale: dict[int, list[int]] = {}
        """Main-stream seq -> side seqs of superseded records still stored (to erase)."""
        self.by_key: dict[str, int] = {}
        """Event key -> highest redacted seq carrying it (versions, read.py)."""
        self.loaded = 0

    def touches(self, expect: dict[str, int]) -> bool:
        """Whether a key of ``expect`` had a record erased (as far as this handle knows):
        the server's own check of its version would then miss that record."""
        return bool(self.by_key) and any(k in self.by_key for k in expect)

    def get(self, seq: int) -> Raw | None:
        """The redacted record standing in for ``seq``, None if none is known."""
        hit = self.by_seq.get(seq)
        return hit[1] if hit is not None else None

    async def refresh(self) -> bool:
        """Load redaction records stored since the last refresh; True if there were any."""
        try:
            info = await self.c.api(f"STREAM.INFO.{self.name}")
        except ApiError as e:
            if e.err_code == ERR_STREAM_NOT_FOUND or e.code == 404:
                return False
            raise
        if (info["config"].get("metadata") or {}).get(META_OF) != self.stream:
            raise SwarmlogError(
                f"stream {self.name} exists but holds no redactions of {self.stream}"
            )
        last = int(info["state"]["last_seq"])
        got = False
        while self.loaded < last:
            raws = await self.c.direct_batch(self.loaded + 1, 1000, stream=self.name)
            if not raws:
                break
            for r in raws:
                self._add(r)
                self.loaded = r.seq
            got = True
        return got

    def _add(self, r: Raw) -> None:
        seq = int(r.headers[H_SEQ])
        subject = r.headers.get(H_SUBJECT, "")
        ts = float(r.headers.get(H_TIME, "0"))
        hdrs = {H_BATCH_ID: "redacted"} if r.headers.get(H_MID) else {}
        old = self.by_seq.get(seq)
        if old is not None:
            self.stale.setdefault(seq, []).append(old[0])
        self.by_seq[seq] = (r.seq, Raw(seq, subject, r.data, hdrs, ts))
        key = orjson.loads(r.data).get("key")
        if isinstance(key, str) and seq > self.by_key.get(key, 0):
            self.by_key[key] = seq

    async def ensure(self) -> None:
        """Create the side stream if it does not exist yet."""
        try:
            await self.c.api(f"STREAM.INFO.{self.name}")
            return
        except ApiError as e:
            if not (e.err_code == ERR_STREAM_NOT_FOUND or e.code == 404):
                raise
        await self.c.create_stream(side_config(self.stream, self.replicas))

    async def put(self, orig: Raw, payload: bytes) -> None:
        """Store the redacted record ``payload`` for the message ``orig`` (acknowledged)."""
        hdrs = {
            H_SEQ: str(orig.seq),
            H_SUBJECT: orig.subject,
            H_TIME: repr(orig.ts),
        }
        if H_BATCH_ID in orig.headers and "Nats-Batch-Commit" not in orig.headers:
            hdrs[H_MID] = "1"
        msg = await self.c.request(side_subject(self.stream, orig.seq), payload, hdrs)
        parse_reply(msg.data)

    async def erase_stale(self, seq: int) -> int:
        """Erase the superseded redaction records of ``seq``; how many."""
        n = 0
        for side_seq in self.stale.pop(seq, []):
            await erase(self.c, self.name, side_seq)
            n += 1
        return n


async def erase(c: JsClient, stream: str, seq: int) -> bool:
    """Delete message ``seq`` of ``stream`` with erase (the server overwrites its stored
    bytes with random data before it forgets it); False if it was already gone."""
    try:
        await c.api(f"STREAM.MSG.DELETE.{stream}", {"seq": seq, "no_erase": False})
    except ApiError as e:
        if e.err_code == ERR_NO_MESSAGE or e.code == 404:
            return False
        raise
    return True
