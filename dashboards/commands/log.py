"""Log commands: init, append, tail, verify — thin faces over ``swarmlog`` (``append``
and ``tail`` are declared, typer-free, in ``act_log``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import typer

from dashboards.app import (
    EXIT_ERROR,
    JsonOpt,
    RootOpt,
    UrlOpt,
    app,
    emit_json,
    open_target,
    register,
)
from dashboards.commands.act_log import APPEND, TAIL, describe, parse_jsonl
from dashboards.progress import working
from swarmlog import SwarmlogError

if TYPE_CHECKING:
    from swarmlog import Log, VerifyReport


@app.command()
def init(
    ctx: typer.Context,
    name: str | None = typer.Option(None, "--name", help="Swarm name [default: dir name]"),
    replicas: int = typer.Option(1, "--replicas", help="JetStream stream replicas (--url)"),
    settings: list[str] = typer.Option(
        [], "--set", metavar="KEY=VALUE", help="Configuration, e.g. --set pool.capacity=50000"
    ),
    agents: str | None = typer.Option(
        None, "--agents", help="a,b,c: print NATS users, one per agent (--url; no server contact)"
    ),
    operator: str = typer.Option("operator", "--operator", help="The admin user (--agents)"),
    write: str | None = typer.Option(None, "--write", help="Write the --agents block to FILE"),
    bootstrap: str | None = typer.Option(
        None, "--bootstrap", help="Seed the swarm with the facts of this global memory"
    ),
    query: str | None = typer.Option(
        None, "--query", help="With --bootstrap: only the facts most relevant to this"
    ),
    limit: int = typer.Option(200, "--limit", help="With --bootstrap: at most this many facts"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Create a log (a directory, or a JetStream stream with --url) and record its
    configuration (--set KEY=VALUE …; `swarmlog config show` lists the keys).
    With --agents: print (or --write) a nats-server authorization block instead."""
    from dashboards.app import target
    from swarmlog import open_log
    from synthesizer.configlog import init_config, parse_settings

    if agents is not None:  # per-agent NATS users (docs/trust.md)
        from dashboards.authblock import users

        return users(target(ctx, root, url), agents, operator, write, json)
    parsed = parse_settings(settings)  # bad keys fail before anything is created
    t = target(ctx, root, url)
    if t.startswith(("nats://", "tls://")):
        from swarmlog.jetstream import ensure_stream

        ensure_stream(t, name=name, replicas=replicas)
    opts: dict[str, Any] = {"create": True, "writable": True}
    if name:
        opts["name"] = name
    log = open_log(t, **opts)
    try:
        conf, _ = init_config(log, parsed)
        seeded = None
        if bootstrap is not None:
            from synthesizer.swarm import Swarm

            seeded = Swarm(log).bootstrap(bootstrap, query, limit)
        if json:
            emit_json(
                {
                    "target": t,
                    "name": log.name,
                    "last_seq": log.last_seq,
                    "config_seq": conf.seq,
                    **({"bootstrap": seeded.to_dict()} if seeded is not None else {}),
                }
            )
        else:
            typer.echo(f"swarm {log.name!r} ready at {t} (last seq {log.last_seq})")
            if seeded is not None:
                typer.echo(
                    f"bootstrapped from {seeded.source}: {seeded.seeded} fact(s) seeded, "
                    f"{seeded.unchanged} already here"
                )
            if conf.changed:
                typer.echo(
                    f"configuration at seq {conf.seq}: "
                    + ", ".join(f"{k}={v}" for k, v in conf.changed.items())
                )
    finally:
        log.close()


register(APPEND)
register(TAIL)


