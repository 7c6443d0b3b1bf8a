"""Loading a state: newest valid checkpoint at or below the target, then fold the rest.

``state_at(log, at_seq=k)`` equals the fold of the first k events whatever checkpoint it
starts from (the determinism contract); ``at_time=T`` targets the last event (in seq
order) whose ``ts`` is at most T. Storing one is ``synthesizer/checkpoints/save.py``'s
(``save_checkpoint``, ``ErasedSince``: re-exported here for callers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from swarmlog import CheckpointInfo, Log
from swarmlog.checkpoint import skip
from swarmlog.file import RetentionError
from synthesizer.checkpoints import check
from synthesizer.checkpoints.save import ErasedSince, save_checkpoint, save_checkpoint_info
from synthesizer.errors import InvalidOption
from synthesizer.retention import CHECKPOINT_FORMAT, oldest_readable
from synthesizer.state import SwarmState, fold_dicts
from synthesizer.state._fast import paused_gc

__all__ = [
    "CHECKPOINT_FORMAT",
    "ErasedSince",
    "fold_into",
    "load_checkpoint",
    "save_checkpoint",
    "save_checkpoint_info",
    "seq_at_time",
    "state_at",
]


def stamp(state: SwarmState, log: Log) -> None:
    """Note the log's redaction count as the state's fold begins (once per state)."""
    if state.redactions is None:
        state.redactions = log.redactions()


def seq_at_time(log: Log, at_time: float) -> int:
    """Seq of the last event with ``ts <= at_time`` (0 if none): one pass over the log.

    On a log whose oldest history was deleted by retention, a time before what is left
    is a RetentionError naming the oldest seq and time still there.
    """
    start = oldest_readable(log)
    best = 0
    for ev in log.read(start):
        if ev.ts <= at_time:
            best = ev.seq or best
        elif best == 0 and start > 1:
            raise RetentionError(
                f"time {at_time} is before the retained window; oldest available: "
                f"seq {ev.seq} (ts {ev.ts:.3f})"
            )
    return best


def load_checkpoint(log: Log, at_or_below: int | None = None) -> SwarmState | None:
    """The state of the newest usable checkpoint at or below a seq (None: fold from 1)."""
    found = load_checkpoint_info(log, at_or_below)
    return None if found is None else found[0]


def load_checkpoint_info(
    log: Log, at_or_below: int | None = None
) -> tuple[SwarmState, CheckpointInfo] | None:
    """The state of the newest usable checkpoint at or below a seq, and its info.

    The store skips foreign, stale and corrupt checkpoints; one whose payload does not
    decode (or decodes to another seq than its header's) is skipped here the same way,
    with a one-line warning, and the next older one is tried. A checkpoint's state
    carries the configuration it was folded under (and the seq of the
    ``swarm.configured`` that set it), so a checkpoint of any configuration the log has
    had loads. One folded under a caller's own configuration (written before the
    configuration lived in the log: no ``swarm.configured`` behind it, yet not the
    defaults) is not the log's state and is passed over too.
    """
    mark = log.redactions()  # before reading: a redaction after it makes the state stale
    for ck in log.checkpoints.candidates(at_or_below, CHECKPOINT_FORMAT):
        state, why = check.decode(ck)
        if state is None:
            skip(ck.info.name, why)
            continue
        state.redactions = mark
        return state, ck.info
    return None


def fold_into(
    state: SwarmState,
    log: Log,
    to_seq: int | None = None,
    observe: Callable[[list[dict[str, Any]]], None] | None = None,
) -> SwarmState:
    """Fold the log's events after ``state.last_seq`` (up to ``to_seq``) into ``state``;
    ``observe`` is handed each folded batch (a FactIndex keeps its columns current)."""
    if to_seq is not None and to_seq <= state.last_seq:
        return state
    start = state.last_seq + 1
    stamp(state, log)
    with paused_gc():
        for batch in log.read_batches(start, to_seq):
            fold_dicts(state, batch)
            if observe is not None:
                observe(batch)
    return state


def state_at(
    log: Log,
    at_seq: int | None = None,
    at_time: float | None = None,
    from_start: bool = False,
) -> SwarmState:
    """The swarm's state at a seq or a time (default: now), from a checkpoint unless told not.

    Folded under the log's own configuration (its ``swarm.configured`` events).
    """
    if at_seq is not None and at_time is not None:
        raise ValueError("give at_seq or at_time, not both")
    if at_seq is not None and at_seq < 0:
        raise ValueError(f"at_seq must be >= 0, got {at_seq}")
    if at_seq is not None and at_seq > log.last_seq:
        raise InvalidOption(f"seq {at_seq} is past the end of the log (last seq {log.last_seq})")
    target = seq_at_time(log, at_time) if at_time is not None else at_seq
    state = None if from_start else load_checkpoint(log, target)
    if state is None:
        state = SwarmState()
    return fold_into(state, log, target)
