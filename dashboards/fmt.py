"""Text for the dashboards: one place turns ``SwarmMetrics`` into strings.

The terminal (rich) and markdown renderers both lay out these rows, so the two
always show exactly the same numbers.
"""

from __future__ import annotations

from dashboards.safe import text as safe_text
from synthesizer.metrics import AgentActivity, Contest, FactRow, SwarmMetrics

BAR_WIDTH = 8
CONTENT_WIDTH = 100
MAX_AGENT_ROWS = 20
TIERS = ("working", "short_term", "long_term")
STATUSES = ("active", "contested", "superseded", "retracted")

EMPTY_MESSAGE = "Empty swarm: no events yet. Agents write with Swarm.agent(...).share(...)."

FACT_HEADERS = ("fact", "support", "strength", "tier", "ver", "status", "content")
AGENT_HEADERS = (
    "agent",
    "events",
    "shared",
    "recalls",
    "cites",
    "found",
    "reinforced",
    "CAS",
    "conflicts",
)
CONTEST_HEADERS = ("subject", "claims", "state")


def seconds(v: float | None) -> str:
    """A duration in ms below one second, else in s; an em dash when unknown."""
    if v is None:
        return "—"
    if abs(v) < 1.0:
        return f"{v * 1000:.1f} ms"
    return f"{v:.2f} s"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 fact``, ``2 facts`` (``many``: an irregular plural)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def pct(v: float) -> str:
    """A fraction as a percentage with one decimal."""
    return f"{v * 100:.1f}%"


def bar(strength: float, top: float = 1.0) -> str:
    """A fixed-width block bar with the value, e.g. ``██████░░░░ 0.62``."""
    frac = 0.0 if top <= 0 else max(0.0, min(1.0, strength / top))
    full = round(frac * BAR_WIDTH)
    return "█" * full + "░" * (BAR_WIDTH - full) + f" {strength:.2f}"


def clip(text: str, width: int = CONTENT_WIDTH) -> str:
    """One line of at most ``width`` characters (control characters escaped)."""
    one = safe_text(" ".join(text.split()))
    return one if len(one) <= width else one[: width - 1] + "…"


def _bars(counts: list[int]) -> str:
    """Counts as block bars, ``▁`` to ``█`` (an empty histogram: all ``▁``)."""
    from dashboards.activity import sparkline

    return sparkline([float(n) for n in counts]) if any(counts) else "▁" * len(counts)


def _counts(d: dict[str, int], order: tuple[str, ...] = ()) -> str:
    keys = [k for k in order if k in d] + sorted(k for k in d if k not in order)
    return ", ".join(f"{k} {d[k]}" for k in keys) if keys else "none"


def header(m: SwarmMetrics) -> str:
    """The one-line header: swarm, seq, undecided memories, facts."""
    name = m.swarm or "swarm"
    return f"swarm {name} · seq {m.last_seq} · {m.undecided} undecided · {m.facts_total} facts"


def _judging_row(m: SwarmMetrics) -> list[tuple[str, str]]:
    """Possible duplicates waiting for a judge (none: no row)."""
    if not m.open_questions:
        return []
    return [
        (
            "possible duplicates",
            f"{plural(m.open_questions, 'open question')} to a judge;"
            f" {plural(m.possible_duplicates, 'fact')} shown as another's wording",
        )
    ]


def _backlog_row(m: SwarmMetrics) -> list[tuple[str, str]]:
    """The synthesizer's backlog over the last minute (none without the log's series)."""
    if not m.backlog:
        return []
    values = [int(b) for _, b in m.backlog]
    span = m.backlog[-1][0] - m.backlog[0][0]
    return [
        (
            "synthesizer backlog",
            f"now {values[-1]} · max {max(values)} over the last {span:.0f} s"
            f" [{' '.join(map(str, values))}]",
        )
    ]


