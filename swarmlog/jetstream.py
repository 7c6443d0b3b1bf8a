"""JetStreamLog: the Log contract on a NATS JetStream stream, for swarms beyond one machine.

Mapping (details of subjects and payloads in jsproto.py):

- **seq** is the stream sequence. The stored payload is the record without seq (crc over
  the rest); readers put the stream sequence in front. ``verify()`` checks that stream
  sequences run gapless from 1 and every payload's crc.
- **Idempotency**: every message carries ``Nats-Msg-Id`` = event id. Inside the stream's
  ``duplicate_window`` (default 10 minutes) the server refuses a second copy; the log then
  finds the stored original with a *probe* (a publish that can never be stored, answered
  "duplicate, seq N" for a known id) and returns it. An id re-sent after the window is
  stored again, and ``verify()`` reports the duplicate. A retried CAS append answers
  "wrong last sequence" rather than "duplicate" (the server checks expectations first),
  so every conflict is probed too: a timed-out append that had landed is returned, never
  mistaken for a conflict.
- **Expectations** (CAS): one subject per key; ``version(key)`` is the seq of the last
  message on it. ``expect`` becomes ``Nats-Expected-Last-Subject-Sequence`` headers that
  the server checks at commit, under its lock (see ``jsproto.plan_expectations`` for how
  several keys map onto a batch's messages). When a batch has more expected keys than
  messages can carry, the log reads every expected version and the stream's last seq L,
  checks them itself and publishes with ``Nats-Expected-Last-Sequence: L`` — a stream-wide
  fence that fails (and is retried) if anything at all was appended since the check.
- **append_many** is one atomic batch (``Nats-Batch-*`` headers, nats-server 2.12+ with
  ``allow_atomic``): all events are stored or none, at consecutive seqs. At most 1000
  events (the server's limit). A stream or server without atomic batches refuses batches
  of more than one event with a clear error; it never falls back to a non-atomic publish.
- **follow** runs an ordered push consumer from ``from_seq``; **read** uses pipelined
  Direct Get batches; **last_seq** and **version** ask the stream leader.

``ensure_stream`` (what ``swarmlog init --url`` runs) sets the stream up; see its docstring
for the settings and the server's ``sync_interval``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from nats.js.api import ConsumerConfig, DeliverPolicy

from .checkpoint import CheckpointStore
from .contract import Log, VerifyReport
from .envelope import DEFAULT_LIMITS, Event, Limits, from_stored
from .errors import (
    CorruptionError,
    InvalidEvent,
    LogUnavailable,
    SwarmlogError,
    VersionConflict,
)
from .filemeta import new_swarm_id
from .jsclient import JsClient, NoResponders, Raw, Unreachable
from .jsloop import LoopThread, wait
from .jsproto import (
    CONFLICT_CODES,
    ERR_BATCH_DISABLED,
    ERR_BATCH_DUP_ID,
    ERR_MSG_TOO_BIG,
    FORMAT,
    H_BATCH_COMMIT,
    H_BATCH_ID,
    H_EXP_LAST_SEQ,
    MAX_BATCH,
    ApiError,
    Prepared,
    Target,
    ack_ns,
    check_expect,
    decode_payload,
    ns_ts,
    parse_target,
    plan_expectations,
    prepare,
)
from .jssubjects import META_SUBJECTS, PER_AGENT, keep_layout, layout
from .names import check_name

DEFAULT_DUPLICATE_WINDOW = 600.0
"""Seconds the server remembers event ids (idempotency horizon; costs server memory)."""
READ_BATCH = 1000
META_FORMAT = "swarmlog.format"
META_NAME = "swarmlog.name"
META_ID = "swarmlog.id"


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


# ---------------------------------------------------------------- stream setup


def stream_config(
    stream: str,
    name: str,
    replicas: int,
    duplicate_window: float,
    limits: Limits,
    swarm_id: str = "",
) -> dict[str, Any]:
    """The JetStream configuration of a swarm's event stream (``swarm_id``: its identity)."""
    meta = {META_FORMAT: FORMAT, META_NAME: name, META_SUBJECTS: PER_AGENT}  # jssubjects
    if swarm_id:
        meta[META_ID] = swarm_id
    return {
        "name": stream,
        "subjects": [f"swarmlog.{stream}.>"],
        "retention": "limits",
        "storage": "file",
        "discard": "old",
        "max_msgs": -1,
        "max_bytes": -1,
        "max_age": 0,
        "max_msgs_per_subject": -1,
        "max_msg_size": limits.max_event + 4096,
        "num_replicas": replicas,
        "duplicate_window": int(duplicate_window * 1e9),
        "deny_delete": True,
        "deny_purge": True,
        "allow_rollup_hdrs": False,
        "allow_direct": True,
        "allow_atomic": True,
        "metadata": meta,
    }


