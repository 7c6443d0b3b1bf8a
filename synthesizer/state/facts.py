"""The fold's entities: Fact, its Evidence, and pending raw memories.

Plain slotted dataclasses and named tuples rather than pydantic models: the fold builds
and mutates them at well over 100k events/s. Each has an exact dict form
(``to_dict``/``from_dict``) used by the state's canonical serialization, so a checkpoint
round-trips bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

WORKING = "working"
SHORT_TERM = "short_term"
LONG_TERM = "long_term"

ACTIVE = "active"
CONTESTED = "contested"
SUPERSEDED = "superseded"
RETRACTED = "retracted"


class Evidence(NamedTuple):
    """One raw event behind a fact: its seq, who wrote it, in which session, when.

    A NamedTuple: immutable, and cheap to build by the hundred thousand on checkpoint load.
    """

    seq: int
    agent: str
    session: str | None
    ts: float
    client: str | None = None
    """The MCP connection that minted ``agent`` from a team pattern (the memory's
    ``client`` field), else None: names one client minted vouch for a fact once."""

    def serial(self) -> list[Any]:
        """The serial form: the four fields, and the client only when there is one (so
        the checkpoints of swarms without minted names are as before)."""
        return list(self) if self.client is not None else list(self[:4])


class RawMemory(NamedTuple):
    """A ``memory.shared`` event waiting for the synthesizer's decision.

    A NamedTuple (never changed once made): the fold builds one per shared memory and
    drops it a moment later, when the synthesizer's decision consumes it.
    """

    seq: int
    agent: str
    session: str | None
    thread: str | None
    ts: float
    content: str
    category: str
    importance: float
    subject: str | None = None
    value: str | None = None
    ttl_s: float | None = None
    embedding: list[float] | None = None
    embedder: str | None = None
    origins: list[dict[str, Any]] | None = None
    client: str | None = None

    @classmethod
    def from_shared(cls, d: dict[str, Any]) -> RawMemory:
        """The raw memory of a stored ``memory.shared`` envelope dict ``d``: its body's
        fields (importance 0.5 and category ``general`` by default; the thread from the
        envelope, else the body). Raises KeyError without ``content``."""
        b = d["body"]
        thread = d.get("thread")
        if thread is None:
            thread = b.get("thread")
        ttl = b.get("ttl_s")
        emb = b.get("embedding")
        return cls(
            seq=d["seq"],
            agent=d["agent"],
            session=d.get("session"),
            thread=thread,
            ts=d["ts"],
            content=b["content"],
            category=b.get("category", "general"),
            importance=float(b.get("importance", 0.5)),
            subject=b.get("subject"),
            value=b.get("value"),
            ttl_s=None if ttl is None else float(ttl),
            embedding=None if emb is None else [float(x) for x in emb],
            embedder=b.get("embedder"),
            origins=b.get("origins"),
            client=b["client"] if isinstance(b.get("client"), str) and b["client"] else None,
        )

    def evidence(self) -> Evidence:
        """The provenance record this raw memory becomes once consumed."""
        return Evidence(self.seq, self.agent, self.session, self.ts, self.client)

    def to_dict(self) -> dict[str, Any]:
        """Field dict (exact; floats round-trip through JSON)."""
        return dict(zip(_RAW_FIELDS, self, strict=True))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RawMemory:
        """Inverse of ``to_dict``."""
        return cls(**d)


_RAW_FIELDS = RawMemory._fields


@dataclass(slots=True)
class Fact:
    """A synthesized fact: claim, provenance, pool strength, tier energy, feedback.

    Build one by keyword (``Fact(id=..., ...)``) or with ``new_fact``; ``from_row`` /
    ``from_dict`` rebuild one from its serial forms.

    ``version`` is the seq of the last event keyed on this fact (= ``log.version(id)``).
    ``history`` lists status changes as ``[seq, status, reason]``; ``contested_with``
    the rivals a ``fact.contested`` named (both ways), kept after a resolution;
    ``origins`` the facts of other swarms it was promoted or bootstrapped from.
    """

    id: str
    content: str
    category: str
    importance: float
    created_seq: int
    created_ts: float
    version: int
    subject: str | None = None
    value: str | None = None
    status: str = ACTIVE
    evidence: list[Evidence] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)
    strength: float = 1.0
    reinforcements: int = 0
    reinforced_by: list[str] = field(default_factory=list)
    energy: float = 1.0
    tier: str = WORKING
    energy_ts: float = 0.0
    feedback_sum: float = 0.0
    feedback_count: int = 0
    access_count: int = 0
    last_access: float | None = None
    expires_at: float | None = None
    thread: str | None = None
    session: str | None = None
    cluster: str | None = None
    signature: str | None = None
    embedding: list[float] | None = field(default=None, repr=False)
    embedder: str | None = None
    history: list[list[Any]] = field(default_factory=list)
    contested_with: list[str] = field(default_factory=list)
    """Rival facts: statements that contradict this one (``fact.contested``), sorted."""
    origins: list[dict[str, Any]] = field(default_factory=list)
    """Where a promoted (or bootstrapped) fact came from, one dict per origin fact:
    ``swarm``, ``name``, ``fact``, ``seqs``, ``version`` (see ``synthesizer.state.origins``)."""

    @property
    def agents(self) -> list[str]:
        """Distinct agents among the evidence, in order of first appearance."""
        return list(dict.fromkeys(e.agent for e in self.evidence))

    @property
    def agent(self) -> str | None:
        """The agent of the first evidence (the discoverer), None when it was forgotten."""
        return self.evidence[0].agent if self.evidence else None

    @property
    def support(self) -> int:
        """Distinct agents vouching for the fact, names one MCP client minted counted
        once (``Evidence.client``); 0 once retracted.

        Agents linked by a client are one backer (connected components of agents and
        clients), so a client never adds support: one name with two clients is still
        one. Forgotten identities have already been removed from ``evidence``.
        """
        if self.status == RETRACTED:
            return 0
        agents = {e.agent for e in self.evidence}
        minted = [e for e in self.evidence if e.client is not None]
        if not minted:
            return len(agents)
        return _backers(agents, minted)

    @property
    def feedback(self) -> tuple[float, int] | None:
        """(average usefulness, count), or None before the first feedback."""
        if self.feedback_count == 0:
            return None
        return (self.feedback_sum / self.feedback_count, self.feedback_count)

    def expired(self, ts: float) -> bool:
        """Whether the fact's TTL has passed at event time ``ts``."""
        return self.expires_at is not None and ts >= self.expires_at

    def has_evidence(self, seq: int) -> bool:
        """Whether raw event ``seq`` is already part of the evidence."""
        return any(e.seq == seq for e in self.evidence)

    def set_status(self, status: str, seq: int, reason: str | None = None) -> None:
        """Change the status, recording the change in ``history`` (no-op if unchanged)."""
        if status != self.status:
            self.status = status
            self.history.append([seq, status, reason])

    def to_dict(self) -> dict[str, Any]:
        """Exact serial form (evidence as lists)."""
        d = {name: getattr(self, name) for name in FACT_FIELDS}
        d["evidence"] = [e.serial() for e in self.evidence]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Fact:
        """Inverse of ``to_dict``."""
        d = dict(d)
        d["evidence"] = [Evidence(*v) for v in d["evidence"]]
        return cls(**d)

    def to_row(self) -> list[Any]:
        """Positional serial form (fields in declaration order, evidence as lists): the
        checkpoint's compact form (``_fast.fact_rows`` writes it in bulk)."""
        row = [getattr(self, name) for name in FACT_FIELDS]
        row[FACT_FIELDS.index("evidence")] = [e.serial() for e in self.evidence]
        return row

    @classmethod
    def from_row(cls, row: list[Any]) -> Fact:
        """Inverse of ``to_row`` (``_fast.facts_from_rows`` reads them in bulk)."""
        return cls.from_dict(dict(zip(FACT_FIELDS, row, strict=True)))


