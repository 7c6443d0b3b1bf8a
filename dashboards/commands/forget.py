"""``swarmlog forget``: erase an agent, a session, a thread or a store identity.

Thin: names the identity and calls ``synthesizer.forget.erase`` (the intent event, the log
rewrite, the checkpoints). Bad input and refusals are one-line errors (exit 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from dashboards.app import JsonOpt, RootOpt, UrlOpt, app, emit_json, fail, open_swarm
from dashboards.progress import working

if TYPE_CHECKING:
    from synthesizer.forget.erase import Identity, Result
    from synthesizer.promotion.propagate import Propagated
    from synthesizer.swarm import Swarm

DASHBOARD_REPORT = "metrics/swarm_memory_dashboard.md"


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
    force: bool = typer.Option(
        False, "--force", help="Record the request even if the identity has no events"
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
    interrupted one). A store identity forgets by prefix (--tenant T --principal P: all
    of P's conversations); an identity with no events exits 1 unless --force."""
    ident = _identity(agent, session, thread, (tenant, principal, conversation), by)
    swarm = open_swarm(ctx, root, url, write=True)
    res, spread = _erase(swarm, ident, by, force, propagate)
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


def _identity(
    agent: str | None,
    session: str | None,
    thread: str | None,
    store: tuple[str | None, str | None, str | None],
    by: str,
) -> Identity:
    """The identity the options name (exactly one), and who asks checked (one-line errors)."""
    from synthesizer.forget.erase import Identity

    ns = None
    if any(x is not None for x in store):
        from synthesizer.compat.store import MemoryIdentity, encode_identity

        ns = encode_identity(MemoryIdentity(*store))
    if sum(x is not None for x in (agent, session, thread, ns)) != 1:
        fail(
            "give exactly one of --agent, --session, --thread or a store identity"
            " (--tenant/--principal/--conversation)"
        )
    from synthesizer.reserved import RESERVED

    if by in RESERVED and by != "operator":
        fail(f"--as {by!r}: a reserved name (the project writes as it); name who asks")
    return Identity(agent, session, thread, ns)


def _erase(
    swarm: Swarm, ident: Identity, by: str, force: bool, propagate: str | None
) -> tuple[Result, Propagated | None]:
    """The forget done (and propagated), the dashboard report rendered again from the
    rewritten log; a refusal or a stop is a one-line error saying whether to run it again."""
    from dashboards.app import os_message
    from swarmlog import SwarmlogError
    from synthesizer.forget.erase import ForgetError, forget

    spread = None
    try:
        with working(f"forgetting {ident.describe()}"):
            res = forget(swarm, ident, by, force=force)
        if DASHBOARD_REPORT in res.reports_removed:  # rendered again from the rewritten log
            from dashboards.markdown import render
            from synthesizer.metrics import compute

            path = swarm.log.root / DASHBOARD_REPORT  # type: ignore[attr-defined]
            path.parent.mkdir(exist_ok=True)
            path.write_text(render(compute(swarm.refresh(), swarm=swarm.name)), "utf-8")
        if propagate is not None:
            from synthesizer.promotion.propagate import propagate as _propagate

            spread = _propagate(swarm, ident, propagate)
    except NotImplementedError as e:
        fail(str(e))
    except ForgetError as e:
        fail(f"{e} (nothing was written; running it again as it is will not help)")
    except (OSError, SwarmlogError) as e:  # (disk full, ...): the intent is durable
        what = os_message(e) if isinstance(e, OSError) else str(e)
        fail(
            f"forget stopped: {what}; every file is the old one or the new one: run the"
            " same 'swarmlog forget' again (once there is room) to finish it"
        )
    finally:
        swarm.close()
    return res, spread
