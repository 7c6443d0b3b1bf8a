"""``swarmlog forget``: erase an agent, a session, a thread or a store identity.

Thin: names the identity and calls ``synthesizer.forget`` (the intent event, the log
rewrite, the checkpoints). Bad input and refusals are one-line errors (exit 1).
"""

from __future__ import annotations

import typer

from .app import JsonOpt, RootOpt, UrlOpt, app, emit_json, fail, open_swarm
from .progress import working


@app.command()
def forget(
    ctx: typer.Context,
    agent: str | None = typer.Option(None, "--agent", help="Forget this agent"),
    session: str | None = typer.Option(None, "--session", help="Forget this session"),
    thread: str | None = typer.Option(None, "--thread", help="Forget this thread"),
    tenant: str | None = typer.Option(None, "--tenant", help="Store identity: tenant"),
    principal: str | None = typer.Option(None, "--principal", help="Store identity: principal"),
    conversation: str | None = typer.Option(
        None, "--conversation", help="Store identity: conversation id"
    ),
    by: str = typer.Option(
        "operator", "--as", help="Who asks (forgetting another identity needs an operator)"
    ),
    propagate: str | None = typer.Option(
        None, "--propagate", help="Also erase it in this global memory (promoted facts)"
    ),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """Erase an identity: its events become tombstones, quotes of it are scrubbed, facts
    only it evidenced are dropped and checkpoints after it rebuilt (re-run to finish an
    interrupted one)."""
    from synthesizer.forget import Identity, forget

    store = (tenant, principal, conversation)
    ns = None
    if any(x is not None for x in store):
        from synthesizer.facade_store import MemoryIdentity, encode_identity

        ns = encode_identity(MemoryIdentity(*store))
    if sum(x is not None for x in (agent, session, thread, ns)) != 1:
        fail(
            "give exactly one of --agent, --session, --thread or a store identity"
            " (--tenant/--principal/--conversation)"
        )
    ident = Identity(agent, session, thread, ns)
    swarm = open_swarm(ctx, root, url, write=True)
    spread = None
    try:
        with working(f"forgetting {ident}"):
            res = forget(swarm, ident, by)
        if propagate is not None:
            from synthesizer.propagate import propagate as _propagate

            spread = _propagate(swarm, ident, propagate)
    except NotImplementedError as e:
        fail(str(e))
        return
    finally:
        swarm.close()
    if json:
        emit_json({**res.to_dict(), **({"propagated": spread.to_dict()} if spread else {})})
        return
    typer.echo(
        f"forgot {res.identity}: intent at seq {res.intent_seq}, {res.redacted} record(s)"
        f" rewritten ({res.matched} affected), {res.checkpoints_dropped} checkpoint(s)"
        " dropped" + (f", checkpoint rebuilt at seq {res.checkpoint}" if res.checkpoint else "")
    )
    if spread is not None:
        gone = spread.forgot.redacted if spread.forgot is not None else 0
        typer.echo(
            f"propagated to {spread.target}: {gone} record(s) rewritten there,"
            f" {spread.updated.updated + spread.updated.promoted} fact(s) sent again"
        )
