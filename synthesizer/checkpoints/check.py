"""Whether a swarm-state checkpoint *loads*: what retention may trust and verify reports.

A checkpoint header says a seq; only a checkpoint that loads proves the state there can
be rebuilt without the raw history before it. Loading means: this log's identity, the
record it was taken after still at its seq, the payload's checksum, a payload this
version decodes to a state at that seq under a configuration the log recorded, and its
side files (vectors, codes) hashing to what it recorded, where they are present (a
missing one only costs an embedding). Retention (retention.py) chooses its boundary
from such checkpoints only, so a rotted or foreign newest checkpoint can no longer make
``swarmlog compact`` delete history nothing else holds (docs/faults.md, checkpoints).
"""

from __future__ import annotations

from pathlib import Path

from swarmlog import CheckpointInfo, Log, SwarmlogError, sidefile
from swarmlog.checkpoint import Checkpoint
from synthesizer.config import DEFAULT_CONFIG
from synthesizer.state import SwarmState, payload


def decode(ck: Checkpoint) -> tuple[SwarmState | None, str]:
    """The state of a checksum-verified checkpoint, or (None, why it is not usable)."""
    try:
        state = payload.decode(ck.data)  # fact rows parsed on first access
    except Exception as e:  # any decoding failure: the payload is not this version's
        return None, f"its payload does not decode ({type(e).__name__}: {e})"
    if state.last_seq != ck.seq:
        return None, f"its payload is at seq {state.last_seq}, its header at {ck.seq}"
    if not (state.config_seq or state.config == DEFAULT_CONFIG):
        return None, "folded under a configuration the log never recorded"
    return state, ""


def side_problem(directory: Path | None, info: CheckpointInfo) -> str | None:
    """Why a side file ``info`` names, present in ``directory``, is not what it recorded."""
    if directory is None:
        return None
    for name, digest in info.side_files().items():
        path = directory / name
        if not path.exists():
            continue  # never written, or discarded: readers embed instead
        why = sidefile.problem(path, digest, full=True)  # verify hashes every byte
        if why is not None:
            return f"side file {name}: {why}"
    return None


def problem(log: Log, info: CheckpointInfo) -> str | None:
    """Why the swarm-state checkpoint ``info`` does not load (None: it does)."""
    store = log.checkpoints
    try:
        why = store.problem(info)
        if why is not None:
            return why
        ck = store.load(info)
    except (SwarmlogError, OSError) as e:
        return str(e).removeprefix(f"checkpoint {info.name}: ")
    state, why = decode(ck)
    if state is None:
        return why
    return side_problem(store.local_dir(), info)


def newest_loading(
    log: Log, at_or_below: int, fmt: str = payload.CHECKPOINT_FORMAT
) -> tuple[int, list[str]]:
    """(seq of the newest checkpoint at or below ``at_or_below`` that loads, 0 if none;
    "<name>: <why>" of each newer one that does not)."""
    skipped: list[str] = []
    for info in reversed(log.checkpoints.list()):
        if info.seq > at_or_below or info.format != fmt:
            continue
        why = problem(log, info)
        if why is None:
            return info.seq, skipped
        skipped.append(f"{info.name}: {why}")
    return 0, skipped


def report(log: Log) -> tuple[list[str], list[str]]:
    """(problems, notes) of the swarm-state checkpoints, for ``swarmlog verify``.

    A checkpoint or side file whose bytes are not what was written (checksum) is a
    problem: rot on this disk. One of another swarm, one past the log's end or one that
    does not decode is a note: it is skipped, and says nothing of this disk.
    """
    problems: list[str] = []
    notes: list[str] = []
    for info in log.checkpoints.list():
        if info.format != payload.CHECKPOINT_FORMAT:
            continue
        why = problem(log, info)
        if why is None:
            continue
        line = f"checkpoint {info.name}: {why} (not used)"
        rot = "checksum mismatch" in why or "truncated or padded" in why
        (problems if rot else notes).append(line)
    return problems, notes
