"""``swarmlog mcp``: the swarm's shared memory as an MCP server (official ``mcp`` SDK, stdio).

Each agent process starts its own server on the same root; they all read and write one
log, so they share one memory. By default each server also runs a background
synthesizer: of N servers on a root one holds the synthesizer lease and decides, the
others stand by and take over when it stops. Tool results are typed (structured
content); a bad argument or a refused write is a tool error with a one-line message,
never a crashed server. The tool logic lives in ``mcp_tools``; this module wires it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from swarmlog.names import check_name
from synthesizer.background import BackgroundSynth
from synthesizer.swarm import Swarm

from .mcp_tools import (
    EventPage,
    FactDetail,
    FactList,
    MemoryTools,
    ReinforceResult,
    SearchResult,
    ShareResult,
    Stats,
    ToolInputError,
    WriteResult,
)

INSTRUCTIONS = (
    "Shared memory for a swarm of agents. share_memory what you learn (one finding per "
    "call); search_memory before working on something, to reuse what others found; "
    "reinforce_memory or give_feedback on facts that helped; update_fact with the version "
    "you read (on a version conflict, get_fact again and retry)."
)

FactId = Annotated[str, Field(min_length=1, max_length=128, description="A fact id, e.g. f12")]
Name = Annotated[str, Field(min_length=1, max_length=128)]
StatusName = Literal["active", "contested", "superseded", "retracted"]


def _validation_line(tool: str, e: ValidationError) -> str:
    """A pydantic argument error as one line: the first field and its problem."""
    errs = e.errors()
    first = errs[0]
    where = ".".join(str(p) for p in first["loc"]) or "arguments"
    more = f" (and {len(errs) - 1} more problem(s))" if len(errs) > 1 else ""
    return f"{tool}: bad argument {where}: {first['msg']}{more}"


class SwarmMCPServer(MCPServer):
    """MCPServer whose argument-validation errors are one line each."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(_validation_line(name, e.__cause__)) from e.__cause__
            raise


def _client(ctx: Context) -> str | None:
    """The name the MCP client gave in initialize (or its request envelope), if any."""
    try:
        params = ctx.session.client_params
    except (AttributeError, ValueError, LookupError):
        return None
    return params.client_info.name if params is not None else None


def _call(fn: Any, *args: Any) -> Any:
    """Run a tool body; its ToolInputError becomes the SDK's ToolError."""
    try:
        return fn(*args)
    except ToolInputError as e:
        raise ToolError(str(e)) from None


READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)


