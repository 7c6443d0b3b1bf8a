"""The fold's fact semantics: creation, corroboration, contests, board writes, versions,
feedback, recall bookkeeping, TTL, erasure, body validation.

``Stream`` (also used by the other ``test_fold_*`` files) builds stored events by hand
and folds them one by one.
"""

from __future__ import annotations

from typing import Any

import pytest

from swarmlog.envelope import Event, validate_for_append
from swarmlog.errors import InvalidEvent
from synthesizer import Fact, SwarmState, SynthConfig, apply
from synthesizer import events as T


class Stream:
    """Hand-built events with consecutive seqs and increasing ts, folded as they go."""

    def __init__(self, config: SynthConfig | None = None, t0: float = 1_000_000.0) -> None:
        self.state = SwarmState(config)
        self.seq = 0
        self.ts = t0
        self.events: list[Event] = []

    def ev(
        self,
        type: str,
        body: dict[str, Any] | None = None,
        *,
        agent: str = "a1",
        key: str | None = None,
        session: str | None = None,
        thread: str | None = None,
        causes: list[int] | None = None,
        dt: float = 1.0,
        at: float | None = None,
    ) -> Event:
        """Append (validate, number, fold) one event; ``at`` sets an absolute ts."""
        self.seq += 1
        self.ts = at if at is not None else self.ts + dt
        body = dict(body or {})
        if agent == T.SYNTH_AGENT and "lease" not in body:  # as the worker does (authz)
            body["lease"] = self.state.synth_version
        if type in (T.FACT_UPDATED, T.FACT_RETRACTED) and "base" not in body:  # as the board
            f = self.state.facts.get(key or "")
            body["base"] = f.version if f is not None else 0
        e = Event(
            agent=agent,
            type=type,
            body=body,
            key=key,
            session=session,
            thread=thread,
            causes=causes,
            seq=self.seq,
            ts=self.ts,
            swarm="test",
        )
        validate_for_append(e)
        self.events.append(e)
        apply(self.state, e)
        return e

    def share(
        self,
        content: str,
        agent: str = "a1",
        session: str | None = None,
        dt: float = 1.0,
        at: float | None = None,
        **body: Any,
    ) -> int:
        """A raw memory.shared (``body`` holds its extra fields); returns its seq."""
        b = {"content": content, **body}
        e = self.ev(T.MEMORY_SHARED, b, agent=agent, session=session, dt=dt, at=at)
        assert e.seq is not None
        return e.seq

    def create(self, raw: int, related: list[list[Any]] | None = None, **kw: Any) -> str:
        """The synthesizer's fact.created for raw memory ``raw``; returns the fact id."""
        fid = f"f{raw}"
        body = {"evidence": raw, "signature": f"sig{raw}", "related": related or []}
        self.ev(T.FACT_CREATED, body, agent=T.SYNTH_AGENT, key=fid, **kw)
        return fid

    def fact(
        self,
        content: str,
        agent: str = "a1",
        session: str | None = None,
        dt: float = 1.0,
        **body: Any,
    ) -> str:
        """share (``dt`` after the last event) + create at the same instant."""
        raw = self.share(content, agent=agent, session=session, dt=dt, **body)
        return self.create(raw, dt=0.0)

    def corroborate(self, fid: str, raw: int, kind: str = "exact", sim: float = 1.0) -> None:
        """The synthesizer's fact.corroborated."""
        body = {"evidence": raw, "kind": kind, "similarity": sim}
        self.ev(T.FACT_CORROBORATED, body, agent=T.SYNTH_AGENT, key=fid)

    def tick(self, dt: float = 1.0, at: float | None = None) -> None:
        """One pool.tick."""
        self.ev(T.POOL_TICK, agent="clock", dt=dt, at=at)

    def reinforce(self, fid: str, agent: str) -> None:
        """memory.reinforced by ``agent``."""
        self.ev(T.MEMORY_REINFORCED, {"target": fid}, agent=agent)

    def recall(self, hits: list[str], agent: str = "a1", **kw: Any) -> None:
        """memory.recalled with these hits."""
        self.ev(T.MEMORY_RECALLED, {"query": "q", "hits": hits}, agent=agent, **kw)


def keyed_versions(events: list[Event]) -> dict[str, int]:
    """What ``log.version(key)`` would answer for every key of ``events``."""
    out: dict[str, int] = {}
    for e in events:
        if e.key is not None and e.seq is not None:
            out[e.key] = e.seq
    return out


