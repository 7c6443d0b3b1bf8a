"""The board commands, declared without typer: ``board [FACT_ID]`` (the group's own
command: list, or show one fact) and ``board cas FACT_ID --expect V``.

``board.py`` registers them on the typer app (with the routing of a fact id to the
hidden ``show``); ``fastpath`` runs their plain command lines directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dashboards import safe
from dashboards.common import (
    EXIT_CONFLICT,
    EXIT_ERROR,
    echo,
    emit_json,
    fail,
    open_swarm,
    scope,
    target,
)
from dashboards.spec import JSON, REQUIRED, ROOT, URL, Command, Opt
from swarmlog import InvalidEvent, SwarmlogError, VersionConflict

if TYPE_CHECKING:
    from synthesizer.board import Board, HistoryEntry
    from synthesizer.state.facts import Fact
    from synthesizer.swarm import Swarm


def fact_json(f: Fact) -> dict[str, Any]:
    """A fact as JSON: its fields (evidence as objects, no vector) plus derived ones."""
    d = f.to_dict()
    d["evidence"] = [
        {"seq": e.seq, "agent": e.agent, "session": e.session, "ts": e.ts} for e in f.evidence
    ]
    emb = d.pop("embedding", None)
    d["embedding_dim"] = len(emb) if emb is not None else None
    d["support"] = f.support
    d["agents"] = f.agents
    return d


def _gist(text: str | None, width: int) -> str:
    t = safe.text(text or "")
    return t if len(t) <= width else t[: width - 3] + "..."


_when = safe.when
_t = safe.text


def _print_list(facts: list[Fact], more: int = 0) -> None:
    if not facts:
        echo("the board is empty")
        return
    echo(f"{'ID':<14} {'VER':>7} {'STATUS':<10} {'TIER':<10} {'SUP':>3}  VALUE / CONTENT")
    for f in facts:
        val = f"{_t(f.subject)}={_t(f.value)}  " if f.subject is not None else ""
        if f.subject is None and f.value is not None:
            val = f"[{_gist(f.value, 20)}]  "
        echo(
            f"{_t(f.id):<14} {f.version:>7} {f.status:<10} {f.tier:<10} {f.support:>3}  "
            f"{val}{_gist(f.content, 60)}"
        )
    if more:
        echo(f"... {more} more fact(s) (--limit 0 lists all)")


def _print_fact(f: Fact, history: list[HistoryEntry]) -> None:
    echo(f"fact {_t(f.id)}  version {f.version}  status {f.status}")
    echo(f"  content:  {_t(f.content)}")
    if f.subject is not None or f.value is not None:
        echo(f"  subject:  {_t(f.subject)}   value: {_t(f.value)}")
    echo(
        f"  category: {_t(f.category)}   tier: {f.tier}   strength: {f.strength:.3f}"
        f"   support: {f.support}"
    )
    echo(f"  evidence ({len(f.evidence)}):")
    for e in f.evidence:
        echo(f"    seq {e.seq:<7} {_t(e.agent):<14} {_when(e.ts)}")
    if f.cited:
        echo(f"  cited: {', '.join(str(q) for q in f.cited)}")
    if f.contested_with:
        echo(f"  contested with: {', '.join(_t(r) for r in f.contested_with)}")
    if f.origins:
        echo(f"  origins ({len(f.origins)}):")
        for o in f.origins:
            seqs = ", ".join(str(q) for q in o["seqs"][:8]) + (" ..." if len(o["seqs"]) > 8 else "")
            echo(
                f"    swarm {_t(o['name'])} ({_t(o['swarm'])[:12]})  fact {_t(o['fact'])}"
                f"  version {o['version']}  seqs {seqs}"
            )
    echo(f"  history ({len(history)} events):")
    for h in history:
        b = h.body
        gist = ", ".join(
            f"{_t(k)}={_gist(str(v), 40)}"
            for k, v in b.items()
            if k not in ("related", "lease", "signature")  # the machinery's, not the story
        )
        echo(f"    {h.seq:>7}  {_when(h.ts)}  {_t(h.agent):<14} {_t(h.type):<18} {gist}")


def _origin_places(where: str) -> list[str]:
    """Where ``board --origins`` looks for origin swarms: ``$SWARMLOG_ORIGINS`` (targets
    separated by the path separator), then the swarms beside a directory root."""
    import os

    from synthesizer.promotion.provenance import sibling_places

    places = [p for p in os.environ.get("SWARMLOG_ORIGINS", "").split(os.pathsep) if p]
    if "://" not in where:
        places += sibling_places(where)
    return places


def _print_origins(f: Fact, places: list[str], json: bool) -> None:
    from synthesizer.promotion.provenance import resolve

    found = resolve(f.origins, places)
    if json:
        emit_json(
            [
                {
                    "origin": r.origin,
                    "where": r.where,
                    "events": [e.to_dict() for e in r.events],
                }
                for r in found
            ]
        )
        return
    if not found:
        echo(f"fact {_t(f.id)} has no origins (it was not promoted or bootstrapped)")
    for r in found:
        o = r.origin
        if r.where is None:
            echo(f"origin {_t(o['name'])}/{_t(o['fact'])}: swarm {_t(o['swarm'])} not reachable")
            continue
        echo(f"origin {_t(o['name'])}/{_t(o['fact'])} at {_t(r.where)}:")
        for e in r.events:
            body = e.body.get("content", "") if isinstance(e.body, dict) else ""
            echo(f"    seq {e.seq:<7} {_t(e.agent):<14} {_t(e.type):<14} {_gist(str(body), 50)}")


def _facts_at(swarm: Swarm, at: int) -> list[Fact]:
    """The board's facts as they stood at seq ``at`` (time travel: nearest checkpoint)."""
    if at < 0:
        fail(f"--at must be a seq >= 0, got {at}")
    facts = list(swarm.state(at_seq=at).facts.values())
    facts.sort(key=lambda f: (f.created_seq, f.id))
    return facts


