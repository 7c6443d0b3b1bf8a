"""A fully scripted swarm log (agents' and synthesizer's events with fixed timestamps),
so metrics and dashboards can be checked against exact numbers.

The log stamps ``ts`` with its own clock, so the scripted times reach it through the
FileLog's test clock: open the log with ``clock=script_clock()``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import synthesizer  # noqa: F401  registers the body models
from swarmlog import Event, Log

T0 = 1_700_000_000.0


def _ev(agent: str, type_: str, ts: float, body: dict[str, Any], **kw: Any) -> Event:
    return Event(agent=agent, type=type_, ts=T0 + ts, body=body, **kw)


def _syn(type_: str, ts: float, body: dict[str, Any], **kw: Any) -> Event:
    """A synthesizer decision under the first lease (version 0 of the key, authz)."""
    return _ev("synthesizer", type_, ts, {**body, "lease": 0}, **kw)


SCRIPT: list[Event] = [
    # seq 1-4: raw memories (an exact duplicate across agents, a contradiction)
    _ev("a1", "memory.shared", 0, {"content": "Cache keys ignore the locale", "importance": 0.8}),
    _ev("a2", "memory.shared", 0.5, {"content": "Cache keys ignore the locale",
                                     "importance": 0.8}),
    _ev("a1", "memory.shared", 0.5, {"content": "DB pool size is 10", "subject": "db.pool_size",
                                   "value": "10"}),
    _ev("a2", "memory.shared", 1.5, {"content": "DB pool size is 20", "subject": "db.pool_size",
                                   "value": "20"}),
    # seq 5-11: the synthesizer's decisions (latencies 1.5, 1.0, 2.0, 1.0 s); times never
    # decrease along seq (the log's clock)
    _syn("fact.created", 1.5, {"evidence": 1, "signature": "s1"}, key="f1"),
    _syn("fact.corroborated", 1.5, {"evidence": 2, "kind": "exact"}, key="f1"),
    _syn("fact.created", 2.5, {"evidence": 3, "signature": "s3"}, key="f3"),
    _syn("fact.created", 2.5, {"evidence": 4, "signature": "s4"}, key="f4"),
    _syn("fact.contested", 4, {"subject": "db.pool_size", "rivals": ["f3"]}, key="f4"),
    _syn("fact.resolved", 4, {"subject": "db.pool_size", "winner": "f3",
                              "losers": ["f4"], "reason": "tie"}, key="f3"),
    _syn("synth.progress", 4, {"upto": 4}, key="synthesizer"),
    # seq 12-13: a3 recalls f1 (a1's and a2's evidence) and builds on it
    _ev("a3", "memory.recalled", 5, {"query": "cache locale", "hits": ["f1"]}),
    _ev("a3", "memory.shared", 6, {"content": "Locale-aware cache keys fix the stale pages"},
        causes=[1]),
    # seq 14-16: board writes on the plan (a2 loses one CAS, then retries)
    _ev("a1", "fact.updated", 7, {"content": "Plan: fix caching first", "value": "a1",
                                  "base": 0}, key="plan"),
    _ev("a2", "board.conflict", 8, {"target": "plan", "expected": 0, "actual": 14}),
    _ev("a2", "fact.updated", 8, {"value": "a1, a2", "base": 14}, key="plan"),
]
"""16 events; expected: 5 raw, 1 duplicate (20.0%), 1 rediscovery (f1), correlation
1 of 5 (20.0%), latency p50 1.00 s / p99 2.00 s, CAS 3 attempts / 1 conflict, 1 contest
resolved (f3 over f4), rate 16 events over 8 s."""


def script_clock() -> Callable[[], float]:
    """A FileLog clock that reads the scripted times in order (one append per event)."""
    return iter([ev.ts for ev in SCRIPT]).__next__


def write_script(log: Log) -> None:
    """Append the scripted events (seqs 1..16) to an empty log opened with
    ``clock=script_clock()``."""
    for ev in SCRIPT:
        log.append(ev)
