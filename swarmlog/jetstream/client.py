"""The async half of JetStreamLog: one nats-py connection and the requests the log makes.

Everything here runs on the log's private event loop (see loop.py). Requests are raw
JetStream API / publish requests whose replies are parsed here, so error codes map
directly to the log's decisions (conflict, duplicate, retry, unavailable).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import nats.errors
import orjson
from nats.aio.client import Client
from nats.aio.msg import Msg

from swarmlog._fast import direct_fields, direct_seq
from swarmlog._fast import rfc3339_ns as fast_rfc3339_ns
from swarmlog.errors import LogUnavailable
from swarmlog.jetstream.natsprivate import Inline, InlineClient
from swarmlog.jetstream.proto import (
    ERR_NO_MESSAGE,
    ERR_STREAM_NAME_IN_USE,
    ERR_STREAM_NOT_FOUND,
    ERR_WRONG_LAST_MSG_ID,
    H_BATCH_COMMIT,
    H_BATCH_ID,
    H_BATCH_SEQ,
    H_EXP_LAST_ID,
    H_MSG_ID,
    ApiError,
    Prepared,
    Target,
    ns_ts,
    parse_reply,
    rfc3339_ns,
)

_PERM_RE = re.compile(r'permissions violation for (publish|subscription) to "?([^"\s]+)"?', re.I)


_DENIED = " (the server refused it: this connection's user may not write there; nothing stored)"


class Unreachable(Exception):
    """A request got no answer in time (the outcome of a publish is then unknown)."""


class NoResponders(Exception):
    """Nobody serves the subject: no stream, or no leader for it right now."""


@dataclass
class Raw:
    """One stored message as read back: stream seq, subject, payload, headers, and the
    server's stored time of the message (unix seconds: the log's clock)."""

    seq: int
    subject: str
    data: bytes
    headers: Mapping[str, str]
    ts: float


def header_lines(raw: bytes) -> dict[str, str]:
    """A message's header block as a dict (lines that are no well-formed header are
    skipped; a later line wins over an earlier one of the same name)."""
    out: dict[str, str] = {}
    for line in raw.split(b"\r\n"):
        i = line.find(b":")
        if i <= 0:
            continue
        name = line[:i].strip()
        if not name or b" " in name or b"\t" in name or not name.isascii():
            continue
        out[name.decode("ascii")] = line[i + 1 :].strip().decode("utf-8", "replace")
    return out


class Headers(Mapping[str, str]):
    """A Direct Get reply's headers, parsed on first use: the sealer and most reads
    never look at them beyond the seq, subject and time taken out at once."""

    __slots__ = ("_block", "_d")

    def __init__(self, block: bytes) -> None:
        self._block = block
        self._d: dict[str, str] | None = None

    def _dict(self) -> dict[str, str]:
        if self._d is None:
            self._d = header_lines(self._block)
        return self._d

    def __getitem__(self, name: str) -> str:
        return self._dict()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())


def direct_raw(data: bytes, block: bytes) -> Raw:
    """A Direct Get reply (a stored message, not a status) as a Raw."""
    got = direct_fields(block)
    if got is None:  # not plainly formed: the full parse says the same, slower
        h = header_lines(block)
        got = int(h["Nats-Sequence"]), h.get("Nats-Subject", ""), h["Nats-Time-Stamp"]
    seq, subject, stamp = got
    return Raw(seq, subject, data, Headers(block), ns_ts(fast_rfc3339_ns(stamp)))


_NO_RESPONDERS = b"NATS/1.0 503"
_EXPIRED = b"\0expired"


class _Collect:
    """Replies of one Direct Get batch, gathered as the read loop parses them (inline:
    no Msg, no queue, no task per message) until EOB."""

    def __init__(self, n: int, payloads: bool = False) -> None:
        self.n = n
        self.payloads = payloads
        """Keep (seq, data) pairs only (``direct_payloads``), not Raws."""
        self.out: list[Any] = []
        self.done: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def add(self, data: bytes, block: bytes | None) -> None:
        if self.done.done():
            return
        if not block or block[8:9] == b" ":  # a status: the end of the batch, or an error
            status = block[9:12].decode("ascii", "replace") if block else "no headers"
            self.done.set_result(status if status not in ("204", "404", "408") else "")
            return
        try:
            if not self.payloads:
                self.out.append(direct_raw(bytes(data), block))
            elif (seq := direct_seq(block)) is not None:
                self.out.append((seq, bytes(data)))
            else:
                self.out.append((int(header_lines(block)["Nats-Sequence"]), bytes(data)))
        except (KeyError, ValueError):  # (no seq or time the server would give: not a
            # stored message; this runs on the read loop, which must not see it raise)
            self.done.set_result("a reply without the server's seq and time")
            return
        if len(self.out) >= self.n:
            self.done.set_result("")


class JsClient:
    """A connection to NATS plus the stream-level requests of the log."""

    def __init__(self, target: Target, timeout: float) -> None:
        self.target = target
        self.stream = target.stream
        self.timeout = timeout
        self.nc: Client | None = None
        self.denied: str | None = None
        self._mux: dict[str, asyncio.Future[Msg]] = {}
        self._mux_prefix = ""
        self._waiters: dict[str, list[asyncio.Future[None]]] = {}
        self._acks: dict[bytes, asyncio.Future[Any]] = {}
        self._batches: dict[bytes, _Collect] = {}
        self._ack_prefix = ""
        self._tokens = itertools.count(1)

    # ------------------------------------------------------------------ connection

    async def connect(self) -> None:
        """Connect (bounded by the timeout); LogUnavailable with the reason if it fails."""
        nc = InlineClient(header_lines)
        last: list[BaseException] = []

        async def on_error(e: Exception) -> None:
            last.append(e)
            self._on_error(e)

        try:
            await asyncio.wait_for(
                nc.connect(
                    self.target.servers,
                    error_cb=on_error,
                    connect_timeout=max(1, int(self.timeout)),
                    allow_reconnect=True,
                    max_reconnect_attempts=-1,
                    reconnect_time_wait=0.25,  # type: ignore[arg-type]
                    name="swarmlog",
                ),
                self.timeout,
            )
        except (asyncio.TimeoutError, OSError, nats.errors.Error) as e:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(nc.close(), 1.0)
            why = last[-1] if last else e
            raise LogUnavailable(f"cannot reach NATS at {self.target.url}: {_why(why)}") from None
        self.nc = nc
        self._mux_prefix = nc.new_inbox()
        await nc.subscribe(self._mux_prefix + ".*", cb=self._on_mux)
        self._ack_prefix = nc.new_inbox()
        await self.subscribe_inline(self._ack_prefix + ".*", self._on_ack)

    def _on_error(self, e: Exception) -> None:
        """Remember a permission violation and fail the requests waiting on that subject."""
        m = _PERM_RE.search(str(e))
        if not m:
            return
        subject = m.group(2).lower()  # nats-py lowercases the server's message
        self.denied = f"permission denied: {m.group(1)} to {m.group(2)}"
        for fut in self._waiters.pop(subject, []):
            if not fut.done():
                fut.set_result(None)

    async def _on_mux(self, msg: Msg) -> None:
        token = msg.subject[len(self._mux_prefix) + 1 :]
        slot = self._mux.get(token)
        if slot is not None and not slot.done():
            slot.set_result(msg)

    async def close(self) -> None:
        nc = self.nc
        self.nc = None
        if nc is not None and not nc.is_closed:
            try:
                await asyncio.wait_for(nc.drain(), 2.0)
            except Exception:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(nc.close(), 1.0)

    async def subscribe_inline(self, subject: str, fn: Inline) -> Any:
        """Subscribe to ``subject``; each message's raw header block goes to ``fn`` on
        the read loop as it is parsed (before any later message of the same read)."""
        nc = self.conn
        sub = await nc.subscribe(subject)
        if isinstance(nc, InlineClient):
            nc.handle_inline(sub, fn)
        return sub

    @property
    def conn(self) -> Client:
        if self.nc is None:
            raise LogUnavailable("the log is closed")
        return self.nc

    # ------------------------------------------------------------------ requests

    async def request(
        self,
        subject: str,
        payload: bytes = b"",
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Msg:
        """A request with a bounded wait; Unreachable / NoResponders / LogUnavailable."""
        nc = self.conn
        timeout = self.timeout if timeout is None else timeout
        denied: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        wkey = subject.lower()
        waiters = self._waiters.setdefault(wkey, [])
        waiters.append(denied)
        task = asyncio.ensure_future(nc.request(subject, payload, timeout, headers=headers))
        try:
            waits: set[asyncio.Future[Any]] = {task, denied}
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if denied in done:
                task.cancel()
                raise LogUnavailable(f"permission denied: publish to {subject}{_DENIED}")
            return task.result()
        except nats.errors.NoRespondersError:
            raise NoResponders(subject) from None
        except (nats.errors.TimeoutError, asyncio.TimeoutError):
            if self.denied and wkey in self.denied:
                raise LogUnavailable(self.denied) from None
            raise Unreachable(f"no reply to {subject} within {timeout:g}s") from None
        except nats.errors.ConnectionClosedError:
            raise LogUnavailable("the NATS connection is closed") from None
        finally:
            if not task.done():
                task.cancel()
            with contextlib.suppress(ValueError):
                waiters.remove(denied)
            if not waiters:
                self._waiters.pop(wkey, None)

    async def ask(self, subject: str, payload: bytes, headers: dict[str, str]) -> bytes:
        """``request``'s lean twin for publishes (the data of the reply): the reply lands
        on an inline subscription that resolves the future as the read loop parses it,
        so an append costs no task, no queue and no extra loop turn (the cost of an append)."""
        nc = self.conn
        loop = asyncio.get_running_loop()
        token = b"%d" % next(self._tokens)
        fut: asyncio.Future[Any] = loop.create_future()
        self._acks[token] = fut
        wkey = subject.lower()
        waiters = self._waiters.setdefault(wkey, [])
        waiters.append(fut)  # a permission violation on the subject resolves it to None
        timer = loop.call_later(self.timeout, _expire, fut)
        try:
            reply = f"{self._ack_prefix}.{token.decode()}"
            await nc.publish(subject, payload, reply=reply, headers=headers)
            got = await fut
        except nats.errors.ConnectionClosedError:
            raise LogUnavailable("the NATS connection is closed") from None
        finally:
            timer.cancel()
            self._acks.pop(token, None)
            with contextlib.suppress(ValueError):
                waiters.remove(fut)
            if not waiters:
                self._waiters.pop(wkey, None)
        if got is None:
            raise LogUnavailable(f"permission denied: publish to {subject}{_DENIED}")
        if got is _EXPIRED:
            if self.denied and wkey in self.denied:
                raise LogUnavailable(self.denied)
            raise Unreachable(f"no reply to {subject} within {self.timeout:g}s")
        data, hdrs = got
        if hdrs and hdrs.startswith(_NO_RESPONDERS):
            raise NoResponders(subject)
        return bytes(data)

    def _on_ack(self, subject: bytes, data: bytes, headers: bytes | None) -> None:
        token = subject[subject.rfind(b".") + 1 :]
        fut = self._acks.get(token)
        if fut is not None:
            if not fut.done():
                fut.set_result((data, headers))
        elif (col := self._batches.get(token)) is not None:
            col.add(data, headers)

    async def api(self, what: str, req: dict[str, Any] | None = None) -> dict[str, Any]:
        """A JetStream API call ``$JS.API.<what>``; ApiError on an error reply."""
        body = orjson.dumps(req) if req is not None else b""
        try:
            msg = await self.request(f"$JS.API.{what}", body)
        except NoResponders:
            raise LogUnavailable(
                f"JetStream is not available at {self.target.url} (server without -js?)"
            ) from None
        except Unreachable as e:
            raise LogUnavailable(f"JetStream API: {e}") from None
        return parse_reply(msg.data)

    async def create_stream(self, config: dict[str, Any]) -> None:
        """Create a stream; one that another handle created meanwhile is as good."""
        try:
            await self.api(f"STREAM.CREATE.{config['name']}", config)
        except ApiError as e:
            if e.err_code != ERR_STREAM_NAME_IN_USE:
                raise

    # ------------------------------------------------------------------ stream

    async def stream_info(self) -> dict[str, Any] | None:
        """The stream's info, or None if there is no such stream."""
        try:
            return await self.api(f"STREAM.INFO.{self.stream}")
        except ApiError as e:
            if e.err_code == ERR_STREAM_NOT_FOUND or e.code == 404:
                return None
            raise

    async def last_seq(self) -> int:
        info = await self.stream_info()
        if info is None:
            raise LogUnavailable(f"stream {self.stream} is gone")
        return int(info["state"]["last_seq"])

    async def last_on_subject(self, subject: str) -> int:
        """Seq of the last message on ``subject`` (leader-answered), 0 if none."""
        try:
            resp = await self.api(f"STREAM.MSG.GET.{self.stream}", {"last_by_subj": subject})
        except ApiError as e:
            if e.err_code == ERR_NO_MESSAGE or e.code == 404:
                return 0
            raise
        return int(resp["message"]["seq"])

    async def get(self, seq: int) -> Raw | None:
        """The message at ``seq`` (leader-answered), None if there is none."""
        try:
            resp = await self.api(f"STREAM.MSG.GET.{self.stream}", {"seq": seq})
        except ApiError as e:
            if e.err_code == ERR_NO_MESSAGE or e.code == 404:
                return None
            raise
        m = resp["message"]
        data = base64.b64decode(m.get("data", ""))
        return Raw(int(m["seq"]), str(m["subject"]), data, {}, ns_ts(rfc3339_ns(m["time"])))

    async def direct_batch(
        self, start: int, n: int, timeout: float | None = None, stream: str | None = None
    ) -> list[Raw]:
        """Up to ``n`` messages from ``start`` on in one Direct Get batch (one round trip).

        The server streams them to one reply inbox and ends with an EOB status; any
        replica may answer, so the batch can stop short of the leader's last seq.
        ``stream``: another stream than the log's (its redaction records, side.py).
        """
        out: list[Raw] = await self._direct(start, n, timeout, stream, False)
        return out

    async def direct_payloads(self, start: int, n: int) -> list[tuple[int, bytes]]:
        """``direct_batch`` of the log's stream as (seq, payload) pairs: what the sealer
        reads of every record (no headers kept, no time parsed)."""
        out: list[tuple[int, bytes]] = await self._direct(start, n, None, None, True)
        return out

    async def _direct(
        self, start: int, n: int, timeout: float | None, stream: str | None, payloads: bool
    ) -> list[Any]:
        timeout = self.timeout if timeout is None else timeout
        token = b"%d" % next(self._tokens)
        col = _Collect(n, payloads)
        self._batches[token] = col
        try:
            await self.conn.publish(
                f"$JS.API.DIRECT.GET.{stream or self.stream}",
                orjson.dumps({"seq": start, "batch": n}),
                reply=f"{self._ack_prefix}.{token.decode()}",
            )
            try:
                status = await asyncio.wait_for(col.done, timeout)
            except asyncio.TimeoutError:
                raise LogUnavailable(f"reading stream {self.stream} timed out") from None
            if status:
                raise LogUnavailable(f"direct get on {self.stream} failed with status {status}")
            return col.out
        finally:
            self._batches.pop(token, None)

    # ------------------------------------------------------------------ publishing

    async def publish(self, p: Prepared, headers: dict[str, str] | None = None) -> dict[str, Any]:
        """Publish one event (with its Nats-Msg-Id); the parsed PubAck."""
        h = {H_MSG_ID: p.event.id}
        if headers:
            h.update(headers)
        return parse_reply(await self.ask(p.subject, p.payload, h))

    async def publish_batch(self, ps: list[Prepared], hdrs: list[dict[str, str]]) -> dict[str, Any]:
        """Publish ``ps`` as one atomic batch; the commit's PubAck (seq of the last one).

        The first message is a request (the server answers it at once: an error if the
        stream does not allow atomic batches), the middle ones go without reply, the
        last carries ``Nats-Batch-Commit``; the server checks every expectation and
        ``Nats-Msg-Id`` at commit and stores all messages or none.
        """
        nc = self.conn
        bid = uuid.uuid4().hex
        t_first, t_last = uuid.uuid4().hex, uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        first: asyncio.Future[Msg] = loop.create_future()
        last: asyncio.Future[Msg] = loop.create_future()
        self._mux[t_first] = first
        self._mux[t_last] = last
        n = len(ps)
        denied = loop.create_future()  # a subject this user may not publish to (_on_error)
        subjects = {p.subject.lower() for p in ps}
        for s in subjects:
            self._waiters.setdefault(s, []).append(denied)
        try:
            for i, p in enumerate(ps, 1):
                h = {H_BATCH_ID: bid, H_BATCH_SEQ: str(i), H_MSG_ID: p.event.id, **hdrs[i - 1]}
                reply = ""
                if i == 1:
                    reply = f"{self._mux_prefix}.{t_first}"
                if i == n:
                    h[H_BATCH_COMMIT] = "1"
                    reply = f"{self._mux_prefix}.{t_last}"
                await nc.publish(p.subject, p.payload, reply=reply, headers=h)
            try:
                done, _ = await asyncio.wait(
                    {last, denied}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED
                )
                if denied in done and not last.done():
                    raise LogUnavailable(f"{self.denied or 'permission denied'}{_DENIED}")
                if not done:
                    raise Unreachable(f"no reply to a batch commit within {self.timeout:g}s")
                if first.done() and first.result().data:
                    parse_reply(first.result().data)  # its error explains the commit's
                ack = last.result()
                if ack.headers and ack.headers.get("Status") == "503":
                    raise NoResponders(ps[0].subject)
                return parse_reply(ack.data)
            finally:
                first.cancel()
        finally:
            self._mux.pop(t_first, None)
            self._mux.pop(t_last, None)
            for s in subjects:
                waiters = self._waiters.get(s, [])
                with contextlib.suppress(ValueError):
                    waiters.remove(denied)
                if not waiters:
                    self._waiters.pop(s, None)

    async def probe(self, p: Prepared) -> int | None:
        """Seq of the stored message with this event's id, None if none (never writes).

        Publishes an empty message with the event's ``Nats-Msg-Id`` and an expectation
        that cannot hold (the last message id being a fresh uuid). The server checks the
        id first: a stored id answers "duplicate" with its seq; an unknown id fails the
        expectation and nothing is stored. Ids are known for the stream's duplicate window.
        """
        h = {H_MSG_ID: p.event.id, H_EXP_LAST_ID: uuid.uuid4().hex}
        data = await self.ask(p.subject, b"", h)
        try:
            ack = parse_reply(data)
        except ApiError as e:
            if e.err_code == ERR_WRONG_LAST_MSG_ID:
                return None
            raise
        return int(ack["seq"]) if ack.get("duplicate") else None


def _expire(fut: asyncio.Future[Any]) -> None:
    if not fut.done():
        fut.set_result(_EXPIRED)


def _why(e: BaseException) -> str:
    """One line for an exception (nats-py's messages are sometimes empty)."""
    if isinstance(e, asyncio.TimeoutError):
        return "timed out"
    if isinstance(e, nats.errors.NoServersError):
        return "no server answered"
    s = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return s
