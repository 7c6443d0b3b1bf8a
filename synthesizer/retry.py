"""Idempotent appends for the agent-facing API: a retry reuses the event ids it retries.

An append that gets no answer (``LogUnavailable`` with ``maybe_stored``; on JetStream, an
outage longer than the client timeout) may have landed. Appending a *new* event with the
same content would then store it twice, so every API path that appends (share, recall,
reinforce, feedback, ticks, board writes) goes through ``PendingAppends``:

- the call builds its events once and retries the *same* events (same ids) a few times:
  the log returns the stored originals of any that landed (docs/design.md §2: idempotency);
- if it still has no answer, the events are remembered by their content, and the error
  says so: calling the same method again with the same arguments reuses those ids, so a
  caller's own retry cannot duplicate either. A success forgets them.

On JetStream the server recognises an id for its ``duplicate_window`` (10 minutes by
default): a retry later than that may store a second copy, which ``verify()`` reports.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import orjson

from swarmlog import Event, Log, LogUnavailable, StoredEvent, SwarmlogError

RETRIES = 2
"""Extra attempts with the same events after an ambiguous failure."""
REMEMBER = 1024
"""Unanswered appends remembered for a later identical call (oldest forgotten first)."""


def _fingerprint(events: Sequence[Event], expect: Mapping[str, int] | None) -> bytes | None:
    """What identifies "the same call": every event's content without id and ts."""
    try:
        parts = [
            {k: v for k, v in ev.to_dict().items() if k not in ("id", "ts", "seq", "crc")}
            for ev in events
        ]
        return orjson.dumps(
            [parts, sorted((expect or {}).items())],
            option=orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY,
        )
    except (TypeError, orjson.JSONEncodeError):
        return None


class PendingAppends:
    """Appends of one Swarm handle, retried with the same ids (see module docstring)."""

    def __init__(self, log: Log, retries: int = RETRIES, pause: float = 0.25) -> None:
        self.log = log
        self.retries = retries
        self.pause = pause
        self._lock = threading.Lock()
        self._pending: OrderedDict[bytes, list[Event]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._pending)

    def append(self, event: Event, expect: Mapping[str, int] | None = None) -> StoredEvent:
        """Append one event idempotently; return the stored event."""
        return self.append_many([event], expect)[0]

    def append_many(
        self, events: Sequence[Event], expect: Mapping[str, int] | None = None
    ) -> list[StoredEvent]:
        """Append a batch idempotently (all or nothing); return the stored events."""
        fp = None
        prior = None
        if self._pending:  # only then can this call be a retry (keeps the usual path cheap)
            fp = _fingerprint(events, expect)
            with self._lock:
                prior = self._pending.get(fp) if fp is not None else None
        evs = list(prior if prior is not None else events)
        attempt = 0
        while True:
            try:
                if len(evs) == 1:
                    stored = [self.log.append(evs[0], expect)]
                else:
                    stored = self.log.append_many(evs, expect)
            except LogUnavailable as e:
                if not e.maybe_stored:
                    raise
                if attempt < self.retries:
                    attempt += 1
                    time.sleep(self.pause * attempt)
                    continue
                self._remember(fp or _fingerprint(events, expect), evs)
                ids = ", ".join(ev.id for ev in evs[:3]) + (" …" if len(evs) > 3 else "")
                raise LogUnavailable(
                    f"{e} (tried {attempt + 1} times with event id(s) {ids}); calling the "
                    "same method again with the same arguments is safe: it reuses these ids",
                    maybe_stored=True,
                ) from None
            except SwarmlogError:
                self._forget(fp)  # a definite answer (conflict, invalid event): not pending
                raise
            except BaseException:  # interrupted mid-append: as ambiguous as a timeout
                self._remember(fp or _fingerprint(events, expect), evs)
                raise
            self._forget(fp)
            return stored

    def _remember(self, fp: bytes | None, evs: list[Event]) -> None:
        if fp is None:
            return
        with self._lock:
            self._pending[fp] = evs
            self._pending.move_to_end(fp)
            while len(self._pending) > REMEMBER:
                self._pending.popitem(last=False)

    def _forget(self, fp: bytes | None) -> None:
        if fp is not None:
            with self._lock:
                self._pending.pop(fp, None)
