"""Rediscovery revives: evicted facts wait in the state, and a re-shared one comes back.

Why: the synthesizer remembers a fact's signature after eviction, so a memory shared
again is recognised as that fact. Without this module the recognition went to a dead
fact and the swarm ended with no live fact on a subject it had just rediscovered.

The fold keeps evicted facts (not forgotten ones: erasure drops them) in
``state.evicted``, oldest eviction first, at most ``pool.revivable`` of them. The worker
answers a memory whose signature names one of them with ``fact.revived``; the fold then
brings the fact back: same id, status active (a retraction sticks), strength and energy
of a new memory, its old evidence plus the new one. Like every handler here, no clock
and no randomness: the revival's time is the event's ``ts``.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Protocol

from synthesizer.config import SynthConfig
from synthesizer.state import pool
from synthesizer.state.facts import ACTIVE, RETRACTED, WORKING, Fact, RawMemory
from synthesizer.state.words import note as note_words

REVIVED_REASON = "revived"
"""The ``history`` reason of a revival's status change (when the status changes)."""


class FoldState(Protocol):
    """What this module needs of ``SwarmState`` (structural: no import of the fold)."""

    facts: MutableMapping[str, Fact]
    evicted: MutableMapping[str, Fact]
    signatures: dict[str, str]
    metrics: Any
    words: dict[str, list[list[Any]]]

    @property
    def config(self) -> SynthConfig: ...

    def _add_fact(self, f: Fact) -> None: ...


def bury(s: FoldState, f: Fact, forgotten: bool) -> None:
    """Keep an evicted fact for a later revival (erased ones are not kept), bounded."""
    if forgotten:
        return
    limit = s.config.pool.revivable
    if limit <= 0:
        return
    ev = s.evicted
    ev.pop(f.id, None)
    ev[f.id] = f
    while len(ev) > limit:
        old = next(iter(ev))
        del ev[old]
        s.words.pop(old, None)


def revive(s: FoldState, fid: str, raw: RawMemory | None, seq: int, ts: float) -> bool:
    """Bring evicted fact ``fid`` back with ``raw`` as new evidence; False if it is not kept.

    Strength, energy and tier restart as a new memory's (making room at capacity, as a
    new fact does); evidence, reinforcements, feedback and history are the fact's own.
    """
    f = s.evicted.pop(fid, None)
    if f is None:
        return False
    f.strength = pool.initial_strength(s.config.pool.max_strength)
    f.energy = 1.0
    f.tier = WORKING
    f.energy_ts = ts
    f.cluster = None
    f.expires_at = None
    if f.status != RETRACTED:
        f.set_status(ACTIVE, seq, REVIVED_REASON)
    if raw is not None:
        if raw.ttl_s is not None:
            f.expires_at = raw.ts + raw.ttl_s
        if not f.has_evidence(raw.seq):
            note_words(s, f, raw)
            f.evidence.append(raw.evidence())
    s._add_fact(f)
    s.metrics.revivals += 1
    return True


__all__ = ["REVIVED_REASON", "FoldState", "bury", "revive"]
