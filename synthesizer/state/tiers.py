"""Three-tier consolidation (seed 003): energy in event time, promotion, clusters, retro boost.

Energy decays as ``E * exp(-lambda * hours)`` with a per-tier lambda; an access adds
``access_energy`` after decaying. Crossing thresholds promotes working -> short_term ->
long_term. Facts recalled together accumulate co-activation weight; a pair above the
threshold forms or joins a cluster whose id is ``"c<created seq of its founder>"``.
All functions are deterministic and take the event's ``ts`` as the clock.
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping

from synthesizer.config import TierConfig
from synthesizer.state.facts import LONG_TERM, SHORT_TERM, WORKING, Fact

HOUR = 3600.0


def decay_constant(tier: str, cfg: TierConfig) -> float:
    """Lambda (per hour) of a tier."""
    if tier == WORKING:
        return cfg.working_decay
    if tier == SHORT_TERM:
        return cfg.short_decay
    return cfg.long_decay


def decayed_energy(energy: float, tier: str, dt_s: float, cfg: TierConfig) -> float:
    """Energy after ``dt_s`` seconds in ``tier`` (no change for dt <= 0)."""
    if dt_s <= 0.0:
        return energy
    return energy * math.exp(-decay_constant(tier, cfg) * (dt_s / HOUR))


def advance(f: Fact, ts: float, cfg: TierConfig) -> None:
    """Decay ``f.energy`` up to event time ``ts``; clocks never run backwards."""
    dt = ts - f.energy_ts
    if dt > 0.0:
        f.energy = f.energy * math.exp(-decay_constant(f.tier, cfg) * (dt / HOUR))
        f.energy_ts = ts


def promote(f: Fact, cfg: TierConfig) -> bool:
    """Promote across every threshold the energy is strictly above; True if moved."""
    moved = False
    if f.tier == WORKING and f.energy > cfg.promote_short:
        f.tier = SHORT_TERM
        moved = True
    if f.tier == SHORT_TERM and f.energy > cfg.promote_long:
        f.tier = LONG_TERM
        moved = True
    return moved


def access(f: Fact, ts: float, cfg: TierConfig) -> None:
    """One access at ``ts``: decay, add ``access_energy``, then promote."""
    advance(f, ts, cfg)
    f.energy += cfg.access_energy
    promote(f, cfg)


def session_end_promote(f: Fact, ts: float, cfg: TierConfig) -> bool:
    """Session-end pass for one working fact: above the lower threshold it goes to
    short_term (and on to long_term if above that). True if promoted."""
    if f.tier != WORKING:
        return False
    advance(f, ts, cfg)
    if f.energy > cfg.session_end_promote:
        f.tier = SHORT_TERM
        promote(f, cfg)
        return True
    return False


def retro_strengthen(f: Fact, similarity: float, ts: float, cfg: TierConfig) -> bool:
    """A new fact similar to ``f``: add ``retro_factor * similarity`` to a short- or
    long-term fact when ``similarity > retro_similarity``. True if applied."""
    if f.tier == WORKING or not similarity > cfg.retro_similarity:
        return False
    advance(f, ts, cfg)
    f.energy += cfg.retro_factor * similarity
    promote(f, cfg)
    return True


# ---------------------------------------------------------------- co-activation


def coactivate(
    hits: list[Fact],
    coact: dict[str, dict[str, int]],
    clusters: dict[str, list[str]],
    facts: MutableMapping[str, Fact],
    cfg: TierConfig,
) -> None:
    """Add 1 to the weight of every pair among ``hits`` (distinct live facts); a pair
    whose weight exceeds the threshold forms or joins a cluster.

    ``coact`` is symmetric: ``coact[a][b] == coact[b][a]``.
    """
    n = len(hits)
    threshold = cfg.coactivation_threshold
    for i in range(n):
        a = hits[i]
        row_a = coact.get(a.id)
        if row_a is None:
            row_a = coact[a.id] = {}
        for j in range(i + 1, n):
            b = hits[j]
            w = row_a.get(b.id, 0) + 1
            row_a[b.id] = w
            row_b = coact.get(b.id)
            if row_b is None:
                row_b = coact[b.id] = {}
            row_b[a.id] = w
            if w > threshold and (a.cluster is None or a.cluster != b.cluster):
                join(a, b, clusters, facts)


def coactivate_session(
    seen: list[str],
    hits: list[Fact],
    coact: dict[str, dict[str, int]],
    clusters: dict[str, list[str]],
    facts: MutableMapping[str, Fact],
    cfg: TierConfig,
) -> None:
    """Facts accessed in one session co-activate (seed 003: memories ACCESSED_IN the same
    session): each hit not accessed in the session before adds 1 to its weight with every
    live fact that was (``seen``, the session's accessed ids, in order; extended here),
    so a pair counts once per session however often it is recalled there, and a pair
    whose weight exceeds the threshold forms or joins a cluster."""
    live = [fid for fid in seen if fid in facts]
    if len(live) != len(seen):
        seen[:] = live  # evicted since: no longer co-activates
    have = set(seen)
    for f in hits:
        if f.id in have:
            continue
        for fid in seen:
            _pair(facts[fid], f, coact, clusters, facts, cfg.coactivation_threshold)
        seen.append(f.id)
        have.add(f.id)


def _pair(
    a: Fact,
    b: Fact,
    coact: dict[str, dict[str, int]],
    clusters: dict[str, list[str]],
    facts: MutableMapping[str, Fact],
    threshold: int,
) -> None:
    """Add 1 to the (symmetric) weight of ``a`` and ``b``; join them above the threshold."""
    row_a = coact.setdefault(a.id, {})
    w = row_a.get(b.id, 0) + 1
    row_a[b.id] = w
    coact.setdefault(b.id, {})[a.id] = w
    if w > threshold and (a.cluster is None or a.cluster != b.cluster):
        join(a, b, clusters, facts)


def _cluster_key(cid: str) -> int:
    """Founder seq of a cluster id ``c<seq>`` (older founder = smaller)."""
    return int(cid[1:])


def join(a: Fact, b: Fact, clusters: dict[str, list[str]], facts: MutableMapping[str, Fact]) -> str:
    """Put ``a`` and ``b`` in one cluster: form one, join the existing one, or merge two
    (the cluster with the older founder absorbs the other). Returns the cluster id."""
    ca, cb = a.cluster, b.cluster
    if ca is None and cb is None:
        new = f"c{min(a.created_seq, b.created_seq)}"
        clusters[new] = sorted((a.id, b.id), key=lambda i: facts[i].created_seq)
        a.cluster = b.cluster = new
        return new
    if ca is None or cb is None:
        joiner, host = (a, cb) if ca is None else (b, ca)
        assert host is not None
        joiner.cluster = host
        clusters[host].append(joiner.id)
        return host
    keep, drop = (ca, cb) if _cluster_key(ca) < _cluster_key(cb) else (cb, ca)
    members = clusters.pop(drop)
    for fid in members:
        facts[fid].cluster = keep
    clusters[keep].extend(members)
    return keep


def forget_fact(f: Fact, coact: dict[str, dict[str, int]], clusters: dict[str, list[str]]) -> None:
    """Remove an evicted fact from the co-activation graph and its cluster."""
    row = coact.pop(f.id, None)
    if row:
        for other in row:
            peer = coact.get(other)
            if peer is not None:
                peer.pop(f.id, None)
                if not peer:
                    del coact[other]
    cid = f.cluster
    if cid is not None:
        members = clusters.get(cid)
        if members is not None:
            members.remove(f.id)
            if not members:
                del clusters[cid]
        f.cluster = None
