"""The core every part of JetStreamLog stands on: the connection, its loop, decoding.

``JsCore`` connects to NATS, opens (or creates) the stream, runs the async client's
coroutines on its private loop thread (``_run``) and turns stored messages into events
(``_decode``). The read path (read.py), the append path (append.py) and the log
itself (jetstream.py) build on it.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from swarmlog.checkpoint import CheckpointStore
from swarmlog.envelope import DEFAULT_LIMITS, Limits, StoredEvent, from_stored
from swarmlog.errors import CorruptionError, InvalidEvent, LogUnavailable, SwarmlogError
from swarmlog.jetstream.client import JsClient, Raw
from swarmlog.jetstream.loop import LoopThread
from swarmlog.jetstream.proto import decode_payload, parse_target
from swarmlog.jetstream.readback import ReadBack
from swarmlog.jetstream.seal.chain import Sealer
from swarmlog.jetstream.seal.lease import SealLease
from swarmlog.jetstream.seal.role import SealRole
from swarmlog.jetstream.setup import DEFAULT_DUPLICATE_WINDOW, META_ID, META_NAME, ensure
from swarmlog.jetstream.side import SideStore
from swarmlog.jetstream.skip import note, stand_in, why_skipped
from swarmlog.jetstream.stampfeed import StampFeed, stamp_config
from swarmlog.jetstream.subjects import layout
from swarmlog.jetstream.syncpath.fast import SyncAppends
from swarmlog.names import check_name

READ_BATCH = 1000
"""Messages per Direct Get batch of a read."""


class StreamCorruption(CorruptionError):
    """A stored message that is not a valid record, or a hole in the stream's sequences."""

    def __init__(self, stream: str, seq: int | None, reason: str) -> None:
        SwarmlogError.__init__(self, f"corrupt record in stream {stream} at seq {seq}: {reason}")
        self.segment = stream
        self.offset = 0
        self.seq = seq
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (StreamCorruption, (self.segment, self.seq, self.reason))


