"""Loading a state: newest valid checkpoint at or below the target, then fold the rest.

``state_at(log, at_seq=k)`` equals the fold of the first k events whatever checkpoint it
starts from (the determinism contract); ``at_time=T`` targets the last event (in seq
order) whose ``ts`` is at most T.
"""

from __future__ import annotations

from swarmlog import Log

from .bulk import paused_gc
from .config import SynthConfig
from .state import FORMAT, SwarmState, apply, fold_dicts

CHECKPOINT_FORMAT = f"swarmstate/{FORMAT}"


def seq_at_time(log: Log, at_time: float) -> int:
    """Seq of the last event with ``ts <= at_time`` (0 if none): one pass over the log."""
    best = 0
    for ev in log.read(1):
        if ev.ts <= at_time:
            best = ev.seq or best
    return best


def load_checkpoint(
    log: Log, config: SynthConfig, at_or_below: int | None = None
) -> SwarmState | None:
    """The state of the newest valid checkpoint at or below a seq, for this config."""
    ck = log.checkpoints.latest(at_or_below, CHECKPOINT_FORMAT, config.digest())
    if ck is None:
        return None
    state = SwarmState.from_bytes(ck.data)
    state.config = config
    return state


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
    config: SynthConfig | None = None,
    at_seq: int | None = None,
    at_time: float | None = None,
    from_start: bool = False,
) -> SwarmState:
    """The swarm's state at a seq or a time (default: now), from a checkpoint unless told not."""
    cfg = config if config is not None else SynthConfig()
    if at_seq is not None and at_time is not None:
        raise ValueError("give at_seq or at_time, not both")
    if at_seq is not None and at_seq < 0:
        raise ValueError(f"at_seq must be >= 0, got {at_seq}")
    target = seq_at_time(log, at_time) if at_time is not None else at_seq
    state = None if from_start else load_checkpoint(log, cfg, target)
    if state is None:
        state = SwarmState(cfg)
    return fold_into(state, log, target)


def save_checkpoint(log: Log, state: SwarmState) -> int:
    """Store the state as a checkpoint at its last seq; returns that seq."""
    log.checkpoints.save(state.last_seq, state.to_bytes(), CHECKPOINT_FORMAT, state.config.digest())
    return state.last_seq
