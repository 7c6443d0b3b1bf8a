"""The server's time of fresh appends, pushed by the server instead of asked for.

A stream created (or updated by ``swarmlog init --url``) by this version republishes the
headers of every message it stores (its ``republish`` setting, ``stamp_config``) on
``swarmlog-stamp.<STREAM>.<subject tail>``, headers only: ``Nats-Sequence`` and
``Nats-Time-Stamp``. The server sends that copy before the PubAck on the same
connection, so a handle that subscribes to its agents' stamp subjects (one plain
subscription each, made before its first publish on them: no API request) has the time
of each append in hand when the PubAck arrives: no second round trip, no consumer.
Streams without that setting use the consumer below.

An append needs the time the server stored its message at (the stored event's ``ts``,
docs/design.md §2), which the PubAck does not carry. Asking for it (a Direct Get per append,
readback.py) costs a second round trip. Instead each handle keeps, per agent it writes
as, an ordered *headers-only* push consumer on that agent's subjects, delivering new
messages only: the server pushes the metadata of each message it stores (stream seq and
stored time, in the delivery's ack subject) as it stores it, next to the PubAck, so the
time is there when the PubAck is, without another request. The consumer is made before
the handle's second publish on those subjects (so its messages are all delivered from
then on; a one-shot writer, such as a CLI append, makes none and reads back).

The feed is an optimisation, never the authority on what was stored: a seq whose
delivery does not come within ``WAIT`` seconds (a consumer being reset, a reconnect),
or any failure to make the consumer, falls back to the Direct Get read-back.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from swarmlog._fast import rfc3339_ns
from swarmlog.jetstream.proto import Prepared, ack_ns, ns_ts

if TYPE_CHECKING:
    from swarmlog.jetstream.client import JsClient
    from swarmlog.jetstream.subjects import Subjects

WAIT = 0.5
"""Seconds an append waits for a delivery before it reads the message back instead."""
MAX_FEEDS = 8
"""Most consumers per handle (agents written as beyond these are read back)."""
MAX_STAMPS = 256
"""Most stamp subscriptions per handle (plain subscriptions: cheap for the server)."""
KEEP = 4096
"""Most unclaimed deliveries kept (other handles' appends as the same agent)."""
STAMPS = "swarmlog-stamp"
"""First token of the subjects a stream republishes its messages' headers on."""


def stamp_config(stream: str) -> dict[str, Any]:
    """The stream's ``republish`` setting: every stored message's headers (its seq and
    stored time) on ``swarmlog-stamp.<STREAM>.…``, the same tail as its subject."""
    return {"src": f"swarmlog.{stream}.>", "dest": f"{STAMPS}.{stream}.>", "headers_only": True}


def stamp_filter(agent_filter: str) -> str:
    """The stamp subjects of the events on ``agent_filter`` (``swarmlog.<S>.…``)."""
    return f"{STAMPS}.{agent_filter.partition('.')[2]}"


def stamp_headers(raw: bytes) -> dict[bytes, bytes]:
    """The ``Name: value`` lines of a raw NATS header block (the status line skipped)."""
    out = {}
    for line in raw.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            out[name.strip()] = value.strip()
    return out


class StampFeed:
    """Stored times of this handle's appends as the server pushes them (loop thread)."""

    def __init__(
        self, c: JsClient, stream: str, subjects: Subjects, republished: bool = False
    ) -> None:
        self.c = c
        self.stream = stream
        self.subjects = subjects
        self.republished = republished
        """Whether the stream republishes headers (``stamp_config``): subscribe to them."""
        self._stream_b = stream.encode()
        self.subs: dict[str, Any] = {}
        self.seen: dict[int, float] = {}
        self.waiters: dict[int, asyncio.Future[float]] = {}
        self.broken = False
        self.asked: set[str] = set()

    def filter(self, p: Prepared) -> str:
        """The subjects (a filter) whose stamps tell ``p``'s stored time."""
        if self.subjects.per_agent:
            return self.subjects.agent(str(p.d["agent"]))
        return f"{self.subjects.prefix}.>"

    async def ensure(self, ps: list[Prepared]) -> None:
        """Have a consumer on the subjects of ``ps`` (before publishing them)."""
        if self.broken:
            return
        for f in {self.filter(p) for p in ps}:
            if f in self.subs or len(self.subs) >= (MAX_STAMPS if self.republished else MAX_FEEDS):
                continue
            if self.republished:
                self.subs[f] = await self._stamps(f)
                continue
            if f not in self.asked:  # a one-shot writer (a CLI append) makes no consumer
                self.asked.add(f)
                continue
            try:
                self.subs[f] = await asyncio.wait_for(self._subscribe(f), self.c.timeout)
            except Exception:  # e.g. a user without consumer permissions: read back
                self.broken = True
                return

    async def _stamps(self, f: str) -> Any:
        """A plain subscription to the stamps of ``f``: its SUB goes out before the
        publish that follows it, so the server delivers that publish's stamp. A user
        without the permission (an older authorization block) is refused: read back."""
        subject = stamp_filter(f)
        denied = asyncio.get_running_loop().create_future()
        denied.add_done_callback(lambda _: self._denied())
        self.c._waiters.setdefault(subject.lower(), []).append(denied)
        return await self.c.subscribe_inline(subject, self._on_stamp)

    def _denied(self) -> None:
        self.broken = True
        for w in self.waiters.values():
            if not w.done():
                w.cancel()
        self.waiters.clear()

    def _on_stamp(self, subject: bytes, data: bytes, raw: bytes | None) -> None:
        """A republished header block (on the read loop, before the PubAck after it)."""
        h = stamp_headers(raw or b"")
        try:
            if h.get(b"Nats-Stream") != self._stream_b:
                return
            seq = int(h[b"Nats-Sequence"])
            ts = ns_ts(rfc3339_ns(h[b"Nats-Time-Stamp"].decode("ascii")))
        except (KeyError, ValueError):
            return
        self._got(seq, ts)

    async def _subscribe(self, subject: str) -> Any:
        from nats.js.api import ConsumerConfig, DeliverPolicy

        js = self.c.conn.jetstream()
        cfg = ConsumerConfig(deliver_policy=DeliverPolicy.NEW, headers_only=True)
        return await js.subscribe(
            subject, stream=self.stream, ordered_consumer=True, config=cfg, cb=self._on_msg
        )

    async def _on_msg(self, msg: Any) -> None:
        try:
            seq = int(msg.metadata.sequence.stream)
            ts = ns_ts(ack_ns(msg.reply))
        except Exception:
            return
        self._got(seq, ts)

    def _got(self, seq: int, ts: float) -> None:
        w = self.waiters.pop(seq, None)
        if w is not None:
            if not w.done():
                w.set_result(ts)
            return
        self.seen[seq] = ts
        if len(self.seen) > KEEP:
            for q in sorted(self.seen)[: KEEP // 2]:
                del self.seen[q]

    def covers(self, p: Prepared) -> bool:
        """Whether a consumer delivers ``p``'s message."""
        return not self.broken and self.filter(p) in self.subs

    async def times(self, seqs: list[int]) -> dict[int, float]:
        """Stored times of ``seqs`` as delivered (waiting up to ``WAIT``); some may miss."""
        out: dict[int, float] = {}
        loop = asyncio.get_running_loop()
        futs: dict[int, asyncio.Future[float]] = {}
        for q in seqs:
            ts = self.seen.pop(q, None)
            if ts is not None:
                out[q] = ts
            else:
                futs[q] = self.waiters[q] = loop.create_future()
        if futs:
            await asyncio.wait(futs.values(), timeout=WAIT)
            for q, f in futs.items():
                if f.done() and not f.cancelled():
                    out[q] = f.result()
                else:
                    self.waiters.pop(q, None)
                    f.cancel()
        return out

    async def close(self) -> None:
        for sub in self.subs.values():
            try:
                await asyncio.wait_for(sub.unsubscribe(), 1.0)
            except Exception:
                pass
        self.subs.clear()


__all__ = ["STAMPS", "StampFeed", "stamp_config", "stamp_filter"]
