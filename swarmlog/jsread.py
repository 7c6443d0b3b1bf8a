"""The read path of JetStreamLog: last seq, versions, reads and follow.

``read`` pipelines Direct Get batches (any replica may answer; a batch that stops short
is asked again), ``follow`` runs an ordered push consumer from a seq, and both hand out
an atomic batch whole (see ``JsReader._read_raw``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import time
from collections.abc import Iterator
from typing import Any

from nats.js.api import ConsumerConfig, DeliverPolicy

from .envelope import Event
from .errors import LogUnavailable
from .jsclient import Raw
from .jscore import JsCore, StreamCorruption
from .jsloop import wait
from .jsproto import H_BATCH_COMMIT, H_BATCH_ID, MAX_BATCH, ack_ns, ns_ts


class JsReader(JsCore):
    """Reading and following the stream (the append path reads its appends back too)."""

    # ------------------------------------------------------------------ reading

    @property
    def last_seq(self) -> int:
        return self._run(self._c.last_seq())

    def version(self, key: str) -> int:
        return self._run(self._c.last_on_subject(self.subjects.key(key)))

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[Event]:
        for raws in self._read_raw(from_seq, to_seq):
            for r in raws:
                yield self._decode(r)

    def read_batches(
        self, from_seq: int = 1, to_seq: int | None = None
    ) -> Iterator[list[dict[str, Any]]]:
        """Stored mappings a Direct Get batch at a time (see ``Log.read_batches``)."""
        for raws in self._read_raw(from_seq, to_seq):
            yield [self._decode(r).envelope for r in raws]

    def _read_raw(
        self, from_seq: int, to_seq: int | None, clip: bool = True
    ) -> Iterator[list[Raw]]:
        """Messages ``from_seq..to_seq`` (clipped to the leader's last seq unless ``clip``
        is False: ``to_seq`` is known stored) in batches.

        The next Direct Get batch is requested before the current one is handed out, so
        transfer and decoding overlap. A replica may lag behind the leader: a batch that
        stops short is asked again (bounded, then LogUnavailable), so a read sees every
        committed append. The server makes an atomic batch's messages visible one by one,
        so the last seq seen may fall inside a batch: a read that would end there goes on
        to the batch's commit message (up to ``to_seq``), never ending mid-batch.
        """
        nxt = max(1, from_seq)
        limit = to_seq if to_seq is not None else 2**63
        # unclipped: the caller knows these seqs exist (an append reading itself back)
        end = to_seq if to_seq is not None and not clip else min(limit, self.last_seq)
        closing = False  # reading past the last seq seen, to the end of a batch
        if nxt > end:
            return
        deadline = time.monotonic() + 2 * self.timeout

        def fetch(start: int) -> concurrent.futures.Future[list[Raw]]:
            n = min(self.read_batch, end - start + 1)
            return self._lt.submit(self._c.direct_batch(start, n))

        fut = fetch(nxt)
        while nxt <= end:
            raws = wait(fut, self.timeout + 1, "read")
            raws = [r for r in raws if r.seq <= end]
            if closing and (shut := _batch_end(raws)) is not None:
                raws, end, closing = raws[: shut + 1], raws[shut].seq, False
            if not raws or raws[0].seq != nxt:
                if raws and raws[0].seq > nxt:
                    raise StreamCorruption(self.stream, nxt, "missing from the stream (a gap)")
                if time.monotonic() > deadline:
                    raise LogUnavailable(f"stream {self.stream}: seq {nxt} cannot be read")
                time.sleep(0.01)
                fut = fetch(nxt)
                continue
            for a, b in itertools.pairwise(raws):
                if b.seq != a.seq + 1:
                    raise StreamCorruption(self.stream, a.seq + 1, "missing (a gap)")
            nxt = raws[-1].seq + 1
            if nxt > end and _mid_batch(raws[-1]) and end < limit:
                end, closing = min(limit, nxt + MAX_BATCH - 1), True  # its rest is committed
            deadline = time.monotonic() + 2 * self.timeout
            if nxt <= end:
                fut = fetch(nxt)
            yield raws

    def follow(self, from_seq: int = 1, timeout: float | None = None) -> Iterator[Event]:
        """Events from ``from_seq`` on via an ordered push consumer, each once, in order."""
        nxt = max(1, from_seq)
        sub = self._run(self._follow_open(nxt), 2 * self.timeout + 1, "follow")
        try:
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = 1.0 if deadline is None else min(1.0, deadline - time.monotonic())
                if left <= 0:
                    return
                raws = self._run(self._follow_next(sub, left), left + self.timeout + 1)
                got = False
                for r in raws:
                    if r.seq < nxt:
                        continue  # redelivered after a consumer reset
                    if r.seq > nxt:  # should not happen with an ordered consumer: fill it
                        for missing in self._read_raw(nxt, r.seq - 1):
                            for m in missing:
                                yield self._decode(m)
                    yield self._decode(r)
                    nxt = r.seq + 1
                    got = True
                if got and timeout is not None:
                    deadline = time.monotonic() + timeout
        finally:
            if not self._closed and self._lt.alive:
                self._lt.submit(_unsubscribe(sub))

    async def _follow_open(self, start: int) -> Any:
        js = self._c.conn.jetstream()
        cfg = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=start)
        try:
            return await js.subscribe(
                f"{self.prefix}.>", stream=self.stream, ordered_consumer=True, config=cfg
            )
        except Exception as e:
            raise LogUnavailable(f"cannot follow stream {self.stream}: {e}") from None

    async def _follow_next(self, sub: Any, wait_s: float, most: int = 1000) -> list[Raw]:
        """The next messages: wait up to ``wait_s`` for one, then take what is pending."""
        import nats.errors

        out: list[Raw] = []
        try:
            msg = await sub.next_msg(timeout=wait_s)
        except nats.errors.TimeoutError:
            return out
        out.append(_raw(msg))
        while len(out) < most and sub.pending_msgs > 0:
            out.append(_raw(await sub.next_msg(timeout=1.0)))
        return out

    def wait_for_change(self, timeout: float) -> bool:
        """Block until an event is appended (after the first call) or ``timeout`` passes."""
        if self._watch is None:
            self._watch = self._run(self._watch_open(), 2 * self.timeout + 1, "watch")
        raws = self._run(self._follow_next(self._watch, timeout), timeout + self.timeout + 1)
        return bool(raws)

    async def _watch_open(self) -> Any:
        js = self._c.conn.jetstream()
        cfg = ConsumerConfig(deliver_policy=DeliverPolicy.NEW, headers_only=True)
        return await js.subscribe(
            f"{self.prefix}.>", stream=self.stream, ordered_consumer=True, config=cfg
        )

    # ------------------------------------------------------------------ verify


def _mid_batch(r: Raw) -> bool:
    """True if ``r`` is a message of an atomic batch other than its last (commit) one."""
    return H_BATCH_ID in r.headers and H_BATCH_COMMIT not in r.headers


def _batch_end(raws: list[Raw]) -> int | None:
    """Index of the first message in ``raws`` that ends a batch (or is none's), if any."""
    return next((i for i, r in enumerate(raws) if not _mid_batch(r)), None)


def _raw(msg: Any) -> Raw:
    return Raw(msg.metadata.sequence.stream, msg.subject, msg.data, {}, ns_ts(ack_ns(msg.reply)))


async def _unsubscribe(sub: Any) -> None:
    try:
        await asyncio.wait_for(sub.unsubscribe(), 2.0)
    except Exception:
        pass
