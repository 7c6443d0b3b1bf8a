"""Erasure in the fold: ``identity.forgotten`` (DESIGN 7).

Drops the identity's pending raw memories and its evidence in facts (live ones and the
evicted ones kept for revival), facts left without evidence (or of the forgotten
thread) with their signatures, and the identity's per-agent counters. Kept out of
``state`` so the fold's module stays small; it needs only the state's shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .facts import Fact, RawMemory

FORGOTTEN = "forgotten"
"""The eviction reason of a fact erased with its identity."""


class ErasableState(Protocol):
    """What erasure needs of ``SwarmState`` (structural: no import of the fold)."""

    facts: dict[str, Fact]
    evicted: dict[str, Fact]
    signatures: dict[str, str]
    pending: dict[int, RawMemory]
    recalled: dict[str, set[int]]
    metrics: Any

    def _evict(self, fid: str, reason: str) -> None: ...


def _scrub(
    facts: Iterable[Fact],
    hit: Callable[[str, str | None], bool],
    thread: str | None,
    agent: str | None,
) -> list[str]:
    """Remove the identity's evidence and reinforcements; return the facts to drop."""
    drop: list[str] = []
    for f in facts:
        if thread is not None and f.thread == thread:
            drop.append(f.id)
            continue
        kept = [e for e in f.evidence if not hit(e.agent, e.session)]
        if len(kept) != len(f.evidence):
            f.evidence = kept
            if not kept:
                drop.append(f.id)
        if agent is not None and agent in f.reinforced_by:
            f.reinforced_by.remove(agent)
    return drop


def _unsign(s: ErasableState, f: Fact) -> None:
    sig = f.signature
    if sig is not None and s.signatures.get(sig) == f.id:
        del s.signatures[sig]


def on_forgotten(s: ErasableState, d: dict[str, Any]) -> None:
    """identity.forgotten: erase an agent, a session or a thread from the state."""
    b = d["body"]
    agent, session, thread = b.get("agent"), b.get("session"), b.get("thread")

    def hit(e_agent: str, e_session: str | None) -> bool:
        return (agent is not None and e_agent == agent) or (
            session is not None and e_session == session
        )

    for q in [
        q
        for q, r in s.pending.items()
        if hit(r.agent, r.session) or (thread is not None and r.thread == thread)
    ]:
        del s.pending[q]
    for fid in _scrub(s.facts.values(), hit, thread, agent):
        _unsign(s, s.facts[fid])
        s._evict(fid, FORGOTTEN)
    for fid in _scrub(s.evicted.values(), hit, thread, agent):
        _unsign(s, s.evicted.pop(fid))
    if agent is not None:
        s.recalled.pop(agent, None)
        m = s.metrics
        for counts in (m.by_agent, m.recalls, m.shared, m.causes, m.cas):
            counts.pop(agent, None)


__all__ = ["FORGOTTEN", "ErasableState", "on_forgotten"]
