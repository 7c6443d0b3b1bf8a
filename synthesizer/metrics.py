"""Swarm metrics (docs/design.md §13) computed from a folded ``SwarmState``.

Everything here is a pure read of the state: the counters the fold keeps in
``state.metrics`` plus one pass over the live facts. Of a state loaded from a checkpoint
whose fact rows are still unparsed (``state/table.py``), that pass reads the columns saved with
the rows instead (``columns.Frame``): the same figures, no row parsed. The dashboards render a
``SwarmMetrics``; ``to_dict()`` is the JSON form of ``swarmlog stats --json``.

Definitions:

* **rate**: events per second of event time, first event to last;
* **undecided**: raw memories the synthesizer has not decided yet; **event lag**
  (``event_lag``): events past its progress mark (each name means one thing, in the
  text and in the JSON);
* **duplication rate**: raw memories the synthesizer merged into an existing fact
  (exact or near duplicates) / raw memories shared;
* **rediscoveries**: live facts whose evidence comes from >= 2 distinct agents;
* **revivals**: evicted facts brought back because a memory shared them again;
* **correlation lift**: raw memories whose ``causes`` cite a peer's event the agent
  had seen in its recall hits / raw memories shared;
* **visibility latency**: raw memory ``ts`` -> ``ts`` of the synthesizer's decision
  (fact created or corroborated), p50 and p99 (nearest rank);
* **CAS**: board writes per agent — attempts, successes, conflicts (losing attempts);
* **contests**: subjects claimed by live facts with different values (or facts in
  status ``contested``); resolved when one claim is active and the others superseded;
* **seed facades**: events written by the seeds' facades, per facade (pool, store,
  bank);
* **refused writes**: events stored but not honoured by the fold's write rules
  (``authz``: a synthesizer event without the lease, a board write without the
  fact's version, another identity's erasure by a non-operator), by type;
* **backlog** (with the log): raw memories logged and not yet decided, at 13 points
  over the last minute of log time (``backlog``);
* **configuration**: the key figures of the configuration in force (the log's): the
  pool's capacity (it never holds more facts), its decay rate per tick, the embedder.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from swarmlog import Log
from synthesizer import events as T
from synthesizer.backlog import backlog_series
from synthesizer.state import SwarmState
from synthesizer.state.authz import refused_by_type
from synthesizer.state.facts import ACTIVE, CONTESTED, SUPERSEDED, Fact
from synthesizer.state.judging import finding_groups
from synthesizer.state.table import FactTable

if TYPE_CHECKING:
    from synthesizer.state.columns import Frame

STRENGTH_BINS = 10
TOP_FACTS = 10
LATENCY_BOUND_S = 366 * 86400.0
"""Visibility latencies beyond a year either way are clock garbage, not latencies."""


@dataclass(frozen=True, slots=True)
class FactRow:
    """One fact as the dashboard lists it."""

    id: str
    content: str
    support: int
    strength: float
    tier: str
    version: int
    status: str
    subject: str | None
    value: str | None
    agents: list[str]
    origins: list[str] = field(default_factory=list)
    """Names of the swarms it was promoted or bootstrapped from (global memory)."""


@dataclass(frozen=True, slots=True)
class Claim:
    """One live fact's claim on a contested subject."""

    id: str
    value: str | None
    status: str
    support: int


@dataclass(frozen=True, slots=True)
class Contest:
    """A subject with disagreeing claims, and whether it is resolved (one active)."""

    subject: str
    claims: list[Claim]
    resolved: bool
    winner: str | None


@dataclass(frozen=True, slots=True)
class AgentActivity:
    """What one agent did: events, shares, recalls, citations, board writes."""

    agent: str
    events: int
    shared: int
    recalls: int
    with_causes: int
    cites_peers: int
    discovered: int
    reinforced: int
    cas_attempts: int
    cas_conflicts: int