# ---------------------------------------------------------------- creation


def test_created_builds_fact_from_pending_raw() -> None:
    st = Stream()
    raw = st.share(
        "The dataset has a 12-month cycle",
        agent="analyst-1",
        session="s1",
        category="discovery",
        importance=0.8,
        subject="cycle",
        value="12",
    )
    raw_ts = st.ts
    assert raw in st.state.pending
    fid = st.create(raw, dt=2.5)
    f = st.state.facts[fid]
    assert fid == f"f{raw}"
    assert (f.content, f.category, f.importance) == (
        "The dataset has a 12-month cycle",
        "discovery",
        0.8,
    )
    assert (f.subject, f.value, f.status, f.session) == ("cycle", "12", "active", "s1")
    assert f.evidence[0].seq == raw and f.evidence[0].agent == "analyst-1"
    assert f.evidence[0].ts == raw_ts and f.evidence[0].session == "s1"
    assert f.version == st.seq == f.created_seq
    assert f.support == 1 and f.agent == "analyst-1"
    assert raw not in st.state.pending
    assert st.state.signatures[f"sig{raw}"] == fid
    assert st.state.subjects == {"cycle": [fid]}
    assert st.state.metrics.latencies == [2.5]
    assert not st.state.metrics.ignored


def test_default_importance_and_category() -> None:
    st = Stream()
    f = st.state.facts[st.fact("plain")]
    assert f.importance == 0.5 and f.category == "general"


def test_created_without_raw_or_twice_is_ignored() -> None:
    st = Stream()
    fid = st.fact("x")
    st.ev(T.FACT_CREATED, {"evidence": 1, "signature": "s"}, agent=T.SYNTH_AGENT, key=fid)
    st.ev(T.FACT_CREATED, {"evidence": 99, "signature": "s"}, agent=T.SYNTH_AGENT, key="f99")
    assert list(st.state.facts) == [fid]
    assert st.state.metrics.ignored == {"fact.created:duplicate": 1, "fact.created:no_raw": 1}


def test_thread_from_envelope() -> None:
    st = Stream()
    raw = st.ev(T.MEMORY_SHARED, {"content": "c"}, thread="t9").seq
    assert raw is not None
    assert st.state.facts[st.create(raw)].thread == "t9"


# ---------------------------------------------------------------- corroboration


def test_corroboration_adds_evidence_and_support() -> None:
    st = Stream()
    fid = st.fact("x", agent="a")
    st.corroborate(fid, st.share("x", agent="b"))
    st.corroborate(fid, st.share("x!", agent="a"), kind="near", sim=0.95)
    f = st.state.facts[fid]
    assert [e.agent for e in f.evidence] == ["a", "b", "a"]
    assert f.support == 2 and f.agents == ["a", "b"]
    assert st.state.metrics.duplicates == {"exact": 1, "near": 1}
    assert st.state.metrics.raw_total == 3 and not st.state.pending
    assert len(st.state.metrics.latencies) == 3


def test_corroborating_an_evicted_fact_counts_but_does_not_revive() -> None:
    cfg = SynthConfig(pool={"decay_rate": 0.5, "eviction_threshold": 0.4})
    st = Stream(cfg)
    fid = st.fact("x")
    st.tick()
    st.tick()  # 0.25 < 0.4 -> evicted
    assert fid not in st.state.facts
    assert st.state.signatures["sig1"] == fid  # remembered after eviction
    st.corroborate(fid, st.share("x", agent="b"))
    assert fid not in st.state.facts
    assert st.state.metrics.duplicates == {"exact": 1}
    assert not st.state.pending


# ---------------------------------------------------------------- contests


def test_contest_and_resolution_can_flip() -> None:
    st = Stream()
    a = st.fact("cap is 3000", subject="cap", value="3000")
    b = st.fact("cap is 4000", agent="a2", subject="cap", value="4000")
    assert st.state.subjects == {"cap": [a, b]}
    st.ev(T.FACT_CONTESTED, {"subject": "cap", "rivals": [a]}, agent=T.SYNTH_AGENT, key=b)
    assert st.state.facts[a].status == st.state.facts[b].status == "contested"
    st.ev(
        T.FACT_RESOLVED,
        {"subject": "cap", "winner": b, "losers": [a], "reason": "support"},
        agent=T.SYNTH_AGENT,
        key=b,
    )
    assert (st.state.facts[a].status, st.state.facts[b].status) == ("superseded", "active")
    st.ev(
        T.FACT_RESOLVED,
        {"subject": "cap", "winner": a, "losers": [b], "reason": "feedback"},
        agent=T.SYNTH_AGENT,
        key=a,
    )
    assert (st.state.facts[a].status, st.state.facts[b].status) == ("active", "superseded")
    assert [h[1] for h in st.state.facts[a].history] == ["contested", "superseded", "active"]


