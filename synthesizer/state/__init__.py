"""The deterministic fold: ``SwarmState`` and the pure ``apply(state, event)``.

Same events in seq order -> same state, byte for byte (``digest()``), whether folded from
seq 1 or from ``SwarmState.from_bytes`` of a checkpoint. No wall clock, no randomness, no
embedding model: time is the events' ``ts`` and similarity decisions arrive as events
(tests/test_imports.py refuses ``time``, ``random`` and the search and worker packages
here). ``apply`` mutates and returns the same object (speed); use ``copy()`` to branch.

Where things are:

* ``swarmstate``: ``SwarmState`` (what the fold keeps), its queries and canonical bytes,
  with ``table``/``columns`` (facts parsed on first touch) and ``payload`` (its
  checkpoint bytes);
* ``handlers``: the rules, one handler per event type, and the ``HANDLERS`` table; the
  rules they call live beside them (``facts``, ``pool``, ``tiers``, ``revival``,
  ``authz``, ``erasure``, ``words``, ``origins``, ``configrule``, and the seeds' facades'
  rules in ``seeds``/``seedstate``);
* ``loop``: the loop (``apply``, ``fold_dicts``, ``fold``) and its counters.

The folder is ``state`` rather than ``fold``: ``synthesizer.fold`` is the public fold
function, and a subpackage of that name would shadow it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from synthesizer.state.handlers import HANDLERS, Handler
    from synthesizer.state.loop import apply, fold, fold_dicts
    from synthesizer.state.swarmstate import (
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

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        **dict.fromkeys(("apply", "fold", "fold_dicts"), ".loop"),
        **dict.fromkeys(("HANDLERS", "Handler"), ".handlers"),
        **dict.fromkeys(
            ("CAPACITY", "DECAY", "EXPIRED", "FORMAT", "LATENCY_WINDOW", "TTL", "Metrics"),
            ".swarmstate",
        ),
        "PoolStats": ".swarmstate",
        "SwarmState": ".swarmstate",
    },
)
