"""JetStreamLog: the Log contract on a NATS JetStream stream, for swarms beyond one machine.

Mapping (details of subjects and payloads in proto.py):

- **seq** is the stream sequence. The stored payload is the record without seq (crc over
  the rest); readers put the stream sequence in front. ``verify()`` checks that stream
  sequences run gapless from 1 and every payload's crc.
- **Idempotency**: every message carries ``Nats-Msg-Id`` = event id. Inside the stream's
  ``duplicate_window`` (default 10 minutes) the server refuses a second copy; the log then
  finds the stored original with a *probe* (a publish that can never be stored, answered
  "duplicate, seq N" for a known id) and returns it, or refuses the append if it asks
  for other content (idreuse.py). An id re-sent after the window is stored again, and
  ``verify()`` reports the duplicate. A retried CAS append answers
  "wrong last sequence" rather than "duplicate" (the server checks expectations first),
  so every conflict is probed too: a timed-out append that had landed is returned, never
  mistaken for a conflict.
- **Expectations** (CAS): one subject per key; ``version(key)`` is the seq of the last
  message on it. ``expect`` becomes ``Nats-Expected-Last-Subject-Sequence`` headers that
  the server checks at commit, under its lock (see ``proto.plan_expectations`` for how
  several keys map onto a batch's messages). When a batch has more expected keys than
  messages can carry, the log reads every expected version and the stream's last seq L,
  checks them itself and publishes with ``Nats-Expected-Last-Sequence: L`` — a stream-wide
  fence that fails (and is retried) if anything at all was appended since the check.
- **append_many** is one atomic batch (``Nats-Batch-*`` headers, nats-server 2.12+ with
  ``allow_atomic``): all events are stored or none, at consecutive seqs. At most 1000
  events (the server's limit). A stream or server without atomic batches refuses batches
  of more than one event with a clear error; it never falls back to a non-atomic publish.
- **ts** is the server's stored time of the message: the stream republishes each
  message's headers (seq, time) and the writer, subscribed to its agents' stamps,
  has them when the PubAck comes (stampfeed.py; older streams: consumer or read-back).
- **One thread, one socket**: a single append (and a follower's last seq and short
  read) is published on the caller's own thread, on a blocking connection of the
  handle, where it can; batches, busy moments and anything that connection cannot see
  through go to the async client on the loop thread, which stays the authority
  (swarmlog/jetstream/syncpath/).
- **follow** runs an ordered push consumer from ``from_seq``; **read** uses pipelined
  Direct Get batches; **last_seq** and **version** ask the stream leader.
- **Hash chain** (tamper evidence): every record's chain value (the FileLog one) is kept
  in the seal stream ``S-chain``, extended in the background by the one handle that holds
  the seal lease, under an expected-last-sequence guard (swarmlog/jetstream/seal/); a
  closing stand-by waits for the holder's seal of its appends. ``verify()`` recomputes it.
- **redact** (erasure): the redacted record goes to the side stream ``S-redact``, then the
  original is deleted with erase; reads serve the redaction record at its seq
  (redact.py, side.py).

``ensure_stream`` (what ``swarmlog init --url`` runs) sets the stream up; see its docstring
for the settings and the server's ``sync_interval``.

The class is split by role: setup.py (the stream's configuration), core.py (connection,
loop, decoding), read.py (read, follow), append.py (append), verify.py (verify),
redact.py with side.py (erasure), swarmlog/jetstream/seal/chain.py (the hash chain);
the JetStream protocol details (subjects, payloads, headers) are in proto.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from swarmlog.checkpoint import CheckpointStore
from swarmlog.contract import Log, VerifyReport
from swarmlog.errors import LogUnavailable
from swarmlog.jetstream.append import JsAppender
from swarmlog.jetstream.core import READ_BATCH, StreamCorruption
from swarmlog.jetstream.proto import MAX_BATCH
from swarmlog.jetstream.redact import redact
from swarmlog.jetstream.setup import (
    DEFAULT_DUPLICATE_WINDOW,
    META_FORMAT,
    META_ID,
    META_NAME,
    ensure_stream,
    stream_config,
)
from swarmlog.jetstream.verify import verify


class JetStreamLog(JsAppender, Log):
    """The Log contract on a JetStream stream (see the module docstring)."""

    max_batch = MAX_BATCH

    def __enter__(self) -> JetStreamLog:
        return self

    def __repr__(self) -> str:
        return f"JetStreamLog({self.target!r}, name={self.name!r})"

    @property
    def swarm_id(self) -> str:
        return self._swarm_id or super().swarm_id

    @property
    def checkpoints(self) -> CheckpointStore:
        if self._ckpt is None:
            from swarmlog.jetstream.checkpoint import ObjectStoreCheckpoints

            if self._closed:
                raise LogUnavailable("the log is closed")
            self._ckpt = ObjectStoreCheckpoints(
                self._c, self._lt, self.stream, self.replicas, self.timeout, owner=self
            )
        return self._ckpt

    def verify(self) -> VerifyReport:
        """Every seq served, every crc, no duplicate id, the hash chain (verify.py)."""
        return verify(self)

    def redact(self, changes: Mapping[int, Mapping[str, Any] | None]) -> int:
        """Erase the records at these seqs (``Log.redact``): redaction record stored in
        the side stream, original deleted with erase (redact.py says how and why)."""
        return redact(self, changes)

    def redactions(self) -> int:
        """Redactions done on this log (``Log.redactions``): records stored in the side
        stream so far (each redacted record adds one; a re-run's may add more)."""
        self._run(self._side.refresh(), 2 * self.timeout + 1, "redactions")
        return int(self._side.loaded)


__all__ = [
    "DEFAULT_DUPLICATE_WINDOW",
    "META_FORMAT",
    "META_ID",
    "META_NAME",
    "READ_BATCH",
    "JetStreamLog",
    "StreamCorruption",
    "ensure_stream",
    "stream_config",
]