@dataclass(frozen=True, slots=True)
class SwarmMetrics:
    """The dashboard's numbers (see the module docstring for definitions)."""

    swarm: str
    last_seq: int
    progress: int
    event_lag: int
    undecided: int
    events_total: int
    by_type: dict[str, int]
    span_s: float
    rate: float | None
    facts_total: int
    by_status: dict[str, int]
    by_tier: dict[str, int]
    strength_hist: list[int]
    average_strength: float
    evictions: dict[str, int]
    evictions_total: int
    revivals: int
    raw_total: int
    duplicates: dict[str, int]
    duplicates_total: int
    duplication_rate: float
    rediscoveries: int
    with_causes: int
    cites_peers: int
    correlation_lift: float
    latency_n: int
    latency_p50: float | None
    latency_p99: float | None
    cas_attempts: int
    cas_successes: int
    cas_conflicts: int
    resolutions: int
    contests: list[Contest]
    agents: list[AgentActivity]
    top: list[FactRow] = field(default_factory=list)
    capacity: int = 0
    decay_rate: float = 0.0
    embedder: str = ""
    facades: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    promotion_target: str = ""
    promotion_waiting: int = 0
    """Ended sessions whose facts still wait for promotion to the global memory."""
    backlog: list[list[float]] = field(default_factory=list)
    open_questions: int = 0
    """Questions to a judge not answered yet (each links two possible duplicates)."""
    possible_duplicates: int = 0
    """Live facts beyond the first of each possible-duplicate group (counted as
    duplicates in ``duplication_rate``: a group is one finding)."""

    def __repr__(self) -> str:
        return (
            f"SwarmMetrics({self.swarm or 'swarm'}: seq {self.last_seq}, "
            f"{self.facts_total} facts, {self.undecided} undecided, "
            f"{self.evictions_total} evictions, {self.revivals} revivals, "
            f"{self.duplicates_total} duplicates)"
        )

    @property
    def empty(self) -> bool:
        """True when the swarm has no events at all."""
        return self.events_total == 0

    @property
    def contests_open(self) -> int:
        """Contests without a single active winner."""
        return sum(1 for c in self.contests if not c.resolved)

    @property
    def contests_resolved(self) -> int:
        """Contests settled: one claim active, the others superseded."""
        return sum(1 for c in self.contests if c.resolved)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict, including the derived contest counts."""
        d = asdict(self)
        d["contests_open"] = self.contests_open
        d["contests_resolved"] = self.contests_resolved
        return d


def percentile(sorted_values: list[float], p: float) -> float | None:
    """Nearest-rank percentile of an ascending list (None when empty)."""
    n = len(sorted_values)
    if n == 0:
        return None
    rank = max(1, math.ceil(p / 100.0 * n))
    return sorted_values[min(n, rank) - 1]


def _fact_row(f: Fact) -> FactRow:
    return FactRow(
        id=f.id,
        content=f.content,
        support=f.support,
        strength=f.strength,
        tier=f.tier,
        version=f.version,
        status=f.status,
        subject=f.subject,
        value=f.value,
        agents=f.agents,
        origins=list(dict.fromkeys(o["name"] for o in f.origins)),
    )


def frame(state: SwarmState) -> Frame | None:
    """The facts' fields as columns when the state has unparsed rows, else None."""
    facts = state.facts
    if isinstance(facts, FactTable) and (saved := facts.saved_columns()) is not None:
        from synthesizer.state.columns import frame as frame_of

        fr = frame_of(facts.entries(), saved)
        if np_finite(fr.arrays["strength"]):
            return fr
    return None  # plain loops (they raise on a non-finite strength, as before)


def np_finite(a: Any) -> bool:
    """Whether every value of a numpy array is finite."""
    from swarmlog.numpyload import np

    return bool(np.isfinite(a).all())


def top_facts(state: SwarmState, n: int = TOP_FACTS, fr: Frame | None = None) -> list[FactRow]:
    """The ``n`` strongest-supported live facts: support, then strength, then oldest
    (then first in the facts' order: a stable sort)."""
    if fr is not None:
        from swarmlog.numpyload import np

        a = fr.arrays
        pos = np.arange(len(fr))
        order = np.lexsort((pos, a["created_seq"], -a["strength"], -a["support"]))[:n]
        ids = list(state.facts)
        return [_fact_row(state.facts[ids[i]]) for i in order.tolist()]
    best = heapq.nsmallest(
        n, state.facts.values(), key=lambda f: (-f.support, -f.strength, f.created_seq)
    )
    return [_fact_row(f) for f in best]


