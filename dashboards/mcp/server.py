"""``swarmlog mcp``: the swarm's shared memory as an MCP server (official ``mcp`` SDK, stdio).

Each agent process starts its own server on the same root; they all read and write one
log, so they share one memory. By default each server also runs a background
synthesizer: of N servers on a root one holds the synthesizer lease and decides, the
others stand by and take over when it stops. Tool results are typed (structured
content); a bad argument or a refused write is a tool error with a one-line message,
never a crashed server. The tool logic lives in ``tools.py``; this module wires it.
"""

from __future__ import annotations

import inspect
import os
import signal
import sys
import threading
from typing import Annotated, Any, Literal

import orjson
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from dashboards.mcp.guard import GuardError, Team, check_agent_name, check_call, compact_schema
from dashboards.mcp.tools import MemoryTools, ToolInputError
from swarmlog.names import check_name
from swarmlog.version import __version__
from synthesizer.swarm import Swarm
from synthesizer.worker.background import BackgroundSynth

INSTRUCTIONS = (
    "Shared memory for a team of agents. Before a task, search_memory for what others "
    "found; share_memory each finding (one per call; subject+value for claims others may "
    "dispute); reinforce_memory facts you confirmed; to change a fact, update_fact with "
    "the version you read (on a conflict get_fact and retry)."
)
TEAM_INSTRUCTIONS = " Pass your own agent name as `agent` on every call that takes it."

FactId = Annotated[str, Field(min_length=1, max_length=128, description="e.g. f12")]
Name = Annotated[str, Field(min_length=1, max_length=128)]
StatusName = Literal["active", "contested", "superseded", "retracted"]
AgentArg = Annotated[str | None, Field(max_length=128)]
AS_AGENT = ("share_memory", "search_memory", "reinforce_memory", "give_feedback", "update_fact")
"""The tools that act as an agent: a team server's calls name it in ``agent``."""


def _validation_line(tool: str, e: ValidationError) -> str:
    """A pydantic argument error as one line: the first field and its problem."""
    errs = e.errors()
    first = errs[0]
    where = ".".join(str(p) for p in first["loc"]) or "arguments"
    more = f" (and {len(errs) - 1} more problem(s))" if len(errs) > 1 else ""
    return f"{tool}: bad argument {where}: {first['msg']}{more}"