def test_retracted_sticks() -> None:
    st = Stream()
    fid = st.fact("x", subject="s", value="1")
    other = st.fact("y", subject="s", value="2")
    st.ev(T.FACT_RETRACTED, {"reason": "wrong"}, agent="a2", key=fid)
    f = st.state.facts[fid]
    assert f.status == "retracted" and f.support == 0
    st.corroborate(fid, st.share("x", agent="b"))
    st.ev(T.FACT_CONTESTED, {"subject": "s", "rivals": [fid]}, agent=T.SYNTH_AGENT, key=other)
    st.ev(
        T.FACT_RESOLVED,
        {"subject": "s", "winner": fid, "losers": [other]},
        agent=T.SYNTH_AGENT,
        key=fid,
    )
    assert f.status == "retracted" and len(f.evidence) == 2 and f.support == 0
    assert f.history[0][1:] == ["retracted", "wrong"]


# ---------------------------------------------------------------- board writes and versions


def test_board_update_and_versions() -> None:
    st = Stream()
    fid = st.fact("limit", subject="limit", value="3000")
    st.ev(T.FACT_UPDATED, {"value": "3001", "reason": "measured"}, agent="a2", key=fid)
    st.reinforce(fid, "a3")  # no key: version unchanged
    st.ev(T.FACT_UPDATED, {"content": "limit v2", "status": "contested"}, agent="a3", key=fid)
    f = st.state.facts[fid]
    assert (f.value, f.content, f.status) == ("3001", "limit v2", "contested")
    assert f.version == st.seq
    assert keyed_versions(st.events)[fid] == f.version
    assert st.state.metrics.cas == {"a2": [1, 1, 0], "a3": [1, 1, 0]}


def test_board_create_with_unknown_key() -> None:
    st = Stream()
    st.ev(
        T.FACT_UPDATED,
        {"content": "budget", "value": "10", "category": "plan", "subject": "budget"},
        agent="a1",
        key="budget",
        session="s1",
    )
    f = st.state.facts["budget"]
    assert (f.content, f.value, f.category, f.version) == ("budget", "10", "plan", st.seq)
    assert f.evidence[0].seq == st.seq and f.agent == "a1" and f.tier == "working"
    assert st.state.subjects == {"budget": ["budget"]}
    st.ev(T.FACT_UPDATED, {"value": "2"}, key="nothing")  # no content: cannot create
    assert "nothing" not in st.state.facts
    assert st.state.metrics.ignored == {"fact.updated:unknown": 1}


def test_board_evidence_citations() -> None:
    st = Stream()
    fid = st.fact("x")
    pending = st.share("y", agent="b")
    st.ev(T.FACT_UPDATED, {"evidence": [1, pending, 1234]}, agent="c", key=fid)
    f = st.state.facts[fid]
    assert [e.seq for e in f.evidence] == [1, pending] and f.cited == [1234]


def test_explicit_board_status_write_can_revive() -> None:
    st = Stream()
    fid = st.fact("x")
    st.ev(T.FACT_RETRACTED, {}, key=fid)
    st.ev(T.FACT_UPDATED, {"status": "active", "reason": "re-checked"}, key=fid)
    assert st.state.facts[fid].status == "active"


def test_board_conflicts_counted() -> None:
    st = Stream()
    fid = st.fact("x")
    st.ev(T.BOARD_CONFLICT, {"target": fid, "expected": 1, "actual": 2}, agent="a2")
    st.ev(T.FACT_UPDATED, {"value": "v"}, agent="a2", key=fid)
    assert st.state.metrics.cas == {"a2": [2, 1, 1]}


