"""One handle's part in sealing the hash chain: seal while holding the lease, else stand by.

A handle joins once it appends (``kick``): a background task on the log's loop then
either holds the seal lease (lease.py) and seals every record of the stream, its
own and other processes' (it looks at the stream's last seq every ``POLL`` seconds, so
the appends of that time share one seal), or stands by and tries to take the lease every
``LEASE_TTL / 2`` seconds, which succeeds once the holder released it or died. Writers
therefore never contend on the seal stream: one sealer, however many writers.

``flush`` (on close, and by ``verify``) makes sure this handle's own appends are sealed:
it seals them itself if it holds (or can take) the lease, else it waits, bounded, for the
holder to cover them: it looks at the newest seal only (one small read) until its range
covers them, and tries to take the lease only while the seals stand still (the holder
gone, or done and released). A seal by the holder this handle found holding the lease
(the lease's token, kept in each seal) is taken as the holder's work; any other is
checked in full, its values against the records, as a sealer checks the tip (a seal
published by somebody else: where per-agent users are configured, only the sealing
identities may publish seals at all). ``verify`` recomputes every value either way.
(Before, a stand-by re-checked the full tip every 50 ms, reading up to ``SEAL_MAX``
records each time, and never kept what it found, so it waited until the holder let the
lease go, or 10 s: closing writers queued for the lease one after another, each reading
and hashing records while the others still appended.) ``close`` then releases the
lease, so a stand-by takes over at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from swarmlog.jetstream.seal.lease import LEASE_TTL, SealLease

if TYPE_CHECKING:
    from swarmlog.jetstream.client import JsClient
    from swarmlog.jetstream.seal.chain import Sealer

POLL = 0.2
"""Seconds between the holder's looks at the stream's last seq."""
FLUSH_POLL = POLL / 2
"""Seconds between a stand-by's looks at the newest seal while it waits in ``flush``."""


class SealRole:
    """Sealing by this handle (every method runs on the log's loop thread)."""

    def __init__(self, c: JsClient, sealer: Sealer, lease: SealLease) -> None:
        self.c = c
        self.sealer = sealer
        self.lease = lease
        sealer.by = lease.me
        self.want = 0
        """The last seq this handle appended (its own records to see sealed)."""
        self.task: asyncio.Future[None] | None = None
        self.wake: asyncio.Event | None = None
        self.closed = False
        self.error = ""
        self.pull: Callable[[], tuple[int, dict[int, bytes]]] | None = None
        """Where appends made off the loop are told (syncpath/fast.py): taken each round
        and by ``flush``, so that those appends never wake the loop thread."""

    def _take(self) -> None:
        """The appends made off the loop since the last look (``pull``)."""
        if self.pull is not None:
            upto, known = self.pull()
            self.want = max(self.want, upto)
            if self.lease.holding:
                self.sealer.known.update(known)

    def kick(self, upto: int, known: dict[int, bytes]) -> None:
        """This handle appended up to ``upto`` (payloads ``known``): seal or stand by."""
        self.want = max(self.want, upto)
        if self.lease.denied:
            return
        if self.lease.holding:  # sealed at the next round (appends meanwhile share it)
            self.sealer.known.update(known)
        if self.wake is None:
            self.wake = asyncio.Event()
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        assert self.wake is not None
        while not self.closed and not self.lease.denied:
            wait = POLL
            self._take()
            try:
                if self.lease.holding and (not self.lease.due or await self.lease.renew()):
                    last = await self.c.last_seq()
                    if last > self.sealer.tip_seq:
                        await self.sealer.seal(max(last, self.sealer.tip_seq))
                elif await self.lease.try_acquire():
                    continue
                else:
                    self.sealer.known.clear()  # the holder reads them
                    wait = LEASE_TTL / 2
                self.error = ""
            except Exception as e:  # a later round tries again
                self.error = f"{type(e).__name__}: {e}"
                wait = max(wait, 0.5)
            self.wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.wake.wait(), wait)

    async def flush(self, limit: float = 10.0) -> bool:
        """See this handle's appends sealed (by itself as holder, else by the holder);
        whether they are (False: ``limit`` seconds passed first, or sealing is denied)."""
        self._take()
        if not self.want:
            return True
        deadline = time.monotonic() + limit
        prev: tuple[int, str] | None = None
        moved_at = 0.0  # when the newest seal last changed (0: try the lease at once)
        while not self.lease.denied:
            try:
                if not self.lease.holding:
                    # another handle seals: look at the newest seal (one small read) until
                    # it reaches this handle's appends; a seal by the holder this handle
                    # saw is its work, any other one is checked in full (forged?)
                    last = await self.sealer.last_seal()
                    if last is None or last[0] >= self.want:
                        if last is not None and last[1] and last[1] == self.lease.other:
                            return True
                        self.sealer.tip = await self.sealer.fetch_tip()
                        if self.sealer.tip_seq >= self.want:
                            return True
                    if prev is not None and last != prev:
                        moved_at = time.monotonic()
                    prev = last
                # the lease is tried while the seals stand still (the holder gone or done)
                idle = time.monotonic() - moved_at >= 2 * POLL
                if self.lease.holding or (idle and await self.lease.try_acquire()):
                    await self.sealer.seal(max(self.want, await self.c.last_seq()))
                    return True
            except Exception as e:
                self.error = f"{type(e).__name__}: {e}"
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(FLUSH_POLL)
        return False

    async def close(self) -> None:
        """Flush, stop the background task, release the lease."""
        await self.flush()
        self.closed = True
        if self.wake is not None:
            self.wake.set()
        if self.task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self.task, 2.0)
        await self.lease.release()


__all__ = ["POLL", "SealRole"]
