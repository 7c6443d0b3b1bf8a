"""Log commands: init, append, tail, verify — thin faces over ``swarmlog``."""

from __future__ import annotations

import sys
import time
from typing import Any

import orjson
import typer

from swarmlog import Event, InvalidEvent, SwarmlogError

from . import safe
from .app import EXIT_ERROR, JsonOpt, RootOpt, UrlOpt, app, emit_json, fail, open_target


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
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Create a log (a directory, or a JetStream stream with --url) and record its
    configuration (--set KEY=VALUE …; `swarmlog config show` lists the keys).
    With --agents: print (or --write) a nats-server authorization block instead."""
    from swarmlog import open_log
    from synthesizer.configlog import init_config, parse_settings

    from .app import target

    if agents is not None:  # per-agent NATS users (docs/trust.md)
        from .authblock import users

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
        if json:
            emit_json(
                {"target": t, "name": log.name, "last_seq": log.last_seq, "config_seq": conf.seq}
            )
        else:
            typer.echo(f"swarm {log.name!r} ready at {t} (last seq {log.last_seq})")
            if conf.changed:
                typer.echo(
                    f"configuration at seq {conf.seq}: "
                    + ", ".join(f"{k}={v}" for k, v in conf.changed.items())
                )
    finally:
        log.close()


@app.command()
def append(
    ctx: typer.Context,
    content: str | None = typer.Argument(None, help="Content of the memory to share"),
    agent: str = typer.Option(..., "--agent", "-a", help="Agent name"),
    session: str | None = typer.Option(None, "--session"),
    thread: str | None = typer.Option(None, "--thread"),
    type_: str = typer.Option("memory.shared", "--type", "-t", help="Event type"),
    category: str = typer.Option("discovery", "--category", "-c"),
    importance: float = typer.Option(0.5, "--importance", "-i"),
    key: str | None = typer.Option(None, "--key", help="Entity key (CAS unit)"),
    expect: int | None = typer.Option(None, "--expect", help="Expected version of --key"),
    body: str | None = typer.Option(None, "--body", help="Body as a JSON object"),
    jsonl: bool = typer.Option(False, "--jsonl", help="Read a batch of events from stdin"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Append one event, or a JSONL batch from stdin (all or nothing)."""
    if jsonl:
        if content is not None:
            fail("give either CONTENT or --jsonl, not both")
        events = parse_jsonl(sys.stdin.buffer.read(), agent, session, thread)
    else:
        events = [_one(content, agent, session, thread, type_, category, importance, key, body)]
    exp: dict[str, int] | None = None
    if expect is not None:
        if key is None:
            raise InvalidEvent("--expect needs --key")
        exp = {key: expect}
    log = open_target(ctx, root, url, write=True)
    try:
        stored = log.append_many(events, expect=exp)
    finally:
        log.close()
    if json:
        emit_json([e.to_dict() for e in stored])
    else:
        for e in stored:
            typer.echo(f"appended seq {e.seq} ({e.type}, id {e.id})")


def _one(
    content: str | None,
    agent: str,
    session: str | None,
    thread: str | None,
    type_: str,
    category: str,
    importance: float,
    key: str | None,
    body: str | None,
) -> Event:
    if body is not None:
        try:
            b = orjson.loads(body)
        except orjson.JSONDecodeError as e:
            raise InvalidEvent(f"--body is not valid JSON: {e}") from None
        if not isinstance(b, dict):
            raise InvalidEvent("--body must be a JSON object")
    elif content is not None:
        b = {"content": content, "category": category, "importance": importance}
    elif type_ == "memory.shared":
        raise InvalidEvent("missing CONTENT (or --body / --jsonl)")
    else:
        b = {}
    return Event(agent=agent, session=session, thread=thread, type=type_, key=key, body=b)


