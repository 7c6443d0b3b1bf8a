"""Configuration commands: ``swarmlog config [show]`` and ``swarmlog config set KEY=VALUE …``.

The configuration lives in the log (``synthesizer.configlog``): ``show`` prints the one
in force and the seq that recorded it; ``set`` records a changed one, in force from its
seq on. ``swarmlog init --set`` (in ``log.py``) records the first one.
"""

from __future__ import annotations

from typing import Any

import typer

from dashboards.app import JsonOpt, RootOpt, UrlOpt, command_group, emit_json, open_target, scope

config_app = command_group(
    "config", "The swarm's configuration, recorded in its log: show it, or set KEY=VALUE."
)


def config_json(conf: Any) -> dict[str, Any]:
    """A ``Configured`` as JSON: the seq that recorded it (0: defaults) and its values."""
    from synthesizer.configlog import flatten

    return {
        "seq": conf.seq,
        "recorded": conf.recorded,
        "changed": conf.changed,
        "config": conf.config.model_dump(mode="json"),
        "settings": flatten(conf.config),
    }


def print_config(conf: Any) -> None:
    """The configuration as ``key = value`` lines under a line saying where it comes from."""
    from synthesizer.configlog import flatten

    if conf.recorded:
        typer.echo(f"configuration recorded at seq {conf.seq}")
    else:
        typer.echo("configuration: the defaults (none recorded in the log)")
    for key, value in flatten(conf.config).items():
        mark = "  (set here)" if key in conf.changed else ""
        typer.echo(f"  {key} = {value}{mark}")


def _show(ctx: typer.Context, root: str | None, url: str | None, json: bool) -> None:
    from synthesizer.configlog import log_config

    log = open_target(ctx, root, url)
    try:
        conf = log_config(log)
    finally:
        log.close()
    if json:
        emit_json(config_json(conf))
    else:
        print_config(conf)


@config_app.callback()
def config(
    ctx: typer.Context,
    json: bool = JsonOpt,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
) -> None:
    """Show the configuration in force (``config`` alone is ``config show``)."""
    scope(ctx, root, url)
    if ctx.invoked_subcommand is None:
        _show(ctx, None, None, json)


@config_app.command("show")
def show(
    ctx: typer.Context,
    json: bool = JsonOpt,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
) -> None:
    """The configuration in force, and the seq of the event that recorded it."""
    parent = ctx.parent.params.get("json", False) if ctx.parent is not None else False
    _show(ctx, root, url, json or bool(parent))


@config_app.command("set")
def set_(
    ctx: typer.Context,
    settings: list[str] = typer.Argument(..., metavar="KEY=VALUE...", help="e.g. pool.capacity=5"),
    json: bool = JsonOpt,
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
) -> None:
    """Record a changed configuration (in force from its seq on; replay stays exact)."""
    from synthesizer.configlog import change_config, parse_settings

    parsed = parse_settings(settings)
    log = open_target(ctx, root, url, write=True)
    try:
        conf, appended = change_config(log, parsed)
    finally:
        log.close()
    if json:
        emit_json({**config_json(conf), "appended": appended})
    elif appended:
        typer.echo(
            f"configuration changed at seq {conf.seq}: "
            + ", ".join(f"{k}={v}" for k, v in conf.changed.items())
        )
    else:
        typer.echo(f"configuration unchanged (recorded at seq {conf.seq})")
