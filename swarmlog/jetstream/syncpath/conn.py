"""A blocking NATS connection for publishes on the caller's own thread (cheaper appends).

A synchronous ``append`` over the async client hands each publish to the log's loop
thread and is woken by it: on a loaded machine it waits in the run queue twice where a
publisher on its own socket waits once. ``SyncConn`` is that socket: the public NATS
client protocol (``CONNECT``, ``SUB``, ``HPUB`` with a reply inbox, ``MSG``/``HMSG``,
``PING``/``PONG``, ``-ERR``), just what an append (and a short read: ``gather``)
needs, with no thread of its own. It
is read only while a publish waits for its PubAck (and, when idle, by ``drain`` from
the loop thread, so that server ``PING``s are answered and stamps do not pile up).

What it does not do, it says by raising ``Fallback``: the caller then runs the append on
the async client, which is the authority (retries, probes, conflicts, reconnects). A
publish that may have been stored is safe to redo there: the same ``Nats-Msg-Id``.

- Credentials: ``user:password@`` or ``token@`` in the server URL, as nats-py reads
  them (the only ones the log passes it: swarmlog/jetstream/auth.py writes such URLs).
- TLS (a ``tls://`` URL or a server that requires it): not done here; ``Fallback``
  with ``unsupported`` set, and the log keeps to the async client.
"""

from __future__ import annotations

import itertools
import re
import secrets
import socket
import time
from typing import Any
from urllib.parse import urlsplit

import orjson

from swarmlog._fast import rfc3339_ns
from swarmlog.jetstream.proto import ns_ts
from swarmlog.version import __version__

KEEP = 4096
"""Most stamps kept unclaimed (other handles' appends as the same agent)."""
_NO_RESPONDERS = b"NATS/1.0 503"
_DEFAULT_PORT = 4222
_QUOTED = re.compile(r'"([^"]+)"')


class Fallback(Exception):
    """This path cannot give the publish an outcome; run it on the async client.

    ``unsupported``: it never will for this log (TLS, a server without headers, a
    subscription the user may not make); ``denied``: the server refused the publish."""

    def __init__(self, why: str, *, unsupported: bool = False, denied: bool = False) -> None:
        super().__init__(why)
        self.unsupported = unsupported
        self.denied = denied


