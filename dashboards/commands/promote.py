"""``swarmlog promote --to TARGET``: this swarm's facts into a global memory (docs/design.md §12).

Thin: the library's ``Swarm.promote`` (``synthesizer.promotion.promote``) does the work; with
``--pending`` it is the automatic harvest (``synthesizer.promotion.harvest``) run by hand, for the
ended sessions still waiting. ``swarmlog init --bootstrap`` (in ``log.py``) is the
other half of the loop.
"""

from __future__ import annotations

import typer

from dashboards.app import JsonOpt, RootOpt, UrlOpt, app, emit_json, fail, open_swarm


@app.command()
def promote(
    ctx: typer.Context,
    to: str | None = typer.Option(
        None, "--to", help="The global memory: a directory or nats://host:port/STREAM"
    ),
    tier: str = typer.Option(
        "long_term", "--tier", help="Lowest tier promoted: working, short_term or long_term"
    ),
    min_support: int = typer.Option(
        1,
        "--min-support",
        help="Fewest distinct backers: clients, the names one MCP connection minted "
        "from a pattern counting once",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only count what would be sent"),
    pending: bool = typer.Option(
        False, "--pending", help="Harvest the ended sessions waiting (promotion.target)"
    ),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Promote qualifying facts (active or contested, tier and support) into a global
    memory; idempotent, and facts changed since are updated there."""
    swarm = open_swarm(ctx, root, url, write=not dry_run)
    try:
        if pending:
            from synthesizer.promotion.harvest import harvest

            report = harvest(swarm)
            if report is None:
                if json:
                    emit_json({"waiting": 0})
                else:
                    typer.echo("no ended session waits for promotion")
                return
        else:
            if not to:
                fail("promote needs --to TARGET (a directory or nats://host:port/STREAM)")
            report = swarm.promote(to, tier=tier, min_support=min_support, dry_run=dry_run)
    finally:
        swarm.close()
    if json:
        emit_json(report.to_dict())
        return
    verb = "would promote" if report.dry_run else "promoted"
    typer.echo(
        f"{verb} {report.promoted} new, {report.updated} updated "
        f"({report.withdrawn} origin(s) withdrawn), {report.unchanged} unchanged, "
        f"{report.skipped} not qualifying -> {report.target}"
    )
    if min_support > 1 and not pending:
        from synthesizer.promotion.clients import COUNTS

        typer.echo(f"support counted as {COUNTS}")
