"""The server's time of fresh appends: read back for all the appends in flight at once.

The PubAck of a JetStream publish names the seq but not the time the server stored the
message at, and that time is the stored event's ``ts`` (docs/design.md §2: the log's clock; no
writer's clock reaches the fold). So an append reads its message back. Done per append,
that is one more round trip each; here every append in flight on the handle's loop (from
any thread of the process) registers its seqs, and one Direct Get batch per run of
nearby seqs answers all that registered while the previous batch was out. A replica may
lag the leader: a batch that stops short is asked again (bounded, then LogUnavailable).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from swarmlog.errors import LogUnavailable

if TYPE_CHECKING:
    from swarmlog.jetstream.client import JsClient, Raw

SPAN = 256
"""Most seqs one read-back batch spans (other writers' messages between are read too)."""


class ReadBack:
    """Coalesced read-backs of one log handle (every method runs on its loop thread)."""

    def __init__(self, c: JsClient, timeout: float) -> None:
        self.c = c
        self.timeout = timeout
        self.waiting: dict[int, list[asyncio.Future[Raw]]] = {}
        self.task: asyncio.Future[None] | None = None

    async def get(self, seqs: list[int]) -> dict[int, Raw]:
        """The stored messages at ``seqs`` (all stored: this handle's fresh appends)."""
        loop = asyncio.get_running_loop()
        futs = {}
        for q in seqs:
            f: asyncio.Future[Raw] = loop.create_future()
            self.waiting.setdefault(q, []).append(f)
            futs[q] = f
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._work())
        return {q: await f for q, f in futs.items()}

    async def _work(self) -> None:
        while self.waiting:
            want, self.waiting = self.waiting, {}
            seqs = sorted(want)
            runs: list[list[int]] = [[seqs[0]]]
            for q in seqs[1:]:
                if q - runs[-1][0] < SPAN:
                    runs[-1].append(q)
                else:
                    runs.append([q])
            results = await asyncio.gather(
                *(self._run(r[0], r[-1]) for r in runs), return_exceptions=True
            )
            for run, got in zip(runs, results, strict=True):
                for q in run:
                    for f in want[q]:
                        if f.done():
                            continue
                        if isinstance(got, BaseException):
                            f.set_exception(got)
                        elif q in got:
                            f.set_result(got[q])
                        else:
                            f.set_exception(LogUnavailable(f"seq {q} cannot be read back"))

    async def _run(self, lo: int, hi: int) -> dict[int, Raw]:
        """Messages ``lo..hi``, asking again where a replica answers short."""
        out: dict[int, Raw] = {}
        nxt = lo
        deadline = time.monotonic() + 2 * self.timeout
        while nxt <= hi:
            raws = await self.c.direct_batch(nxt, hi - nxt + 1)
            for r in raws:
                if r.seq <= hi:
                    out[r.seq] = r
            while nxt in out:
                nxt += 1
            if nxt <= hi and (not raws or raws[-1].seq < hi):
                if time.monotonic() > deadline:
                    raise LogUnavailable(f"seq {nxt} cannot be read back")
                await asyncio.sleep(0.005)
            elif nxt <= hi:
                nxt += 1  # no message at nxt (erased meanwhile): the caller keeps its own
        return out


__all__ = ["ReadBack"]
