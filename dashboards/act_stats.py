"""``stats``: the metrics panel as plain lines or JSON, declared without typer (no rich,
no dashboard, no demo), so a script polling it pays only for the metrics."""

from __future__ import annotations

from typing import Any

from .common import echo, emit_json, open_swarm
from .spec import WHERE, Command


def stats(ctx: Any, root: str | None, url: str | None, json: bool) -> None:
    """The metrics panel as plain lines (or JSON)."""
    from synthesizer.metrics import compute

    from . import fmt

    swarm = open_swarm(ctx, root, url)
    try:
        m = compute(swarm.refresh(), swarm=swarm.name)
    finally:
        swarm.close()
    if json:
        emit_json(m.to_dict())
        return
    echo(fmt.header(m))
    if m.empty:
        echo(fmt.EMPTY_MESSAGE)
        return
    for label, value in fmt.metric_rows(m):
        echo(f"{label}: {value}")


STATS = Command("stats", stats.__doc__ or "", WHERE, stats)