def parse_jsonl(data: bytes, agent: str, session: str | None, thread: str | None) -> list[Event]:
    """Parse a JSONL batch; any bad line raises InvalidEvent naming its line number."""
    events = []
    for n, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            d = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            raise InvalidEvent(f"line {n}: not valid JSON ({e})") from None
        if not isinstance(d, dict):
            raise InvalidEvent(f"line {n}: an event must be a JSON object")
        d.setdefault("agent", agent)
        d.setdefault("type", "memory.shared")
        if session is not None:
            d.setdefault("session", session)
        if thread is not None:
            d.setdefault("thread", thread)
        d.pop("seq", None)
        try:
            events.append(Event.from_dict(d))
        except InvalidEvent as e:
            raise InvalidEvent(f"line {n}: {e}") from None
    if not events:
        raise InvalidEvent("no events on stdin")
    from swarmlog.envelope import validate_for_append

    for n, ev in enumerate(events, 1):
        try:
            validate_for_append(ev)
        except InvalidEvent as e:
            raise InvalidEvent(f"line {n}: {e}") from None
    return events


def describe(ev: Event) -> str:
    """One human line for an event: seq, time, agent, type, key and a gist of the body."""
    when = safe.when(ev.ts, "%H:%M:%S.%f")
    when = when[:-3] if not when.startswith("ts=") else when
    b = ev.body
    gist = b.get("content") or b.get("query") or b.get("target") or ""
    if not b and str(ev.envelope.get("redacted", "")).startswith("tombstone"):
        gist = "(erased)"
    elif not gist and b:
        gist = orjson.dumps(b).decode()
    gist = safe.text(gist)
    if len(gist) > 80:
        gist = gist[:77] + "..."
    key = f" [{safe.text(ev.key)}]" if ev.key else ""
    return f"{ev.seq:>7}  {when}  {safe.text(ev.agent):<14} {safe.text(ev.type):<18}{key} {gist}"


@app.command()
def tail(
    ctx: typer.Context,
    from_: int | None = typer.Option(None, "--from", help="First seq [default: last 20]"),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new events"),
    type_: str | None = typer.Option(None, "--type", "-t", help="Only this event type"),
    agent: str | None = typer.Option(None, "--agent", "-a", help="Only this agent"),
    timeout: float | None = typer.Option(None, "--timeout", help="Stop following after idle S"),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Print events (as JSONL with --json); --follow keeps going until Ctrl-C."""
    log = open_target(ctx, root, url, validate=False)
    try:
        start = from_ if from_ is not None else max(1, log.last_seq - 19)
        if start < 1:
            fail("--from must be >= 1")
        it = log.follow(start, timeout) if follow else log.read(start)
        out = sys.stdout
        for ev in it:
            if type_ and ev.type != type_:
                continue
            if agent and ev.agent != agent:
                continue
            if json:
                d = ev.to_dict()
                if "redacted" in ev.envelope:  # erased by a forget: say so (redaction.py)
                    d["redacted"] = ev.envelope["redacted"]
                out.write(orjson.dumps(d).decode() + "\n")
            else:
                out.write(describe(ev) + "\n")
            if follow:
                out.flush()
    except KeyboardInterrupt:
        pass
    finally:
        log.close()


@app.command()
def verify(
    ctx: typer.Context,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
    anchor: bool = typer.Option(
        False, "--anchor", help="Also print the hash chain's head (seq and hash) to keep elsewhere"
    ),
) -> None:
    """Check every record's checksum, the seq order and the hash chain, and that a forget
    request accounts for every redacted record; exit 1 on corruption."""
    t0 = time.perf_counter()
    log = open_target(ctx, root, url, validate=False)
    try:
        rep = log.verify()
        if rep.ok:  # redactions no forget request explains (synthesizer/redactcheck.py)
            from synthesizer.redactcheck import RETENTION_NOTE, unexplained

            for line in unexplained(log):
                (rep.notes if line.startswith(RETENTION_NOTE) else rep.problems).append(line)
    finally:
        log.close()
    if json:
        emit_json(rep.to_dict())
    else:
        status = "ok" if rep.ok else "CORRUPT"
        c = rep.corruption
        what, last = ("valid prefix ", "last good seq") if c else ("", "last seq")
        typer.echo(
            f"{status}: {what}{rep.events} events, {last} {rep.last_seq},"
            f" {rep.segments} segment(s) in {time.perf_counter() - t0:.2f}s"
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
    if not rep.ok:
        raise typer.Exit(EXIT_ERROR)


__all__ = ["SwarmlogError", "describe", "parse_jsonl"]
