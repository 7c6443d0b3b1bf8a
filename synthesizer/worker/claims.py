"""Structured claims on a subject: what resolution weighs, and the resolution itself.

Claims on one subject that disagree are contested, then resolved by evidence: most
agents, then importance, feedback and recency. Reversible: new evidence re-resolves.
"""

from __future__ import annotations

from dataclasses import dataclass

from swarmlog import Event
from synthesizer import events as T


@dataclass
class Claim:
    """What resolution needs to know of one fact claiming a subject."""

    fid: str
    value: str | None
    agents: set[str]
    importance: float
    feedback: float
    last_seq: int
    status: str


def _reason(top: Claim, second: Claim) -> str:
    """Why the winner won, in words the board shows."""
    if len(top.agents) != len(second.agents):
        return f"{len(top.agents)} agent(s) vs {len(second.agents)}"
    return "tie on agents; decided by importance, feedback, then recency"


def resolve(subject: str, claims: dict[str, Claim], new: list[str]) -> list[Event]:
    """Contest and resolve a subject whose ``claims`` disagree (``new``: this batch's ids).

    The claims' statuses are updated in place, so later batches' decisions see them.
    """
    values = {c.value for c in claims.values()}
    if len(claims) < 2 or len(values) < 2:
        return []
    out = []
    for fid in new:
        rivals = sorted(f for f in claims if f != fid)
        body: dict[str, object] = {"subject": subject, "rivals": rivals}
        out.append(Event(agent=T.SYNTH_AGENT, type=T.FACT_CONTESTED, key=fid, body=body))
    ranked = sorted(
        claims.values(),
        key=lambda c: (len(c.agents), c.importance, c.feedback, c.last_seq),
        reverse=True,
    )
    winner = ranked[0]
    losers = sorted(c.fid for c in ranked[1:])
    settled = winner.status == "active" and all(claims[f].status == "superseded" for f in losers)
    if out or not settled:
        body = {
            "subject": subject,
            "winner": winner.fid,
            "losers": losers,
            "reason": _reason(ranked[0], ranked[1]),
        }
        out.append(Event(agent=T.SYNTH_AGENT, type=T.FACT_RESOLVED, key=winner.fid, body=body))
        winner.status = "active"
        for f in losers:
            claims[f].status = "superseded"
    return out
