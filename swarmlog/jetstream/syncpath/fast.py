"""One log handle's synchronous publishes: the single-event append without the loop hop.

An ``append`` of one event is published by the calling thread on its own connection
(conn.py) when that connection is free; the thread waits for the PubAck and for the
stream's republished stamp (the stored time, stampfeed.py) on that socket and is never
handed to the loop thread. Everything else goes the async way, which stays the
authority: batches, fenced expectations, a thread that finds the connection busy (so
concurrent appends of one process still pipeline on the async client), and any publish
this path cannot see through (no answer, a duplicate, a conflict, a refusal, a broken
connection). Redoing a publish there is safe: the same ``Nats-Msg-Id`` is stored once.
A follower's refresh takes the same way (``call``: the stream's last seq; ``direct``: a
short Direct Get batch), falling back the same way.

The loop thread is not woken by these appends: the first starts the sealer's task and
the task takes the later ones on its rounds (``kick``, ``take``). While the connection
is idle the loop reads it every ``IDLE`` seconds (``drain``: the server's PINGs
answered, stamps of other handles' appends as the same agent not left to pile up).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from swarmlog.jetstream.client import Raw, direct_raw
from swarmlog.jetstream.proto import H_MSG_ID, ApiError, Prepared, parse_reply
from swarmlog.jetstream.syncpath.conn import Fallback, SyncConn

_T = TypeVar("_T")

if TYPE_CHECKING:
    from swarmlog.jetstream.loop import LoopThread
    from swarmlog.jetstream.seal.role import SealRole

WAIT = 0.5
"""Seconds to wait for a stamp after its PubAck before reading the time back."""
IDLE = 1.0
"""Seconds between the loop thread's reads of an idle connection."""
RETRY = 0.5
"""Seconds before a failed connection is tried again (meanwhile: the async path)."""
MAX_STAMPS = 256
"""Most stamp subscriptions on the connection (beyond: the async path)."""


