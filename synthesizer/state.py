"""The fold: ``SwarmState`` and the pure ``apply(state, event)``, gathered in one place.

Same events in seq order -> same state, byte for byte (``digest()``), whether folded from
seq 1 or from ``SwarmState.from_bytes`` of a checkpoint. No wall clock, no randomness, no
embedding model: time is the events' ``ts`` and similarity decisions arrive as events.
``apply`` mutates and returns the same object (speed); use ``copy()`` to branch.

Where things are:

* ``foldstate.py``: ``SwarmState`` (what the fold keeps), its queries and canonical bytes;
* ``handlers.py``: the rules, one handler per event type, and the ``HANDLERS`` table;
* ``foldloop.py``: the loop (``apply``, ``fold_dicts``, ``fold``) and its counters.
"""

from __future__ import annotations

from synthesizer.foldloop import apply, fold, fold_dicts
from synthesizer.foldstate import (
    CAPACITY,
    DECAY,
    EXPIRED,
    FORMAT,
    LATENCY_WINDOW,
    TTL,
    Metrics,
    PoolStats,
    SwarmState,
)
from synthesizer.handlers import HANDLERS, Handler

__all__ = [
    "CAPACITY",
    "DECAY",
    "EXPIRED",
    "FORMAT",
    "HANDLERS",
    "LATENCY_WINDOW",
    "TTL",
    "Handler",
    "Metrics",
    "PoolStats",
    "SwarmState",
    "apply",
    "fold",
    "fold_dicts",
]