def metric_rows(m: SwarmMetrics) -> list[tuple[str, str]]:
    """(label, value) lines of the metrics panel."""
    rate = f"{m.rate:.1f} ev/s over {m.span_s:.1f} s" if m.rate is not None else "— ev/s"
    hist = " ".join(str(n) for n in m.strength_hist)
    dups = _counts(m.duplicates, ("exact", "near"))
    return [
        ("events", f"{m.events_total} ({rate})"),
        ("undecided", f"{plural(m.undecided, 'memory', 'memories')} not decided yet"),
        (
            "event lag",
            f"{plural(m.event_lag, 'event')} past the synthesizer's progress mark"
            f" (seq {m.progress})",
        ),
        ("facts by status", f"{m.facts_total} ({_counts(m.by_status, STATUSES)})"),
        ("facts by tier", _counts(m.by_tier, TIERS)),
        (
            "pool",
            f"holds at most {m.capacity} facts · decay {m.decay_rate:g} per tick"
            f" · embedder {m.embedder}",
        ),
        (
            "strength histogram",
            f"{_bars(m.strength_hist)} [{hist}] (deciles 0→1), avg {m.average_strength:.2f}",
        ),
        ("evictions", f"{m.evictions_total} ({_counts(m.evictions)})"),
        ("revivals", f"{plural(m.revivals, 'evicted fact')} brought back by rediscovery"),
        (
            "duplication rate",
            f"{pct(m.duplication_rate)} ({m.duplicates_total} of {m.raw_total} raw; {dups})",
        ),
        ("independent rediscoveries", f"{plural(m.rediscoveries, 'fact')} found by ≥ 2 agents"),
        *_judging_row(m),
        (
            "correlation lift",
            f"{pct(m.correlation_lift)} ({m.cites_peers} of {m.raw_total} raw cite recalled"
            " peer events)",
        ),
        (
            "visibility latency",
            f"p50 {seconds(m.latency_p50)} · p99 {seconds(m.latency_p99)} ({m.latency_n} samples)",
        ),
        *_backlog_row(m),
        (
            "CAS",
            f"{plural(m.cas_attempts, 'attempt')}, {m.cas_successes} ok,"
            f" {plural(m.cas_conflicts, 'conflict')}",
        ),
        (
            "contested facts",
            f"{m.contests_resolved} resolved, {m.contests_open} open"
            f" ({plural(m.resolutions, 'resolution')})",
        ),
        (
            "seed facades",
            f"{_counts(m.facades, ('pool', 'store', 'bank'))} events" if m.facades else "none",
        ),
        (
            "refused writes",
            ", ".join(f"{n} {safe_text(t)}" for t, n in m.refused.items()) if m.refused else "none",
        ),
        *(
            [
                (
                    "global memory",
                    f"{safe_text(m.promotion_target)}: "
                    f"{plural(m.promotion_waiting, 'ended session')} waiting for promotion",
                )
            ]
            if m.promotion_target
            else []
        ),
    ]


def origin_note(f: FactRow) -> str:
    """`` (from a, b)``: the swarms a promoted fact came from ("" for a swarm's own)."""
    return f" (from {', '.join(safe_text(n) for n in f.origins)})" if f.origins else ""


def fact_cells(f: FactRow) -> tuple[str, ...]:
    """Cells of one top-facts row (see FACT_HEADERS)."""
    claim = f" [{f.subject} = {f.value}]" if f.subject is not None else ""
    claim += origin_note(f)
    return (
        safe_text(f.id),
        str(f.support),
        bar(f.strength),
        f.tier,
        str(f.version),
        f.status,
        clip(f.content + claim),
    )


def claim_text(c: Contest) -> str:
    """The claims of one contest, e.g. ``3600 (f12 active, 2 agents); 60 (f15 superseded, 1)``."""
    return "; ".join(
        f"{safe_text(cl.value)} ({safe_text(cl.id)} {cl.status}, {plural(cl.support, 'agent')})"
        for cl in c.claims
    )


def contest_cells(c: Contest) -> tuple[str, ...]:
    """Cells of one contested-facts row (see CONTEST_HEADERS)."""
    state = f"resolved → {c.winner}" if c.resolved else "open"
    return (safe_text(c.subject), claim_text(c), state)


def agent_cells(a: AgentActivity) -> tuple[str, ...]:
    """Cells of one agents row (see AGENT_HEADERS)."""
    return (
        safe_text(a.agent),
        str(a.events),
        str(a.shared),
        str(a.recalls),
        str(a.cites_peers),
        str(a.discovered),
        str(a.reinforced),
        str(a.cas_attempts),
        str(a.cas_conflicts),
    )


def agent_rows(m: SwarmMetrics) -> tuple[list[tuple[str, ...]], int]:
    """Agent rows to show (busiest first) and how many more were left out."""
    shown = m.agents[:MAX_AGENT_ROWS]
    return [agent_cells(a) for a in shown], len(m.agents) - len(shown)
