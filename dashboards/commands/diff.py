"""``swarmlog diff --from A --to B``: what the swarm believed at A against B (facts added,
removed, changed), A and B each a seq or a time; the work is in ``statediff``."""

from __future__ import annotations

from datetime import datetime, timezone

import typer

from dashboards.app import JsonOpt, RootOpt, UrlOpt, app, emit_json, fail, open_target
from dashboards.progress import working


def point(text: str, flag: str) -> tuple[int | None, float | None]:
    """A seq (an integer) or a time (an ISO time, UTC unless it says; or unix seconds with
    a decimal point, e.g. 1764000000.0) -> (at_seq, at_time)."""
    t = text.strip()
    if t.isdigit():
        return int(t), None
    try:
        return None, float(t)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(t)
    except ValueError:
        fail(
            f"{flag} takes a seq (an integer) or a time (ISO like 2026-11-25T19:30, or unix "
            f"seconds with a decimal point), got {text!r}"
        )
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return None, when.timestamp()


@app.command()
def diff(
    ctx: typer.Context,
    from_: str = typer.Option(..., "--from", help="Seq or time (ISO, UTC) of the earlier state"),
    to: str | None = typer.Option(
        None, "--to", help="Seq or time of the later state [default: now]"
    ),
    width: int = typer.Option(100, "--width", help="Cut text lines at this many columns"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """What the swarm believed at one point against another: facts added, removed and
    changed (status, value, strength, tier, content, version)."""
    a_seq, a_time = point(from_, "--from")
    b_seq, b_time = point(to, "--to") if to is not None else (None, None)
    log = open_target(ctx, root, url)
    try:
        from dashboards.statediff import diff_states, lines
        from synthesizer.replay import state_at

        with working("folding the log at --from"):
            a = state_at(log, at_seq=a_seq, at_time=a_time)
        with working("folding the log at --to"):
            b = state_at(log, at_seq=b_seq, at_time=b_time)
    finally:
        log.close()
    if a.last_seq > b.last_seq:
        fail(f"--from (seq {a.last_seq}) is after --to (seq {b.last_seq}); swap them")
    d = diff_states(a, b)
    if json:
        emit_json(d)
        return
    for ln in lines(d, width):
        typer.echo(ln)