class JsCore:
    """Connection, loop thread and stream settings of one JetStreamLog handle."""

    def __init__(
        self,
        target: str,
        *,
        create: bool = True,
        name: str | None = None,
        replicas: int = 1,
        timeout: float = 5.0,
        duplicate_window: float = DEFAULT_DUPLICATE_WINDOW,
        limits: Limits = DEFAULT_LIMITS,
        read_batch: int = READ_BATCH,
        sync_publish: bool = True,
        **ignored: Any,
    ) -> None:
        """Connect and open (or create) the stream; LogUnavailable if that fails.

        FileLog's options (``durability``, ``notify``, ``segment_bytes``…) are accepted
        and ignored: durability is the stream's (replicas, server ``sync_interval``).
        ``sync_publish=False`` keeps single appends on the async client (syncpath/).
        """
        self.target = target
        self.t = parse_target(target)
        self.timeout = timeout
        self.limits = limits
        self.read_batch = read_batch
        if name is not None:
            check_name("swarm", name)
        self._lt = LoopThread(f"swarmlog-{self.t.stream}")
        self._c = JsClient(self.t, timeout)
        self._closed = False
        self._watch: Any = None
        self._ckpt: CheckpointStore | None = None  # made on first use (jetstream.py)
        self._skipped: set[int] = set()  # seqs skipped and noted (skip.py)
        self._finalizer = weakref.finalize(self, _shutdown, self._lt, self._c)
        try:
            self._run(self._c.connect(), 2 * timeout + 1, "connect")
            info = self._run(
                ensure(
                    self._c,
                    create=create,
                    update=False,
                    name=name,
                    replicas=replicas,
                    duplicate_window=duplicate_window,
                    limits=limits,
                ),
                3 * timeout + 1,
                "open",
            )
        except BaseException:
            self.close()
            raise
        cfg = info["config"]
        self.name: str = cfg["metadata"][META_NAME]
        self._swarm_id = str(cfg["metadata"].get(META_ID) or "")
        self.stream = self.t.stream
        self.prefix = self.t.prefix
        self.subjects = layout(self.prefix, cfg)  # per-agent or shared subjects (subjects.py)
        self.atomic = bool(cfg.get("allow_atomic"))
        self.replicas = int(cfg.get("num_replicas", 1))
        self.duplicate_window = int(cfg.get("duplicate_window", 0)) / 1e9
        self.erasable = not cfg.get("deny_delete")
        """Whether ``redact`` can delete messages (streams made before it deny deletes)."""
        self._side = SideStore(self._c, self.stream, self.replicas)
        self._sealer = Sealer(self._c, self.stream, self.replicas, self._side)
        lease = SealLease(self._c, self.stream, self.replicas)
        self._seals = SealRole(self._c, self._sealer, lease)  # one sealer (seal/role.py)
        self._readback = ReadBack(self._c, timeout)  # fresh appends' server time
        rp, want = cfg.get("republish") or {}, stamp_config(self.stream)
        republished = rp.get("dest") == want["dest"] and rp.get("src") == want["src"]
        self._feed = StampFeed(self._c, self.stream, self.subjects, republished)  # … pushed
        self._fast: SyncAppends | None = None  # single appends on the caller's thread
        if sync_publish and republished:  # (they need the stamps: no read-back per append)
            self._fast = SyncAppends(self.t.servers, timeout, self.stream, self._lt, self._seals)

    # ------------------------------------------------------------------ plumbing

    def _run(self, coro: Any, timeout: float | None = None, what: str = "request") -> Any:
        if self._closed:
            coro.close()
            raise LogUnavailable("the log is closed")
        return self._lt.run(coro, self.timeout + 1 if timeout is None else timeout, what)

    def close(self) -> None:
        """Drain the connection, stop the loop, join its thread (idempotent)."""
        if self._closed:
            return
        fast = getattr(self, "_fast", None)  # absent if opening failed
        if fast is not None:
            fast.close()
        seals = getattr(self, "_seals", None)
        if seals is not None and self._lt.alive:
            try:  # let this handle's appends be sealed, give the lease up (seal/role.py)
                self._lt.run(seals.close(), 3 * self.timeout + 15, "seal")
            except SwarmlogError:
                pass
            try:  # the time feed's consumers (stampfeed.py): unsubscribed, not drained
                self._lt.run(self._feed.close(), 3.0, "close")
            except SwarmlogError:
                pass
        self._closed = True
        self._finalizer()

    # ------------------------------------------------------------------ decoding

    async def _get_event(self, seq: int) -> StoredEvent:
        raw = await self._c.get(seq)
        if raw is None:  # erased: its redaction record stands in (side.py)
            raw = self._side.get(seq)
            if raw is None and await self._side.refresh():
                raw = self._side.get(seq)
        if raw is None:
            raise SwarmlogError(f"seq {seq} is not in stream {self.stream}")
        return self._decode(raw)

    def _decode(self, raw: Raw) -> StoredEvent:
        """The event stored as ``raw``; a message that is not a valid record on its
        subject becomes its stand-in, with one note (skip.py): a bad write by one
        publisher never halts a reader."""
        try:
            d = decode_payload(raw.seq, raw.data, raw.ts)
        except InvalidEvent as e:
            return self._skip(raw, str(e).partition(": ")[2] or str(e))
        if raw.subject and (why := why_skipped(self.subjects, raw, d)) is not None:
            return self._skip(raw, why)
        return from_stored(self.subjects.stamp(d, raw.subject))

    def _skip(self, raw: Raw, reason: str) -> StoredEvent:
        d = stand_in(raw, self.name, self.subjects, reason)
        note(self.stream, d, self._skipped)
        return from_stored(d)


def _shutdown(lt: LoopThread, c: JsClient) -> None:
    """Close the connection and stop the loop thread (also run if a log is dropped unclosed)."""
    if lt.alive and threading.current_thread() is not lt.thread:
        try:
            lt.run(c.close(), 4.0, "close")
        except SwarmlogError:
            pass
    lt.stop()