async def _ensure(
    c: JsClient,
    *,
    create: bool,
    update: bool,
    name: str | None,
    replicas: int,
    duplicate_window: float,
    limits: Limits,
) -> dict[str, Any]:
    """The stream's info, creating (or, with ``update``, reconfiguring) it as asked."""
    info = await c.stream_info()
    if info is None:
        if not create:
            raise LogUnavailable(
                f"no swarm stream {c.stream} at {c.target.url} "
                f"(run 'swarmlog init --url {c.target.servers[0]}/{c.stream}')"
            )
        cfg = stream_config(
            c.stream, name or c.stream, replicas, duplicate_window, limits, new_swarm_id()
        )
        try:
            await c.api(f"STREAM.CREATE.{c.stream}", cfg)
        except ApiError as e:
            if e.err_code != 10058:  # created meanwhile by somebody else
                raise LogUnavailable(f"cannot create stream {c.stream}: {e.description}") from None
        info = await c.stream_info()
        if info is None:
            raise LogUnavailable(f"stream {c.stream} vanished right after creation")
    _check_ours(info, c.stream)
    if update:
        cur = info["config"]
        want = stream_config(
            c.stream,
            name or cur["metadata"][META_NAME],
            replicas,
            duplicate_window,
            limits,
            cur["metadata"].get(META_ID, ""),  # the identity never changes
        )
        new = {**cur, **{k: v for k, v in want.items() if k not in ("subjects", "storage")}}
        new = keep_layout(new, cur)  # the subject layout never changes (jssubjects)
        if new != cur:
            try:
                await c.api(f"STREAM.UPDATE.{c.stream}", new)
            except ApiError as e:
                raise LogUnavailable(f"cannot update stream {c.stream}: {e.description}") from None
            info = await c.stream_info() or info
    return info


def _check_ours(info: dict[str, Any], stream: str) -> None:
    cfg = info.get("config", {})
    meta = cfg.get("metadata") or {}
    if meta.get(META_FORMAT) != FORMAT or META_NAME not in meta:
        raise LogUnavailable(
            f"stream {stream} exists but is not a swarmlog stream "
            f"(metadata {META_FORMAT}={meta.get(META_FORMAT)!r})"
        )


