"""The fold's rules: one handler per event type, and ``HANDLERS``, the table that maps a
type to its handler (a new event type is one function here and one line in the table).

A handler takes the state and the event's stored envelope dict (``Event.envelope``, or a
dict read straight from the log) and changes the state in place. Handlers use no wall
clock and no randomness: time is the event's ``ts``. The order in which they mutate the
state and may raise (a malformed body: counted as ``ignored["malformed"]`` by the loop)
is part of the digest contract.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from synthesizer import events as T
from synthesizer.config import SynthConfig
from synthesizer.state import _fast, authz, judging, origins, pool, revival, tiers, words
from synthesizer.state.erasure import on_forgotten
from synthesizer.state.facts import (
    ACTIVE,
    CONTESTED,
    RETRACTED,
    SUPERSEDED,
    WORKING,
    Evidence,
    Fact,
    RawMemory,
    new_fact,
)
from synthesizer.state.seeds import HANDLERS as FACADE_HANDLERS
from synthesizer.state.seeds import chain, on_identity_forgotten
from synthesizer.state.swarmstate import (
    CAPACITY,
    DECAY,
    EXPIRED,
    LATENCY_WINDOW,
    TTL,
    SwarmState,
    bump,
)

STATUS_SET = frozenset(T.STATUSES)

Handler = Callable[[SwarmState, dict[str, Any]], None]


def _ignore(s: SwarmState, why: str) -> None:
    """Count an event the fold could not act on, by reason."""
    bump(s.metrics.ignored, why)


def _on_shared(s: SwarmState, d: dict[str, Any]) -> None:
    """memory.shared: remember the raw memory until a synth event consumes it."""
    m = s.metrics
    m.raw_total += 1
    bump(m.shared, d["agent"])
    s.pending[d["seq"]] = _fast.raw_memory(d)


def _consume(s: SwarmState, ts: float, raw_seq: int) -> RawMemory | None:
    """Take a pending raw memory and record its discovery -> visibility latency."""
    raw = s.pending.pop(raw_seq, None)
    if raw is not None:
        lat = s.metrics.latencies
        lat.append(ts - raw.ts)
        if len(lat) > 2 * LATENCY_WINDOW:  # keep a recent window, amortised O(1)
            del lat[:-LATENCY_WINDOW]
    return raw


def _on_created(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.created: build the fact from its raw memory (making room at capacity), then
    strengthen the related short/long-term facts."""
    fid = d.get("key")
    b = d["body"]
    facts = s.facts
    if fid is None or fid in facts:
        _ignore(s, "fact.created:duplicate")
        return
    ts = d["ts"]
    raw = _consume(s, ts, b["evidence"])
    if raw is None:
        _ignore(s, "fact.created:no_raw")
        return
    sig = b.get("signature")
    if sig is not None:
        s.signatures[sig] = fid
    k = s._k
    strength = pool.initial_strength(k.max_strength)
    f = _fast.fact_from_raw(fid, raw, d["seq"], ts, sig, strength)
    if raw.origins:
        origins.add(s.origin_index, f, raw)
    if len(facts) >= k.capacity:
        s._make_room()
    facts[fid] = f
    if f.subject is not None:
        s._index_subject(f)
    related = b.get("related")
    if related:
        tcfg = s.config.tiers
        m = s.metrics
        for rel in related:
            other = facts.get(rel[0])
            if other is not None and other is not f:
                before = other.tier
                if tiers.retro_strengthen(other, float(rel[1]), ts, tcfg):
                    m.retro += 1
                    if other.tier != before:
                        m.promotions += 1


