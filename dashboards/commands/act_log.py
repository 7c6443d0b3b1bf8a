"""``append`` and ``tail``: the log commands an agent runs per action (no typer here).

Declared as ``spec.Command``s; ``log.py`` registers them on the typer app and
``fastpath`` runs their plain command lines directly.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from dashboards import safe
from dashboards.common import echo, emit_json, fail, open_target
from dashboards.spec import REQUIRED, WHERE, Command, Opt
from swarmlog import Event, EventIdReused, InvalidEvent


def append(
    ctx: Any,
    content: str | None,
    agent: str,
    session: str | None,
    thread: str | None,
    type_: str,
    category: str,
    importance: float,
    key: str | None,
    expect: int | None,
    body: str | None,
    jsonl: bool,
    root: str | None,
    url: str | None,
    json: bool,
) -> None:
    """Append one event, or a JSONL batch from stdin (all or nothing)."""
    if jsonl:
        if content is not None:
            fail("give either CONTENT or --jsonl, not both")
        events = parse_jsonl(sys.stdin.buffer.read(), agent, session, thread)
    else:
        events = [_one(content, agent, session, thread, type_, category, importance, key, body)]
    _refuse_reserved(events, jsonl)
    exp: dict[str, int] | None = None
    if expect is not None:
        if key is None:
            raise InvalidEvent("--expect needs --key")
        exp = {key: expect}
    log = open_target(ctx, root, url, write=True)
    try:
        stored = log.append_many(events, expect=exp)
    except EventIdReused as reused:  # (with --jsonl, name the line that reused the id)
        if not jsonl:
            raise
        n = next(i for i, ev in enumerate(events, 1) if ev.id == reused.event_id)
        raise InvalidEvent(f"line {n}: {reused}") from None
    finally:
        log.close()
    if json:
        emit_json([e.to_dict() for e in stored])
    else:
        for e in stored:
            echo(f"appended seq {e.seq} ({e.type}, id {e.id})")


def _refuse_reserved(events: list[Event], jsonl: bool) -> None:
    """A memory event under a name the fold refuses for agents fails here, in one line,
    instead of being appended and then ignored (the fold's rule: ``state.authz``, loaded
    only when a reserved name is seen, so a plain append stays light)."""
    from synthesizer.reserved import RESERVED  # (not at import: ``tail`` shares this module)

    if not any(ev.agent in RESERVED for ev in events):
        return
    from synthesizer.state.authz import AGENT_TYPES, NOT_AN_AGENT

    for n, ev in enumerate(events, 1):
        if ev.type in AGENT_TYPES and ev.agent in NOT_AN_AGENT:
            where = f"line {n}: " if jsonl else ""
            raise InvalidEvent(
                f"{where}agent name {ev.agent!r} is reserved: the synthesizer would refuse "
                f"this {ev.type} (choose another agent name)"
            )


APPEND = Command(
    "append",
    append.__doc__ or "",
    (
        Opt("content", str, None, help="Content of the memory to share"),
        Opt("agent", str, REQUIRED, ("--agent", "-a"), "Agent name"),
        Opt("session", str, None, ("--session",), "Session the event belongs to"),
        Opt("thread", str, None, ("--thread",), "Task or thread to file it under"),
        Opt("type_", str, "memory.shared", ("--type", "-t"), "Event type"),
        Opt("category", str, "discovery", ("--category", "-c"), "Category of the memory"),
        Opt("importance", float, 0.5, ("--importance", "-i"), "Importance of the memory, 0..1"),
        Opt("key", str, None, ("--key",), "Entity key (CAS unit)"),
        Opt("expect", int, None, ("--expect",), "Expected version of --key"),
        Opt("body", str, None, ("--body",), "Body as a JSON object"),
        Opt("jsonl", bool, False, ("--jsonl",), "Read a batch of events from stdin"),
        *WHERE,
    ),
    append,
)


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
    import synthesizer.bodies  # noqa: F401  (the body rules, so a bad body names its line)
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


def tail(
    ctx: Any,
    from_: int | None,
    follow: bool,
    type_: str | None,
    agent: str | None,
    timeout: float | None,
    root: str | None,
    url: str | None,
    json: bool,
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


TAIL = Command(
    "tail",
    tail.__doc__ or "",
    (
        Opt("from_", int, None, ("--from",), "First seq [default: last 20]"),
        Opt("follow", bool, False, ("--follow", "-f"), "Keep printing new events"),
        Opt("type_", str, None, ("--type", "-t"), "Only this event type"),
        Opt("agent", str, None, ("--agent", "-a"), "Only this agent"),
        Opt("timeout", float, None, ("--timeout",), "Stop following after idle S"),
        *WHERE,
    ),
    tail,
)