def ensure_stream(
    target: str,
    *,
    name: str | None = None,
    replicas: int = 1,
    duplicate_window: float = DEFAULT_DUPLICATE_WINDOW,
    timeout: float = 5.0,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """Create or reconfigure the event stream of ``target``; return its configuration.

    What it sets, and why:

    - ``replicas`` (``num_replicas``): 1 for one server; 3 on a cluster so that losing a
      node loses no acknowledged event (an append returns once a quorum stored it).
    - ``duplicate_window``: how long the server remembers event ids; a retry within it
      is recognised and answered with the stored original (the idempotency horizon).
    - ``deny_delete`` / ``deny_purge``: the log is append-only, and seq gaps would break
      readers; nobody can remove events through the API.
    - ``allow_atomic`` (atomic batches for ``append_many``), ``allow_direct`` (fast reads),
      no rollups, no limits (nothing ever ages out), ``max_msg_size`` from the event limit.

    Server setting, recommended: ``jetstream { sync_interval: always }``. By default
    nats-server fsyncs every 2 minutes, so an acknowledged append on a single server can
    be lost to a power cut (on R3 the other replicas still hold it). With ``always`` an
    acknowledgement means the event is on disk — the ``durability="fsync"`` promise of
    FileLog — at the cost of one fsync per write batch.
    """
    if replicas not in (1, 3, 5):
        raise ValueError("replicas must be 1, 3 or 5")
    if name is not None:
        check_name("swarm", name)
    t = parse_target(target)
    lt = LoopThread("swarmlog-init")
    try:
        return lt.run(
            _init(t, timeout, name, replicas, duplicate_window, limits), 3 * timeout + 5, "init"
        )
    finally:
        lt.stop()


async def _init(
    t: Target, timeout: float, name: str | None, replicas: int, dup: float, limits: Limits
) -> dict[str, Any]:
    c = JsClient(t, timeout)
    await c.connect()
    try:
        info = await _ensure(
            c,
            create=True,
            update=True,
            name=name,
            replicas=replicas,
            duplicate_window=dup,
            limits=limits,
        )
        return dict(info["config"])
    finally:
        await c.close()


# ---------------------------------------------------------------- the log


class JetStreamLog(Log):
    max_batch = MAX_BATCH
    """The Log contract on a JetStream stream (see module docstring)."""

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
        **ignored: Any,
    ) -> None:
        """Connect and open (or create) the stream; LogUnavailable if that fails.

        FileLog's options (``durability``, ``notify``, ``segment_bytes``…) are accepted
        and ignored: durability is the stream's (replicas, server ``sync_interval``).
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
        self._ckpt: CheckpointStore | None = None
        self._finalizer = weakref.finalize(self, _shutdown, self._lt, self._c)
        try:
            self._run(self._c.connect(), 2 * timeout + 1, "connect")
            info = self._run(
                _ensure(
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
        self.subjects = layout(self.prefix, cfg)  # per-agent or shared subjects (jssubjects)
        self.atomic = bool(cfg.get("allow_atomic"))
        self.replicas = int(cfg.get("num_replicas", 1))
        self.duplicate_window = int(cfg.get("duplicate_window", 0)) / 1e9

    def __enter__(self) -> JetStreamLog:
        return self

    def __repr__(self) -> str:
        return f"JetStreamLog({self.target!r}, name={self.name!r})"

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
        self._closed = True
        self._finalizer()

    @property
    def swarm_id(self) -> str:
        return self._swarm_id or super().swarm_id

    @property
    def checkpoints(self) -> CheckpointStore:
        if self._ckpt is None:
            from .jscheckpoint import ObjectStoreCheckpoints

            if self._closed:
                raise LogUnavailable("the log is closed")
            self._ckpt = ObjectStoreCheckpoints(
                self._c, self._lt, self.stream, self.replicas, self.timeout, owner=self
            )
        return self._ckpt

    # ------------------------------------------------------------------ append

    def append(self, event: Event, expect: Mapping[str, int] | None = None) -> Event:
        return self.append_many((event,), expect)[0]

    def append_many(
        self, events: Iterable[Event], expect: Mapping[str, int] | None = None
    ) -> list[Event]:
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
        try:
            out, fresh = self._run(self._append(ps, exp), 3 * self.timeout + 1, "append")
        except LogUnavailable as e:
            if e.maybe_stored or str(e).startswith(("the log is closed", "permission denied")):
                raise  # answered, or never sent: nothing ambiguous
            raise LogUnavailable(
                f"{e}: the append may or may not be stored; appending the same events "
                "(same ids) again is safe",
                maybe_stored=True,
            ) from None
        if fresh:
            # the server's clock: what it stored each new message at (the PubAck does not
            # say), read back in one Direct Get batch, as every later read will see it
            lo, hi = min(fresh), max(fresh)
            back = {
                r.seq: self._decode(r)
                for raws in self._read_raw(lo, hi, clip=False)
                for r in raws
                if r.seq in fresh
            }
            out = [back.get(ev.seq or 0, ev) for ev in out]
        return out

    async def _append(
        self, ps: list[Prepared], exp: dict[str, int]
    ) -> tuple[list[Event], set[int]]:
        """Publish until stored (or proven a conflict); resolve duplicates and timeouts.

        Returns the stored events and the seqs this call stored (whose server time is
        still to be read back: the ones found stored before come with theirs)."""
        c = self._c
        deadline = time.monotonic() + 2 * self.timeout
        stored: dict[str, Event] = {}
        fresh: set[int] = set()
        known: dict[str, int] = {}
        pending = ps
        delay = 0.02
        while pending:
            fenced = False
            try:
                hdrs = plan_expectations(pending, exp, self.subjects) if exp else None
                if hdrs is None:
                    hdrs = [{} for _ in pending]
                    if exp:  # more expected keys than messages can carry: fence the stream
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
                        fresh.add(first + i)
                pending = []
                continue
            except ApiError as e:
                if e.err_code not in (*CONFLICT_CODES, ERR_BATCH_DUP_ID):
                    raise _refused(e, self.stream) from None
                found = await self._probe(pending)
                if found:
                    known.update(found)
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
            originals = await asyncio.gather(*(self._get_event(s) for s in known.values()))
            stored.update({ev.id: ev for ev in originals})
        return [stored[p.event.id] for p in ps], fresh

    async def _probe(self, ps: list[Prepared]) -> dict[str, int]:
        """Which of these events are already stored (id -> seq), within the window."""
        seqs = await asyncio.gather(*(self._c.probe(p) for p in ps))
        return {p.event.id: s for p, s in zip(ps, seqs, strict=True) if s is not None}

    async def _check_versions(self, exp: dict[str, int]) -> None:
        """Raise VersionConflict for the first expected key not at its version."""
        keys = list(exp)
        have = await asyncio.gather(
            *(self._c.last_on_subject(self.subjects.key(k)) for k in keys)
        )
        for k, v in zip(keys, have, strict=True):
            if v != exp[k]:
                raise VersionConflict(k, exp[k], v)

    async def _get_event(self, seq: int) -> Event:
        raw = await self._c.get(seq)
        if raw is None:
            raise SwarmlogError(f"seq {seq} is not in stream {self.stream}")
        return self._decode(raw)

    def _decode(self, raw: Raw) -> Event:
        try:
            d = self.subjects.stamp(decode_payload(raw.seq, raw.data, raw.ts), raw.subject)
            return from_stored(d)
        except InvalidEvent as e:
            raise StreamCorruption(self.stream, raw.seq, str(e)) from None

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

    def verify(self) -> VerifyReport:
        """Gapless stream sequences from 1, every crc, no duplicate id, stream settings."""
        rep = VerifyReport()
        info = self._run(self._c.stream_info())
        if info is None:
            rep.problems.append(f"stream {self.stream} does not exist")
            return rep
        cfg, state = info["config"], info["state"]
        rep.segments = 1
        first, last = int(state.get("first_seq", 0)), int(state["last_seq"])
        if last and first != 1:
            rep.problems.append(f"stream starts at seq {first}, not 1 (events were removed)")
        if state.get("num_deleted"):
            rep.problems.append(f"{state['num_deleted']} messages were deleted (seq gaps)")
        for flag in ("deny_delete", "deny_purge"):
            if not cfg.get(flag):
                rep.notes.append(f"stream setting {flag} is off: events can be removed")
        ids: set[str] = set()
        nxt = 1
        try:
            for raws in self._read_raw(1, last):
                for r in raws:
                    nxt = r.seq + 1
                    try:
                        d = decode_payload(r.seq, r.data, r.ts)
                    except InvalidEvent as e:
                        rep.problems.append(str(e))
                        continue
                    if d["id"] in ids:
                        rep.problems.append(f"seq {r.seq}: duplicate event id {d['id']}")
                    ids.add(d["id"])
                    if r.subject and (why := self.subjects.misplaced(r.subject, d)):
                        bad = rep.notes if why.startswith("claims") else rep.problems
                        bad.append(f"seq {r.seq}: {why}")  # claims: a refused write (jsauth)
                    rep.events += 1
        except SwarmlogError as e:
            rep.problems.append(str(e))
        rep.last_seq = nxt - 1 if rep.events else 0
        if rep.last_seq != last:
            rep.problems.append(f"read up to seq {rep.last_seq} of {last}")
        return rep


# ---------------------------------------------------------------- helpers


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


def _shutdown(lt: LoopThread, c: JsClient) -> None:
    """Close the connection and stop the loop thread (also run if a log is dropped unclosed)."""
    if lt.alive and threading.current_thread() is not lt.thread:
        try:
            lt.run(c.close(), 4.0, "close")
        except SwarmlogError:
            pass
    lt.stop()
