"""Everything of nats-py's that is not public API, in one place: an adapter.

Why this exists: a JetStream log reads an acknowledgement or a stamp per append, and
nats-py's public path for a message builds a ``Msg``, queues it and runs a task per
message. The log's hot subscriptions (PubAcks, the appends' stamps: stampfeed.py) are
instead handled *inline*, as the read loop parses each message, which takes three things
nats-py does not promise:

* ``Client._process_msg(sid, subject, reply, data, headers)``: the coroutine nats-py's
  protocol parser (``nats.protocol.parser``) awaits for every MSG/HMSG; overridden here
  to hand a subscription's messages to a plain function.
* ``Client._parse_header_lines(raw)``: the static header-block parser; replaced by our
  faster one (reads parse one header block per event).
* ``Subscription._id``: the sid a subscription is known by in ``_process_msg``.

nats-py is pinned in pyproject.toml to the minor release these were checked against,
and ``tests/test_natsprivate.py`` fails loudly (naming what moved) if a nats-py release
renames one of them, changes its signature, or stops calling ``_process_msg`` from its
parser. Nothing else in swarmlog touches a private name of nats-py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nats.aio.client import Client

Inline = Callable[[bytes, bytes, "bytes | None"], None]
"""A message handled on the read loop: (subject, data, raw header block)."""

OVERRIDDEN: dict[str, tuple[str, ...]] = {
    "_process_msg": ("self", "sid", "subject", "reply", "data", "headers"),
    "_parse_header_lines": ("raw",),
}
"""The private ``Client`` methods this module overrides, with the parameters nats-py's
own versions take (what the fence test compares)."""


class InlineClient(Client):
    """nats-py's client with a replaceable header parser and subscriptions handled
    inline (``inline``: sid -> function of a message's subject, data and raw header
    block), called as the read loop parses the message: no Msg, no queue, no task per
    message."""

    def __init__(self, header_lines: Callable[[bytes], dict[str, str]]) -> None:
        super().__init__()
        self.inline: dict[int, Inline] = {}
        # an instance attribute, so called unbound, as nats-py calls its staticmethod
        self._parse_header_lines = header_lines  # type: ignore[method-assign, assignment]

    async def _process_msg(
        self, sid: int, subject: bytes, reply: bytes, data: bytes, headers: bytes
    ) -> None:
        fn = self.inline.get(sid)
        if fn is None:
            await super()._process_msg(sid, subject, reply, data, headers)
        else:
            fn(subject, data, headers)

    def handle_inline(self, sub: Any, fn: Inline) -> None:
        """Send ``sub``'s messages to ``fn`` on the read loop from now on."""
        self.inline[subscription_sid(sub)] = fn


def subscription_sid(sub: Any) -> int:
    """The sid nats-py passes to ``_process_msg`` for ``sub``'s messages."""
    return int(sub._id)
