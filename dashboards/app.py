"""The ``swarmlog`` typer app, its global options and its error handling.

Every command module registers on ``app``; commands stay thin: parse options, call the
library, print. Errors from the library become one line on stderr and an exit code:
0 ok, 1 error, 2 usage, 3 CAS conflict (DESIGN 8).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
import typer

import synthesizer  # noqa: F401  registers the body models of known event types
from swarmlog import Log, SwarmlogError, VersionConflict, open_log

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
) -> Log:
    """Open the chosen log; a missing one is an error unless ``create``.

    Read commands open it without write access; write commands pass ``write`` and fail
    at once, in one line ("read-only: …"), on a log they could not write.
    """
    return open_log(target(ctx, root, url), create=create, writable=write or create)


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


F = TypeVar("F", bound=Callable[..., Any])


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the app, mapping library errors to exit codes."""
    import dashboards.cli  # noqa: F401  registers every command

    try:
        app(args=argv, prog_name="swarmlog", standalone_mode=True)
    except VersionConflict as e:
        typer.echo(f"conflict: {e} (current version {e.actual})", err=True)
        sys.exit(EXIT_CONFLICT)
    except SwarmlogError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(EXIT_ERROR)
    except OSError as e:
        typer.echo(f"error: {os_message(e)}", err=True)
        sys.exit(EXIT_ERROR)
    except ValueError as e:
        typer.echo(f"error: {e}", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