class SyncAppends:
    """The synchronous publish path of one JetStreamLog handle."""

    def __init__(
        self, servers: list[str], timeout: float, stream: str, lt: LoopThread, seals: SealRole
    ) -> None:
        self.conn = SyncConn(servers, timeout, stream)
        self.pid = os.getpid()
        self.timeout = timeout
        self.lt = lt
        self.seals = seals
        self.lock = threading.Lock()
        """Held by the one thread publishing on the connection (others go async)."""
        self.off = ""
        """Why this handle never uses the path (TLS, a denied subscription…), or ''."""
        self.retry_at = 0.0
        self.closed = False
        self.used = 0  # appends done on this path (tests, benchmarks)
        self.fell_back = 0  # publishes handed to the async path after being tried here
        self._klock = threading.Lock()
        self._upto = 0
        self._known: dict[int, bytes] = {}
        self._started = False
        self._ticking = False

    def publish(
        self, p: Prepared, hdrs: dict[str, str], stamps: str
    ) -> tuple[int, float | None] | None:
        """Publish ``p`` (expectation headers ``hdrs``, its stamps on ``stamps``) and
        return its stored seq and time (None: no stamp came, read it back), or None
        where the async path must do the append. The caller holds ``lock``."""
        conn = self.conn
        if not self._ready():
            return None
        now = time.monotonic()
        if stamps in conn.sub_denied or "" in conn.sub_denied:
            return None  # no stamps for this user there (an older authorization block)
        if stamps not in conn.stamp_subjects and len(conn.stamp_subjects) >= MAX_STAMPS:
            return None
        try:
            conn.subscribe_stamps(stamps)
            h = {H_MSG_ID: p.event.id, **hdrs}
            ack = parse_reply(conn.request(p.subject, p.payload, h, now + self.timeout))
        except ApiError:  # conflicts, refusals: the async path decides (and probes)
            self._declined(conn)
            return None
        except Fallback as e:
            self.fell_back += 1
            self._failed(e)
            return None
        except Exception as e:  # anything unforeseen: the async path
            self.fell_back += 1
            self._failed(Fallback(f"{type(e).__name__}: {e}"))
            return None
        if ack.get("duplicate"):  # the async path finds the original (and checks it)
            self._declined(conn)
            return None
        seq = int(ack["seq"])
        ts = conn.stamp(seq, stamps, min(now + self.timeout, time.monotonic() + WAIT))
        conn.last_used = time.monotonic()
        conn.replies.clear()  # late replies to publishes that fell back
        self.used += 1
        return seq, ts

    def _ready(self) -> bool:
        """Whether the connection is up (connecting it if due); the caller holds ``lock``.
        Never in a forked child: its socket is the parent's (the async client is gone
        there too, so the log says it is closed)."""
        if self.off or self.closed or os.getpid() != self.pid:
            return False
        if self.conn.connected:
            return True
        if time.monotonic() < self.retry_at:
            return False
        try:
            self.conn.connect()
        except Fallback as e:
            self._failed(e)
            return False
        except Exception as e:  # anything unforeseen: the async path
            self._failed(Fallback(str(e)))
            return False
        self._start_ticks()
        return True

    # ------------------------------------------------------------------ reads

    def call(self, subject: str, payload: bytes = b"") -> bytes | None:
        """The reply to a request (a read of the JetStream API) made on this connection,
        or None where the async client must make it (busy, failed, refused)."""
        return self._on_conn(
            lambda conn: conn.request(subject, payload, {}, time.monotonic() + self.timeout)
        )

    def direct(self, stream: str, start: int, n: int) -> list[Raw] | None:
        """Up to ``n`` messages of ``stream`` from ``start`` on, one Direct Get batch on
        this connection (as ``JsClient.direct_batch``), or None: the async client."""

        def batch(conn: SyncConn) -> list[Raw] | None:
            req = orjson.dumps({"seq": start, "batch": n})
            got = conn.gather(
                f"$JS.API.DIRECT.GET.{stream}", req, n, time.monotonic() + self.timeout
            )
            out: list[Raw] = []
            for data, block in got:
                if block[8:9] == b" ":  # a status: the end of the batch, or an error
                    if block[9:12] in (b"204", b"404", b"408"):
                        break
                    return None  # the async client says what went wrong
                out.append(direct_raw(data, block))
            return out

        return self._on_conn(batch)

    def _on_conn(self, fn: Callable[[SyncConn], _T | None]) -> _T | None:
        """``fn`` on this connection when it is free and ready, else None (the async
        client's turn); a failure marks the connection failed and also gives None."""
        if not self.lock.acquire(blocking=False):
            return None
        try:
            if not self._ready():
                return None
            return fn(self.conn)
        except Fallback as e:
            self._failed(e)
            return None
        except Exception as e:
            self._failed(Fallback(f"{type(e).__name__}: {e}"))
            return None
        finally:
            self.lock.release()

    def _declined(self, conn: SyncConn) -> None:
        """An answer this path leaves to the async one (the connection stays good)."""
        self.fell_back += 1
        conn.last_used = time.monotonic()
        conn.replies.clear()

    def _failed(self, e: Fallback) -> None:
        if e.unsupported:
            self.off = str(e)
        if not e.denied:  # a refused publish leaves the connection as good as it was
            self.conn.close()
            self.retry_at = time.monotonic() + RETRY

    # ------------------------------------------------------------------ the loop thread

    def kick(self, seq: int, payload: bytes) -> None:
        """Tell the sealer (on the loop) of a stored record. Only the first append wakes
        the loop (it starts the sealer's task); the task takes the later ones on its
        next round (``take``): an append costs the loop thread nothing."""
        with self._klock:
            self._upto = max(self._upto, seq)
            if self.seals.lease.holding:  # the sealer need not read its own appends back
                self._known[seq] = payload
            if self._started:
                return
            self._started = True
        try:
            self.lt.loop.call_soon_threadsafe(self._kick)
        except RuntimeError:  # the loop is closed: the log is closing
            pass

    def take(self) -> tuple[int, dict[int, bytes]]:
        """The last seq appended on this path and the payloads not handed over yet."""
        with self._klock:
            known, self._known = self._known, {}
            return self._upto, known

    def _kick(self) -> None:
        self.seals.pull = self.take
        upto, known = self.take()
        self.seals.kick(upto, known)

    def _start_ticks(self) -> None:
        if not self._ticking:
            self._ticking = True
            try:
                self.lt.loop.call_soon_threadsafe(self._tick)
            except RuntimeError:
                pass

    def _tick(self) -> None:
        """Read the connection if it is idle (loop thread), then again in ``IDLE`` s."""
        if self.closed:
            return
        conn = self.conn
        idle = conn.connected and time.monotonic() - conn.last_used > IDLE
        if idle and self.lock.acquire(blocking=False):
            try:
                conn.drain()
            finally:
                self.lock.release()
        self.lt.loop.call_later(IDLE, self._tick)

    def close(self) -> None:
        """Close the connection (waiting, bounded, for a publish in progress)."""
        self.closed = True
        got = self.lock.acquire(timeout=self.timeout + 1)
        try:
            self.conn.close()
        finally:
            if got:
                self.lock.release()

    def stats(self) -> dict[str, Any]:
        """How this handle's appends went (for tests and benchmarks)."""
        return {"sync": self.used, "fell_back": self.fell_back, "off": self.off}


__all__ = ["SyncAppends"]
