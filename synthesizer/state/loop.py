"""The fold loop: ``apply`` one event, ``fold_dicts`` a run of stored dicts, ``fold``
Events. It calls the handler of each event's type (``handlers.HANDLERS``) and keeps the
per-event counters and marks (``metrics``, ``last_seq``, ``last_ts``, fact versions).

Events at or below ``state.last_seq`` are skipped, so re-reading an overlap after a
checkpoint is harmless; unknown types are only counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import Any

from swarmlog.envelope import Event
from swarmlog.redaction import is_tombstone
from synthesizer import events as T
from synthesizer.state import _fast
from synthesizer.state.authz import FORGED, THREAD_KEY
from synthesizer.state.erasure import on_tombstone
from synthesizer.state.handlers import HANDLERS
from synthesizer.state.swarmstate import SwarmState, bump

_MALFORMED = (KeyError, TypeError, ValueError, IndexError)


def _note_causes(s: SwarmState, agent: str, causes: list[int]) -> None:
    """Correlation lift: per agent ``[events with causes, of which citing peers'
    evidence the agent had recalled]``."""
    c = s.metrics.causes.get(agent)
    if c is None:
        c = s.metrics.causes[agent] = [0, 0]
    c[0] += 1
    seen = s.recalled.get(agent)
    if seen and any(q in seen for q in causes):
        c[1] += 1


def apply(state: SwarmState, event: Event | dict[str, Any]) -> SwarmState:
    """Fold one stored event into ``state`` (in place) and return it.

    ``event`` is an Event or its stored envelope dict (as ``Log.read_batches`` yields).
    Events at or below ``state.last_seq`` are skipped, so re-reading an overlap after a
    checkpoint is harmless. Unknown types only bump counters; a malformed body of a
    known type is counted under ``metrics.ignored`` and otherwise skipped.
    """
    d = event if type(event) is dict else event.envelope  # type: ignore[union-attr]
    seq = d.get("seq")
    if seq is None:
        raise ValueError("only stored events (with a seq) can be folded")
    if seq <= state.last_seq:
        return state
    return fold_dicts(state, [d])


def fold_dicts(state: SwarmState, dicts: Iterable[dict[str, Any]]) -> SwarmState:
    """Fold stored envelope dicts (in seq order) into ``state``: the fold's hot loop.

    Exactly ``apply`` for each dict. A list (a chunk as ``read_batches`` yields it) is
    folded as it is; any other iterable a slice of ``_SLICE`` dicts at a time.
    """
    if type(dicts) is list:
        _fold_list(state, dicts)
        return state
    it = iter(dicts)
    while chunk := list(islice(it, _SLICE)):
        _fold_list(state, chunk)
    return state


_SLICE = 4096
_FORGOTTEN = T.IDENTITY_FORGOTTEN
_SYNTH_KEY = T.SYNTH_AGENT


def _fold_list(state: SwarmState, chunk: list[dict[str, Any]]) -> None:
    """Fold a list of stored dicts: what is new, in runs between ``identity.forgotten``s.

    The dicts are in seq order (as every log yields them); those at or below
    ``last_seq`` (an overlap re-read after a checkpoint) are dropped first. An
    ``identity.forgotten`` drops an agent's counts, so it is a run of its own, counted
    before its handler runs, as the events before it are counted before it.
    """
    if not chunk:
        return
    first = chunk[0].get("seq")
    if first is None:
        raise ValueError("only stored events (with a seq) can be folded")
    last = state.last_seq
    if first <= last:  # an overlap re-read after a checkpoint
        chunk = [d for d in chunk if d["seq"] > last]
        if not chunk:
            return
    types = _fast.column(chunk, "type")
    start = 0
    if _FORGOTTEN in types:  # (rare: an erasure request)
        for i in [i for i, t in enumerate(types) if t == _FORGOTTEN]:
            _fold_run(state, chunk[start:i], types[start:i], count_first=False)
            _fold_run(state, chunk[i : i + 1], types[i : i + 1], count_first=True)
            start = i + 1
        chunk, types = chunk[start:], types[start:]
    _fold_run(state, chunk, types, count_first=False)


def _count(state: SwarmState, run: list[dict[str, Any]], types: list[str]) -> None:
    """The per-event counters of ``run``: total, by type and by agent (first-seen order)."""
    m = state.metrics
    if not m.events_total:
        m.first_ts = run[0]["ts"]
    m.events_total += len(run)
    _fast.tally(m.by_type, types)
    _fast.tally(m.by_agent, _fast.column(run, "agent"))
    owners = state.owners  # who opened each session and thread (authz.forget_ok)
    for d in run:
        sess = d.get("session")
        if sess is not None and sess not in owners:
            owners[sess] = d["agent"]
        thr = d.get("thread")
        if thr is not None and (tk := THREAD_KEY + thr) not in owners:
            owners[tk] = d["agent"]


def _fold_run(
    state: SwarmState, run: list[dict[str, Any]], types: list[str], count_first: bool
) -> None:
    """The handler loop over new, increasing dicts (the only per-event Python work).

    The counters, ``last_seq`` and ``last_ts`` are kept for the whole run at once: no
    handler reads them. They are done after the loop, except for a run whose handler
    changes them (``count_first``). If a handler raises (a bug, not a malformed body),
    the events up to and including the failing one are counted, and the marks stop
    before it.
    """
    if not run:
        return
    facts = state.facts
    if count_first:
        _count(state, run, types)
    done = 0
    try:
        for d, t in zip(run, types, strict=True):
            causes = d.get("causes")
            if causes:
                _note_causes(state, d["agent"], causes)
            if "author" in d and d["author"] != d["agent"]:
                t = FORGED  # published as another agent: refused (authz.FORGED)
            handler = HANDLERS.get(t)
            if handler is not None:  # a type the fold does not know is only counted
                if "redacted" in d and t != FORGED and is_tombstone(d):  # erased (erasure.py)
                    handler = on_tombstone
                try:
                    handler(state, d)
                except _MALFORMED:
                    bump(state.metrics.ignored, "malformed")
            key = d.get("key")
            if key is not None:  # the fold's versions follow the log's CAS index
                f = facts.get(key)
                if f is not None:
                    f.version = d["seq"]
                elif key == _SYNTH_KEY:
                    state.synth_version = d["seq"]
            done += 1
    finally:
        n = len(run)
        if not count_first:
            if done == n:
                _count(state, run, types)
            else:
                _count(state, run[: done + 1], types[: done + 1])
        folded = run if done == n else run[:done]
        if folded:
            state.last_seq = folded[-1]["seq"]
            ts = max(_fast.column(folded, "ts"))
            if ts > state.last_ts:
                state.last_ts = ts


def fold(events: Iterable[Event], state: SwarmState | None = None) -> SwarmState:
    """Fold ``events`` (in seq order) into ``state`` or a fresh default state."""
    s = state if state is not None else SwarmState()
    return fold_dicts(s, (ev.envelope for ev in events))