@app.command()
def verify(
    ctx: typer.Context,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
    anchor: bool = typer.Option(
        False, "--anchor", help="Also print the hash chain's head (seq and hash) to keep elsewhere"
    ),
    expect: list[str] = typer.Option(
        [], "--expect", help="SEQ:HASH kept from an earlier --anchor: fail unless it still holds"
    ),
    key: bool = typer.Option(
        False,
        "--key",
        help="Check the keyed manifest links and seals with the operator's chain key"
        " (SWARMLOG_CHAIN_KEY or SWARMLOG_CHAIN_KEY_FILE, kept outside the root)",
    ),
    seal: bool = typer.Option(
        False, "--seal", help="With --key: when the log verifies, seal its head with the key"
    ),
) -> None:
    """Check every record's checksum, the seq order and the hash chain, that a forget
    request accounts for every redacted record, and that every checkpoint and side file
    holds what was written; exit 1 on corruption."""
    from swarmlog.file import chain_key, check_anchor, check_keyed, parse_anchor, seal_head

    wanted = [parse_anchor(x) for x in expect]
    chain_k = chain_key() if key or seal else None
    if (key or seal) and chain_k is None:
        raise SwarmlogError(
            "verify --key: set SWARMLOG_CHAIN_KEY or SWARMLOG_CHAIN_KEY_FILE (the operator's"
            " chain key, kept outside the root)"
        )
    sealed = ""
    t0 = time.perf_counter()
    log = open_target(ctx, root, url, validate=False)
    try:
        with working("verifying checksums and seq order"):
            rep = log.verify()
        for at, want in wanted:  # anchors kept outside the root (docs/trust.md)
            problem = check_anchor(log, at, want, rep)
            if problem is not None:
                rep.problems.append(problem)
        if rep.ok:
            _beyond_records(log, rep)
        if chain_k is not None:  # keyed links and seals (docs/trust.md)
            problems, notes = check_keyed(log, rep, chain_k)
            rep.problems.extend(problems)
            rep.notes.extend(notes)
            if seal and rep.ok and rep.head:
                sealed = seal_head(log, rep, chain_k)
    finally:
        log.close()
    if json:
        emit_json(rep.to_dict())
    else:
        _print_report(rep, time.perf_counter() - t0, anchor, sealed)
    if not rep.ok:
        raise typer.Exit(EXIT_ERROR)


def _beyond_records(log: Log, rep: VerifyReport) -> None:
    """Add to ``rep`` what the records' checksums cannot show: redactions no forget
    request explains, checkpoints and side files that do not hold what was written, and
    a forget killed mid-way (a note)."""
    from synthesizer.checkpoints.check import report
    from synthesizer.forget.redactions import RETENTION_NOTE, unexplained
    from synthesizer.forget.unfinished import unfinished

    for line in unexplained(log):
        (rep.notes if line.startswith(RETENTION_NOTE) else rep.problems).append(line)
    problems, notes = report(log)
    rep.problems.extend(problems)
    rep.notes.extend(notes)
    rep.notes.extend(unfinished(log))


def _print_report(rep: VerifyReport, took: float, anchor: bool, sealed: str) -> None:
    """The report as text: status and counts, the corruption, problems and notes, the
    anchor (``--anchor``) and the seal written (``--seal``)."""
    status = "ok" if rep.ok else "CORRUPT"
    c = rep.corruption
    what, last = ("valid prefix ", "last good seq") if c else ("", "last seq")
    typer.echo(
        f"{status}: {what}{rep.events} events, {last} {rep.last_seq},"
        f" {rep.segments} segment(s) in {took:.2f}s"
    )
    if c:
        seq = f"seq {c['seq']}" if c["seq"] is not None else "unknown seq"
        typer.echo(f"corruption: {c['segment']} at byte {c['offset']} ({seq})")
    for p in rep.problems:
        typer.echo(f"problem: {p}")
    for n in rep.notes:
        typer.echo(f"note: {n}")
    if anchor:
        typer.echo(f"anchor: seq {rep.head_seq} {rep.head or '(no chained record)'}")
    if sealed:
        typer.echo(f"sealed: {sealed}")


__all__ = ["SwarmlogError", "describe", "parse_jsonl"]
