"""``swarmlog mcp``: serve the swarm's memory to an MCP client over stdio (see server.py).

The mcp SDK is imported only when the command runs, so the CLI starts fast without it.
"""

from __future__ import annotations

import typer

from dashboards.app import RootOpt, UrlOpt, app, fail, target


@app.command()
def mcp(
    ctx: typer.Context,
    agent: str | None = typer.Option(
        None, "--agent", help="Agent name to write as [default: the MCP client's name]"
    ),
    agents: str | None = typer.Option(
        None,
        "--agents",
        help="A team: names and/or patterns (lead,worker-*); each tool call names its agent",
    ),
    session: str | None = typer.Option(None, "--session", help="Session to write in"),
    no_synth: bool = typer.Option(
        False, "--no-synth", help="Do not run the embedded synthesizer in this server"
    ),
    lease_timeout: float | None = typer.Option(
        None, "--lease-timeout", help="Take the synthesizer lease over after S s of silence"
    ),
    judge: bool = typer.Option(
        False, "--judge", help="Add judge_question: the client's model judges via sampling"
    ),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
) -> None:
    """Serve the swarm as an MCP server on stdio (tools: share_memory, search_memory, ...)."""
    if agent is not None and agents is not None:
        fail("give either --agent (one agent) or --agents (a team), not both")
    if lease_timeout is not None and not lease_timeout > 0:
        fail(f"--lease-timeout must be > 0, got {lease_timeout}")
    try:
        from dashboards.mcp.server import serve
    except ImportError:
        from swarmlog.extras import missing

        fail(missing("swarmlog mcp", "mcp"))
    serve(
        target(ctx, root, url),
        agent=agent,
        session=session,
        synth=not no_synth,
        lease_timeout_s=lease_timeout,
        team=agents,
        judge=judge,
    )
