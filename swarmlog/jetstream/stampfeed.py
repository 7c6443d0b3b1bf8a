"""The server's time of fresh appends, pushed by the server instead of asked for.

An append needs the time the server stored its message at (the stored event's ``ts``,
DESIGN 2), which the PubAck does not carry. Asking for it (a Direct Get per append,
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

from swarmlog.jetstream.proto import Prepared, ack_ns, ns_ts

if TYPE_CHECKING:
    from swarmlog.jetstream.client import JsClient
    from swarmlog.jetstream.subjects import Subjects

WAIT = 0.5
"""Seconds an append waits for a delivery before it reads the message back instead."""
MAX_FEEDS = 8
"""Most consumers per handle (agents written as beyond these are read back)."""
KEEP = 4096
"""Most unclaimed deliveries kept (other handles' appends as the same agent)."""


class StampFeed:
    """Stored times of this handle's appends as the server pushes them (loop thread)."""

    def __init__(self, c: JsClient, stream: str, subjects: Subjects) -> None:
        self.c = c
        self.stream = stream
        self.subjects = subjects
        self.subs: dict[str, Any] = {}
        self.seen: dict[int, float] = {}
        self.waiters: dict[int, asyncio.Future[float]] = {}
        self.broken = False
        self.asked: set[str] = set()

    def _filter(self, p: Prepared) -> str:
        if self.subjects.per_agent:
            return self.subjects.agent(str(p.d["agent"]))
        return f"{self.subjects.prefix}.>"

    async def ensure(self, ps: list[Prepared]) -> None:
        """Have a consumer on the subjects of ``ps`` (before publishing them)."""
        if self.broken:
            return
        for f in {self._filter(p) for p in ps}:
            if f in self.subs or len(self.subs) >= MAX_FEEDS:
                continue
            if f not in self.asked:  # a one-shot writer (a CLI append) makes no consumer
                self.asked.add(f)
                continue
            try:
                self.subs[f] = await asyncio.wait_for(self._subscribe(f), self.c.timeout)
            except Exception:  # e.g. a user without consumer permissions: read back
                self.broken = True
                return

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
        return not self.broken and self._filter(p) in self.subs

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


__all__ = ["StampFeed"]