def _on_corroborated(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.corroborated / fact.revived: add evidence; an evicted fact comes back only on a
    fact.revived (see revival), a corroboration of it is counted and ignored."""
    b = d["body"]
    bump(s.metrics.duplicates, b.get("kind", "exact"))
    raw = _consume(s, d["ts"], b["evidence"])
    key = d.get("key")
    f = s.facts.get(key) if key is not None else None
    if f is None:
        t = d["type"]
        if key is None or t != T.FACT_REVIVED or not revival.revive(s, key, raw, d["seq"], d["ts"]):
            _ignore(s, f"{t}:evicted")
        elif raw is not None and raw.origins:
            origins.add(s.origin_index, s.facts[key], raw)
        return
    if raw is not None and not f.has_evidence(raw.seq):
        words.note(s, f, raw)
        f.evidence.append(raw.evidence())
    if raw is not None and raw.origins:
        origins.add(s.origin_index, f, raw)


def _set_status(s: SwarmState, fid: str, status: str, seq: int, reason: str | None) -> None:
    """Set a live fact's status unless it is retracted (retraction sticks)."""
    f = s.facts.get(fid)
    if f is not None and f.status != RETRACTED:
        f.set_status(status, seq, reason)


def _on_contested(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.contested: the keyed fact and its rivals become contested, each listing the
    others in ``contested_with``."""
    seq = d["seq"]
    key = d.get("key")
    rivals = list(d["body"].get("rivals") or ())
    if key is not None:
        _set_status(s, key, CONTESTED, seq, None)
    for fid in rivals:
        _set_status(s, fid, CONTESTED, seq, None)
    named = ([key] if key is not None else []) + rivals
    for fid in named:
        f = s.facts.get(fid)
        if f is not None:
            others = [o for o in named if o != fid and o not in f.contested_with]
            if others:
                f.contested_with = sorted({*f.contested_with, *others})


def _on_resolved(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.resolved: winner active, losers superseded (a later resolution may flip)."""
    b = d["body"]
    seq = d["seq"]
    reason = b.get("reason") or None
    _set_status(s, b["winner"], ACTIVE, seq, reason)
    for fid in b.get("losers") or ():
        _set_status(s, fid, SUPERSEDED, seq, reason)


def _on_judge_asked(s: SwarmState, d: dict[str, Any]) -> None:
    """judge.asked: two facts become possible duplicates, an open question (judging.py)."""
    if not judging.on_asked(s, d):
        _ignore(s, "judge.asked:duplicate")


def _on_judge_answered(s: SwarmState, d: dict[str, Any]) -> None:
    """judge.answered: close the question and merge, contest or unlink (judging.py)."""
    if not judging.on_answered(s, d):
        _ignore(s, "judge.answered:not_open")


def _cas_success(s: SwarmState, agent: str) -> None:
    """Count a successful board write for ``agent``: [attempts, successes, conflicts]."""
    c = s.metrics.cas.get(agent)
    if c is None:
        c = s.metrics.cas[agent] = [0, 0, 0]
    c[0] += 1
    c[1] += 1


def _cite(s: SwarmState, f: Fact, seqs: Iterable[int]) -> None:
    """Attach cited raw seqs: as Evidence when the raw memory is still pending, else as
    a bare citation (its author is unknown to the fold)."""
    for q in seqs:
        if f.has_evidence(q) or q in f.cited:
            continue
        raw = s.pending.get(q)
        if raw is not None:
            words.note(s, f, raw)
            f.evidence.append(raw.evidence())
        else:
            f.cited.append(q)


def _on_updated(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.updated: a board write; creates the fact when the key is not live (needs
    content). An explicit status write may revive a retracted fact."""
    fid = d.get("key")
    if fid is None:
        _ignore(s, "fact.updated:no_key")
        return
    b = d["body"]
    seq = d["seq"]
    f = s.facts.get(fid)
    if f is None:
        content = b.get("content")
        if not content:
            _ignore(s, "fact.updated:unknown")
            return
        imp = b.get("importance")
        ts = d["ts"]
        session = d.get("session")
        f = new_fact(
            id=fid,
            content=content,
            category=b.get("category") or "general",
            importance=0.5 if imp is None else float(imp),
            seq=seq,
            ts=ts,
            evidence=[Evidence(seq=seq, agent=d["agent"], session=session, ts=ts)],
            strength=pool.initial_strength(s.config.pool.max_strength),
            subject=b.get("subject"),
            value=b.get("value"),
            thread=d.get("thread"),
            session=session,
        )
        status = b.get("status")
        if status is not None and status != ACTIVE and status in STATUS_SET:
            f.set_status(status, seq, b.get("reason"))
        s._add_fact(f)
    else:
        if b.get("content"):
            f.content = b["content"]
        if "value" in b:
            f.value = b["value"]
        if "importance" in b and b["importance"] is not None:
            f.importance = float(b["importance"])
        if b.get("category"):
            f.category = b["category"]
        if "subject" in b and b["subject"] != f.subject:
            s._unindex_subject(f)
            f.subject = b["subject"]
            s._index_subject(f)
        status = b.get("status")
        if status is not None and status in STATUS_SET:
            f.set_status(status, seq, b.get("reason"))
    ev_seqs = b.get("evidence")
    if ev_seqs:
        _cite(s, f, ev_seqs)
    _cas_success(s, d["agent"])


def _on_retracted(s: SwarmState, d: dict[str, Any]) -> None:
    """fact.retracted: status retracted; it sticks against synthesizer events."""
    key = d.get("key")
    f = s.facts.get(key) if key is not None else None
    if f is None:
        _ignore(s, "fact.retracted:unknown")
        return
    f.set_status(RETRACTED, d["seq"], d["body"].get("reason"))
    _cas_success(s, d["agent"])


def _on_withdrawn(s: SwarmState, d: dict[str, Any]) -> None:
    """origin.withdrawn: origins taken back off a fact, with the evidence they brought (a
    fact left with none is retracted; see origins)."""
    key = d.get("key")
    f = s.facts.get(key) if key is not None else None
    b = d["body"]
    ix = s.origin_index
    if f is None or not origins.withdraw(ix, f, b["origins"], d["seq"], b.get("reason")):
        _ignore(s, "origin.withdrawn:unknown")
        return
    _cas_success(s, d["agent"])


def _on_promotion_done(s: SwarmState, d: dict[str, Any]) -> None:
    """promotion.done: these ended sessions' facts reached the global memory."""
    for session in d["body"]["sessions"]:
        s.promotion_waiting.pop(session, None)


def _on_conflict(s: SwarmState, d: dict[str, Any]) -> None:
    """board.conflict: a losing CAS attempt."""
    agent = d["agent"]
    c = s.metrics.cas.get(agent)
    if c is None:
        c = s.metrics.cas[agent] = [0, 0, 0]
    c[0] += 1
    c[2] += 1


def _on_reinforced(s: SwarmState, d: dict[str, Any]) -> None:
    """memory.reinforced: once per agent per fact, +boost (capped), count even at cap."""
    f = s.facts.get(d["body"].get("target", ""))
    agent = d["agent"]
    if f is None or agent in f.reinforced_by:
        _ignore(s, "memory.reinforced")
        return
    k = s._k
    f.reinforced_by.append(agent)
    f.reinforcements += 1
    f.strength = pool.boosted(f.strength, k.boost, k.max_strength)
    f.last_access = d["ts"]
    s.metrics.reinforcements += 1


def _on_recalled(s: SwarmState, d: dict[str, Any]) -> None:
    """memory.recalled: each distinct live hit is accessed (``tiers.access``: decay, add
    energy, promote); facts accessed in the same session co-activate (a recall without
    a session: its own hits); peers' evidence seqs are remembered for correlation lift."""
    facts = s.facts
    agent = d["agent"]
    ts = d["ts"]
    m = s.metrics
    bump(m.recalls, agent)
    hits: list[Fact] = []
    seen: set[str] = set()
    for fid in d["body"].get("hits") or ():
        f = facts.get(fid)
        if f is None or fid in seen:
            continue
        seen.add(fid)
        hits.append(f)
        if _fast.access(f, ts, s._k):
            m.promotions += 1
        f.access_count += 1
        f.last_access = ts
        peers = [e.seq for e in f.evidence if e.agent != agent]
        if peers:
            s.recalled.setdefault(agent, set()).update(peers)
    session = d.get("session")
    if session is not None and hits:
        order = s.accessed.setdefault(agent, {}).setdefault(session, [])
        tiers.coactivate_session(order, hits, s.coact, s.clusters, facts, s.config.tiers)
    elif len(hits) > 1:
        tiers.coactivate(hits, s.coact, s.clusters, facts, s.config.tiers)


def _on_feedback(s: SwarmState, d: dict[str, Any]) -> None:
    """memory.feedback: clamp to [-1, 1] and aggregate on a live fact."""
    b = d["body"]
    f = s.facts.get(b.get("target", ""))
    u = b.get("usefulness")
    if f is None or u is None or not math.isfinite(u):
        _ignore(s, "memory.feedback")
        return
    f.feedback_sum += max(-1.0, min(1.0, float(u)))
    f.feedback_count += 1
    s.metrics.feedback_total += 1


def _on_tick(s: SwarmState, d: dict[str, Any]) -> None:
    """One decay step for every live fact, then deterministic evictions: strength below
    threshold (decay), TTL passed (ttl), working energy below expiry (expired). A
    MemoryBank's memories are never evicted here: only its prune and consolidation
    remove them (seed 004; docs/seeds.md)."""
    p = s.config.pool
    tcfg = s.config.tiers
    rate = p.decay_rate
    threshold = p.eviction_threshold
    expire = tcfg.working_expire
    ts = d["ts"]
    factors: dict[int, float] = {}
    out: list[tuple[str, str]] = []
    bank = s.ext.bank  # a MemoryBank's memories decay but are never evicted (seed 004)
    for f in s.facts.values():
        r = f.reinforcements
        k = factors.get(r)
        if k is None:  # one decay factor per reinforcement count, not per fact
            k = factors[r] = pool.decay_factor(rate, r)
        f.strength *= k
        tiers.advance(f, ts, tcfg)
        if bank and f.id in bank:
            continue
        if f.strength < threshold:
            out.append((f.id, DECAY))
        elif f.expires_at is not None and ts >= f.expires_at:
            out.append((f.id, TTL))
        elif f.tier == WORKING and f.energy < expire:
            out.append((f.id, EXPIRED))
    for fid, reason in out:
        s._evict(fid, reason)


def _on_session_ended(s: SwarmState, d: dict[str, Any]) -> None:
    """session.ended: session-end promotion pass over that session's working facts."""
    session = d["body"].get("session") or d.get("session")
    if session is None:
        _ignore(s, "session.ended:no_session")
        return
    for agent in [a for a, m in s.accessed.items() if session in m]:
        del s.accessed[agent][session]  # its co-activations are counted
        if not s.accessed[agent]:
            del s.accessed[agent]
    if s.config.promotion.when == "session_end" and s.config.promotion.target:
        s.promotion_waiting[session] = d["seq"]
    tcfg = s.config.tiers
    ts = d["ts"]
    for f in s.facts.values():
        if f.session == session and f.tier == WORKING and tiers.session_end_promote(f, ts, tcfg):
            s.metrics.promotions += 1


def _on_progress(s: SwarmState, d: dict[str, Any]) -> None:
    """synth.progress: the synthesizer's progress mark (monotonic)."""
    upto = d["body"].get("upto", 0)
    if upto > s.progress:
        s.progress = upto


def on_configured(s: Any, d: dict[str, Any]) -> None:
    """swarm.configured: fold under the new configuration from this seq on.

    Only events on the config key count (``log_config`` reads the same ones). A smaller
    capacity evicts the weakest facts (ties: oldest) at once, so the pool never holds
    more than the configuration allows.
    """
    if d.get("key") != T.CONFIG_KEY:
        raise ValueError("swarm.configured without the config key")
    s.config = SynthConfig.model_validate(d["body"]["config"])
    s.config_seq = d["seq"]
    cap = s.config.pool.capacity
    bank = s.ext.bank  # a MemoryBank's memories are not the pool's to evict (seed 004)
    pooled = [f for f in s.facts.values() if f.id not in bank] if bank else list(s.facts.values())
    if len(pooled) > cap:
        # the order of repeated ``pool.capacity_victim`` picks, in one sort
        order = sorted(pooled, key=lambda f: (f.strength, f.created_seq))
        for f in order[: len(pooled) - cap]:
            s._evict(f.id, CAPACITY)


HANDLERS: dict[str, Handler] = authz.guarded(
    {
        T.MEMORY_SHARED: _on_shared,
        T.FACT_CREATED: _on_created,
        T.FACT_CORROBORATED: _on_corroborated,
        T.FACT_REVIVED: _on_corroborated,
        T.FACT_CONTESTED: _on_contested,
        T.FACT_RESOLVED: _on_resolved,
        T.FACT_UPDATED: _on_updated,
        T.FACT_RETRACTED: _on_retracted,
        T.BOARD_CONFLICT: _on_conflict,
        T.MEMORY_REINFORCED: _on_reinforced,
        T.MEMORY_RECALLED: _on_recalled,
        T.MEMORY_FEEDBACK: _on_feedback,
        T.POOL_TICK: _on_tick,
        T.SESSION_ENDED: _on_session_ended,
        T.SYNTH_PROGRESS: _on_progress,
        T.ORIGIN_WITHDRAWN: _on_withdrawn,
        T.PROMOTION_DONE: _on_promotion_done,
        T.JUDGE_ASKED: _on_judge_asked,
        T.JUDGE_ANSWERED: _on_judge_answered,
        T.IDENTITY_FORGOTTEN: chain(on_forgotten, on_identity_forgotten),
        T.SWARM_CONFIGURED: on_configured,
        **FACADE_HANDLERS,
    }
)