def test_version_invariant_over_mixed_stream() -> None:
    st = Stream()
    a = st.fact("a")
    b = st.fact("b", agent="a2")
    st.corroborate(a, st.share("a", agent="a3"))
    st.ev(T.FACT_UPDATED, {"value": "1"}, key=b)
    st.ev(T.MEMORY_RECALLED, {"query": "q", "hits": [a, b]}, key=a)  # any keyed event counts
    st.ev(T.FACT_RETRACTED, {}, key=b)
    st.ev("custom.thing", {"x": 1}, key=a)
    versions = keyed_versions(st.events)
    for fid, f in st.state.facts.items():
        assert f.version == versions[fid]


# ---------------------------------------------------------------- feedback, recall, causes


def test_feedback_average_and_clamp() -> None:
    st = Stream()
    fid = st.fact("x")
    assert st.state.facts[fid].feedback is None
    for u in (1.0, -1.0, 1.0):
        st.ev(T.MEMORY_FEEDBACK, {"target": fid, "usefulness": u})
    fb = st.state.facts[fid].feedback
    assert fb is not None and fb[0] == pytest.approx(1 / 3) and fb[1] == 3
    st.ev(T.MEMORY_FEEDBACK, {"target": fid, "usefulness": 7.5})
    st.ev(T.MEMORY_FEEDBACK, {"target": fid, "usefulness": -3})
    assert st.state.facts[fid].feedback_sum == pytest.approx(1.0)
    st.ev(T.MEMORY_FEEDBACK, {"target": "nope", "usefulness": 1.0})
    assert st.state.metrics.ignored == {"memory.feedback": 1}


def test_feedback_non_finite_rejected_at_append() -> None:
    e = Event(agent="a", type=T.MEMORY_FEEDBACK, body={"target": "f1", "usefulness": float("nan")})
    with pytest.raises(InvalidEvent):
        validate_for_append(e)


def test_recall_access_and_correlation_lift() -> None:
    st = Stream()
    raw_a = st.share("by a", agent="a")
    fa = st.create(raw_a)
    fb = st.fact("by b", agent="b")
    st.recall([fa, fb, fa, "gone"], agent="b")
    f = st.state.facts[fa]
    assert f.access_count == 1 and f.last_access == st.ts
    assert st.state.recalled == {"b": {raw_a}}
    assert st.state.metrics.recalls == {"b": 1}
    st.ev(T.MEMORY_SHARED, {"content": "built on a"}, agent="b", causes=[raw_a])
    st.ev(T.MEMORY_SHARED, {"content": "own"}, agent="b", causes=[st.seq])
    st.ev(T.MEMORY_SHARED, {"content": "c"}, agent="c", causes=[raw_a])  # never recalled it
    assert st.state.metrics.causes == {"b": [2, 1], "c": [1, 0]}


def test_reinforce_sets_last_access_only() -> None:
    st = Stream()
    fid = st.fact("x")
    st.reinforce(fid, "a2")
    f = st.state.facts[fid]
    assert f.last_access == st.ts and f.access_count == 0 and f.energy == 1.0


# ---------------------------------------------------------------- ttl, erasure, misc


def test_ttl_expiry_at_tick() -> None:
    st = Stream()
    raw = st.share("short-lived", ttl_s=10.0)
    raw_ts = st.ts
    fid = st.create(raw)
    assert st.state.facts[fid].expires_at == raw_ts + 10.0
    st.tick(at=raw_ts + 9.0)
    assert fid in st.state.facts and not st.state.facts[fid].expired(raw_ts + 9.0)
    st.tick(at=raw_ts + 10.0)
    assert fid not in st.state.facts
    assert st.state.metrics.evictions == {"ttl": 1}


def test_identity_forgotten() -> None:
    st = Stream()
    solo = st.fact("only a", agent="a", subject="s", value="1")
    shared = st.fact("a and b", agent="a")
    st.corroborate(shared, st.share("a and b", agent="b"))
    pend = st.share("pending from a", agent="a")
    st.reinforce(shared, "a")
    st.ev(T.IDENTITY_FORGOTTEN, {"agent": "a"}, agent="operator")
    s = st.state
    assert solo not in s.facts and "sig1" not in s.signatures
    assert [e.agent for e in s.facts[shared].evidence] == ["b"]
    assert s.facts[shared].reinforced_by == []
    assert pend not in s.pending and "a" not in s.metrics.by_agent
    assert s.subjects == {} and s.metrics.evictions == {"forgotten": 1}


