"""Storing a folded state as a checkpoint, unless the log was redacted since its fold.

Here, on the checkpoints' floor, so that the writer (``writer.py``) and the vector side
files (``vectors.py``) store checkpoints without importing the loader above them
(``synthesizer/replay.py``, which re-exports these names for its callers).
"""

from __future__ import annotations

from swarmlog import CheckpointInfo, Log
from swarmlog.errors import SwarmlogError
from synthesizer.state import SwarmState, payload
from synthesizer.state.payload import CHECKPOINT_FORMAT

__all__ = ["ErasedSince", "save_checkpoint", "save_checkpoint_info"]


class ErasedSince(SwarmlogError):
    """A state about to be checkpointed was folded from records redacted since: it may
    hold erased words, so it is not stored (fold anew from the log and try again)."""


def save_checkpoint(log: Log, state: SwarmState, pinned: bool = False) -> int:
    """Store the state as a checkpoint at its last seq; returns that seq.

    Keeps the newest ``synthesizer.checkpoint_keep`` checkpoints (plus pinned ones, which
    retention never deletes); raises CheckpointNotWritten if it cannot store it.
    """
    return save_checkpoint_info(log, state, pinned).seq


def save_checkpoint_info(
    log: Log, state: SwarmState, pinned: bool = False, side: dict[str, str] | None = None
) -> CheckpointInfo:
    """``save_checkpoint``, returning what the store recorded (its identity); ``side``:
    the side files written for it (name -> SHA-256, ``vectors.checkpoint``).

    Raises ErasedSince, storing nothing, when the log was redacted after the state's fold
    began (``state.redactions``): the state may hold words that are gone from the log. A
    redaction finishing while the checkpoint is written deletes it again; one finishing
    later deletes it itself (a forget drops the checkpoints after its first seq).
    """
    before = log.redactions()
    if state.redactions is not None and before != state.redactions:
        raise ErasedSince(
            f"the log was redacted after this state was folded (redactions {state.redactions}"
            f" -> {before}): not checkpointed; fold anew from the log"
        )
    info = log.checkpoints.save(
        state.last_seq,
        payload.encode(state),
        CHECKPOINT_FORMAT,
        state.config.digest(),
        pinned=pinned,
        keep=state.config.synthesizer.checkpoint_keep,
        side=side,
    )
    if log.redactions() != before:
        log.checkpoints.delete(info)
        raise ErasedSince(
            "the log was redacted while this state was checkpointed: checkpoint dropped;"
            " fold anew from the log"
        )
    return info
