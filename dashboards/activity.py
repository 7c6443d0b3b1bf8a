"""Recent activity over time, read from the tail of the log: events per second and the
synthesizer's decision latency in time buckets, and per-agent shares.

``SwarmMetrics`` holds totals; a dashboard also wants *when*. Reading the last
``TAIL`` events (not the whole log: a million-event swarm costs the same) and bucketing
them by the log's ``ts`` gives the series the sparklines and the report's charts draw.
Decision latency is the ``ts`` of a ``fact.created``/``fact.corroborated`` minus the
``ts`` of the raw memory it names as evidence (both in the tail). Not part of the fold:
this is a face's view of the log, with the same clock (the log's ``ts``) as the metrics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from swarmlog import Log

TAIL = 5000
"""Events read from the end of the log."""

BUCKETS = 40
"""Time buckets of a series."""

DECISIONS = ("fact.created", "fact.corroborated")
SHARES = ("memory.shared",)
TICKS = "▁▂▃▄▅▆▇█"


@dataclass
class Activity:
    """Series over ``[start, end]`` (log ts) in ``len(rate)`` equal buckets."""

    start: float = 0.0
    end: float = 0.0
    rate: list[float] = field(default_factory=list)
    """Events per second in each bucket."""
    latency: list[float | None] = field(default_factory=list)
    """Median decision latency (s) of the decisions in each bucket (None: none)."""
    shares: dict[str, list[int]] = field(default_factory=dict)
    """Per agent: memories shared in each bucket."""
    events: int = 0

    @property
    def bucket_s(self) -> float:
        """Seconds per bucket."""
        return (self.end - self.start) / len(self.rate) if self.rate else 0.0


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def activity(log: Log, tail: int = TAIL, buckets: int = BUCKETS) -> Activity:
    """The series of the last ``tail`` events (an empty Activity for an empty log)."""
    last = log.last_seq
    if last < 1:
        return Activity()
    evs = list(log.read(max(1, last - tail + 1), last))
    stamps = [e.ts for e in evs if math.isfinite(e.ts)]
    if not stamps:
        return Activity()
    start, end = min(stamps), max(stamps)
    span = max(end - start, 1e-9)
    width = span / buckets

    def slot(ts: float) -> int:
        return min(buckets - 1, max(0, int((ts - start) / width)))

    counts = [0] * buckets
    lat: list[list[float]] = [[] for _ in range(buckets)]
    shares: dict[str, list[int]] = {}
    ts_of = {e.seq: e.ts for e in evs if e.type in SHARES}
    for e in evs:
        if not math.isfinite(e.ts):
            continue
        i = slot(e.ts)
        counts[i] += 1
        if e.type in SHARES:
            shares.setdefault(e.agent, [0] * buckets)[i] += 1
        elif e.type in DECISIONS:
            src = ts_of.get(e.body.get("evidence", 0))
            if src is not None and e.ts >= src:
                lat[i].append(e.ts - src)
    per_s = [c / width if span > 1e-6 else float(c) for c in counts]
    return Activity(
        start=start,
        end=end,
        rate=per_s,
        latency=[_median(x) if x else None for x in lat],
        shares=shares,
        events=len(evs),
    )


def sparkline(values: list[float | None], width: int | None = None) -> str:
    """Values as block characters, lowest ▁ to highest █ (a gap for None); resampled to
    ``width`` characters (the max of each group) when given."""
    vals = list(values)
    if width is not None and vals and width < len(vals):
        step = len(vals) / width
        groups = [vals[int(i * step) : max(int((i + 1) * step), int(i * step) + 1)]
                  for i in range(width)]  # fmt: skip
        vals = [max((v for v in g if v is not None), default=None) for g in groups]
    known = [v for v in vals if v is not None]
    if not known:
        return " " * len(vals)
    top = max(known)
    if top <= 0:
        return "".join(" " if v is None else TICKS[0] for v in vals)
    return "".join(
        " " if v is None else TICKS[min(len(TICKS) - 1, int(v / top * (len(TICKS) - 1) + 0.5))]
        for v in vals
    )


def hbar(n: int, top: int, width: int) -> str:
    """A horizontal bar of ``n`` out of ``top`` in ``width`` cells (eighths for the tip)."""
    if top <= 0 or n <= 0:
        return ""
    eighths = round(n / top * width * 8)
    full, part = divmod(max(1, eighths), 8)
    return "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")


__all__ = ["Activity", "activity", "hbar", "sparkline"]
