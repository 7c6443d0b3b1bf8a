"""The terminal dashboard: rich renderables built from ``SwarmMetrics``.

``render(metrics)`` returns one renderable (header, top facts, contested facts,
agents, metrics panel) that a Console prints once or a ``Live`` refreshes; ``watch``
re-renders whenever the log changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.box import SIMPLE_HEAD
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from dashboards import fmt
from synthesizer.metrics import TOP_FACTS, SwarmMetrics, compute
from synthesizer.swarm import Swarm

STATUS_STYLE = {"active": "green", "contested": "yellow", "superseded": "dim", "retracted": "red"}


def _table(
    title: str, headers: tuple[str, ...], right: tuple[int, ...] = (), wide: int | None = -1
) -> Table:
    """A table whose column ``wide`` (-1: the last; None: none) takes the spare width and
    wraps; the other columns never wrap."""
    t = Table(
        title=title, title_justify="left", title_style="bold", expand=wide is not None,
        box=SIMPLE_HEAD,
    )
    grow_at = None if wide is None else (len(headers) - 1 if wide < 0 else wide)
    for i, h in enumerate(headers):
        grow = i == grow_at
        t.add_column(
            h,
            justify="right" if i in right else "left",
            no_wrap=not grow,
            overflow="fold" if grow else "ellipsis",
            ratio=1 if grow else None,
        )
    return t


def facts_table(m: SwarmMetrics) -> RenderableType:
    """Top facts with support, strength bar, tier, version and status."""
    t = _table("Top facts", fmt.FACT_HEADERS, right=(1, 4))
    last = t.columns[-1]  # one line per fact: the content is cut, never wrapped
    last.no_wrap, last.overflow = True, "ellipsis"
    for f in m.top:
        cells = list(fmt.fact_cells(f))
        style = STATUS_STYLE.get(f.status, "")
        t.add_row(*cells[:5], Text(cells[5], style=style), Text(cells[6]))  # never markup
    if not m.top:
        return Text("Top facts: none yet", style="dim")
    return t


def contests_table(m: SwarmMetrics) -> RenderableType:
    """Subjects with disagreeing claims and how they were resolved."""
    if not m.contests:
        return Text("Contested facts: none", style="dim")
    t = _table("Contested facts", fmt.CONTEST_HEADERS, wide=1)
    for c in m.contests:
        subject, claims, state = fmt.contest_cells(c)
        t.add_row(
            Text(subject), Text(claims), Text(state, style="green" if c.resolved else "yellow")
        )
    return t


def agents_table(m: SwarmMetrics) -> RenderableType:
    """Per-agent activity, busiest first."""
    rows, more = fmt.agent_rows(m)
    if not rows:
        return Text("Agents: none yet", style="dim")
    t = _table("Agents", fmt.AGENT_HEADERS, right=(1, 2, 3, 4, 5, 6, 7, 8), wide=None)
    for r in rows:
        t.add_row(Text(r[0]), *r[1:])
    if more:
        t.caption = f"… and {more} more agents"
    return t


def metrics_panel(m: SwarmMetrics) -> RenderableType:
    """The metrics (docs/design.md §13) as a two-column grid in a panel."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for label, value in fmt.metric_rows(m):
        grid.add_row(label, value)
    return Panel(grid, title="Metrics", title_align="left")


NARROW = 110
"""Below this many columns the tables drop columns rather than squeeze the content."""


def narrow_facts_table(m: SwarmMetrics) -> RenderableType:
    """Top facts for a narrow terminal: id, support, strength, status, and the content
    with its board value first, one line each."""
    if not m.top:
        return Text("Top facts: none yet", style="dim")
    t = _table("Top facts", ("fact", "sup", "strength", "status", "value / content"), (1,))
    last = t.columns[-1]
    last.no_wrap, last.overflow = True, "ellipsis"
    for f in m.top:
        full = round(max(0.0, min(1.0, f.strength)) * 4)
        claim = f"[{f.subject}={f.value}] " if f.subject is not None else ""
        if f.subject is None and f.value is not None:
            claim = f"[{fmt.clip(f.value, 24)}] "
        t.add_row(
            fmt.safe_text(f.id), str(f.support), f"{'█' * full}{'░' * (4 - full)} {f.strength:.2f}",
            Text(f.status, style=STATUS_STYLE.get(f.status, "")),
            Text(fmt.clip(claim + f.content)),  # Text: agent content is never markup
        )  # fmt: skip
    return t


def narrow_agents_table(m: SwarmMetrics) -> RenderableType:
    """Per-agent activity for a narrow terminal: the main counts, names in full."""
    if not m.agents:
        return Text("Agents: none yet", style="dim")
    t = _table("Agents", ("agent", "events", "shared", "recalls", "found", "CAS/confl"),
               right=(1, 2, 3, 4, 5), wide=None)  # fmt: skip
    shown = m.agents[: fmt.MAX_AGENT_ROWS]
    for a in shown:
        t.add_row(Text(fmt.safe_text(a.agent)), str(a.events), str(a.shared), str(a.recalls),
                  str(a.discovered), f"{a.cas_attempts}/{a.cas_conflicts}")  # fmt: skip
    if len(m.agents) > len(shown):
        t.caption = f"… and {len(m.agents) - len(shown)} more agents"
    return t


def render(m: SwarmMetrics, width: int | None = None) -> RenderableType:
    """The whole dashboard; an empty swarm gets the header and a one-line notice. Given a
    ``width`` under ``NARROW``, the fact and agent tables keep fewer columns."""
    head = Panel(Text(fmt.header(m), style="bold"), title="swarmlog", title_align="left")
    if m.empty:
        return Group(head, Text(fmt.EMPTY_MESSAGE))
    if width is not None and width < NARROW:
        return Group(
            head, narrow_facts_table(m), contests_table(m), narrow_agents_table(m),
            metrics_panel(m),
        )  # fmt: skip
    return Group(head, facts_table(m), contests_table(m), agents_table(m), metrics_panel(m))


def watch(
    swarm: Swarm,
    show: Callable[[SwarmMetrics], None],
    *,
    top: int = TOP_FACTS,
    max_refreshes: int | None = None,
    duration: float | None = None,
    wait: float = 1.0,
    stop: Callable[[], bool] | None = None,
) -> int:
    """Call ``show`` with fresh metrics now and whenever the log changes; return how
    many times it was called.

    Sleeps in ``log.wait_for_change`` (file-system notifications, with a timeout net)
    and folds only when the last seq moved, so an idle swarm costs nothing. Stops after
    ``max_refreshes`` calls or ``duration`` seconds (None: until interrupted), or once
    ``stop()`` says so (checked at least every ``wait`` s, or every 0.2 s with ``stop``).
    """
    if stop is not None:
        wait = min(wait, 0.2)
    deadline = None if duration is None else time.monotonic() + duration
    seen = -1
    shown = 0
    while True:
        if swarm.log.last_seq != seen:
            st = swarm.refresh()
            seen = st.last_seq
            show(compute(st, swarm=swarm.name, top=top, log=swarm.log))
            shown += 1
            if max_refreshes is not None and shown >= max_refreshes:
                return shown
        left = wait if deadline is None else min(wait, deadline - time.monotonic())
        if left <= 0 or (stop is not None and stop()):
            return shown
        swarm.log.wait_for_change(left)