def build_server(tools: MemoryTools) -> SwarmMCPServer:
    """An MCPServer exposing ``tools`` (no transport, no synthesizer: see ``serve``)."""
    srv = SwarmMCPServer("swarmlog", instructions=INSTRUCTIONS, log_level="WARNING")

    @srv.tool(annotations=WRITE)
    def share_memory(
        ctx: Context,
        content: Annotated[str, Field(min_length=1, description="One finding, in plain words")],
        category: Annotated[
            Name, Field(description="A short label: discovery, bug, decision, howto, ...")
        ] = "discovery",
        importance: Annotated[float, Field(ge=0.0, le=1.0, description="0..1")] = 0.5,
        subject: Annotated[
            str | None,
            Field(description="What the finding is about (e.g. 'cache ttl'); with value, a claim"),
        ] = None,
        value: Annotated[str | None, Field(description="The claimed value of the subject")] = None,
        thread: Annotated[Name | None, Field(description="A task or thread to file it under")] = (
            None
        ),
    ) -> ShareResult:
        """Share something you learned with the other agents of the swarm.

        Returns the raw memory's seq and, once the synthesizer has decided it (usually
        within a second), the id of the fact it created or corroborated (decision
        'created' or 'corroborated'); 'pending' means not decided yet. Give subject and
        value for claims that others may contradict (e.g. subject 'cache ttl', value '5m').
        """
        return _call(
            tools.share, _client(ctx), content, category, importance, subject, value, thread
        )

    @srv.tool(annotations=READ)
    def search_memory(
        ctx: Context,
        query: Annotated[str, Field(min_length=1, description="What you are looking for")],
        limit: Annotated[int, Field(ge=1, le=100)] = 5,
        category: Name | None = None,
        thread: Name | None = None,
        min_score: Annotated[float | None, Field(description="Minimum relevance")] = None,
    ) -> SearchResult:
        """Find facts the swarm knows that match a query, best first.

        Each hit has the fact id, content, similarity (cosine to the query), relevance
        (the ranking score), strength, support (how many agents back it), status and
        version. Retracted and superseded facts are not returned.
        """
        return _call(tools.search, _client(ctx), query, limit, category, thread, min_score)

    @srv.tool(annotations=READ)
    def get_fact(fact_id: FactId) -> FactDetail:
        """One fact in full: content, status, version, strength, the evidence behind it
        (each raw memory's seq, agent, session and text) and its history of changes."""
        return _call(tools.get_fact, fact_id)

    @srv.tool(annotations=READ)
    def list_facts(
        status: StatusName | None = None,
        category: Name | None = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 20,
    ) -> FactList:
        """List facts, most recently created first, optionally by status and category."""
        return _call(tools.list_facts, status, category, limit)

    @srv.tool(annotations=WRITE)
    def reinforce_memory(ctx: Context, fact_id: FactId) -> ReinforceResult:
        """Vote for a fact you confirmed: it gets stronger and decays slower (one vote per
        agent counts; counted is false for a repeat)."""
        return _call(tools.reinforce, _client(ctx), fact_id)

    @srv.tool(annotations=WRITE)
    def give_feedback(
        ctx: Context,
        fact_id: FactId,
        usefulness: Annotated[
            float, Field(ge=-1.0, le=1.0, description="-1 misleading .. 0 neutral .. 1 useful")
        ],
    ) -> WriteResult:
        """Tell the swarm how useful a fact was to you."""
        return _call(tools.feedback, _client(ctx), fact_id, usefulness)

    @srv.tool(annotations=WRITE)
    def update_fact(
        ctx: Context,
        fact_id: FactId,
        expected_version: Annotated[
            int, Field(ge=0, description="The version you read (get_fact/search_memory)")
        ],
        content: Annotated[str | None, Field(min_length=1)] = None,
        value: str | None = None,
        status: StatusName | None = None,
        reason: Annotated[str | None, Field(max_length=1024)] = None,
    ) -> WriteResult:
        """Change a fact if nobody changed it since you read it (compare-and-swap).

        If the fact moved past expected_version the call fails with a version conflict
        naming the current version: call get_fact, reconsider, retry. status 'retracted'
        takes only a reason. expected_version 0 creates a fact with your own id.
        """
        return _call(
            tools.update, _client(ctx), fact_id, expected_version, content, value, status, reason
        )

    @srv.tool(annotations=READ)
    def swarm_stats() -> Stats:
        """Counts for the whole swarm: events, facts by status and tier, undecided
        memories, agents, and what this server's synthesizer is doing."""
        return _call(tools.stats)

    @srv.tool(annotations=READ)
    def read_events(
        after_seq: Annotated[int, Field(ge=0, description="Return events after this seq")] = 0,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
        types: Annotated[
            list[str] | None, Field(description="Only these types, e.g. ['fact.created']")
        ] = None,
    ) -> EventPage:
        """Read the raw event log after a seq (to follow what the swarm did); continue
        with after_seq = next_after_seq."""
        return _call(tools.read_events, after_seq, limit, types)

    return srv


def serve(
    target: str | os.PathLike[str],
    agent: str | None = None,
    session: str | None = None,
    synth: bool = True,
    decide_wait: float = 3.0,
    lease_timeout_s: float | None = None,
) -> None:
    """Open the swarm, start the background synthesizer (unless off), serve on stdio.

    The synthesizer is named after the agent and this process in the lease, so
    ``swarm_stats`` of a standing-by server says which server holds it.

    The stdio server runs in a daemon thread; this thread waits for it to end
    (stdin closed) or for SIGTERM/SIGINT. Either way the synthesizer folds what is
    left, checkpoints and releases its lease before this returns. A signal cannot
    unwind the server's event loop cleanly (its stdin reader sits in a blocking
    read in a worker thread), so after a signal the process exits here with 0,
    once the clean-up is done, instead of hanging on that thread at exit."""
    if agent is not None:
        check_name("agent", agent)
    if session is not None:
        check_name("session", session)
    swarm = Swarm.open(target)
    worker = None
    if synth:
        name = f"mcp:{agent or 'client'}:{os.getpid()}"
        worker = BackgroundSynth(target, name=name, lease_timeout_s=lease_timeout_s).start()
    done = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            tools = MemoryTools(swarm, agent, session, decide_wait=decide_wait, synth=worker)
            build_server(tools).run("stdio")
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
