"""Who seals a JetStream log's hash chain: one holder of a lease, the others stand by.

Before, every appending process sealed its own records and the sealers of N writers
raced for the seal stream's tip (each seal is published with an expected last sequence,
so a loser re-reads and tries again): N writers, N contenders. Now one handle
at a time holds the *seal lease* and seals everything appended by anyone; the others
stand by and take over when the holder stops renewing it.

The lease lives in a small stream ``<S>-sealer`` (subject ``swarmlog-sealer.<S>``): each
message is ``{"holder": "<token>"}`` (a heartbeat; ``""`` = released). Taking it and
renewing it are compare-and-set publishes (``Nats-Expected-Last-Sequence`` = the last
heartbeat seen), so two handles can never both think they took it from the same state.
It is free when it was released, never taken, or when its last heartbeat is older than
``LEASE_TTL`` by the server's clock (the stream info's ``ts`` minus its ``last_ts``, both
the leader's; no local clock is compared with the server's). A holder that cannot renew
(the lease moved on) stands down; a holder that stalls past the TTL may still publish a
seal before it learns that, and the seal stream's own expected-sequence check keeps the
chain single either way.

With per-agent NATS users (swarmlog/jetstream/auth.py) only the synthesizer's and the operator's
users
may publish on the lease and seal subjects: an agent's handle is refused once, remembers
it and never tries again (its records are sealed by the synthesizer's handle).
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

import orjson

from swarmlog.errors import LogUnavailable
from swarmlog.jetstream.proto import (
    CONFLICT_CODES,
    ERR_STREAM_NOT_FOUND,
    H_EXP_LAST_SEQ,
    ApiError,
    companion_config,
    parse_reply,
    rfc3339_ns,
)

if TYPE_CHECKING:
    from swarmlog.jetstream.client import JsClient

PREFIX = "swarmlog-sealer"
LEASE_TTL = 5.0
"""Seconds without a heartbeat after which the lease is free (a holder died)."""
RENEW_EVERY = 1.5
"""Seconds between a holder's heartbeats."""
META_OF = "swarmlog.sealer-of"


def lease_name(stream: str) -> str:
    """The lease stream of ``stream``."""
    return f"{stream}-sealer"


def lease_subject(stream: str) -> str:
    return f"{PREFIX}.{stream}"


def lease_config(stream: str, replicas: int) -> dict[str, Any]:
    """A few heartbeats kept (only the last counts); nothing can be deleted."""
    return companion_config(
        lease_name(stream), [lease_subject(stream)], replicas, {META_OF: stream}, max_msgs=16
    )


class SealLease:
    """This handle's view of the seal lease (runs on the log's loop thread)."""

    def __init__(self, c: JsClient, stream: str, replicas: int) -> None:
        self.c = c
        self.stream = stream
        self.name = lease_name(stream)
        self.subject = lease_subject(stream)
        self.replicas = replicas
        self.me = uuid.uuid4().hex
        self.seq = 0
        """Seq of this handle's last heartbeat while it holds the lease, else 0."""
        self.renewed = 0.0
        self.denied = False
        """The server refused this user the lease (per-agent users): never try again."""
        self.other = ""
        """The token of another handle found holding the lease at the last try ('': none)."""

    @property
    def holding(self) -> bool:
        """Whether this handle holds the lease (renewed within the TTL)."""
        return self.seq > 0 and time.monotonic() - self.renewed < LEASE_TTL

    @property
    def due(self) -> bool:
        """Whether the holder should renew now."""
        return time.monotonic() - self.renewed >= RENEW_EVERY

    async def try_acquire(self) -> bool:
        """Take the lease if it is free (see the module docstring); whether this holds it."""
        if self.denied:
            return False
        if self.holding:
            return True
        try:
            info = await self._info()
            last = int(info["state"]["last_seq"])
            self.other = ""
            if last and not self._expired(info):
                holder = await self._holder(last)
                if holder and holder != self.me:
                    self.other = holder
                    return False
            return await self._beat(last, self.me)
        except LogUnavailable as e:
            if str(e).startswith("permission denied"):
                self.denied = True
                return False
            raise

    async def renew(self) -> bool:
        """Send the next heartbeat; False (and no longer holder) if the lease moved on."""
        if not self.seq:
            return False
        return await self._beat(self.seq, self.me)

    async def release(self) -> None:
        """Give the lease up (a stand-by takes it at once instead of after the TTL)."""
        if self.seq:
            seq, self.seq = self.seq, 0
            try:
                await self._publish(seq, "")
            except (ApiError, LogUnavailable, Exception):
                pass  # it expires by itself

    async def _beat(self, expect: int, holder: str) -> bool:
        try:
            self.seq = await self._publish(expect, holder)
        except ApiError as e:
            if e.err_code not in CONFLICT_CODES:
                raise
            self.seq = 0
            return False
        self.renewed = time.monotonic()
        return True

    async def _publish(self, expect: int, holder: str) -> int:
        data = orjson.dumps({"holder": holder})
        msg = await self.c.request(self.subject, data, {H_EXP_LAST_SEQ: str(expect)})
        return int(parse_reply(msg.data)["seq"])

    def _expired(self, info: dict[str, Any]) -> bool:
        """Whether the last heartbeat is older than the TTL by the server's clock."""
        now, last = info.get("ts"), info["state"].get("last_ts")
        if not now or not last:
            return False
        return (rfc3339_ns(now) - rfc3339_ns(last)) / 1e9 > LEASE_TTL

    async def _holder(self, seq: int) -> str:
        try:
            resp = await self.c.api(f"STREAM.MSG.GET.{self.name}", {"seq": seq})
        except ApiError:
            return ""
        import base64

        d = orjson.loads(base64.b64decode(resp["message"].get("data", "")) or b"{}")
        return str(d.get("holder") or "") if isinstance(d, dict) else ""

    async def _info(self) -> dict[str, Any]:
        """The lease stream's info (creating the stream if it does not exist yet)."""
        for _ in range(2):
            try:
                info = await self.c.api(f"STREAM.INFO.{self.name}")
            except ApiError as e:
                if not (e.err_code == ERR_STREAM_NOT_FOUND or e.code == 404):
                    raise
                await self.c.create_stream(lease_config(self.stream, self.replicas))
                continue
            if (info["config"].get("metadata") or {}).get(META_OF) != self.stream:
                raise LogUnavailable(
                    f"stream {self.name} exists but is not the seal lease of {self.stream}"
                )
            return info
        raise LogUnavailable(f"the seal lease stream {self.name} cannot be created")


__all__ = ["LEASE_TTL", "RENEW_EVERY", "SealLease", "lease_config", "lease_name"]
