"""The log's clock (docs/design.md §2): ``ts`` is stamped by the log when it assigns seq.

A writer's ``Event(ts=…)`` is only its own claim: the log replaces it with
``max(clock(), last stored ts)``, so stored times never decrease along seq and no
writer's clock (10 hours ahead, NaN, negative, 1e20) can move decay, tiers, TTL or
latency metrics. The clock is ``time.time`` unless a test injects another
(``open_log(root, clock=callable)``). A FileLog also bounds how far one append may move
swarm time past the swarm's own recent readings (``bounded_stamp``), so a writer whose
clock stepped hours ahead cannot move it either.

The record bytes of an event are serialized before the log's lock is taken (with the
writer's ``ts``); ``split_ts`` cuts them around that value so that the stamped one can be
put in under the lock at the cost of one ``%``.
"""

from __future__ import annotations

import math
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


MAX_STEP = 60.0
"""Seconds one append may move swarm time past the swarm's own recent clock readings
(docs/architecture.md, "The swarm clock")."""
SLEW = 2.0
"""At most this many seconds of swarm time per second of real time while a larger jump
is absorbed."""


def bounded_stamp(
    reading: float, last: float, cap_ts: float, cap_at: int, now_at: int
) -> tuple[float, tuple[float, int]]:
    """The next stored ts and the new ceiling ``(cap_ts, cap_at)`` (FileLog's shared clock).

    ``reading`` is the writer's clock, ``last`` the last stored ts, ``(cap_ts, cap_at)``
    the ceiling kept in the writer index and when it was set (``cap_at`` 0: unknown),
    ``now_at`` the host's boot-time clock now (nanoseconds; no wall-clock step moves it).
    The ts is the reading, never below ``last`` (nor NaN) and never above the ceiling
    grown at ``SLEW`` since it was set; each reading then lowers the ceiling to itself +
    ``MAX_STEP`` (never below the ts stamped). Without a known ceiling, as ``stamp``.
    """
    ok = reading == reading and reading != math.inf
    if cap_at and now_at >= cap_at:
        ceiling = cap_ts + SLEW * (now_at - cap_at) / 1e9
        hi = last if ceiling < last else ceiling
        if not reading >= last:
            ts = last
        elif reading > hi:
            ts = hi
        else:
            ts = reading
        new = min(ceiling, reading + MAX_STEP) if ok else ceiling
    else:
        ts = reading if reading >= last and ok else last
        new = (reading if ok else ts) + MAX_STEP
    return float(ts), (max(new, ts), now_at)
