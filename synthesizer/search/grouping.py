"""One finding per group: facts linked as possible duplicates shown as one recall hit.

Why: when the merge rule cannot tell whether two statements say the same thing, both
stay facts, linked by an open question (``synthesizer.state.judging``) until a judge
answers. A reader should not see the same finding twice in different words: the group
shows once, as its best-ranked wording, and the hit's ``also`` names the other members
with the agents behind each, so nothing is lost and provenance stays visible. A judge's
``different`` removes the link, and the facts show apart again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from synthesizer.state import SwarmState
from synthesizer.state.judging import SHOWN

if TYPE_CHECKING:
    from synthesizer.search.recall import Hit

__all__ = ["extra_wanted", "group_hits"]


def extra_wanted(state: SwarmState, limit: int) -> int:
    """How many more hits to rank so that ``limit`` remain once groups fold into one:
    at most one per linked fact (bounded)."""
    return min(len(state.judging.links()), 4 * limit + 50)


def group_hits(state: SwarmState, hits: Sequence[Hit], limit: int) -> list[Hit]:
    """``hits`` (best first) with each possible-duplicate group folded into its
    best-ranked member, whose ``also`` names the others; at most ``limit`` hits."""
    judging = state.judging
    if not judging.open:
        return list(hits[:limit])
    facts = state.facts
    out: list[Hit] = []
    seen: set[str] = set()
    for h in hits:
        fid = h.fact.id
        if fid in seen:
            continue
        members = judging.group(fid)
        seen.update(members)
        also = tuple(
            (m, tuple(f.agents))
            for m in members
            if m != fid and (f := facts.get(m)) is not None and f.status in SHOWN
        )
        out.append(dataclasses.replace(h, also=also) if also else h)
        if len(out) >= limit:
            break
    return out