def _show(
    swarm: Swarm,
    fact_id: str | None,
    json: bool,
    limit: int | None = None,
    at: int | None = None,
    origins_at: list[str] | None = None,
) -> None:
    board: Board = swarm.board
    if fact_id is None:
        facts = board.list() if at is None else _facts_at(swarm, at)
        if limit is not None and limit < 0:
            fail(f"--limit must be >= 0 (0: all), got {limit}")
        n = limit if limit is not None else (0 if json else DEFAULT_LIMIT)
        more = max(0, len(facts) - n) if n else 0
        facts = facts[-n:] if n else facts
        if json:
            emit_json([fact_json(f) for f in facts])
        else:
            _print_list(facts, more)
        return
    f = board.get(fact_id)
    if origins_at is not None:
        _print_origins(f, origins_at, json)
        return
    from dashboards.facthistory import full_history

    hist = full_history(swarm.log, fact_id, board.history(fact_id), f.created_seq)
    if json:
        emit_json({"fact": fact_json(f), "history": [h.to_dict() for h in hist]})
    else:
        _print_fact(f, hist)


DEFAULT_LIMIT = 50
"""Facts ``board`` lists without --limit (the newest; --json lists all)."""


def board(
    ctx: Any, limit: int | None, at: int | None, json: bool, root: str | None, url: str | None
) -> None:
    """List the board (the newest facts), or show one fact with its history:
    board [FACT_ID] [--limit N] [--at SEQ] [--json]."""
    scope(ctx, root, url)
    if ctx.invoked_subcommand is not None:
        return
    swarm = open_swarm(ctx, None, None)
    try:
        _show(swarm, None, json, limit, at)
    finally:
        swarm.close()


BOARD = Command(
    "board",
    board.__doc__ or "",
    (
        Opt(
            "limit",
            int,
            None,
            ("--limit", "-n"),
            f"List the newest N facts [default: {DEFAULT_LIMIT}; all with --json; 0: all]",
        ),
        Opt("at", int, None, ("--at",), "The board as it stood at this seq"),
        JSON,
        ROOT,
        URL,
    ),
    board,
)