def contests(state: SwarmState, fr: Frame | None = None) -> list[Contest]:
    """Subjects whose live claims disagree, plus lone facts marked contested."""
    out: list[Contest] = []
    covered: set[str] = set()
    for subject in sorted(state.subjects):
        facts = [state.facts[i] for i in state.subjects[subject] if i in state.facts]
        covered.update(f.id for f in facts)
        disagree = len(facts) >= 2 and len({f.value for f in facts}) >= 2
        if not disagree and not any(f.status == CONTESTED for f in facts):
            continue
        claims = [Claim(f.id, f.value, f.status, f.support) for f in facts]
        active = [c for c in claims if c.status == ACTIVE]
        resolved = len(active) == 1 and all(
            c.status == SUPERSEDED for c in claims if c is not active[0]
        )
        out.append(Contest(subject, claims, resolved, active[0].id if resolved else None))
    for f in _contested(state, fr):
        if f.status == CONTESTED and f.id not in covered:
            # a free-text rivalry (contested_with): each side's own words are its claim
            group = [f] + [state.facts[r] for r in f.contested_with if r in state.facts]
            covered.update(g.id for g in group)
            claims = [
                Claim(g.id, g.value if g.subject else g.content[:80], g.status, g.support)
                for g in group
            ]
            out.append(Contest(f.subject or f.id, claims, False, None))
    return out


def _contested(state: SwarmState, fr: Frame | None) -> list[Fact]:
    """The facts in status contested, in order (all facts without a frame)."""
    if fr is None:
        return list(state.facts.values())
    from swarmlog.numpyload import np

    code = fr.codes["status"].code(CONTESTED)
    ids = list(state.facts)
    return [state.facts[ids[i]] for i in np.flatnonzero(fr.arrays["status"] == code).tolist()]


def _agent_rows(state: SwarmState, fr: Frame | None = None) -> list[AgentActivity]:
    """Per-agent activity for every writer except the synthesizer, busiest first."""
    m = state.metrics
    discovered: dict[str, int] = {}
    reinforced: dict[str, int] = {}
    if fr is not None:
        from swarmlog.numpyload import np

        agents = fr.arrays["agent"]
        counts = np.bincount(agents[agents >= 0], minlength=len(fr.codes["agent"].names))
        names = fr.codes["agent"].names
        discovered = {names[c]: int(counts[c]) for c in np.flatnonzero(counts).tolist()}
        reinforced = fr.reinforced
    for f in state.facts.values() if fr is None else ():
        a = f.agent
        if a is not None:
            discovered[a] = discovered.get(a, 0) + 1
        for r in f.reinforced_by:
            reinforced[r] = reinforced.get(r, 0) + 1
    rows = []
    for agent, n in m.by_agent.items():
        if agent == T.SYNTH_AGENT:
            continue
        causes = m.causes.get(agent, [0, 0])
        cas = m.cas.get(agent, [0, 0, 0])
        rows.append(
            AgentActivity(
                agent=agent,
                events=n,
                shared=m.shared.get(agent, 0),
                recalls=m.recalls.get(agent, 0),
                with_causes=causes[0],
                cites_peers=causes[1],
                discovered=discovered.get(agent, 0),
                reinforced=reinforced.get(agent, 0),
                cas_attempts=cas[0],
                cas_conflicts=cas[2],
            )
        )
    rows.sort(key=lambda r: (-r.events, r.agent))
    return rows


def _histogram(state: SwarmState, fr: Frame | None = None) -> list[int]:
    """Live facts per strength decile of ``[0, max_strength]``."""
    top = state.config.pool.max_strength
    if fr is not None:
        from swarmlog.numpyload import np

        s = fr.arrays["strength"]
        bins = np.trunc(s / top * STRENGTH_BINS) if top > 0 else np.zeros(len(s))
        bins = np.clip(bins, 0, STRENGTH_BINS - 1).astype(np.int64)
        return [int(x) for x in np.bincount(bins, minlength=STRENGTH_BINS)]
    hist = [0] * STRENGTH_BINS
    for f in state.facts.values():
        i = int(f.strength / top * STRENGTH_BINS) if top > 0 else 0
        hist[min(STRENGTH_BINS - 1, max(0, i))] += 1
    return hist


