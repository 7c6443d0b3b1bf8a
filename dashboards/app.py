"""The ``swarmlog`` typer app, its shared options and the helpers commands open logs with.

Every command module registers on ``app`` (``dashboards.cli`` imports them all and holds
``main``, which maps library errors to exit codes: 0 ok, 1 error, 2 usage, 3 CAS conflict,
docs/design.md §13). Commands stay thin: parse options, call the library, print.

The per-action commands are declared without typer (``spec``, ``act_*``) and
registered here by ``register``, which builds the typer command from the declaration;
the helpers every command uses live in ``common`` (re-exported here).
"""

from __future__ import annotations

import inspect
from typing import Any

import typer

from dashboards.common import (
    EXIT_CONFLICT,
    EXIT_ERROR,
    EXIT_OK,
    EXIT_USAGE,
    Where,
    emit_json,
    fail,
    open_swarm,
    open_target,
    os_message,
    scope,
    target,
)
from dashboards.spec import JSON, ROOT, URL, Command, Opt

__all__ = [
    "EXIT_CONFLICT",
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "JsonOpt",
    "RootOpt",
    "UrlOpt",
    "Where",
    "app",
    "command_group",
    "emit_json",
    "fail",
    "open_swarm",
    "open_target",
    "os_message",
    "register",
    "scope",
    "target",
]

app = typer.Typer(
    name="swarmlog",
    help="Append-only, event-sourced shared memory for swarms of agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def typer_param(p: Opt) -> Any:
    """The typer Option (or Argument) of one declared parameter."""
    if p.positional:
        return typer.Argument(p.default, help=p.help, metavar=p.metavar)
    return typer.Option(p.default, *p.decls, help=p.help, metavar=p.metavar)


RootOpt = typer_param(ROOT)
UrlOpt = typer_param(URL)
JsonOpt = typer_param(JSON)


def _annotation(p: Opt) -> Any:
    kind: Any = list[int] if p.kind is list else p.kind
    return kind | None if p.default is None else kind


def typer_function(cmd: Command) -> Any:
    """A function typer can read (signature from ``cmd.params``) that runs ``cmd``."""

    def command(ctx: typer.Context, **values: Any) -> None:
        cmd.run(ctx, **values)

    params = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=typer_param(p),
            annotation=_annotation(p),
        )
        for p in cmd.params
    ]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {
        "ctx": typer.Context,
        **{p.name: _annotation(p) for p in cmd.params},
        "return": None,
    }
    command.__doc__ = cmd.help
    command.__name__ = command.__qualname__ = cmd.run.__name__
    return command


def register(
    cmd: Command,
    on: typer.Typer | None = None,
    name: str | None = None,
    hidden: bool = False,
    callback: bool = False,
) -> None:
    """Add a declared command to ``on`` (the app by default), or make it the group's
    callback."""
    group = app if on is None else on
    fn = typer_function(cmd)
    if callback:
        group.callback()(fn)
    else:
        group.command(name or cmd.name, hidden=hidden)(fn)


def _print_version(value: bool) -> None:
    """``--version`` anywhere before the command: print it and stop."""
    if value:
        from swarmlog.version import __version__

        print(f"swarmlog {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    ctx: typer.Context,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        is_eager=True,
        expose_value=False,
        callback=_print_version,
        help="Print the version and exit",
    ),
) -> None:
    """Append-only, event-sourced shared memory for swarms of agents."""
    ctx.obj = Where(root, url)


def command_group(name: str, help: str, cls: Any = None) -> typer.Typer:
    """A group of subcommands ``swarmlog NAME …``, registered on ``app``; it runs its
    callback when called alone (``board``, ``config``)."""
    group = typer.Typer(
        cls=cls,
        invoke_without_command=True,
        no_args_is_help=False,
        add_completion=False,
        rich_markup_mode=None,
        help=help,
    )
    app.add_typer(group, name=name)
    return group