def show(
    ctx: Any, fact_id: str, origins: bool, json: bool, root: str | None, url: str | None
) -> None:
    """Show one fact with its history (the events keyed on it, oldest first); with
    --origins, the raw events of the swarms it was promoted from."""
    parent = ctx.parent.params.get("json", False) if ctx.parent is not None else False
    swarm = open_swarm(ctx, root, url)
    try:
        places = _origin_places(target(ctx, root, url)) if origins else None
        _show(swarm, fact_id, json or bool(parent), origins_at=places)
    finally:
        swarm.close()


SHOW = Command(
    "show",
    show.__doc__ or "",
    (
        Opt("fact_id", str, REQUIRED, help="The fact to show", metavar="FACT_ID"),
        Opt(
            "origins",
            bool,
            False,
            ("--origins",),
            "The raw events of its origins (swarms beside the root, or $SWARMLOG_ORIGINS)",
        ),
        JSON,
        ROOT,
        URL,
    ),
    show,
)


def _parse_version(raw: str) -> int:
    """--expect takes an integer >= 0 (0 creates); anything else is exit 1, one line."""
    try:
        v = int(raw.strip())
    except ValueError:
        raise InvalidEvent(f"bad version {raw!r}: expected an integer >= 0") from None
    if v < 0:
        raise InvalidEvent(f"bad version {raw!r}: expected an integer >= 0")
    return v


def cas(
    ctx: Any,
    fact_id: str,
    expect: str,
    content: str | None,
    value: str | None,
    status: str | None,
    reason: str | None,
    evidence: list[int] | None,
    category: str | None,
    subject: str | None,
    agent: str,
    json: bool,
    root: str | None,
    url: str | None,
) -> None:
    """Compare-and-swap one fact: exit 0 and print the new version, or exit 3 and print
    the current one when the fact moved past --expect."""
    try:
        expected = _parse_version(expect)
        swarm = open_swarm(ctx, root, url, write=True)
    except SwarmlogError as e:
        fail(str(e))
    try:
        new = swarm.board.cas(
            fact_id,
            expected,
            content=content,
            value=value,
            status=status,
            reason=reason,
            evidence=list(evidence) if evidence else None,
            category=category,
            subject=subject,
            agent=agent,
        )
    except VersionConflict as e:
        if json:
            emit_json(
                {
                    "ok": False,
                    "fact": fact_id,
                    "expected": e.expected,
                    "version": e.actual,
                    "events": [ev.to_dict() for ev in e.events],
                }
            )
        else:
            echo(e.actual)
        echo(
            f"conflict: {fact_id} is at version {e.actual}, not {e.expected} "
            f"({len(e.events)} event(s) since)",
            err=True,
        )
        raise SystemExit(EXIT_CONFLICT) from None
    except SwarmlogError as e:
        fail(str(e), EXIT_ERROR)
    finally:
        swarm.close()
    if json:
        emit_json({"ok": True, "fact": fact_id, "expected": expected, "version": new})
    else:
        echo(new)


CAS = Command(
    "cas",
    cas.__doc__ or "",
    (
        Opt("fact_id", str, REQUIRED, help="The fact to write", metavar="FACT_ID"),
        Opt("expect", str, REQUIRED, ("--expect", "-e"), "Version you read (0 creates a new fact)"),
        Opt("content", str, None, ("--content",), "New content of the fact"),
        Opt("value", str, None, ("--value",), "New value (of a claim's subject)"),
        Opt("status", str, None, ("--status",), "active | contested | superseded | retracted"),
        Opt("reason", str, None, ("--reason",), "Why (required to retract)"),
        Opt(
            "evidence",
            list,
            None,
            ("--evidence",),
            "Seq of a raw event backing the change (repeatable)",
        ),
        Opt("category", str, None, ("--category",), "Category (when creating)"),
        Opt("subject", str, None, ("--subject",), "Subject of a structured claim"),
        Opt("agent", str, "cli", ("--agent", "-a"), "Agent name of the write"),
        JSON,
        ROOT,
        URL,
    ),
    cas,
)
