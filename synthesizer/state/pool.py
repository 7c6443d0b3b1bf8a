"""Pure math of the seed memory pool (seed 000): strength, decay, boost, eviction, capacity.

No state here: the fold (``handlers.py``) and the compatibility facade both call these, so
the formulas live in exactly one place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from operator import attrgetter

from synthesizer.state.facts import Fact


def initial_strength(max_strength: float) -> float:
    """A new memory's strength: 1.0, or ``max_strength`` when the cap is lower (fixed)."""
    return min(1.0, max_strength)


def decay_factor(rate: float, reinforcements: int) -> float:
    """The per-tick multiplier ``1 - rate / (1 + ln(1 + reinforcements))``.

    Reinforced memories decay slower; ``math.log(1 + r)`` (not ``log1p``) to match the
    seed's ``Math.log(1 + r)`` bit for bit.
    """
    return 1.0 - rate / (1.0 + math.log(1 + reinforcements))


def boosted(strength: float, boost: float, max_strength: float) -> float:
    """Strength after one counted reinforcement: ``+boost``, capped at ``max_strength``."""
    return min(max_strength, strength + boost)


def evictable(strength: float, threshold: float) -> bool:
    """Whether a memory is evicted after a tick (strictly below the threshold)."""
    return strength < threshold


def select_evictions(facts: Iterable[Fact], threshold: float) -> list[str]:
    """Ids of the facts strictly below ``threshold``, in iteration order."""
    return [f.id for f in facts if f.strength < threshold]


_VICTIM_KEY = attrgetter("strength", "created_seq")


def capacity_victim(facts: Iterable[Fact]) -> str | None:
    """The fact to evict for room: the weakest; on equal strength the oldest (lowest
    ``created_seq``). None for an empty pool.

    One C-level ``min`` over (strength, created_seq) keys: the first minimal fact, as a
    loop keeping the first strictly smaller one picks, at a fraction of the cost (this
    runs for every fact created at capacity, over the whole pool). Strengths are never
    NaN under a valid configuration; should the first be, the loop decides, as before.
    """
    facts = list(facts)
    best = min(facts, key=_VICTIM_KEY, default=None)
    if best is not None and best.strength != best.strength:  # NaN first: the loop's answer
        best = None
        for f in facts:
            if (
                best is None
                or f.strength < best.strength
                or (f.strength == best.strength and f.created_seq < best.created_seq)
            ):
                best = f
    return None if best is None else best.id
