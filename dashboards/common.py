"""What every command shares, without typer: the log target, opening it, printing, exits.

The per-action commands (``spec``) run on this module alone, so an agent's call never
imports typer, click or rich; the typer app (``app``) re-exports these names for the
other commands. ``ctx`` is anything with an ``obj`` attribute holding a ``Where``:
typer's context, or the fast path's stand-in (``fastpath``).
"""

from __future__ import annotations

import errno
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import orjson

from swarmlog import Log, SwarmlogError, open_log

if TYPE_CHECKING:
    from synthesizer.swarm import Swarm

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_CONFLICT = 0, 1, 2, 3


class Where:
    """The log chosen by --root/--url given before the command name.

    (A plain class, not a dataclass: each dataclass costs ~0.5 ms of CLI start.)"""

    __slots__ = ("root", "url")

    def __init__(self, root: str | None = None, url: str | None = None) -> None:
        self.root = root
        self.url = url

    def __repr__(self) -> str:
        return f"Where(root={self.root!r}, url={self.url!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Where) and (self.root, self.url) == (other.root, other.url)

    # mutable, so unhashable (as the dataclass it replaces)
    __hash__ = None  # type: ignore[assignment]


def _where(ctx: Any) -> Where:
    obj = getattr(ctx, "obj", None)
    return obj if isinstance(obj, Where) else Where()


def scope(ctx: Any, root: str | None, url: str | None) -> None:
    """Carry --root/--url given after a group's name down to its subcommands."""
    where = _where(ctx)
    ctx.obj = Where(root or where.root, url or where.url)


def target(ctx: Any, root: str | None = None, url: str | None = None) -> str:
    """Resolve the log target: command options, then global ones, then env, then ./.swarm."""
    where = _where(ctx)
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
    ctx: Any,
    root: str | None = None,
    url: str | None = None,
    create: bool = False,
    write: bool = False,
    validate: bool = True,
) -> Log:
    """Open the chosen log; a missing one is an error unless ``create``.

    Read commands open it without write access; write commands pass ``write`` and fail
    at once, in one line ("read-only: …"), on a log they could not write. Appends are
    checked against the body rules of the synthesizer's event types (registered by
    importing ``synthesizer.bodies``: plain Python, not the fold); ``validate=False``
    skips that for commands that only read."""
    if validate:
        import synthesizer.bodies  # noqa: F401

    log = open_log(target(ctx, root, url), create=create, writable=write or create)
    if write:
        from swarmlog.file import clean_temporaries

        place = log.local_dir()
        if place is not None:  # temporaries of killed writers (docs/faults.md)
            clean_temporaries(place)
    return log


def open_swarm(
    ctx: Any, root: str | None = None, url: str | None = None, write: bool = False
) -> Swarm:
    """Open the chosen swarm (an existing log only; ``write`` checks it can be written):
    the one way commands get a ``Swarm``."""
    from synthesizer.swarm import Swarm

    return Swarm(open_target(ctx, root, url, write=write))


def echo(message: object = "", err: bool = False) -> None:
    """Print one line on stdout (or stderr)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{message}\n")
    stream.flush()


def emit_json(obj: Any) -> None:
    """Print one JSON document on stdout."""
    sys.stdout.buffer.write(orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
    sys.stdout.flush()


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Print a one-line error and exit with ``code``."""
    first = message.strip().splitlines()[0] if message.strip() else "error"
    echo(f"error: {first}", err=True)
    raise SystemExit(code)


def os_message(e: OSError) -> str:
    """One line for an OSError that escaped the library: "read-only: …" for a refused write."""
    where = f"{e.filename}: " if e.filename else ""
    if e.errno == errno.EROFS:
        return f"read-only: {where}{e.strerror}"
    if e.errno == errno.EFBIG:
        return f"{where}file too large: over this process's file size limit (ulimit -f)"
    return f"{where}{e.strerror or e}"