class SyncConn:
    """One plain TCP connection to a NATS server, used by one thread at a time."""

    def __init__(self, servers: list[str], timeout: float, stream: str) -> None:
        self.servers = list(servers)
        self.timeout = timeout
        self.stream_b = stream.encode()
        self.sock: socket.socket | None = None
        self.buf = bytearray()
        self.out: list[bytes] = []  # protocol lines to send with the next write
        self.inbox = "_INBOX." + secrets.token_hex(11)
        self.inbox_b = self.inbox.encode()
        self.sids = itertools.count(2)  # sid 1: the reply inbox
        self.tokens = itertools.count(1)
        self.stamp_sids: dict[int, str] = {}
        self.stamp_subjects: dict[str, int] = {}
        self.stamps: dict[int, float] = {}
        self.replies: dict[bytes, tuple[bytes, bytes]] = {}
        self.many: dict[bytes, list[tuple[bytes, bytes]]] = {}  # tokens of multi-replies
        self.waiting = b""  # the token of the request in progress
        self.denied = ""  # a publish the server refused during the current wait
        self.sub_denied: set[str] = set()  # stamp subjects the server refused this user
        self.last_used = 0.0
        self._next = 0  # the server to try first (rotates on failure)

    # ------------------------------------------------------------------ connection

    @property
    def connected(self) -> bool:
        return self.sock is not None

    def connect(self) -> None:
        """Connect to the first server that answers; Fallback if none does."""
        why = "no server"
        n = len(self.servers)
        for i in range(n):
            url = self.servers[(self._next + i) % n]
            try:
                self._connect(url)
                self._next = (self._next + i) % n
                return
            except Fallback as e:
                if e.unsupported:
                    raise
                why = str(e)
            except OSError as e:
                why = f"{url}: {e}"
        self._next = (self._next + 1) % n
        raise Fallback(f"cannot connect: {why}")

    def _connect(self, url: str) -> None:
        u = urlsplit(url)
        if u.scheme != "nats":
            raise Fallback(f"{u.scheme}:// is not done on this path", unsupported=True)
        host, port = u.hostname or "127.0.0.1", u.port or _DEFAULT_PORT
        sock = socket.create_connection((host, port), timeout=self.timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock, self.buf = sock, bytearray()
            deadline = time.monotonic() + self.timeout
            line = self._line(deadline)
            if not line.startswith(b"INFO "):
                raise Fallback(f"{url}: not a NATS server")
            info = orjson.loads(line[5:])
            if info.get("tls_required"):
                raise Fallback("the server requires TLS", unsupported=True)
            if not info.get("headers"):
                raise Fallback("the server does not support headers", unsupported=True)
            opts: dict[str, Any] = {
                "verbose": False,
                "pedantic": False,
                "lang": "python3",
                "version": __version__,
                "protocol": 1,
                "headers": True,
                "no_responders": True,
                "name": "swarmlog-sync",
            }
            if u.username is not None:  # as nats-py reads a URL's credentials
                if u.password is None:
                    opts["auth_token"] = u.username
                else:
                    opts["user"], opts["pass"] = u.username, u.password
            sock.sendall(b"CONNECT %s\r\nPING\r\n" % orjson.dumps(opts))
            while True:
                line = self._line(deadline)
                if line == b"PONG":
                    break
                if line.startswith(b"-ERR"):
                    raise Fallback(f"{url}: {line[5:].decode(errors='replace').strip(chr(39))}")
            subs = [b"SUB %s.* 1\r\n" % self.inbox_b]
            for subject, sid in self.stamp_subjects.items():
                subs.append(b"SUB %s %d\r\n" % (subject.encode(), sid))
            self.out = subs
        except BaseException:
            self.close()
            raise

    def _line(self, deadline: float) -> bytes:
        """One protocol line while connecting (before any message can come)."""
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[: i + 2]
                return line
            self._recv(deadline, parse=False)

    def close(self) -> None:
        sock, self.sock = self.sock, None
        self.buf = bytearray()
        self.out = []
        self.replies.clear()
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    # ------------------------------------------------------------------ requests

    def subscribe_stamps(self, subject: str) -> None:
        """Receive the stamps on ``subject`` (sent before the next publish)."""
        if subject in self.stamp_subjects:
            return
        sid = next(self.sids)
        self.stamp_subjects[subject] = sid
        self.stamp_sids[sid] = subject
        self.out.append(b"SUB %s %d\r\n" % (subject.encode(), sid))

    def request(
        self, subject: str, payload: bytes, headers: dict[str, str], deadline: float
    ) -> bytes:
        """Publish with a reply inbox and wait for the reply's data; Fallback if there is
        no answer by ``deadline``, the server refused it or the connection failed."""
        if self.sock is None:
            raise Fallback("not connected")
        token = b"%d" % next(self.tokens)
        hdr = "NATS/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        hb = hdr.encode()
        self.out.append(
            b"HPUB %s %s.%s %d %d\r\n%s%s\r\n"
            % (subject.encode(), self.inbox_b, token, len(hb), len(hb) + len(payload), hb, payload)
        )
        self.denied = ""
        self.waiting = token
        self._flush()
        while token not in self.replies:
            if self.denied:
                raise Fallback(self.denied, denied=True)
            self._recv(deadline)
        data, hdrs = self.replies.pop(token)
        if hdrs.startswith(_NO_RESPONDERS):
            raise Fallback("no responders")
        return data

    def gather(
        self, subject: str, payload: bytes, n: int, deadline: float
    ) -> list[tuple[bytes, bytes]]:
        """A request answered by several messages (a Direct Get batch): (data, header
        block) of each, up to and including the first status reply or the ``n``-th."""
        if self.sock is None:
            raise Fallback("not connected")
        token = b"%d" % next(self.tokens)
        got: list[tuple[bytes, bytes]] = []
        self.many[token] = got
        try:
            self.out.append(
                b"PUB %s %s.%s %d\r\n%s\r\n"
                % (subject.encode(), self.inbox_b, token, len(payload), payload)
            )
            self.denied = ""
            self._flush()
            while len(got) < n and not (got and _status(got[-1][1])):
                if self.denied:
                    raise Fallback(self.denied, denied=True)
                self._recv(deadline)
            return got
        finally:
            self.many.pop(token, None)

    def stamp(self, seq: int, subject: str, deadline: float) -> float | None:
        """The server's stored time of ``seq`` (its republished stamp on ``subject``),
        waiting until ``deadline``; None if it does not come (the caller reads it back)."""
        try:
            while seq not in self.stamps:
                if self.sock is None or subject in self.sub_denied:
                    return None
                if time.monotonic() >= deadline:
                    return None
                self._recv(deadline)
        except Fallback:
            return None
        return self.stamps.pop(seq)

    def drain(self) -> None:
        """Read what the server sent meanwhile without waiting (answers its PINGs)."""
        sock = self.sock
        if sock is None:
            return
        try:
            sock.setblocking(False)
            try:
                while True:
                    got = sock.recv(65536)
                    if not got:
                        self.close()
                        return
                    self.buf += got
            except (BlockingIOError, InterruptedError):
                pass
            finally:
                if self.sock is not None:
                    sock.setblocking(True)
            self._parse()
            if self.out:
                self._flush()
        except (OSError, Fallback):
            self.close()

    # ------------------------------------------------------------------ the wire

    def _flush(self) -> None:
        sock = self.sock
        if sock is None:
            raise Fallback("not connected")
        data, self.out = b"".join(self.out), []
        try:
            sock.settimeout(self.timeout)
            sock.sendall(data)
        except OSError as e:
            self.close()
            raise Fallback(f"send failed: {e}") from None

    def _recv(self, deadline: float, parse: bool = True) -> None:
        sock = self.sock
        if sock is None:
            raise Fallback("connection closed")
        left = deadline - time.monotonic()
        if left <= 0:
            raise Fallback("no answer in time")
        try:
            sock.settimeout(left)
            got = sock.recv(65536)
        except TimeoutError:
            raise Fallback("no answer in time") from None
        except OSError as e:
            self.close()
            raise Fallback(f"receive failed: {e}") from None
        if not got:
            self.close()
            raise Fallback("the server closed the connection")
        self.buf += got
        if parse:
            self._parse()
            if self.out:  # PONGs
                self._flush()

    def _parse(self) -> None:
        """Handle every whole protocol message in the buffer."""
        buf = self.buf
        pos = 0
        n = len(buf)
        while pos < n:
            i = buf.find(b"\r\n", pos)
            if i < 0:
                break
            head = bytes(buf[pos:i])
            if head.startswith((b"HMSG ", b"MSG ")):
                args = head.split()
                hdr_len = int(args[-2]) if args[0] == b"HMSG" else 0
                total = int(args[-1])
                end = i + 2 + total
                if end + 2 > n:
                    break  # the rest of the message is still on its way
                hdrs = bytes(buf[i + 2 : i + 2 + hdr_len])
                data = bytes(buf[i + 2 + hdr_len : end])
                self._message(args[1], int(args[2]), data, hdrs)
                pos = end + 2
                continue
            pos = i + 2
            if head == b"PING":
                self.out.append(b"PONG\r\n")
            elif head.startswith(b"-ERR"):
                err = head[5:].decode(errors="replace").strip().strip("'")
                low = err.lower()
                if low.startswith("permissions violation for publish"):
                    self.denied = err
                elif low.startswith("permissions violation for subscription"):
                    m = _QUOTED.search(err)
                    subject = m.group(1) if m else ""
                    self.sub_denied.add(subject)
                    sid = self.stamp_subjects.pop(subject, None)
                    self.stamp_sids.pop(sid or 0, None)
                else:  # the server closes the connection after any other error
                    self.close()
                    raise Fallback(f"server error: {err}")
            # +OK, PONG, INFO (cluster updates): nothing to do
        del buf[:pos]

    def _message(self, subject: bytes, sid: int, data: bytes, hdrs: bytes) -> None:
        if sid == 1:
            token = subject[subject.rfind(b".") + 1 :]
            got = self.many.get(token)
            if got is not None:
                got.append((data, hdrs))
            elif token == self.waiting:  # not a late reply to a request given up
                self.replies[token] = (data, hdrs)
            return
        if sid not in self.stamp_sids:
            return
        seq, ts = _stamp(hdrs, self.stream_b)
        if seq:
            self.stamps[seq] = ts
            if len(self.stamps) > KEEP:
                for q in sorted(self.stamps)[: KEEP // 2]:
                    del self.stamps[q]


def _status(hdrs: bytes) -> bool:
    """Whether a header block is a status reply (``NATS/1.0 204 EOB``, ``404``…)."""
    return hdrs[8:9] == b" " and hdrs.startswith(b"NATS/1.0")


def _stamp(raw: bytes, stream: bytes) -> tuple[int, float]:
    """(seq, stored time) of a republished header block of ``stream``; (0, 0) if not one."""
    seq = stamp = b""
    right = False
    for line in raw.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            continue
        name = name.strip()
        if name == b"Nats-Sequence":
            seq = value.strip()
        elif name == b"Nats-Time-Stamp":
            stamp = value.strip()
        elif name == b"Nats-Stream":
            right = value.strip() == stream
    if not (right and seq.isdigit() and stamp):
        return 0, 0.0
    try:
        return int(seq), ns_ts(rfc3339_ns(stamp.decode("ascii")))
    except ValueError:
        return 0, 0.0


__all__ = ["Fallback", "SyncConn"]
