"""The synthesizer's backlog over the recent past, from the log's tail (``stats``, dashboard).

Backlog at time ``t``: raw memories logged at or before ``t`` and not decided by ``t``.
From the backlog now (the folded state's ``pending``) it is known at every earlier time:

    backlog(t) = backlog(now) + decisions in (t, now] - memories shared in (t, now]

(each memory shared after ``t`` is either still pending or decided after ``t``; each one
decided after ``t`` was logged before or after ``t``). So one read of the last events
gives the whole series, at O(events read), without the fold keeping anything more (no
change to the state, its checkpoints or its digest). Times are the log's own ``ts``
(the last event's is "now"), so the series of a given log is the same on every read.
"""

from __future__ import annotations

from typing import Any

from swarmlog import Log
from synthesizer import events as T
from synthesizer.state import SwarmState

TAIL_EVENTS = 20_000
"""Events read back at most (a few 10 ms): the series covers what they span."""
DECIDED = frozenset({T.FACT_CREATED, T.FACT_CORROBORATED, T.FACT_REVIVED})


def backlog_series(
    log: Log, state: SwarmState, span_s: float = 60.0, points: int = 13
) -> list[list[float]]:
    """``[[ts, backlog], ...]``, oldest first, ``points`` evenly over the last ``span_s``
    seconds of log time (fewer when the tail read covers less); [] on an empty state."""
    now_seq, now = state.last_seq, state.last_ts
    if not now_seq or points < 1:
        return []
    from synthesizer.retention import oldest_readable  # (history deleted by retention is not read)

    first = max(1, now_seq - TAIL_EVENTS + 1, oldest_readable(log))
    if first > now_seq:
        return []
    marks: list[tuple[float, int]] = []  # (ts, +1 shared / -1 decided), newest last
    oldest = now
    for batch in log.read_batches(first, now_seq):
        for d in batch:
            t = d["type"]
            if t == T.MEMORY_SHARED:
                marks.append((d["ts"], 1))
            elif t in DECIDED and isinstance(_evidence(d), int):
                marks.append((d["ts"], -1))
        if batch:
            oldest = min(oldest, batch[0]["ts"])
    start = max(now - span_s, oldest)
    step = (now - start) / (points - 1) if points > 1 else 0.0
    times = [start + i * step for i in range(points)] if step > 0 else [now]
    out: list[list[float]] = []
    backlog = len(state.pending)
    k = len(marks)
    for t in reversed(times):  # walk back from now, undoing what came after t
        while k and marks[k - 1][0] > t:
            k -= 1
            backlog -= marks[k][1]
        out.append([t, max(0, backlog)])
    out.reverse()
    return out


def _evidence(d: dict[str, Any]) -> object:
    body = d.get("body")
    return body.get("evidence") if isinstance(body, dict) else None


__all__ = ["TAIL_EVENTS", "backlog_series"]
