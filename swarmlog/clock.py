"""The log's clock (DESIGN 2): ``ts`` is stamped by the log when it assigns seq.

A writer's ``Event(ts=…)`` is only its own claim: the log replaces it with
``max(clock(), last stored ts)``, so stored times never decrease along seq and no
writer's clock (10 hours ahead, NaN, negative, 1e20) can move decay, tiers, TTL or
latency metrics. The clock is ``time.time`` unless a test injects another
(``open_log(root, clock=callable)``).

The record bytes of an event are serialized before the log's lock is taken (with the
writer's ``ts``); ``split_ts`` cuts them around that value so that the stamped one can be
put in under the lock at the cost of one ``%``.
"""

from __future__ import annotations

from collections.abc import Callable

Clock = Callable[[], float]
"""A no-argument callable returning unix seconds (``time.time`` by default)."""

_TS = b',"ts":'


def split_ts(inner: bytes) -> tuple[bytes, bytes]:
    """A record's members cut around the ts value: ``(… "ts":, ,"swarm"…)``.

    The envelope's ts follows its id; inside a JSON string a ``"`` is always escaped, so
    the first ``,"ts":`` is the envelope's, and a number never holds a comma.
    """
    i = inner.index(_TS) + 6
    return inner[:i], inner[inner.index(b",", i) :]


def stamp(clock: Clock, last: float) -> float:
    """The next stored ts: the clock's reading, never below ``last`` (nor NaN)."""
    ts = clock()
    if not ts >= last:  # also catches a NaN from a broken clock
        return last
    return float(ts)
