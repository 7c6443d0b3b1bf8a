"""Synthesizer commands: synth, search, reinforce, checkpoint, replay (thin over the library;
``search`` and ``reinforce`` are declared, typer-free, in ``act_synth``)."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import typer

from dashboards.app import (
    JsonOpt,
    RootOpt,
    UrlOpt,
    app,
    emit_json,
    fail,
    open_swarm,
    open_target,
    register,
)
from dashboards.commands.act_synth import REINFORCE, SEARCH
from dashboards.progress import working

if TYPE_CHECKING:  # annotations only: the CLI imports the synthesizer when a command runs
    from swarmlog import Log
    from synthesizer.swarm import Swarm
    from synthesizer.worker.judging import JudgeThread
    from synthesizer.worker.synth import Synthesizer


@app.command()
def synth(
    ctx: typer.Context,
    once: bool = typer.Option(False, "--once", help="One pass, then exit (the default)"),
    follow: bool = typer.Option(False, "--follow", help="Keep synthesizing until stopped"),
    idle_exit: float | None = typer.Option(
        None, "--idle-exit", help="With --follow: stop after S idle"
    ),
    batch: int = typer.Option(2000, "--batch", help="Raw memories decided per atomic batch"),
    name: str | None = typer.Option(None, "--name", help="This worker's name in the lease"),
    lease_timeout: float | None = typer.Option(
        None, "--lease-timeout", help="Take the lease over after S s without holder batches"
    ),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Fold raw memories into facts (dedup, provenance, contradictions), exactly once."""
    if once and follow:
        fail("give --once or --follow, not both")
    if lease_timeout is not None and not lease_timeout > 0:
        fail(f"--lease-timeout must be > 0, got {lease_timeout}")
    log = open_target(ctx, root, url, write=True)
    from synthesizer.worker.synth import Synthesizer

    with working("opening the swarm (checkpoint and tail)"):
        worker = Synthesizer(
            log,
            batch_size=batch,
            name=name,
            lease_timeout_s=lease_timeout,
            background_checkpoints=follow,
        )
    stopping = False

    def _stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    try:
        n = _follow(log, worker, lambda: stopping, idle_exit) if follow else _once(log, worker)
        _print_result(worker, n, json)
    finally:
        log.close()


def _follow(
    log: Log, worker: Synthesizer, stop: Callable[[], bool], idle_exit: float | None
) -> int:
    """Decide until ``stop()`` (SIGTERM) or Ctrl-C, the judge on its own thread; on a clean
    stop release the lease and checkpoint. The decisions made."""
    _show_lease_changes()
    typer.echo(f"following from seq {worker.state.last_seq} as {worker.lease.worker}", err=True)
    judging = _judge_thread(log, worker)
    from synthesizer.worker.follow import Follower

    try:  # (a full or failing disk is waited out: follow.py)
        Follower(worker).run(stop=stop, idle_exit=idle_exit)
    except KeyboardInterrupt:
        pass
    judging.stop(timeout=1.0)  # a judge call in flight is abandoned (daemon)
    if worker.release():  # a clean stop: the next worker need not wait
        worker.catch_up()
    worker.maybe_checkpoint(force=True)
    return worker.decisions


def _once(log: Log, worker: Synthesizer) -> int:
    """One decision pass, the lease released, one judge pass; the decisions made."""
    with working("deciding raw memories"):
        n = worker.run_once()
        if worker.release():  # a one-off pass: a --follow worker takes over at once
            worker.catch_up()
        _judge_once(log, worker)
        worker.maybe_checkpoint()
    return n


def _print_result(worker: Synthesizer, n: int, json: bool) -> None:
    """What the worker did (``n`` decisions) and where it stands, as text or JSON."""
    st = worker.state
    if json:
        emit_json(
            {
                "decisions": n,
                "seq": st.last_seq,
                "progress": st.progress,
                "facts": len(st.facts),
                "standing_by": worker.standing_by,
                "lease": _holder_json(worker) if worker.standing_by else None,
            }
        )
    else:
        note = f" ({worker.standby_note()})" if worker.standing_by else ""
        typer.echo(f"{n} decision(s); {len(st.facts)} facts; folded to seq {st.last_seq}{note}")


def _judge_thread(log: Log, worker: Synthesizer) -> JudgeThread:
    """The judge on its own thread beside the decision loop (a slow judge never delays a
    decision), answering while this worker holds the lease."""
    from synthesizer.worker.judging import JudgeThread

    return JudgeThread(
        log, source=lambda: worker.state, active=lambda: not worker.standing_by
    ).start()


def _judge_once(log: Log, worker: Synthesizer) -> None:
    """One judge pass after a one-off decision pass (when a judge is configured)."""
    from synthesizer.worker.judging import JudgeWorker

    st = worker.state
    if not (st.judging.open and st.config.synthesizer.judge) or worker.standing_by:
        return
    if JudgeWorker(log).run_once(st):
        worker.catch_up()


def _show_lease_changes() -> None:
    """Print the worker's lease changes (standing by, taking over) on stderr."""
    import logging

    from synthesizer.worker.synth import LOG

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    LOG.propagate = False


def _holder_json(worker: Synthesizer) -> dict[str, object] | None:
    h = worker.holder
    if h is None:
        return None
    return {
        "worker": h.worker,
        "since": h.since,
        "last_batch_ts": h.last_ts,
        "version": h.version,
        "retake_in_s": round(worker.lease.retake_in(), 3),
    }


register(SEARCH)
register(REINFORCE)


@app.command()
def checkpoint(
    ctx: typer.Context,
    list_: bool = typer.Option(False, "--list", help="List checkpoints instead"),
    keep: bool = typer.Option(
        False, "--keep", help="Pin it: retention (synthesizer.checkpoint_keep) never deletes it"
    ),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Store a checkpoint of the folded state at the current seq (or list them)."""
    if list_ and keep:
        fail("give --list or --keep, not both")
    sw = open_swarm(ctx, root, url, write=not list_)
    try:
        if list_:
            _list_checkpoints(sw, json)
            return
        t0 = time.perf_counter()
        seq = sw.checkpoint(pinned=keep)
        took = time.perf_counter() - t0
    finally:
        sw.close()
    if json:
        emit_json({"seq": seq, "pinned": keep})
    else:
        typer.echo(f"checkpoint at seq {seq}{' (pinned)' if keep else ''} ({took:.2f}s)")


def _list_checkpoints(sw: Swarm, json: bool) -> None:
    """Every checkpoint, oldest first, with whether this log can use it (and why not)."""
    store = sw.log.checkpoints
    rows = []
    for i in store.list():
        why = store.problem(i)
        rows.append(
            {
                "seq": i.seq,
                "format": i.format,
                "size": i.size,
                "name": i.name,
                "pinned": i.pinned,
                "usable": why is None,
                "problem": why,
            }
        )
    if json:
        emit_json(rows)
        return
    for r in rows:
        flags = ("pinned " if r["pinned"] else "") + (
            "" if r["usable"] else f"UNUSABLE: {r['problem']}"
        )
        typer.echo(
            f"{r['seq']:>10}  {r['size']:>10} bytes  {r['format']}  {r['name']}  {flags}".rstrip()
        )
    if not rows:
        typer.echo("no checkpoints")


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

        with working("replaying the log" + (" from seq 1" if from_start else "")):
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
