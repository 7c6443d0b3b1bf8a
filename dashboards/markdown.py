"""The dashboard as a markdown report (seed 002's ``metrics/swarm_memory_dashboard.md``).

Same sections and the same strings as the terminal dashboard (both use ``fmt``).
"""

from __future__ import annotations

from collections.abc import Sequence

from dashboards import fmt
from dashboards.safe import text as safe_text
from synthesizer.metrics import SwarmMetrics


def _cell(s: str) -> str:
    return safe_text(s).replace("|", "\\|")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured markdown table."""
    out = ["| " + " | ".join(_cell(h) for h in headers) + " |"]
    out.append("|" + "|".join("---" for _ in headers) + "|")
    out.extend("| " + " | ".join(_cell(c) for c in r) + " |" for r in rows)
    return out


def render(
    m: SwarmMetrics,
    title: str = "Swarm memory dashboard",
    notes: tuple[str, Sequence[str]] | None = None,
    charts: Sequence[tuple[str, str]] | str | None = None,
) -> str:
    """The whole report as markdown text (ends with a newline); ``notes`` is an optional
    last section (heading, bullet lines); ``charts``: (title, image file) pairs embedded
    after the header, or a one-line note saying why there are none."""
    lines = [f"# {title}", "", f"**{fmt.header(m)}**", ""]
    if m.empty:
        lines += [fmt.EMPTY_MESSAGE, ""]
        return "\n".join(lines)
    if isinstance(charts, str):
        lines += ["## Charts", "", charts, ""]
    elif charts:
        lines += ["## Charts", ""]
        for title, image in charts:
            lines += [f"![{title}]({image})", ""]
    lines += ["## Top facts", ""]
    lines += table(fmt.FACT_HEADERS, [fmt.fact_cells(f) for f in m.top]) if m.top else ["none"]
    lines += ["", "## Contested facts", ""]
    if m.contests:
        lines += table(fmt.CONTEST_HEADERS, [fmt.contest_cells(c) for c in m.contests])
    else:
        lines.append("none")
    lines += ["", "## Agents", ""]
    rows, more = fmt.agent_rows(m)
    lines += table(fmt.AGENT_HEADERS, rows) if rows else ["none"]
    if more:
        lines += ["", f"… and {more} more agents"]
    lines += ["", "## Metrics", ""]
    lines += table(("metric", "value"), fmt.metric_rows(m))
    if notes is not None:
        lines += ["", f"## {notes[0]}", ""]
        lines += [f"- {n}" for n in notes[1]]
    lines.append("")
    return "\n".join(lines)
