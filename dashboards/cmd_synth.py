"""Synthesizer commands: synth, search, reinforce, checkpoint, replay (thin over the library)."""

from __future__ import annotations

import signal
import time
from datetime import datetime

import typer

from . import safe
from .app import JsonOpt, RootOpt, UrlOpt, app, emit_json, fail, open_swarm, open_target


@app.command()
def synth(
    ctx: typer.Context,
    once: bool = typer.Option(False, "--once", help="One pass, then exit (the default)"),
    follow: bool = typer.Option(False, "--follow", help="Keep synthesizing until stopped"),
    idle_exit: float | None = typer.Option(
        None, "--idle-exit", help="With --follow: stop after S idle"
    ),
    batch: int = typer.Option(2000, "--batch", help="Raw memories decided per atomic batch"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Fold raw memories into facts (dedup, provenance, contradictions), exactly once."""
    if once and follow:
        fail("give --once or --follow, not both")
    log = open_target(ctx, root, url, write=True)
    from synthesizer.worker import Synthesizer

    worker = Synthesizer(log, batch_size=batch)
    stopping = False

    def _stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    try:
        if follow:
            try:
                worker.run(stop=lambda: stopping, idle_exit=idle_exit)
            except KeyboardInterrupt:
                pass
            worker.maybe_checkpoint(force=True)
            n = worker.decisions
        else:
            n = worker.run_once()
            worker.maybe_checkpoint()
        st = worker.state
        if json:
            emit_json(
                {
                    "decisions": n,
                    "seq": st.last_seq,
                    "progress": st.progress,
                    "facts": len(st.facts),
                    "standing_by": worker.standing_by,
                }
            )
        else:
            note = (
                " (another synthesizer holds the lease; standing by)" if worker.standing_by else ""
            )
            typer.echo(f"{n} decision(s); {len(st.facts)} facts; folded to seq {st.last_seq}{note}")
    finally:
        log.close()


@app.command()
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What to look for"),
    limit: int = typer.Option(10, "--limit", "-n"),
    category: str | None = typer.Option(None, "--category", "-c"),
    tier: str | None = typer.Option(None, "--tier"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Rank facts by cosine × strength × importance (does not log a recall)."""
    if limit < 1:
        fail(f"--limit must be >= 1, got {limit}")
    sw = open_swarm(ctx, root, url)
    try:
        hits = sw.search(query, limit=limit, category=category, tier=tier)
    finally:
        sw.close()
    if json:
        emit_json(
            [
                {
                    "id": h.fact.id,
                    "content": h.fact.content,
                    "similarity": h.similarity,
                    "relevance": h.relevance,
                    "strength": h.strength,
                    "support": h.fact.support,
                    "status": h.fact.status,
                    "tier": h.fact.tier,
                }
                for h in hits
            ]
        )
        return
    if not hits:
        typer.echo("no matching facts")
    for h in hits:
        typer.echo(
            f"{safe.text(h.fact.id):>8}  rel {h.relevance:.3f}  sim {h.similarity:.3f}  "
            f"str {h.strength:.2f}  x{h.fact.support}  {safe.text(h.fact.content)}"
        )


@app.command()
def reinforce(
    ctx: typer.Context,
    fact_id: str = typer.Argument(..., help="Fact to reinforce"),
    agent: str = typer.Option(..., "--agent", "-a"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Reinforce a fact as an agent (counted once per agent per fact)."""
    sw = open_swarm(ctx, root, url, write=True)
    try:
        ev = sw.agent(agent).reinforce(fact_id)
    finally:
        sw.close()
    if json:
        emit_json(ev.to_dict())
    else:
        typer.echo(f"reinforced {fact_id} as {agent} (seq {ev.seq})")


@app.command()
def checkpoint(
    ctx: typer.Context,
    list_: bool = typer.Option(False, "--list", help="List checkpoints instead"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Store a checkpoint of the folded state at the current seq (or list them)."""
    sw = open_swarm(ctx, root, url, write=not list_)
    try:
        if list_:
            infos = sw.log.checkpoints.list()
            if json:
                emit_json(
                    [
                        {"seq": i.seq, "format": i.format, "size": i.size, "name": i.name}
                        for i in infos
                    ]
                )
            else:
                for i in infos:
                    typer.echo(f"{i.seq:>10}  {i.size:>10} bytes  {i.format}  {i.name}")
                if not infos:
                    typer.echo("no checkpoints")
            return
        t0 = time.perf_counter()
        seq = sw.checkpoint()
        took = time.perf_counter() - t0
    finally:
        sw.close()
    if json:
        emit_json({"seq": seq})
    else:
        typer.echo(f"checkpoint at seq {seq} ({took:.2f}s)")


def _parse_time(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        fail(f"--at-time takes unix seconds or an ISO time, got {text!r}")
    raise AssertionError  # unreachable


@app.command()
def replay(
    ctx: typer.Context,
    at: int | None = typer.Option(None, "--at", help="Replay up to this seq"),
    at_time: str | None = typer.Option(None, "--at-time", help="Up to the last event with ts <= T"),
    from_start: bool = typer.Option(False, "--from-start", help="Ignore checkpoints"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Rebuild the state at a point in time; print its digest, seq and a summary."""
    if at is not None and at_time is not None:
        fail("give --at or --at-time, not both")
    if at is not None and at < 0:
        fail(f"--at must be >= 0, got {at}")
    t = _parse_time(at_time) if at_time is not None else None
    log = open_target(ctx, root, url)
    try:
        t0 = time.perf_counter()
        from synthesizer.replay import state_at

        st = state_at(log, at_seq=at, at_time=t, from_start=from_start)
        took = time.perf_counter() - t0
    finally:
        log.close()
    stats = st.stats()
    summary = {
        "digest": st.digest(),
        "seq": st.last_seq,
        "facts": len(st.facts),
        "by_status": stats.by_status,
        "by_tier": stats.by_tier,
        "pending": len(st.pending),
        "progress": st.progress,
        "seconds": round(took, 4),
    }
    if json:
        emit_json(summary)
        return
    typer.echo(f"digest {summary['digest']}")
    typer.echo(
        f"seq {st.last_seq}  facts {len(st.facts)}  pending {len(st.pending)}  "
        f"synthesized to {st.progress}  ({took:.3f}s)"
    )
    typer.echo("status: " + ", ".join(f"{k} {v}" for k, v in sorted(stats.by_status.items())))
    typer.echo("tiers:  " + ", ".join(f"{k} {v}" for k, v in sorted(stats.by_tier.items())))
