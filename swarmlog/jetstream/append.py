"""The append path of JetStreamLog: publish, resolve duplicates and conflicts, retry.

An append publishes its events (one message, or one atomic batch) with ``Nats-Msg-Id``
and its expectations as headers; the server decides. What the publisher does with each
answer, and with no answer, is in ``JsAppender._append``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping

from swarmlog import idreuse
from swarmlog.envelope import Event, StoredEvent
from swarmlog.errors import InvalidEvent, LogUnavailable, SwarmlogError, VersionConflict
from swarmlog.jetstream.client import NoResponders, Raw, Unreachable
from swarmlog.jetstream.proto import (
    CONFLICT_CODES,
    ERR_BATCH_DISABLED,
    ERR_BATCH_DUP_ID,
    ERR_MSG_TOO_BIG,
    H_EXP_LAST_SEQ,
    MAX_BATCH,
    ApiError,
    Prepared,
    check_expect,
    plan_expectations,
    prepare,
)
from swarmlog.jetstream.read import JsReader
from swarmlog.jetstream.stampfeed import stamp_filter


class JsAppender(JsReader):
    """Appending to the stream (it reads its fresh appends back for the server's time)."""

    def append(self, event: Event, expect: Mapping[str, int] | None = None) -> StoredEvent:
        return self.append_many((event,), expect)[0]

    def append_many(
        self, events: Iterable[Event], expect: Mapping[str, int] | None = None
    ) -> list[StoredEvent]:
        evs = list(events)
        exp = check_expect(dict(expect)) if expect else {}
        if not evs:
            if exp:
                self._run(self._check_versions(exp))
            return []
        if len(evs) > MAX_BATCH:
            raise InvalidEvent(
                f"a JetStream batch holds at most {MAX_BATCH} events, got {len(evs)} "
                "(the server's atomic batch limit); split it"
            )
        ps = prepare(evs, self.name, self.subjects, self.limits)
        if len(ps) > 1 and not self.atomic:
            raise SwarmlogError(
                f"stream {self.stream} does not allow atomic batches (nats-server >= 2.12 with "
                "allow_atomic; run 'swarmlog init --url' to enable): append_many refused"
            )
        if len(ps) == 1 and self._fast is not None:
            done = self._append_sync(ps[0], exp)
            if done is not None:
                return [done]
        try:
            out, back = self._run(self._append_stamped(ps, exp), 4 * self.timeout + 1, "append")
        except LogUnavailable as e:
            if e.maybe_stored or str(e).startswith(("the log is closed", "permission denied")):
                raise  # answered, or never sent: nothing ambiguous
            raise LogUnavailable(
                f"{e}: the append may or may not be stored; appending the same events "
                "(same ids) again is safe",
                maybe_stored=True,
            ) from None
        if back:
            out = [self._decode(back[ev.seq or 0]) if ev.seq in back else ev for ev in out]
        return out

    def _append_sync(self, p: Prepared, exp: dict[str, int]) -> StoredEvent | None:
        """One event published on the caller's thread (syncpath/fast.py), or None
        where the async path must append it (the connection busy or not usable, an
        expectation the server cannot check, any answer but "stored")."""
        fast = self._fast
        if fast is None or not fast.lock.acquire(blocking=False):
            return None
        try:
            hdrs: dict[str, str] = {}
            if exp:
                if self._side.touches(exp):
                    return None
                planned = plan_expectations([p], exp, self.subjects)
                if planned is None:
                    return None
                hdrs = planned[0]
            got = fast.publish(p, hdrs, stamp_filter(self._feed.filter(p)))
        finally:
            fast.lock.release()
        if got is None:
            return None
        seq, ts = got
        if ts is None:  # no stamp in time: read the stored time back
            try:
                raw = self._run(self._readback.get([seq]), 2 * self.timeout + 1, "append")[seq]
            except LogUnavailable as e:
                raise LogUnavailable(
                    f"{e}: the append may or may not be stored; appending the same events "
                    "(same ids) again is safe",
                    maybe_stored=True,
                ) from None
        else:
            raw = Raw(seq, p.subject, p.payload, {}, ts)
        fast.kick(seq, raw.data)
        return self._decode(raw)

    async def _append_stamped(
        self, ps: list[Prepared], exp: dict[str, int]
    ) -> tuple[list[Event], dict[int, Raw]]:
        """``_append``, then the server's time of the messages it stored (the PubAck does
        not say it): pushed by the server (stampfeed.py), else read back (readback.py
        batches the read-backs of all appends in flight), all in one call on the loop;
        the new records go to the sealer."""
        feed = self._feed
        await feed.ensure(ps)
        out, fresh = await self._append(ps, exp)
        back: dict[int, Raw] = {}
        if fresh:
            pushed = [q for q, p in fresh.items() if feed.covers(p)]
            for q, ts in (await feed.times(pushed) if pushed else {}).items():
                p = fresh[q]
                back[q] = Raw(q, p.subject, p.payload, {}, ts)
            rest = sorted(q for q in fresh if q not in back)
            if rest:
                back.update(await self._readback.get(rest))
            self._seals.kick(max(fresh), {q: r.data for q, r in back.items()})
        return out, back

    async def _append(
        self, ps: list[Prepared], exp: dict[str, int]
    ) -> tuple[list[Event], dict[int, Prepared]]:
        """Publish until stored (or proven a conflict); resolve duplicates and timeouts.

        Returns the stored events and the seqs this call stored (whose server time is
        still to be read back: the ones found stored before come with theirs)."""
        c = self._c
        deadline = time.monotonic() + 2 * self.timeout
        stored: dict[str, Event] = {}
        fresh: dict[int, Prepared] = {}
        known: dict[str, int] = {}
        pending = ps
        delay = 0.02
        while pending:
            fenced = False
            try:
                hdrs = None
                if exp and not self._side.touches(exp):
                    hdrs = plan_expectations(pending, exp, self.subjects)
                if hdrs is None:
                    hdrs = [{} for _ in pending]
                    if exp:  # more expected keys than messages can carry, or a key whose
                        # last record was erased (the server no longer counts it): check
                        # here, and fence the stream so that the check holds at commit
                        fenced = True
                        last = await c.last_seq()
                        await self._check_versions(exp)
                        hdrs[0][H_EXP_LAST_SEQ] = str(last)
                if len(pending) == 1:
                    ack = await c.publish(pending[0], hdrs[0])
                else:
                    ack = await c.publish_batch(pending, hdrs)
                seq = int(ack["seq"])
                if ack.get("duplicate"):
                    known[pending[0].event.id] = seq
                else:
                    first = seq - len(pending) + 1
                    for i, p in enumerate(pending):
                        stored[p.event.id] = p.stored(first + i)
                        fresh[first + i] = p
                pending = []
                continue
            except ApiError as e:
                if e.err_code not in (*CONFLICT_CODES, ERR_BATCH_DUP_ID):
                    raise _refused(e, self.stream) from None
                found = await self._probe(pending)
                if found:  # (an id reused for other content raises before the rest is sent)
                    await self._originals(pending, found, stored)
                    pending = [p for p in pending if p.event.id not in found]
                    continue
                if e.err_code in CONFLICT_CODES and not fenced:
                    await self._check_versions(exp)  # raises the conflict it finds
                if time.monotonic() > deadline:
                    raise SwarmlogError(
                        f"append to {self.stream} kept failing: {e.description}"
                    ) from None
                # fence moved, or a duplicate still in flight: try again
            except (Unreachable, NoResponders) as e:
                if time.monotonic() > deadline:
                    raise LogUnavailable(
                        f"append to stream {self.stream} got no answer ({e}); it may or may "
                        "not be stored: appending the same events (same ids) again is safe",
                        maybe_stored=True,
                    ) from None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)
        if known:
            await self._originals(ps, known, stored)
        return [stored[p.event.id] for p in ps], fresh

    async def _originals(
        self, ps: list[Prepared], known: dict[str, int], stored: dict[str, Event]
    ) -> None:
        """Put the stored originals of the ``known`` ids (id -> seq) into ``stored``;
        EventIdReused if one of ``ps`` asks for other content than its original."""
        asked = [p.event for p in ps if p.event.id in known]
        originals = await asyncio.gather(*(self._get_event(known[ev.id]) for ev in asked))
        for ev, orig in zip(asked, originals, strict=True):
            stored[ev.id] = idreuse.check(ev, orig)

    async def _probe(self, ps: list[Prepared]) -> dict[str, int]:
        """Which of these events are already stored (id -> seq), within the window."""
        seqs = await asyncio.gather(*(self._c.probe(p) for p in ps))
        return {p.event.id: s for p, s in zip(ps, seqs, strict=True) if s is not None}

    async def _check_versions(self, exp: dict[str, int]) -> None:
        """Raise VersionConflict for the first expected key not at its version."""
        keys = list(exp)
        have = await asyncio.gather(*(self._version(k) for k in keys))
        for k, v in zip(keys, have, strict=True):
            if v != exp[k]:
                raise VersionConflict(k, exp[k], v)


def _refused(e: ApiError, stream: str) -> SwarmlogError:
    """The one-line error for a publish the server refused outright."""
    if e.err_code == ERR_BATCH_DISABLED:
        return SwarmlogError(
            f"stream {stream} does not allow atomic batches: run 'swarmlog init --url' "
            "(needs nats-server >= 2.12)"
        )
    if e.err_code == ERR_MSG_TOO_BIG:
        return InvalidEvent(f"event too large for stream {stream}: {e.description}")
    return SwarmlogError(f"stream {stream} refused the append: {e.description}")
