"""Loading a state: newest valid checkpoint at or below the target, then fold the rest.

``state_at(log, at_seq=k)`` equals the fold of the first k events whatever checkpoint it
starts from (the determinism contract); ``at_time=T`` targets the last event (in seq
order) whose ``ts`` is at most T.
"""

from __future__ import annotations

from swarmlog import Log

from .bulk import paused_gc
from .configlog import log_config
from .state import FORMAT, SwarmState, apply, fold_dicts

CHECKPOINT_FORMAT = f"swarmstate/{FORMAT}"


def seq_at_time(log: Log, at_time: float) -> int:
    """Seq of the last event with ``ts <= at_time`` (0 if none): one pass over the log."""
    best = 0
    for ev in log.read(1):
        if ev.ts <= at_time:
            best = ev.seq or best
    return best


def load_checkpoint(log: Log, at_or_below: int | None = None) -> SwarmState | None:
    """The state of the newest usable checkpoint at or below a seq (None: fold from 1).

    A checkpoint's state carries the configuration it was folded under, so any
    configuration the log has had loads. One taken at or after the last
    ``swarm.configured`` must carry the configuration in force (its header's config
    digest): another one was folded under a caller's configuration, before the
    configuration lived in the log, and is passed over for an older one.
    """
    cur = log_config(log)
    digest = cur.config.digest()
    ck = log.checkpoints.latest(at_or_below, CHECKPOINT_FORMAT, digest)
    if cur.seq > 1 and (ck is None or ck.seq < cur.seq - 1):
        below = cur.seq - 1 if at_or_below is None else min(at_or_below, cur.seq - 1)
        older = log.checkpoints.latest(below, CHECKPOINT_FORMAT)
        if older is not None and (ck is None or older.seq > ck.seq):
            ck = older
    return None if ck is None else SwarmState.from_bytes(ck.data)


def fold_into(state: SwarmState, log: Log, to_seq: int | None = None) -> SwarmState:
    """Fold the log's events after ``state.last_seq`` (up to ``to_seq``) into ``state``."""
    if to_seq is not None and to_seq <= state.last_seq:
        return state
    start = state.last_seq + 1
    with paused_gc():
        batches = getattr(log, "read_batches", None)
        if batches is not None:  # stored dicts, no Event per record (FileLog)
            for batch in batches(start, to_seq):
                fold_dicts(state, batch)
        else:
            dicts = getattr(log, "read_dicts", None)
            if dicts is not None:
                fold_dicts(state, dicts(start, to_seq))
            else:
                for ev in log.read(start, to_seq):
                    apply(state, ev)
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
    target = seq_at_time(log, at_time) if at_time is not None else at_seq
    state = None if from_start else load_checkpoint(log, target)
    if state is None:
        state = SwarmState()
    return fold_into(state, log, target)


def save_checkpoint(log: Log, state: SwarmState) -> int:
    """Store the state as a checkpoint at its last seq; returns that seq."""
    log.checkpoints.save(state.last_seq, state.to_bytes(), CHECKPOINT_FORMAT, state.config.digest())
    return state.last_seq
