"""``swarmlog init --url … --agents a,b,c``: print or write the per-agent NATS users.

Thin: ``swarmlog.jetstream.auth`` builds the users and the block; this module picks the
synthesizer's names (from the synthesizer layer), prints the credentials once and writes
the file (mode 0600, never over an existing one: its passwords would be lost).
"""

from __future__ import annotations

import os

import typer

from dashboards.app import emit_json
from swarmlog import SwarmlogError


def users(target: str, agents: str, operator: str, write: str | None, json: bool) -> None:
    """Build the authorization block for ``agents`` of ``target``'s stream; print or write it."""
    from swarmlog.jetstream import authorization, parse_target
    from synthesizer.configlog import CONFIG_AGENT
    from synthesizer.events import CONFIG_KEY, SYNTH_AGENT
    from synthesizer.worker.lease import LEASE_KEY

    if not target.startswith(("nats://", "tls://")):
        raise SwarmlogError(
            "--agents needs --url nats://host:port/STREAM (on one machine the OS user is "
            "the trust boundary: see docs/trust.md)"
        )
    names = [a.strip() for a in agents.split(",") if a.strip()]
    auth = authorization(
        parse_target(target).stream,
        names,
        operator=operator,
        synthesizer=SYNTH_AGENT,
        config_agent=CONFIG_AGENT,
        reserved_keys=(LEASE_KEY, CONFIG_KEY),
        synth_keys=(LEASE_KEY,),
        config_keys=(CONFIG_KEY,),
    )
    block = auth.block()
    urls = auth.urls(target)
    if write:
        try:
            fd = os.open(write, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise SwarmlogError(f"{write} exists: remove it or pick another file") from None
        except OSError as e:
            raise SwarmlogError(f"cannot write {write}: {e.strerror}") from None
        with os.fdopen(fd, "w") as f:
            f.write(block)
    if json:
        emit_json({"file": write, "block": None if write else block, "users": urls})
        return
    if write:
        typer.echo(f"# wrote the authorization block to {write}: add 'include {write}' to")
        typer.echo("# nats-server's config and reload it. Credentials (shown only now):")
    else:
        typer.echo(block, nl=False)
        typer.echo("# credentials (shown only now; the block above holds the same passwords):")
    for name, url in urls.items():
        typer.echo(f"#   {name}: {url}")
    typer.echo(
        f"# then, as the operator: swarmlog init --url {urls[operator]}  (creates the stream);"
        f"\n# the swarm's 'operators' setting must name {operator!r} for its erasures to count"
    )
