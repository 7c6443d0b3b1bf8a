"""What the MCP tools do, as plain synchronous calls over one Swarm (no MCP types here).

Each method validates its arguments, calls the library under one lock (the SDK runs
sync tools on worker threads; a Swarm's live state is not thread-safe) and returns a
pydantic model, which the SDK turns into the tool's structured result. Library errors
become ``ToolInputError`` with a one-line message the server hands to the model.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, Field

from dashboards.facthistory import full_history
from dashboards.mcp.guard import GuardError, Team
from swarmlog import Event, StoredEvent, SwarmlogError, VersionConflict
from synthesizer import events as T
from synthesizer.board import HistoryEntry
from synthesizer.metrics import compute
from synthesizer.state.facts import Fact
from synthesizer.swarm import Agent, Swarm
from synthesizer.worker.background import SynthStatus

MAX_EVIDENCE = 20
"""Evidence items get_fact reads back from the log (the count says how many exist)."""

MAX_SCAN = 10_000
"""Events read_events scans per call when filtering by type."""

HIDDEN = frozenset({"embedding", "lease", "signature"})
"""Body fields read_events leaves out: vectors, the lease version the synthesizer writes
under, the dedup signature (the swarm's machinery reads them; a model need not)."""


class ToolInputError(Exception):
    """A bad argument or a refused write: the one-line message the model gets back."""


def one_line(e: BaseException) -> str:
    """The first line of an exception's text (its type name when it has none)."""
    s = str(e).strip()
    return s.splitlines()[0] if s else type(e).__name__


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    """Turn library errors into ToolInputError (CAS conflicts name the current version)."""
    try:
        yield
    except VersionConflict as e:
        raise ToolInputError(
            f"version conflict on {e.key}: you expected version {e.expected}, the current "
            f"version is {e.actual}; call get_fact to re-read it, then retry with "
            f"expected_version={e.actual}"
        ) from None
    except (SwarmlogError, ValueError, KeyError) as e:
        raise ToolInputError(one_line(e)) from None


# ---------------------------------------------------------------- results


class ShareResult(BaseModel):
    """The raw memory's seq and, once the synthesizer decided it, the fact it became."""

    seq: int = Field(description="Log position of the raw memory you shared")
    agent: str = Field(description="The agent name it was shared as")
    fact_id: str | None = Field(
        description="The fact it became or corroborated; null if not decided yet"
    )
    decision: str = Field(description="created (new fact), corroborated (duplicate) or pending")


class FactSummary(BaseModel):
    """A fact in brief."""

    fact_id: str
    content: str
    category: str
    status: str = Field(description="active, contested, superseded or retracted")
    version: int = Field(description="Pass this as expected_version to update_fact")
    strength: float
    support: int = Field(description="Distinct agents whose memories back the fact")
    agents: list[str] = Field(description="Those agents, first discoverer first")
    subject: str | None = None
    value: str | None = None
    contested_with: list[str] = Field(
        default_factory=list, description="Rival facts that contradict this one (get_fact them)"
    )
    origins: list[str] | None = Field(
        default=None, description="Swarms it was promoted from: name/fact@version"
    )


class AlsoReported(BaseModel):
    """Another fact that may state the same finding in other words."""

    fact_id: str
    agents: list[str] = Field(description="The agents whose memories back it")


class SearchHit(FactSummary):
    """A fact matching a query, with its scores."""

    similarity: float = Field(description="Cosine between the query and the fact, -1..1")
    relevance: float = Field(description="Ranking score: similarity x strength x importance")
    also_reported_as: list[AlsoReported] = Field(
        default_factory=list,
        description="Facts that may say the same in other words (one finding, not yet "
        "judged): get_fact them for their wording",
    )


class SearchResult(BaseModel):
    """Facts best first."""

    hits: list[SearchHit]


class EvidenceItem(BaseModel):
    """One raw memory behind a fact: who shared what, where."""

    seq: int
    agent: str
    session: str | None
    content: str | None = Field(description="The raw memory's text (null if not readable)")


class HistoryItem(BaseModel):
    """One event written about the fact (by the synthesizer or an agent)."""

    seq: int
    agent: str
    type: str
    body: dict[str, Any]


class FactDetail(FactSummary):
    """A fact with its provenance and history."""

    importance: float
    tier: str
    reinforcements: int
    feedback_average: float | None
    feedback_count: int
    created_seq: int
    evidence: list[EvidenceItem] = Field(description=f"Up to {MAX_EVIDENCE} raw memories")
    evidence_total: int
    history: list[HistoryItem]


class FactList(BaseModel):
    """Facts, most recently created first."""

    facts: list[FactSummary]
    total: int = Field(description="How many facts matched before the limit")


class WriteResult(BaseModel):
    """A write that landed: its seq, and the fact's state after it."""

    fact_id: str
    seq: int = Field(description="Log position of the write")
    version: int
    strength: float
    status: str


class ReinforceResult(BaseModel):
    """A reinforcement (it counts once per agent per fact), and the fact's state after it."""

    fact_id: str
    counted: bool = Field(description="False when this agent had reinforced the fact before")
    reinforcements: int = Field(description="Distinct agents that reinforced the fact")
    strength: float
    status: str


class Stats(BaseModel):
    """The swarm at a glance."""

    swarm: str
    last_seq: int
    undecided: int = Field(description="Shared memories the synthesizer has not decided yet")
    facts_total: int
    by_status: dict[str, int]
    by_tier: dict[str, int]
    by_category: dict[str, int]
    raw_total: int
    duplicates_total: int
    agents: list[str]
    synthesizer: str = Field(description="This server's synthesizer: off/ready/holding/standby")
    synthesizer_decisions: int
    synthesizer_holder: str | None = Field(
        None, description="While this server stands by: who holds the synthesizer lease"
    )
    synthesizer_storage: str | None = Field(
        None, description="A disk full or I/O error the synthesizer is waiting out"
    )


class EventItem(BaseModel):
    """One log event (embedding vectors left out)."""

    seq: int
    type: str
    agent: str
    session: str | None
    thread: str | None
    key: str | None
    ts: float
    body: dict[str, Any]


class EventPage(BaseModel):
    """Events after a seq; continue with ``after_seq=next_after_seq``."""

    events: list[EventItem]
    next_after_seq: int
    last_seq: int


# ---------------------------------------------------------------- helpers


def agent_name(given: str | None, client: str | None) -> str:
    """--agent, else the MCP client's name made into a valid name, else ``mcp-client``.

    A client calling itself by a reserved name (``synthesizer``, ``operator``, ...:
    synthesizer/reserved.py) gets ``mcp-`` before it; an explicit ``--agent`` with one is
    refused when the server writes as it. A client name with a reserved prefix (``mcp:``,
    the server's own writer names) is refused as ``--agent`` would refuse it
    (ToolInputError): it would pass for the server itself."""
    from synthesizer.reserved import RESERVED, RESERVED_PREFIXES

    if given:
        return given
    if client:
        cleaned = "".join(
            "-" if c in "/\\" or c.isspace() or not c.isprintable() else c for c in client.strip()
        )[:128]
        if cleaned.startswith(RESERVED_PREFIXES):
            raise ToolInputError(
                f"client name {cleaned!r} is reserved for the swarm itself (prefix"
                f" {cleaned[: cleaned.index(':') + 1]!r}); start the server with --agent NAME"
            )
        if cleaned.strip("-.") and cleaned not in (".", ".."):
            return "mcp-" + cleaned if cleaned in RESERVED else cleaned
    return "mcp-client"


def _summary(f: Fact) -> dict[str, Any]:
    return {
        "fact_id": f.id,
        "content": f.content,
        "category": f.category,
        "status": f.status,
        "version": f.version,
        "strength": f.strength,
        "support": f.support,
        "agents": f.agents,
        "subject": f.subject,
        "value": f.value,
        "contested_with": list(f.contested_with),
        "origins": [f"{o['name']}/{o['fact']}@{o['version']}" for o in f.origins] or None,
    }


def _history(h: HistoryEntry) -> HistoryItem:
    body = {k: v for k, v in h.body.items() if k not in HIDDEN}
    return HistoryItem(seq=h.seq, agent=h.agent, type=h.type, body=body)


class MemoryTools:
    """The tools' behaviour over one swarm (see module docstring)."""

    def __init__(
        self,
        swarm: Swarm,
        agent: str | None = None,
        session: str | None = None,
        decide_wait: float = 3.0,
        synth: Any = None,
        team: Team | None = None,
    ) -> None:
        if agent is not None and team is not None:
            raise ValueError("give either one agent or a team, not both")
        self.swarm = swarm
        self.agent = agent
        self.session = session
        self.decide_wait = decide_wait
        self.synth = synth
        self.team = team
        self.lock = threading.RLock()
        self.connection = f"mcp:{os.getpid()}:{secrets.token_hex(4)}"
        """This server's one client (stdio: one connection per process), as written in the
        ``client`` field of memories shared under a pattern-minted name (the ``mcp:``
        prefix is reserved, so it never equals an agent's name)."""

    def name(self, client: str | None, agent: str | None = None) -> str:
        """Who a call writes as: the team member it names (checked), else --agent, else
        the client's name. A single-agent server takes no ``agent`` argument."""
        if self.team is not None:
            try:
                return self.team.check(agent)
            except GuardError as e:
                raise ToolInputError(str(e)) from None
        if agent is not None and agent != agent_name(self.agent, client):
            raise ToolInputError("this server writes as one agent; start it with --agents")
        return agent_name(self.agent, client)

    def _agent(
        self, client: str | None, thread: str | None = None, as_: str | None = None
    ) -> Agent:
        return self.swarm.agent(self.name(client, as_), self.session, thread)

    def synth_running(self) -> bool:
        """Whether a synthesizer may decide a memory soon: this server's own (holding or
        standing by behind another), or, without one, a live holder of the lease."""
        if self.synth is not None:
            return bool(self.synth.status().role in ("ready", "holding", "standby"))
        from synthesizer.worker.lease import LEASE_KEY, Lease

        timeout = self.swarm.config.synthesizer.lease_timeout_s
        lease = Lease(self.swarm.log, timeout, name="mcp-observer")
        lease.observe(self.swarm.log.version(LEASE_KEY))
        return lease.holder() is not None and not lease.may_write()

    def share(
        self,
        client: str | None,
        content: str,
        category: str,
        importance: float,
        subject: str | None,
        value: str | None,
        thread: str | None,
        as_: str | None = None,
    ) -> ShareResult:
        """Append memory.shared, then wait up to ``decide_wait`` s for its decision (not
        at all when no synthesizer runs: ``pending`` at once)."""
        if value is not None and subject is None:
            raise ToolInputError("value needs a subject (the thing the value is about)")
        with tool_errors(), self.lock:
            agent = self._agent(client, thread, as_)
            if self.team is not None and self.team.minted(agent.name):
                ev = self._share_minted(agent, content, category, importance, subject, value)
            else:
                ev = agent.share(content, category, importance, subject=subject, value=value)
            running = self.synth_running()
        seq = ev.seq or 0
        fid, kind = self._decision(seq) if running else (None, "pending")
        return ShareResult(seq=seq, agent=agent.name, fact_id=fid, decision=kind)

    def _share_minted(
        self,
        agent: Agent,
        content: str,
        category: str,
        importance: float,
        subject: str | None,
        value: str | None,
    ) -> StoredEvent:
        """``Agent.share`` with the connection in the body's ``client`` field: promotion's
        ``--min-support`` counts one client once, however many names it minted."""
        body: dict[str, Any] = {"content": content, "category": category, "importance": importance}
        if subject is not None:
            body["subject"] = subject
            body["value"] = value
        body["client"] = self.connection
        ev = Event(
            agent=agent.name,
            session=agent.session,
            thread=agent.thread,
            type=T.MEMORY_SHARED,
            body=body,
        )
        return self.swarm.appends.append(ev)

    def _decision(self, seq: int) -> tuple[str | None, str]:
        """Follow the log from ``seq`` for the decision naming it as evidence."""
        log = self.swarm.log
        deadline = time.monotonic() + self.decide_wait
        after = seq
        kinds = {T.FACT_CREATED: "created", T.FACT_CORROBORATED: "corroborated"}
        while True:
            for ev in log.read(after + 1):
                after = ev.seq or after
                kind = kinds.get(ev.type)
                if kind is not None and ev.body.get("evidence") == seq:
                    return ev.key, kind
            left = deadline - time.monotonic()
            if left <= 0:
                return None, "pending"
            log.wait_for_change(min(left, 0.1))

    def search(
        self,
        client: str | None,
        query: str,
        limit: int,
        category: str | None,
        thread: str | None,
        min_score: float | None,
        as_: str | None = None,
    ) -> SearchResult:
        """Recall (logged as memory.recalled by this agent)."""
        if not query.strip():
            raise ToolInputError("query must not be blank")
        with tool_errors(), self.lock:
            hits = self._agent(client, None, as_).recall(
                query, limit, category=category, thread=thread, min_score=min_score
            )
            return SearchResult(
                hits=[
                    SearchHit(
                        **_summary(h.fact),
                        similarity=h.similarity,
                        relevance=h.relevance,
                        also_reported_as=[
                            AlsoReported(fact_id=fid, agents=list(agents)) for fid, agents in h.also
                        ],
                    )
                    for h in hits
                ]
            )

    def get_fact(self, fact_id: str) -> FactDetail:
        """A fact with evidence (raw contents read back from the log) and history."""
        with tool_errors(), self.lock:
            board = self.swarm.board
            f = board.get(fact_id)
            keyed = board.history(fact_id)
            history = [_history(h) for h in full_history(self.swarm.log, fact_id, keyed,
                                                         f.created_seq)]  # fmt: skip
            evidence = []
            for e in f.evidence[:MAX_EVIDENCE]:
                raw = next(iter(self.swarm.log.read(e.seq, e.seq)), None)
                content = raw.body.get("content") if raw is not None else None
                evidence.append(
                    EvidenceItem(seq=e.seq, agent=e.agent, session=e.session, content=content)
                )
            fb = f.feedback
            return FactDetail(
                **_summary(f),
                importance=f.importance,
                tier=f.tier,
                reinforcements=f.reinforcements,
                feedback_average=None if fb is None else fb[0],
                feedback_count=f.feedback_count,
                created_seq=f.created_seq,
                evidence=evidence,
                evidence_total=len(f.evidence),
                history=history,
            )

    def list_facts(self, status: str | None, category: str | None, limit: int) -> FactList:
        """Facts matching the filters, newest first."""
        with tool_errors(), self.lock:
            facts = self.swarm.board.list(status=status, category=category)
        facts.reverse()
        return FactList(facts=[FactSummary(**_summary(f)) for f in facts[:limit]], total=len(facts))

    def _written(self, fact_id: str, seq: int) -> dict[str, Any]:
        f = self.swarm.board.get(fact_id)
        return {
            "fact_id": fact_id,
            "seq": seq,
            "version": f.version,
            "strength": f.strength,
            "status": f.status,
        }

    def reinforce(
        self, client: str | None, fact_id: str, as_: str | None = None
    ) -> ReinforceResult:
        """memory.reinforced by this agent (nothing is written for a repeat)."""
        with tool_errors(), self.lock:
            counted = self._agent(client, None, as_).reinforce(fact_id)
            f = self.swarm.board.get(fact_id)
            return ReinforceResult(
                fact_id=fact_id,
                counted=counted,
                reinforcements=f.reinforcements,
                strength=f.strength,
                status=f.status,
            )

    def feedback(
        self, client: str | None, fact_id: str, usefulness: float, as_: str | None = None
    ) -> WriteResult:
        """memory.feedback by this agent."""
        with tool_errors(), self.lock:
            ev = self._agent(client, None, as_).feedback(fact_id, usefulness)
            return WriteResult(**self._written(fact_id, ev.seq or 0))

    def update(
        self,
        client: str | None,
        fact_id: str,
        expected_version: int,
        content: str | None,
        value: str | None,
        status: str | None,
        reason: str | None,
        as_: str | None = None,
    ) -> WriteResult:
        """A CAS write through the board, as this agent."""
        with tool_errors(), self.lock:
            who = self.name(client, as_)
            v = self.swarm.board.cas(
                fact_id,
                expected_version,
                content=content,
                value=value,
                status=status,
                reason=reason,
                agent=who,
                session=self.session,
            )
            return WriteResult(**self._written(fact_id, v))

    def stats(self) -> Stats:
        """Counts from the live state, and this server's synthesizer role."""
        with tool_errors(), self.lock:
            state = self.swarm.refresh()
            m = compute(state, self.swarm.name, top=0)
            cats = state.stats().by_category
        st = self.synth.status() if self.synth is not None else SynthStatus("off", 0)
        return Stats(
            swarm=m.swarm,
            last_seq=m.last_seq,
            undecided=m.undecided,
            facts_total=m.facts_total,
            by_status=m.by_status,
            by_tier=m.by_tier,
            by_category=cats,
            raw_total=m.raw_total,
            duplicates_total=m.duplicates_total,
            agents=[a.agent for a in m.agents],
            synthesizer=st.role,
            synthesizer_decisions=st.decisions,
            synthesizer_holder=st.holder,
            synthesizer_storage=st.storage,
        )

    def read_events(self, after_seq: int, limit: int, types: list[str] | None) -> EventPage:
        """Up to ``limit`` events after ``after_seq`` (of the given types, if any), without
        the fields only the swarm's machinery reads (``HIDDEN``). Past the end of the log,
        ``last_seq`` is the real last seq and ``next_after_seq`` goes back to it, so a
        cursor that ran ahead misses nothing appended later."""
        want = set(types) if types else None
        out: list[EventItem] = []
        nxt = after_seq
        with tool_errors():
            log = self.swarm.log
            last = log.last_seq
            for scanned, ev in enumerate(log.read(after_seq + 1)):
                if len(out) >= limit or scanned >= MAX_SCAN:
                    break
                nxt = ev.seq or nxt
                if want is not None and ev.type not in want:
                    continue
                body = {k: v for k, v in ev.body.items() if k not in HIDDEN}
                out.append(
                    EventItem(
                        seq=nxt,
                        type=ev.type,
                        agent=ev.agent,
                        session=ev.session,
                        thread=ev.thread,
                        key=ev.key,
                        ts=ev.ts,
                        body=body,
                    )
                )
            if not out and nxt > log.last_seq:
                last = log.last_seq
                nxt = last
        return EventPage(events=out, next_after_seq=nxt, last_seq=max(last, nxt))
