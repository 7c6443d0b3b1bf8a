"""Board commands: ``swarmlog board [FACT_ID]`` and ``swarmlog board cas FACT_ID --expect V``.

``board`` is a group that also runs on its own (it lists the board) and treats a first
word that is not a subcommand as a fact id: ``board f12`` is routed to a hidden ``show``
command, so both ``board f12`` and ``board cas f12 --expect 7`` work. (A fact literally
named ``cas`` or ``show`` is shown with ``board show cas``.) --root/--url work before or
after ``board`` and after the subcommand, like everywhere else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from swarmlog import InvalidEvent, SwarmlogError, VersionConflict

from . import safe
from .app import (
    EXIT_CONFLICT,
    EXIT_ERROR,
    JsonOpt,
    RootOpt,
    UrlOpt,
    command_group,
    emit_json,
    fail,
    open_swarm,
    scope,
)

if TYPE_CHECKING:
    from synthesizer.board import Board, HistoryEntry
    from synthesizer.facts import Fact
    from synthesizer.swarm import Swarm


class _BoardGroup(TyperGroup):
    """A group whose unknown first word is a FACT_ID for the hidden ``show`` command."""

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            return "show", self.commands["show"], args
        return super().resolve_command(ctx, args)


board_app = command_group(
    "board", "The board: facts with versions; compare-and-swap writes.", cls=_BoardGroup
)


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


def _print_list(facts: list[Fact]) -> None:
    if not facts:
        typer.echo("the board is empty")
        return
    typer.echo(f"{'ID':<14} {'VER':>7} {'STATUS':<10} {'TIER':<10} {'SUP':>3}  VALUE / CONTENT")
    for f in facts:
        val = f"{_t(f.subject)}={_t(f.value)}  " if f.subject is not None else ""
        if f.subject is None and f.value is not None:
            val = f"[{_gist(f.value, 20)}]  "
        typer.echo(
            f"{_t(f.id):<14} {f.version:>7} {f.status:<10} {f.tier:<10} {f.support:>3}  "
            f"{val}{_gist(f.content, 60)}"
        )


def _print_fact(f: Fact, history: list[HistoryEntry]) -> None:
    typer.echo(f"fact {_t(f.id)}  version {f.version}  status {f.status}")
    typer.echo(f"  content:  {_t(f.content)}")
    if f.subject is not None or f.value is not None:
        typer.echo(f"  subject:  {_t(f.subject)}   value: {_t(f.value)}")
    typer.echo(
        f"  category: {_t(f.category)}   tier: {f.tier}   strength: {f.strength:.3f}"
        f"   support: {f.support}"
    )
    typer.echo(f"  evidence ({len(f.evidence)}):")
    for e in f.evidence:
        typer.echo(f"    seq {e.seq:<7} {_t(e.agent):<14} {_when(e.ts)}")
    if f.cited:
        typer.echo(f"  cited: {', '.join(str(q) for q in f.cited)}")
    typer.echo(f"  history ({len(history)} events):")
    for h in history:
        b = h.body
        gist = ", ".join(f"{_t(k)}={_gist(str(v), 40)}" for k, v in b.items() if k != "related")
        typer.echo(f"    {h.seq:>7}  {_when(h.ts)}  {_t(h.agent):<14} {_t(h.type):<18} {gist}")


def _show(swarm: Swarm, fact_id: str | None, json: bool) -> None:
    board: Board = swarm.board
    if fact_id is None:
        facts = board.list()
        if json:
            emit_json([fact_json(f) for f in facts])
        else:
            _print_list(facts)
        return
    f = board.get(fact_id)
    hist = board.history(fact_id)
    if json:
        emit_json({"fact": fact_json(f), "history": [h.to_dict() for h in hist]})
    else:
        _print_fact(f, hist)


@board_app.callback()
def board(
    ctx: typer.Context,
    json: bool = JsonOpt,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
) -> None:
    """List the board, or show one fact with its history: board [FACT_ID] [--json]."""
    scope(ctx, root, url)
    if ctx.invoked_subcommand is not None:
        return
    swarm = open_swarm(ctx, None, None)
    try:
        _show(swarm, None, json)
    finally:
        swarm.close()


@board_app.command("show", hidden=True)
def show(
    ctx: typer.Context,
    fact_id: str = typer.Argument(..., metavar="FACT_ID", help="The fact to show"),
    json: bool = JsonOpt,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
) -> None:
    """Show one fact with its history (the events keyed on it, oldest first)."""
    parent = ctx.parent.params.get("json", False) if ctx.parent is not None else False
    swarm = open_swarm(ctx, root, url)
    try:
        _show(swarm, fact_id, json or bool(parent))
    finally:
        swarm.close()


def _parse_version(raw: str) -> int:
    """--expect takes an integer >= 0 (0 creates); anything else is exit 1, one line."""
    try:
        v = int(raw.strip())
    except ValueError:
        raise InvalidEvent(f"bad version {raw!r}: expected an integer >= 0") from None
    if v < 0:
        raise InvalidEvent(f"bad version {raw!r}: expected an integer >= 0")
    return v


@board_app.command("cas")
def cas(
    ctx: typer.Context,
    fact_id: str = typer.Argument(..., metavar="FACT_ID", help="The fact to write"),
    expect: str = typer.Option(
        ..., "--expect", "-e", help="Version you read (0 creates a new fact)"
    ),
    content: str | None = typer.Option(None, "--content"),
    value: str | None = typer.Option(None, "--value"),
    status: str | None = typer.Option(
        None, "--status", help="active | contested | superseded | retracted"
    ),
    reason: str | None = typer.Option(None, "--reason"),
    evidence: list[int] | None = typer.Option(
        None, "--evidence", help="Seq of a raw event backing the change (repeatable)"
    ),
    category: str | None = typer.Option(None, "--category", help="Category (when creating)"),
    subject: str | None = typer.Option(None, "--subject", help="Subject of a structured claim"),
    agent: str = typer.Option("cli", "--agent", "-a", help="Agent name of the write"),
    json: bool = JsonOpt,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
) -> None:
    """Compare-and-swap one fact: exit 0 and print the new version, or exit 3 and print
    the current one when the fact moved past --expect."""
    try:
        expected = _parse_version(expect)
        swarm = open_swarm(ctx, root, url, write=True)
    except SwarmlogError as e:
        fail(str(e))
        return
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
            typer.echo(e.actual)
        typer.echo(
            f"conflict: {fact_id} is at version {e.actual}, not {e.expected} "
            f"({len(e.events)} event(s) since)",
            err=True,
        )
        raise typer.Exit(EXIT_CONFLICT) from None
    except SwarmlogError as e:
        fail(str(e), EXIT_ERROR)
        return
    finally:
        swarm.close()
    if json:
        emit_json({"ok": True, "fact": fact_id, "expected": expected, "version": new})
    else:
        typer.echo(new)


__all__ = ["board_app", "fact_json"]