def test_unknown_type_and_replayed_seq() -> None:
    st = Stream()
    st.ev("custom.event", {"anything": [1, 2]})
    d = st.state.digest()
    assert st.state.metrics.by_type == {"custom.event": 1}
    apply(st.state, st.events[0])  # seq <= last_seq: skipped
    assert st.state.digest() == d
    with pytest.raises(ValueError):
        apply(st.state, Event(agent="a", type="custom.event"))


def test_progress_mark_and_lag() -> None:
    st = Stream()
    st.share("x")
    st.share("y")
    st.ev(T.SYNTH_PROGRESS, {"upto": 2}, agent=T.SYNTH_AGENT, key=T.SYNTH_AGENT)
    st.share("z")
    assert st.state.progress == 2 and st.state.lag == 2


# ---------------------------------------------------------------- body validation


@pytest.mark.parametrize(
    ("type_", "body"),
    [
        (T.MEMORY_SHARED, {"content": "x", "importance": 1.5}),
        (T.MEMORY_SHARED, {"content": "x", "importance": -0.1}),
        (T.MEMORY_SHARED, {"content": "   "}),
        (T.MEMORY_SHARED, {"content": ""}),
        (T.MEMORY_SHARED, {}),
        (T.MEMORY_SHARED, {"content": "x", "embedding": [0.1, 0.2]}),
        (T.MEMORY_SHARED, {"content": "x", "embedding": [], "embedder": "e"}),
        (T.MEMORY_SHARED, {"content": "x", "ttl_s": 0}),
        (T.MEMORY_SHARED, {"content": "x", "category": "has space"}),
        (T.MEMORY_SHARED, {"content": "x" * 16385}),
        (T.MEMORY_REINFORCED, {"target": "a/b"}),
        (T.MEMORY_FEEDBACK, {"target": "f1"}),
        (T.FACT_UPDATED, {"status": "deleted"}),
        (T.FACT_CREATED, {"evidence": 0, "signature": "s"}),
        (T.FACT_CORROBORATED, {"evidence": 3, "kind": "fuzzy"}),
        (T.IDENTITY_FORGOTTEN, {}),
        (T.SYNTH_PROGRESS, {"upto": -1}),
    ],
)
def test_invalid_bodies_rejected(type_: str, body: dict[str, Any]) -> None:
    with pytest.raises(InvalidEvent):
        validate_for_append(Event(agent="a", type=type_, body=body))


@pytest.mark.parametrize(
    ("type_", "body"),
    [
        (T.MEMORY_SHARED, {"content": "x", "embedding": [0.1, 1], "embedder": "e1", "ttl_s": 5}),
        (T.MEMORY_SHARED, {"content": "x", "subject": "the cap", "value": "3", "extra": 1}),
        (T.MEMORY_RECALLED, {"query": "q", "hits": []}),
        (T.MEMORY_FEEDBACK, {"target": "f1", "usefulness": 12.0}),
        (T.FACT_CREATED, {"evidence": 3, "signature": "s", "related": [["f1", 0.8]]}),
        (T.POOL_TICK, {}),
        (T.SESSION_ENDED, {}),
        (T.BOARD_CONFLICT, {"target": "f1", "expected": 0, "actual": 4}),
    ],
)
def test_valid_bodies_accepted(type_: str, body: dict[str, Any]) -> None:
    validate_for_append(Event(agent="a", type=type_, body=body))


def test_names_one_client_minted_back_a_fact_once() -> None:
    """``Fact.support`` counts agents, with names linked by one MCP client as one backer;
    a client never adds support (one name with two clients is still one)."""
    st = Stream()
    fid = st.fact("the pump leaks", agent="w1", client="mcp:1:aa")
    for agent, client in (("w2", "mcp:1:aa"), ("w3", "mcp:1:aa"), ("lead", None)):
        body = {} if client is None else {"client": client}
        st.corroborate(fid, st.share("the pump leaks", agent=agent, **body))
    assert st.state.facts[fid].support == 2  # the minted three, and lead
    st.corroborate(fid, st.share("the pump leaks", agent="lead", client="mcp:2:bb"))
    st.corroborate(fid, st.share("the pump leaks", agent="w1", client="mcp:3:cc"))
    f = st.state.facts[fid]
    assert f.support == 2 and len(f.agents) == 4
    again = Fact.from_row(f.to_row())  # the client is kept in the serial form
    assert again.support == 2 and again.evidence == f.evidence
