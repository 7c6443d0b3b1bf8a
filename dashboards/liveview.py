"""The live dashboard sized to the terminal: every line fits its width, all fits its height.

``dashboard --live`` on an 80×24 terminal used to show only the top of the full report
(each fact wrapped to ~5 lines; the agents and metrics never came into view). This view
is built line by line for a given size: a header, sparklines of events/s and decision
latency over time, the strength histogram as bars, one line per fact (its board value
first, truncated), open contests, the busiest agents, and an "updated" line with the
quit hint. Rows left over go to facts; with few rows, facts shrink first.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from dashboards import fmt
from dashboards.activity import Activity, sparkline
from dashboards.safe import text as safe_text
from dashboards.safe import when
from synthesizer.metrics import SwarmMetrics

STATUS_STYLE = {"active": "green", "contested": "yellow", "superseded": "dim", "retracted": "red"}
QUIT_HINT = "q or Ctrl-C quits"
SPARK = 32


def cut(s: str, width: int) -> str:
    """``s`` on one line of at most ``width`` characters (… when cut)."""
    one = safe_text(s)  # control characters escaped; padding kept
    return one if len(one) <= width else one[: max(0, width - 1)] + "…"


def _line(s: str, width: int, style: str = "") -> Text:
    return Text(cut(s, width), style=style, no_wrap=True, overflow="ellipsis")


def fact_line(f: object, width: int) -> Text:
    """One fact on one line: id, support, strength bar, status, [subject=value] content."""
    from synthesizer.metrics import FactRow

    assert isinstance(f, FactRow)
    claim = ""
    if f.subject is not None:
        claim = f"[{safe_text(f.subject)}={safe_text(f.value)}] "
    elif f.value is not None:
        claim = f"[{cut(f.value, 24)}] "
    full = round(max(0.0, min(1.0, f.strength)) * 4)
    head = f"{safe_text(f.id):<6} x{f.support:<2} {'█' * full}{'░' * (4 - full)} {f.strength:.2f} "
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(head)
    t.append(f"{f.status[:6]:<7}", style=STATUS_STYLE.get(f.status, ""))
    t.append(cut(claim + f.content + fmt.origin_note(f), max(0, width - len(head) - 7)))
    return t


def _series(act: Activity, m: SwarmMetrics, width: int) -> list[Text]:
    span = act.end - act.start
    rate_now = next((r for r in reversed(act.rate) if r), 0.0) if act.rate else 0.0
    spark_w = max(8, min(SPARK, width - 40))
    over = f"last {fmt.seconds(span)}" if act.rate else "no events"
    ev = f"events/s  {sparkline(list(act.rate), spark_w)}  now {rate_now:.1f}/s · {over}"
    lat = (
        f"latency   {sparkline(act.latency, spark_w)}  p50 {fmt.seconds(m.latency_p50)}"
        f" · p99 {fmt.seconds(m.latency_p99)}"
    )
    hist = m.strength_hist
    bars = sparkline([float(n) for n in hist]) if any(hist) else " " * len(hist)
    st = (
        f"strength  0 {bars} 1  avg {m.average_strength:.2f} · "
        + " · ".join(f"{k} {m.by_status[k]}" for k in fmt.STATUSES if m.by_status.get(k))
    )
    return [_line(ev, width), _line(lat, width), _line(st, width)]


def _agents(m: SwarmMetrics, act: Activity, width: int, rows: int) -> list[Text]:
    out = []
    for a in m.agents[:rows]:
        spark = sparkline([float(x) for x in act.shares.get(a.agent, [])], 12)
        out.append(
            _line(
                f"{safe_text(a.agent):<14} {spark:<12} ev {a.events:<6} shared {a.shared:<5}"
                f" recalls {a.recalls:<5} CAS {a.cas_attempts}/{a.cas_conflicts}",
                width,
            )
        )
    return out


def render_live(
    m: SwarmMetrics, act: Activity, width: int, height: int, updated: float
) -> RenderableType:
    """The dashboard in at most ``height`` lines of at most ``width`` characters."""
    head = _line(f"swarmlog · {fmt.header(m)}", width, "bold")
    foot = _line(f"updated {when(updated, '%H:%M:%S')} UTC · seq {m.last_seq} · {QUIT_HINT}",
                 width, "dim")  # fmt: skip
    if m.empty:
        return Group(head, _line(fmt.EMPTY_MESSAGE, width), foot)
    series = _series(act, m, width)
    contests = [
        _line(
            f"contest {safe_text(c.subject)}: {fmt.claim_text(c)}"
            f" ({'resolved → ' + safe_text(c.winner) if c.resolved else 'open'})",
            width,
            "yellow" if not c.resolved else "",
        )
        for c in m.contests
        if not c.resolved
    ][:2]
    free = height - 2 - len(series) - len(contests) - 2  # header, footer, 2 titles
    n_agents = min(len(m.agents), max(1, free // 4), 5)
    n_facts = max(1, free - n_agents)
    agents = _agents(m, act, width, n_agents)
    facts = [fact_line(f, width) for f in m.top[:n_facts]]
    more = len(m.agents) - n_agents
    lines: list[RenderableType] = [head, *series]
    lines.append(_line(f"top facts ({len(facts)} of {m.facts_total})", width, "bold"))
    lines += facts or [_line("none yet", width, "dim")]
    lines += contests
    lines.append(_line(f"agents ({len(m.agents)}{f', {more} not shown' if more > 0 else ''})",
                       width, "bold"))  # fmt: skip
    lines += agents
    lines.append(foot)
    return Group(*lines[: max(3, height)])


__all__ = ["QUIT_HINT", "cut", "fact_line", "render_live"]
