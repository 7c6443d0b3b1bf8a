"""``stats``: the metrics panel as plain lines or JSON, declared without typer (no rich,
no dashboard, no demo), so a script polling it pays only for the metrics."""

from __future__ import annotations

from typing import Any

from dashboards.common import echo, emit_json, open_swarm
from dashboards.spec import WHERE, Command


def stats(ctx: Any, root: str | None, url: str | None, json: bool) -> None:
    """The metrics panel as plain lines (or JSON)."""
    from dashboards import fmt
    from synthesizer.metrics import compute

    swarm = open_swarm(ctx, root, url)
    try:
        state = swarm.refresh()
        m = compute(state, swarm=swarm.name, log=swarm.log)
        cats = state.stats().by_category
    finally:
        swarm.close()
    if json:
        emit_json({**m.to_dict(), "by_category": cats})
        return
    echo(fmt.header(m))
    if m.empty:
        echo(fmt.EMPTY_MESSAGE)
        return
    for label, value in fmt.metric_rows(m):
        echo(f"{label}: {value}")
    echo(f"facts by category: {category_counts(cats)}")


def category_counts(cats: dict[str, int], most: int = 12) -> str:
    """``bug 12, discovery 7, … (3 more)``: the biggest categories first."""
    from dashboards.safe import text

    top = sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{text(k)} {n}" for k, n in top[:most]) or "none"
    return shown + (f", … ({len(top) - most} more)" if len(top) > most else "")


STATS = Command("stats", stats.__doc__ or "", WHERE, stats)
