"""The ``swarmlog`` typer app, its shared options and the helpers commands open logs with.

Every command module registers on ``app`` (``dashboards.cli`` imports them all and holds
``main``, which maps library errors to exit codes: 0 ok, 1 error, 2 usage, 3 CAS conflict,
DESIGN 8). Commands stay thin: parse options, call the library, print.

Start time matters (an agent may shell out once per action), so this module and the
command modules import only typer, orjson and ``swarmlog`` at the top; the synthesizer,
numpy, rich and pydantic models load inside the commands that use them.
"""

from __future__ import annotations

import errno
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
import typer

from swarmlog import Log, SwarmlogError, open_log

if TYPE_CHECKING:
    from synthesizer.swarm import Swarm

app = typer.Typer(
    name="swarmlog",
    help="Append-only, event-sourced shared memory for swarms of agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_CONFLICT = 0, 1, 2, 3

RootOpt = typer.Option(None, "--root", help="Log directory [default: $SWARMLOG_ROOT or ./.swarm]")
UrlOpt = typer.Option(None, "--url", help="nats://host:port/STREAM of a JetStream log")
JsonOpt = typer.Option(False, "--json", help="Machine-readable JSON output")


@dataclass
class Where:
    """The log chosen by --root/--url given before the command name."""

    root: str | None = None
    url: str | None = None


@app.callback()
def _global(
    ctx: typer.Context,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
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


def scope(ctx: typer.Context, root: str | None, url: str | None) -> None:
    """Carry --root/--url given after a group's name down to its subcommands."""
    where: Where = ctx.obj if isinstance(ctx.obj, Where) else Where()
    ctx.obj = Where(root or where.root, url or where.url)


def target(ctx: typer.Context, root: str | None = None, url: str | None = None) -> str:
    """Resolve the log target: command options, then global ones, then env, then ./.swarm."""
    where: Where = ctx.obj if isinstance(ctx.obj, Where) else Where()
    url = url or where.url
    root = root or where.root
    if url and root:
        raise SwarmlogError("give either --root or --url, not both")
    if url:
        if not url.startswith(("nats://", "tls://")):
            raise SwarmlogError(f"--url must look like nats://host:port/STREAM, got {url!r}")
        return url
    return root or os.environ.get("SWARMLOG_ROOT") or ".swarm"


def open_target(
    ctx: typer.Context,
    root: str | None = None,
    url: str | None = None,
    create: bool = False,
    write: bool = False,
    validate: bool = True,
) -> Log:
    """Open the chosen log; a missing one is an error unless ``create``.

    Read commands open it without write access; write commands pass ``write`` and fail
    at once, in one line ("read-only: …"), on a log they could not write. Appends are
    validated against the known body models (registered by importing
    ``synthesizer.events``: pydantic, not the fold); ``validate=False`` skips that for
    commands that only read."""
    if validate:
        import synthesizer.events  # noqa: F401

    return open_log(target(ctx, root, url), create=create, writable=write or create)


def open_swarm(
    ctx: typer.Context, root: str | None = None, url: str | None = None, write: bool = False
) -> Swarm:
    """Open the chosen swarm (an existing log only; ``write`` checks it can be written):
    the one way commands get a ``Swarm``."""
    from synthesizer.swarm import Swarm

    return Swarm(open_target(ctx, root, url, write=write))


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout."""
    sys.stdout.buffer.write(orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
    sys.stdout.flush()


def fail(message: str, code: int = EXIT_ERROR) -> None:
    """Print a one-line error and exit with ``code``."""
    first = message.strip().splitlines()[0] if message.strip() else "error"
    typer.echo(f"error: {first}", err=True)
    raise typer.Exit(code)


def os_message(e: OSError) -> str:
    """One line for an OSError that escaped the library: "read-only: …" for a refused write."""
    where = f"{e.filename}: " if e.filename else ""
    if e.errno == errno.EROFS:
        return f"read-only: {where}{e.strerror}"
    return f"{where}{e.strerror or e}"
