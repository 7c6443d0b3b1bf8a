"""Run a per-action command without building the typer app (CLI start time).

typer builds a click command for the app and, at parse time, a pydantic adapter per
parameter; for a command an agent runs once per action that costs more than the command
itself. ``run`` parses the arguments of the plain, well-formed cases itself — reading the
command's own typer signature (option names, defaults, types), so nothing is declared
twice — and calls the same command function typer would. Anything it does not fully
understand (``--help``, an unknown or malformed option, a missing required option, a
bad number, options between ``board`` and its subcommand) returns False and the caller
runs the typer app, which gives the documented help and usage errors. Set
``SWARMLOG_NO_FASTPATH=1`` to always use typer.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from typer.models import ArgumentInfo, OptionInfo

from .app import Where

_CONVERT: dict[str, Callable[[str], Any]] = {
    "str": str,
    "str | None": str,
    "int": int,
    "int | None": int,
    "float": float,
    "float | None": float,
}
_FLAG = "bool"
_MULTI_INT = "list[int] | None"


@dataclass
class _Ctx:
    """What the command functions read from typer's context."""

    obj: Where
    parent: Any = None
    invoked_subcommand: str | None = None
    params: dict[str, Any] = field(default_factory=dict)


class _Unsupported(Exception):
    """This command line is for typer to handle."""


def _parse(fn: Callable[..., Any], args: list[str]) -> dict[str, Any]:
    """Keyword arguments of ``fn`` (a typer command) for ``args``; _Unsupported if unsure."""
    opts: dict[str, tuple[str, str]] = {}
    positional: list[tuple[str, str]] = []
    kwargs: dict[str, Any] = {}
    required: set[str] = set()
    for name, p in inspect.signature(fn).parameters.items():
        info, ann = p.default, str(p.annotation)
        if name == "ctx":
            continue
        if ann != _FLAG and ann != _MULTI_INT and ann not in _CONVERT:
            raise _Unsupported(name)
        if isinstance(info, OptionInfo):
            for decl in info.param_decls or ():
                if "/" in decl or not decl.startswith("-"):
                    raise _Unsupported(decl)
                opts[decl] = (name, ann)
        elif isinstance(info, ArgumentInfo):
            positional.append((name, ann))
        else:
            raise _Unsupported(name)
        if info.default is ...:
            required.add(name)
        else:
            kwargs[name] = info.default
    i = 0
    pos = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a.startswith("-") and a != "-":
            flag, eq, value = a.partition("=")
            if flag not in opts:
                raise _Unsupported(a)
            name, ann = opts[flag]
            if ann == _FLAG:
                if eq:
                    raise _Unsupported(a)
                kwargs[name] = True
                required.discard(name)
                continue
            if not eq:
                if i >= len(args) or args[i].startswith("-"):
                    raise _Unsupported(a)
                value = args[i]
                i += 1
            try:
                if ann == _MULTI_INT:
                    kwargs[name] = [*(kwargs.get(name) or []), int(value)]
                else:
                    kwargs[name] = _CONVERT[ann](value)
            except ValueError:
                raise _Unsupported(a) from None
            required.discard(name)
        else:
            if pos >= len(positional) or positional[pos][1] not in ("str", "str | None"):
                raise _Unsupported(a)
            kwargs[positional[pos][0]] = a
            required.discard(positional[pos][0])
            pos += 1
    if required:
        raise _Unsupported(", ".join(sorted(required)))
    return kwargs


def _split_global(argv: list[str]) -> tuple[Where, list[str]]:
    """``--root``/``--url`` given before the command name, and the rest."""
    where = Where()
    i = 0
    while i < len(argv) and argv[i] in ("--root", "--url"):
        if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
            raise _Unsupported(argv[i])
        setattr(where, argv[i][2:], argv[i + 1])
        i += 2
    return where, argv[i:]


def _target(name: str, rest: list[str]) -> tuple[Callable[..., Any], list[str]]:
    """The command function for ``name`` and its arguments (``board`` alone or with
    options only is the group's own callback, which lists the board)."""
    if name in ("append", "tail"):
        from . import cmd_log

        return getattr(cmd_log, name), rest
    if name in ("search", "reinforce"):
        from . import cmd_synth

        return getattr(cmd_synth, name), rest
    if name == "board":
        from . import cmd_board

        if not rest or rest[0].startswith("-"):
            return cmd_board.board, rest
        if rest[0] == "cas":
            return cmd_board.cas, rest[1:]
        if rest[0] == "show":
            return cmd_board.show, rest[1:]
        return cmd_board.show, rest
    raise _Unsupported(name)


def run(argv: list[str]) -> bool:
    """Run ``argv`` if it is a plain per-action command line; False: let typer run it."""
    if os.environ.get("SWARMLOG_NO_FASTPATH") or "--help" in argv or "-h" in argv:
        return False
    try:
        where, args = _split_global(argv)
        if not args:
            return False
        fn, rest = _target(args[0], args[1:])
        kwargs = _parse(fn, rest)
    except _Unsupported:
        return False
    import typer

    try:
        fn(_Ctx(where), **kwargs)
    except typer.Exit as e:
        raise SystemExit(e.exit_code) from None
    return True
