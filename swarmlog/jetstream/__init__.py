"""The NATS JetStream backend: the same Log contract on a stream, for swarms beyond one machine.

``JetStreamLog`` (``log``) is assembled by role: ``setup`` (the stream's configuration),
``core`` and ``client`` (the connection on a private event loop, ``loop``), ``read``,
``append``, ``verify``, ``redact`` with ``side`` (erasure), ``seal/`` (the hash chain),
``stampfeed`` and ``readback`` (the server's time of appends), ``syncpath/`` (a single
append published on the caller's own thread), ``auth`` (per-agent users);
``proto`` and ``subjects`` hold the protocol details. Code above ``swarmlog`` imports these
names from here, never the modules themselves. Needs the ``nats`` extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from swarmlog.jetstream.auth import authorization
    from swarmlog.jetstream.core import StreamCorruption
    from swarmlog.jetstream.log import JetStreamLog
    from swarmlog.jetstream.proto import parse_target
    from swarmlog.jetstream.setup import ensure_stream, stream_config

__all__ = [
    "JetStreamLog",
    "StreamCorruption",
    "authorization",
    "ensure_stream",
    "parse_target",
    "stream_config",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "JetStreamLog": ".log",
        "StreamCorruption": ".core",
        "authorization": ".auth",
        "ensure_stream": ".setup",
        "parse_target": ".proto",
        "stream_config": ".setup",
    },
)