class SwarmMCPServer(MCPServer):
    """MCPServer whose refusals are one line each, prefixed with the tool's name: unknown
    arguments and oversized inputs before anything runs, then argument validation."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        tool = self._tool_manager.get_tool(name)
        try:
            if tool is not None:
                check_call(name, arguments, tool.parameters)
            return await super().call_tool(name, arguments, context)
        except GuardError as e:
            raise ToolError(f"{name}: {e}") from None
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(_validation_line(name, e.__cause__)) from e.__cause__
            msg = str(e)
            raise ToolError(msg if msg.startswith(f"{name}: ") else f"{name}: {msg}") from e


def _client(ctx: Context) -> str | None:
    """The name the MCP client gave in initialize (or its request envelope), if any."""
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError, LookupError):
        return None
    return params.client_info.name if params is not None else None


def _call(fn: Any, *args: Any) -> CallToolResult:
    """Run a tool body: its result as JSON text plus the same object as structured content
    (no output schema: the field names say enough, and schemas cost the model's context);
    its ToolInputError becomes the SDK's ToolError."""
    try:
        result: BaseModel = fn(*args)
    except ToolInputError as e:
        raise ToolError(str(e)) from None
    data = result.model_dump(mode="json")
    text = orjson.dumps(data).decode()
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def _tidy(srv: SwarmMCPServer, team: Team | None) -> None:
    """Dedent descriptions, compact input schemas, and set up ``agent``: required and
    described on a team server, absent (so refused) on a single-agent one."""
    for tool in srv._tool_manager.list_tools():
        tool.description = " ".join(inspect.cleandoc(tool.description or "").split())
        schema = compact_schema(tool.parameters)
        props = schema.get("properties", {})
        if "agent" in props:
            if team is None:
                del props["agent"]
            else:
                props["agent"]["description"] = f"Your agent name, {team.describe()}"
                schema["required"] = [*schema.get("required", []), "agent"]
        tool.parameters = schema


def build_server(tools: MemoryTools, judge: bool = False) -> SwarmMCPServer:
    """An MCPServer exposing ``tools`` (no transport, no synthesizer: see ``serve``);
    ``judge`` adds ``judge_questions``, the client's model as the swarm's judge
    through MCP sampling (``dashboards.mcp.sampling``)."""
    team = tools.team
    srv = SwarmMCPServer(
        "swarmlog",
        version=__version__,
        instructions=INSTRUCTIONS + (TEAM_INSTRUCTIONS if team is not None else ""),
        log_level="WARNING",
    )

    _memory_tools(srv, tools)
    _fact_tools(srv, tools)
    _log_tools(srv, tools)
    if judge:
        from dashboards.mcp import sampling

        sampling.register(srv, tools, _client, _call, WRITE)
    _tidy(srv, team)
    return srv


def _memory_tools(srv: SwarmMCPServer, tools: MemoryTools) -> None:
    """The tools an agent works with most: share a finding, search the team's facts."""

    @srv.tool(annotations=WRITE)
    def share_memory(
        ctx: Context,
        content: Annotated[str, Field(min_length=1, description="One finding, in plain words")],
        category: Annotated[Name, Field(description="e.g. discovery, bug, decision")] = (
            "discovery"
        ),
        importance: Annotated[float, Field(strict=True, ge=0.0, le=1.0)] = 0.5,
        subject: Annotated[str | None, Field(description="What a claim is about")] = None,
        value: Annotated[str | None, Field(description="The claimed value of subject")] = None,
        thread: Name | None = None,
        agent: AgentArg = None,
    ) -> CallToolResult:
        """Share one finding with the team. Returns its seq and, once decided, the fact_id
        it created or corroborated (decision 'pending' if not decided yet). Give subject
        and value for a claim others may contradict (subject 'cache ttl', value '5m')."""
        return _call(
            tools.share, _client(ctx), content, category, importance, subject, value, thread, agent
        )

    @srv.tool(annotations=READ)
    def search_memory(
        ctx: Context,
        query: Annotated[str, Field(min_length=1)],
        limit: Annotated[int, Field(strict=True, ge=1, le=100)] = 5,
        category: Name | None = None,
        thread: Name | None = None,
        min_score: Annotated[float | None, Field(strict=True)] = None,
        agent: AgentArg = None,
    ) -> CallToolResult:
        """Find the team's facts matching a query, best first: id, content, status,
        version, strength, support, similarity, relevance. Use before starting work."""
        return _call(tools.search, _client(ctx), query, limit, category, thread, min_score, agent)


def _fact_tools(srv: SwarmMCPServer, tools: MemoryTools) -> None:
    """The tools on one fact: read it or a list, vote for it, rate it, change it (CAS)."""

    @srv.tool(annotations=READ)
    def get_fact(fact_id: FactId) -> CallToolResult:
        """One fact in full: its evidence (who shared what) and history of changes."""
        return _call(tools.get_fact, fact_id)

    @srv.tool(annotations=READ)
    def list_facts(
        status: StatusName | None = None,
        category: Name | None = None,
        limit: Annotated[int, Field(strict=True, ge=1, le=500)] = 20,
    ) -> CallToolResult:
        """List facts, newest first (e.g. status 'contested' to find disputes)."""
        return _call(tools.list_facts, status, category, limit)

    @srv.tool(annotations=WRITE)
    def reinforce_memory(ctx: Context, fact_id: FactId, agent: AgentArg = None) -> CallToolResult:
        """Vote for a fact you confirmed: stronger, decays slower (once per agent)."""
        return _call(tools.reinforce, _client(ctx), fact_id, agent)

    @srv.tool(annotations=WRITE)
    def give_feedback(
        ctx: Context,
        fact_id: FactId,
        usefulness: Annotated[
            float, Field(strict=True, ge=-1.0, le=1.0, description="-1 misleading..1")
        ],
        agent: AgentArg = None,
    ) -> CallToolResult:
        """Say how useful a fact was to you."""
        return _call(tools.feedback, _client(ctx), fact_id, usefulness, agent)

    @srv.tool(annotations=WRITE)
    def update_fact(
        ctx: Context,
        fact_id: FactId,
        expected_version: Annotated[
            int, Field(strict=True, ge=0, description="The version you read")
        ],
        content: Annotated[str | None, Field(min_length=1)] = None,
        value: str | None = None,
        status: StatusName | None = None,
        reason: Annotated[str | None, Field(max_length=1024)] = None,
        agent: AgentArg = None,
    ) -> CallToolResult:
        """Change a fact only if still at expected_version (compare-and-swap); on a
        version conflict get_fact, reconsider, retry. Settle a contest by setting the
        loser's status ('superseded'/'retracted', with a reason). Version 0 creates."""
        return _call(
            tools.update,
            _client(ctx),
            fact_id,
            expected_version,
            content,
            value,
            status,
            reason,
            agent,
        )


def _log_tools(srv: SwarmMCPServer, tools: MemoryTools) -> None:
    """The tools on the swarm as a whole: its counts, its raw event log."""

    @srv.tool(annotations=READ)
    def swarm_stats() -> CallToolResult:
        """Counts: events, facts by status and tier, undecided memories, agents."""
        return _call(tools.stats)

    @srv.tool(annotations=READ)
    def read_events(
        after_seq: Annotated[int, Field(strict=True, ge=0)] = 0,
        limit: Annotated[int, Field(strict=True, ge=1, le=500)] = 50,
        types: list[str] | None = None,
    ) -> CallToolResult:
        """The raw event log after a seq (optionally only some types); continue with
        after_seq = next_after_seq."""
        return _call(tools.read_events, after_seq, limit, types)


def serve(
    target: str | os.PathLike[str],
    agent: str | None = None,
    session: str | None = None,
    synth: bool = True,
    decide_wait: float = 3.0,
    lease_timeout_s: float | None = None,
    team: str | None = None,
    judge: bool = False,
) -> None:
    """Open the swarm, start the background synthesizer (unless off), serve on stdio
    (``judge``: with the ``judge_questions`` tool, see ``build_server``).

    The synthesizer is named after the agent and this process in the lease, so
    ``swarm_stats`` of a standing-by server says which server holds it.

    The stdio server runs in a daemon thread; this thread waits for it to end
    (stdin closed) or for SIGTERM/SIGINT. Either way the synthesizer folds what is
    left, checkpoints and releases its lease before this returns. A signal cannot
    unwind the server's event loop cleanly (its stdin reader sits in a blocking
    read in a worker thread), so after a signal the process exits here with 0,
    once the clean-up is done, instead of hanging on that thread at exit."""
    if agent is not None and team is not None:
        raise GuardError("give either --agent (one agent) or --agents (a team), not both")
    if agent is not None:
        check_agent_name(agent)
    members = Team(team) if team is not None else None
    if session is not None:
        check_name("session", session)
    swarm = Swarm.open(target)
    worker = None
    if synth:
        name = f"mcp:{agent or ('team' if members else 'client')}:{os.getpid()}"
        worker = BackgroundSynth(target, name=name, lease_timeout_s=lease_timeout_s).start()
    done = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            tools = MemoryTools(
                swarm, agent, session, decide_wait=decide_wait, synth=worker, team=members
            )
            build_server(tools, judge).run("stdio")
        except BaseException as exc:  # handed to the main thread, re-raised there
            failure.append(exc)
        finally:
            done.set()

    def on_signal(*_: object) -> None:
        done.set()

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    server = threading.Thread(target=run, name="swarmlog-mcp", daemon=True)
    server.start()
    try:
        while not done.wait(1.0):
            pass
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if worker is not None:
            worker.stop()
        swarm.close()
    if server.is_alive():  # stopped by a signal: the clean-up is done, leave now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    if failure:
        raise failure[0]


__all__ = ["SwarmMCPServer", "build_server", "serve"]