def new_fact(
    *,
    id: str,
    content: str,
    category: str,
    importance: float,
    seq: int,
    ts: float,
    evidence: list[Evidence],
    strength: float,
    subject: str | None = None,
    value: str | None = None,
    expires_at: float | None = None,
    thread: str | None = None,
    session: str | None = None,
    signature: str | None = None,
    embedding: list[float] | None = None,
    embedder: str | None = None,
) -> Fact:
    """A fact born of the event at ``seq`` / ``ts``: the factory the fold's handlers use.

    That event is its creation and its version; its energy clock starts at ``ts``; it
    starts active in the working tier with no reinforcement, feedback or access.
    ``strength`` is the pool's initial strength (``pool.initial_strength``).
    """
    return Fact(
        id=id,
        content=content,
        category=category,
        importance=importance,
        created_seq=seq,
        created_ts=ts,
        version=seq,
        subject=subject,
        value=value,
        evidence=evidence,
        strength=strength,
        energy_ts=ts,
        expires_at=expires_at,
        thread=thread,
        session=session,
        signature=signature,
        embedding=embedding,
        embedder=embedder,
    )


FACT_FIELDS = tuple(f.name for f in fields(Fact))
"""Fact field names in declaration order: the columns of ``to_row``."""


def _backers(agents: set[str], minted: list[Evidence]) -> int:
    """How many backers ``agents`` are when each minted evidence links its agent to its
    client: the connected components of that graph (union-find over names)."""
    parent = {a: a for a in agents}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[str, str] = {}
    for e in minted:
        other = first.setdefault(e.client or "", e.agent)
        parent[root(e.agent)] = root(other)
    return len({root(a) for a in agents})
