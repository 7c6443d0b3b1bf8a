"""The read path of JetStreamLog: last seq, versions, reads and follow.

``read`` pipelines Direct Get batches (any replica may answer; a batch that stops short
is asked again), ``follow`` runs an ordered push consumer from a seq, and both hand out
an atomic batch whole (see ``JsReader._read_raw``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from collections.abc import Iterator
from typing import Any

from nats.js.api import ConsumerConfig, DeliverPolicy

from swarmlog.envelope import StoredEvent
from swarmlog.errors import LogUnavailable
from swarmlog.jetstream.client import Raw
from swarmlog.jetstream.core import JsCore, StreamCorruption
from swarmlog.jetstream.loop import wait
from swarmlog.jetstream.proto import (
    H_BATCH_COMMIT,
    H_BATCH_ID,
    MAX_BATCH,
    ApiError,
    ack_ns,
    ns_ts,
    parse_reply,
)

SYNC_READ = 64
"""Most messages a read asks for on the caller's own connection (syncpath/): a short
read (a follower's refresh) saves the loop hop; a long one pipelines on the loop."""


class JsReader(JsCore):
    """Reading and following the stream (the append path reads its appends back too)."""

    # ------------------------------------------------------------------ reading

    @property
    def last_seq(self) -> int:
        fast = self._fast  # asked on the caller's thread where it can (syncpath/fast.py)
        if fast is not None and (data := fast.call(f"$JS.API.STREAM.INFO.{self.stream}")):
            try:
                return int(parse_reply(data)["state"]["last_seq"])
            except (ApiError, KeyError, TypeError, ValueError):
                pass  # the async client says what is wrong
        return self._run(self._c.last_seq())

    def version(self, key: str) -> int:
        return self._run(self._version(key))

    async def _version(self, key: str) -> int:
        """The seq of the last record on ``key``'s subject, erased ones included (the
        server forgets an erased message's subject; its redaction record remembers)."""
        subject = self.subjects.key(key)
        have, _ = await asyncio.gather(self._c.last_on_subject(subject), self._side.refresh())
        return max(have, self._side.by_key.get(key, 0))

    def read(self, from_seq: int = 1, to_seq: int | None = None) -> Iterator[StoredEvent]:
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
            if n <= SYNC_READ and self._fast is not None:  # a short read: no loop hop
                raws = self._fast.direct(self.stream, start, n)
                if raws is not None:
                    done: concurrent.futures.Future[list[Raw]] = concurrent.futures.Future()
                    done.set_result(raws)
                    return done
            return self._lt.submit(self._c.direct_batch(start, n))

        fut = fetch(nxt)
        while nxt <= end:
            raws = self._filled(wait(fut, self.timeout + 1, "read"), nxt, end)
            if closing and (shut := _batch_end(raws)) is not None:
                raws, end, closing = raws[: shut + 1], raws[shut].seq, False
            if not raws:  # a replica behind the leader, or an erasure not yet loaded
                if self._run(self._side.refresh()):
                    continue
                if time.monotonic() > deadline:
                    raise LogUnavailable(f"stream {self.stream}: seq {nxt} cannot be read")
                time.sleep(0.01)
                fut = fetch(nxt)
                continue
            nxt = raws[-1].seq + 1
            if nxt > end and _mid_batch(raws[-1]) and end < limit:
                end, closing = min(limit, nxt + MAX_BATCH - 1), True  # its rest is committed
            deadline = time.monotonic() + 2 * self.timeout
            if nxt <= end:
                fut = fetch(nxt)
            yield raws

    def _filled(self, raws: list[Raw], nxt: int, end: int) -> list[Raw]:
        """The messages of ``raws`` up to ``end``, from ``nxt`` on with no seq left out: an
        erased seq gets its redacted record (side.py) in its place, and so do erased seqs
        right after the last message (a hole nothing stands in for is StreamCorruption).
        Empty when nothing is known at ``nxt`` yet."""
        side = self._side
        if not side.by_seq and (not raws or raws[-1].seq - raws[0].seq == len(raws) - 1):
            if raws and raws[0].seq != nxt:
                self._stand_in(nxt)  # refreshes; raises if nothing stands in for it
                return self._filled(raws, nxt, end)
            return [r for r in raws if r.seq <= end]
        out: list[Raw] = []
        s = nxt
        for r in raws:
            if r.seq > end:
                break
            while s < r.seq:
                out.append(self._stand_in(s))
                s += 1
            if r.seq == s:
                out.append(r)
                s += 1
        while s <= end and (stand := side.get(s)) is not None:
            out.append(stand)
            s += 1
        return out

    def _stand_in(self, seq: int) -> Raw:
        """The redacted record of erased ``seq`` (loading new ones if needed)."""
        stand = self._side.get(seq)
        if stand is None:
            self._run(self._side.refresh())
            stand = self._side.get(seq)
        if stand is None:
            raise StreamCorruption(
                self.stream, seq, "missing from the stream (deleted, and no redaction record)"
            )
        return stand

    def follow(
        self, from_seq: int = 1, timeout: float | None = None
    ) -> Iterator[StoredEvent]:
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
                if not raws and self.last_seq >= nxt:
                    # the consumer skips erased messages: the records standing in for
                    # them at the end of the stream come from a read
                    for chunk in self._read_raw(nxt, None):
                        for m in chunk:
                            yield self._decode(m)
                            nxt = m.seq + 1
                    if timeout is not None:
                        deadline = time.monotonic() + timeout
                    continue
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
