"""Commands declared once, without typer: their options, help and the function they run.

A per-action command (``append``, ``tail``, ``search``, ``reinforce``, the ``board``
commands, ``stats``) is a ``Command``: ``app.register`` turns it into a typer command
(for help, usage errors and every unusual command line) and ``fastpath`` parses its
plain command lines with ``parse`` and calls the same function, without importing
typer. Options shared by many commands (``ROOT``, ``URL``, ``JSON``) are declared here.
Named tuples rather than dataclasses: cheaper to define, and this module is on the
start of every agent call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

REQUIRED: Any = ...
"""The default of an option or argument the user must give."""


class Opt(NamedTuple):
    """One parameter of a command: an option (``decls`` like ``("--agent", "-a")``) or,
    with no ``decls``, a positional argument.

    ``kind`` is ``str``, ``int``, ``float``, ``bool`` (a flag) or ``list`` (a repeatable
    integer option); ``default`` None makes the value optional.
    """

    name: str
    kind: type
    default: Any = None
    decls: tuple[str, ...] = ()
    help: str | None = None
    metavar: str | None = None

    @property
    def positional(self) -> bool:
        return not self.decls


class Command(NamedTuple):
    """A command: its name, help text, parameters (in order) and the function it runs,
    called as ``run(ctx, **values)``."""

    name: str
    help: str
    params: tuple[Opt, ...]
    run: Callable[..., None]


ROOT = Opt("root", str, None, ("--root",), "Log directory [default: $SWARMLOG_ROOT or ./.swarm]")
URL = Opt("url", str, None, ("--url",), "nats://host:port/STREAM of a JetStream log")
JSON = Opt("json", bool, False, ("--json",), "Machine-readable JSON output")
WHERE = (ROOT, URL, JSON)


class Unsupported(Exception):
    """This command line is for typer to handle (help, usage errors, unusual forms)."""


_CONVERT: dict[type, Callable[[str], Any]] = {str: str, int: int, float: float, list: int}


def parse(cmd: Command, args: list[str]) -> dict[str, Any]:
    """The values of ``cmd``'s parameters in ``args``; ``Unsupported`` for anything that
    is not a plain, well-formed command line (typer then reports it)."""
    opts: dict[str, Opt] = {}
    positional: list[Opt] = []
    values: dict[str, Any] = {}
    missing: set[str] = set()
    for p in cmd.params:
        if p.positional:
            positional.append(p)
        for d in p.decls:
            opts[d] = p
        if p.default is REQUIRED:
            missing.add(p.name)
        else:
            values[p.name] = p.default
    i = pos = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a.startswith("-") and a != "-":
            flag, eq, value = a.partition("=")
            if flag not in opts:
                raise Unsupported(a)
            p = opts[flag]
            if p.kind is bool:
                if eq:
                    raise Unsupported(a)
                values[p.name] = True
                continue
            if not eq:
                if i >= len(args) or args[i].startswith("-"):
                    raise Unsupported(a)
                value = args[i]
                i += 1
            try:
                v = _CONVERT[p.kind](value)
            except ValueError:
                raise Unsupported(a) from None
            values[p.name] = [*(values.get(p.name) or []), v] if p.kind is list else v
            missing.discard(p.name)
        else:
            if pos >= len(positional):
                raise Unsupported(a)
            values[positional[pos].name] = a
            missing.discard(positional[pos].name)
            pos += 1
    if missing:
        raise Unsupported(", ".join(sorted(missing)))
    return values
