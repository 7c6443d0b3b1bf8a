"""Run a per-action command without typer (CLI start time).

typer builds a click command for the app and, at parse time, a converter per
parameter; importing and building them costs more than a command an agent runs once
per action. ``run`` parses the plain, well-formed command lines of the commands
declared in ``spec`` form (``act_log``, ``act_synth``, ``act_board``, ``act_stats``)
itself — from the same declaration typer's command is built from, so nothing is
declared twice — and calls the same function typer would. Anything it does not fully
understand (``--help``, an unknown or malformed option, a missing required option, a
bad number, options between ``board`` and its subcommand) returns False and the caller
runs the typer app, which gives the documented help and usage errors. Set
``SWARMLOG_NO_FASTPATH=1`` to always use typer.
"""

from __future__ import annotations

import os
from typing import Any

from dashboards.common import Where
from dashboards.spec import Command, Unsupported, parse


class _Ctx:
    """What the command functions read from typer's context."""

    def __init__(self, obj: Where) -> None:
        self.obj = obj
        self.parent: Any = None
        self.invoked_subcommand: str | None = None
        self.params: dict[str, Any] = {}


def _split_global(argv: list[str]) -> tuple[Where, list[str]]:
    """``--root``/``--url`` given before the command name, and the rest."""
    where = Where()
    i = 0
    while i < len(argv) and argv[i] in ("--root", "--url"):
        if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
            raise Unsupported(argv[i])
        setattr(where, argv[i][2:], argv[i + 1])
        i += 2
    return where, argv[i:]


def _target(name: str, rest: list[str]) -> tuple[Command, list[str]]:
    """The declared command for ``name`` and its arguments (``board`` alone or with
    options only is the group's own command, which lists the board)."""
    if name in ("append", "tail"):
        from dashboards.commands import act_log

        return (act_log.APPEND if name == "append" else act_log.TAIL), rest
    if name in ("search", "reinforce"):
        from dashboards.commands import act_synth

        return (act_synth.SEARCH if name == "search" else act_synth.REINFORCE), rest
    if name == "stats":
        from dashboards.commands import act_stats

        return act_stats.STATS, rest
    if name == "board":
        from dashboards.commands import act_board

        if not rest or rest[0].startswith("-"):
            return act_board.BOARD, rest
        if rest[0] == "cas":
            return act_board.CAS, rest[1:]
        if rest[0] == "show":
            return act_board.SHOW, rest[1:]
        return act_board.SHOW, rest
    raise Unsupported(name)


def run(argv: list[str]) -> bool:
    """Run ``argv`` if it is a plain per-action command line; False: let typer run it."""
    if os.environ.get("SWARMLOG_NO_FASTPATH") or "--help" in argv or "-h" in argv:
        return False
    try:
        where, args = _split_global(argv)
        if not args:
            return False
        cmd, rest = _target(args[0], args[1:])
        values = parse(cmd, rest)
    except Unsupported:
        return False
    cmd.run(_Ctx(where), **values)
    return True