def _rediscoveries(state: SwarmState, fr: Frame | None, groups: list[list[str]]) -> int:
    """Findings vouched for by at least two agents: live facts, a group of possible
    duplicates counting as one finding (the agents of all its members)."""
    if fr is not None:
        n = int((fr.arrays["support"] >= 2).sum())
    else:
        n = sum(1 for f in state.facts.values() if f.support >= 2)
    facts = state.facts
    for g in groups:
        n -= sum(1 for m in g if facts[m].support >= 2)
        n += len({a for m in g for a in facts[m].agents}) >= 2
    return n


def compute(
    state: SwarmState, swarm: str = "", top: int = TOP_FACTS, log: Log | None = None
) -> SwarmMetrics:
    """All dashboard metrics of ``state`` (one pass over facts; fast at 100k events);
    with the ``log`` it was folded from, also the backlog over the last minute."""
    m = state.metrics
    fr = frame(state)
    st = state.stats() if fr is None else state.stats_from(fr)
    grouped = finding_groups(state) if state.judging.open else []
    possible = sum(len(g) - 1 for g in grouped)
    span = state.last_ts - m.first_ts if m.first_ts > 0 else 0.0
    rate = m.events_total / span if span > 0 else None
    dup_total = sum(m.duplicates.values())
    with_causes = sum(c[0] for c in m.causes.values())
    cites = sum(c[1] for c in m.causes.values())
    # a stored ts may be anything (an old log, a hostile writer): a latency no clock
    # could produce is left out of the percentiles rather than shown as 1e20 s
    lat = sorted(x for x in m.latencies if -LATENCY_BOUND_S <= x <= LATENCY_BOUND_S)
    cas = [0, 0, 0]
    for c in m.cas.values():
        for i in range(3):
            cas[i] += c[i]
    return SwarmMetrics(
        swarm=swarm,
        last_seq=state.last_seq,
        progress=state.progress,
        event_lag=state.lag,
        undecided=len(state.pending),
        events_total=m.events_total,
        by_type=dict(sorted(m.by_type.items())),
        span_s=span,
        rate=rate,
        facts_total=st.total,
        by_status=dict(sorted(st.by_status.items())),
        by_tier=dict(sorted(st.by_tier.items())),
        strength_hist=_histogram(state, fr),
        average_strength=st.average_strength,
        evictions=dict(sorted(m.evictions.items())),
        evictions_total=m.evictions_total,
        revivals=m.revivals,
        raw_total=m.raw_total,
        duplicates=dict(sorted(m.duplicates.items())),
        duplicates_total=dup_total,
        duplication_rate=min(1.0, (dup_total + possible) / m.raw_total) if m.raw_total else 0.0,
        rediscoveries=_rediscoveries(state, fr, grouped),
        with_causes=with_causes,
        cites_peers=cites,
        correlation_lift=cites / m.raw_total if m.raw_total else 0.0,
        latency_n=len(lat),
        latency_p50=percentile(lat, 50),
        latency_p99=percentile(lat, 99),
        cas_attempts=cas[0],
        cas_successes=cas[1],
        cas_conflicts=cas[2],
        resolutions=m.by_type.get(T.FACT_RESOLVED, 0),
        contests=contests(state, fr),
        agents=_agent_rows(state, fr),
        top=top_facts(state, top, fr),
        capacity=state.config.pool.capacity,
        decay_rate=state.config.pool.decay_rate,
        embedder=state.config.embedder,
        facades=dict(sorted(state.ext.counts.items())),
        refused=refused_by_type(m.ignored),
        promotion_target=state.config.promotion.target,
        promotion_waiting=len(state.promotion_waiting),
        backlog=[] if log is None else backlog_series(log, state),
        open_questions=len(state.judging.open),
        possible_duplicates=possible,
    )


__all__ = [
    "AgentActivity",
    "Claim",
    "Contest",
    "FactRow",
    "SwarmMetrics",
    "compute",
    "contests",
    "percentile",
    "top_facts",
]
