"""The ``swarmlog`` command: ``main`` (the console entry point) and the assembled app.

The command modules register their commands on ``app`` (dashboards.app) when imported;
``app`` never imports this module back. ``main`` imports only the module of the command
being run when that command is one an agent calls per action (``append``, ``tail``,
``search``, ``reinforce``, ``board``), so such a call does not pay for the dashboard,
rich or the demo; anything else (help, other commands, a typo) loads them all, so help
and errors always see every command. ``dashboards.cli.app`` is the full app. Plain
per-action command lines skip typer altogether (see ``fastpath``): not even imported.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from dashboards.common import EXIT_CONFLICT, EXIT_ERROR, echo, os_message
from swarmlog import SwarmlogError, VersionConflict

if TYPE_CHECKING:
    import typer

    from dashboards.app import app

__all__ = ["app", "main"]

MODULES = (
    "commands.board",
    "commands.config",
    "commands.dash",
    "commands.diff",
    "commands.forget",
    "commands.promote",
    "commands.log",
    "mcp.command",
    "commands.retention",
    "commands.synth",
)
PER_ACTION = {
    "append": "commands.log",
    "tail": "commands.log",
    "search": "commands.synth",
    "reinforce": "commands.synth",
    "board": "commands.board",
}
"""Commands an agent runs once per action -> the one module that defines each."""
_GLOBAL_OPTS = ("--root", "--url")  # options before the command name that take a value


def command_of(argv: list[str]) -> str | None:
    """The command name in ``argv`` (after the global options), or None."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in _GLOBAL_OPTS:
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            return a
    return None


def load_commands(argv: list[str] | None = None) -> typer.Typer:
    """Register the commands ``argv`` can run (all of them unless it runs a per-action
    command) and return the app."""
    name = command_of(argv if argv is not None else sys.argv[1:])
    wanted = (PER_ACTION[name],) if name in PER_ACTION else MODULES
    for mod in wanted:
        importlib.import_module(f".{mod}", __package__)
    from dashboards.app import app

    return app


def __getattr__(name: str) -> Any:
    """``app``: the app with every command registered (PEP 562)."""
    if name == "app":
        return load_commands([])
    raise AttributeError(f"module 'dashboards.cli' has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the command (per-action ones through ``fastpath`` when
    their arguments are plain, else the typer app), mapping library errors to exit codes.

    A closed stdout (``swarmlog tail | head``) ends the command quietly with 0; a
    command that needs a missing extra says in one line how to install it."""
    from dashboards import fastpath

    args = sys.argv[1:] if argv is None else argv
    try:
        if args[:1] in (["--version"], ["-V"]):
            from swarmlog.version import __version__

            echo(f"swarmlog {__version__}")
            return
        if fastpath.run(args):
            return
        app = load_commands(argv)
        try:
            app(args=argv, prog_name="swarmlog", standalone_mode=True)
        except SystemExit as e:
            if e.code == 1 and pipe_closed():
                quiet_exit()  # (click ends a closed pipe with 1; a unix tool with 0)
            raise
    except VersionConflict as e:
        echo(f"conflict: {e} (current version {e.actual})", err=True)
        sys.exit(EXIT_CONFLICT)
    except SwarmlogError as e:
        echo(f"error: {e}", err=True)
        sys.exit(EXIT_ERROR)
    except BrokenPipeError:
        quiet_exit()
    except OSError as e:
        echo(f"error: {os_message(e)}", err=True)
        sys.exit(EXIT_ERROR)
    except ValueError as e:
        echo(f"error: {e}", err=True)
        sys.exit(EXIT_ERROR)
    except ImportError as e:
        echo(f"error: {import_message(e)}", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        sys.exit(130)


def pipe_closed() -> bool:
    """Whether typer met a closed stdout: on EPIPE (and only then) typer (and click,
    whose copy typer vendors as ``typer._click``) wraps stdout in a ``PacifyFlushWrapper``
    before it exits with 1. Told by the class's name: both copies have one."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"


def quiet_exit() -> None:
    """Leave with 0 after the reader of stdout went away: stdout is pointed at
    /dev/null so the interpreter's final flush cannot complain about the pipe."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(0)


def import_message(e: ImportError) -> str:
    """One line for a failed import: which extra to install when one provides it."""
    from swarmlog.extras import extra_of, install_hint

    extra = extra_of(e.name)
    if extra is None:
        return f"cannot import {e.name or 'a module'}: {e}"
    top = (e.name or "").split(".", 1)[0]
    return f"{top} is not installed (the {extra} extra); install it {install_hint(extra)}"
