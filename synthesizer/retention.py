"""The swarm's retention policy turned into a retention point, and compaction by it.

The policy lives in the swarm's configuration (``retention.*``, recorded in the log);
the log layer (``swarmlog.file.compact``) only knows a point and a mode. The point is the
furthest seq any rule lets go, moved back to the checkpoint at or before it, so the
raw history after the point plus that checkpoint always rebuild the state:

* ``keep_checkpoints=K``: the seq of the K-th newest checkpoint;
* ``max_age_days=N``: the end of the last segment whose events are all older than N days;
* ``max_bytes=M``: the end of the last segment that must go for segments to fit in M.

Only a checkpoint that *loads* (synthesizer/checkpoints/check.py: identity, recorded event,
checksum, a
payload that decodes, its side files) may be the point: a newer one that does not is
passed over and the point moves back to the newest that does; if none at or before the
point loads, nothing is compacted and ``NoLoadableCheckpoint`` says why. In mode
"delete" the point also stays before the newest loadable checkpoint, so the history
behind it is kept until a newer one loads: one rotted checkpoint never leaves a state
that nothing can rebuild.

Wall-clock time is used here (age), never in the fold. JetStream logs are bounded by
the stream's own limits instead (docs/retention.md).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from swarmlog import FileLog, Log, SwarmlogError
from swarmlog.file import list_segments, load_archives, segment_name
from synthesizer.checkpoints.check import newest_loading
from synthesizer.config import RetentionConfig
from synthesizer.configlog import log_config
from synthesizer.state.payload import CHECKPOINT_FORMAT

if TYPE_CHECKING:  # the compaction machinery loads when compacting (CLI start)
    from swarmlog.file import CompactResult as Result


class NoLoadableCheckpoint(SwarmlogError):
    """Retention wanted to compact, but no checkpoint at or before its point loads:
    nothing was compacted (the message names each checkpoint and why)."""


def checkpoint_seqs(log: Log) -> list[int]:
    """Seqs of the swarm-state checkpoints, oldest first (headers only)."""
    return sorted(i.seq for i in log.checkpoints.list() if i.format == CHECKPOINT_FORMAT)


def retention_point(log: FileLog, policy: RetentionConfig, now: float | None = None) -> int:
    """The seq up to which ``policy`` lets raw history go (0: nothing)."""
    if not policy.active:
        return 0
    ckpts = checkpoint_seqs(log)
    wanted = 0
    if policy.keep_checkpoints and len(ckpts) >= policy.keep_checkpoints:
        wanted = max(wanted, ckpts[-policy.keep_checkpoints])
    if policy.max_age_days or policy.max_bytes:
        from swarmlog.file import spans

        segs = spans(log)
        if policy.max_age_days:
            cutoff = (time.time() if now is None else now) - policy.max_age_days * 86400.0
            old = [s.last for s in segs if s.last_ts < cutoff]
            wanted = max(wanted, old[-1] if old else 0)
        if policy.max_bytes:
            total = sum(s.bytes for s in segs) + _head_bytes(log)
            for s in segs:
                if total <= policy.max_bytes:
                    break
                total -= s.bytes
                wanted = max(wanted, s.last)
    if wanted <= 0:
        return 0
    limit, why = wanted, ""
    if policy.mode == "delete":  # keep the history behind the newest loadable one
        newest, skipped = newest_loading(log, log.last_seq)
        if newest == 0:
            _refuse(wanted, skipped, "")
            return 0
        if newest <= limit:
            limit = newest - 1
            why = f" (mode delete keeps the history behind the newest that loads, seq {newest})"
    point, skipped = newest_loading(log, limit) if limit > 0 else (0, [])
    if point == 0:
        _refuse(limit, skipped, why)
    return point


def _refuse(at: int, skipped: list[str], why: str) -> None:
    """Raise NoLoadableCheckpoint naming each checkpoint passed over (none: nothing to say)."""
    if skipped:
        raise NoLoadableCheckpoint(
            f"nothing compacted: no checkpoint at or before seq {at} loads{why} ("
            + "; ".join(skipped)
            + "); the history is kept. Write a new checkpoint (swarmlog checkpoint) and "
            "run compact again"
        )


def _head_bytes(log: FileLog) -> int:
    """Size of the segment being written (never compacted, but counted against max_bytes)."""
    firsts = list_segments(log.segdir)
    if not firsts:
        return 0
    try:
        return (log.segdir / segment_name(firsts[-1])).stat().st_size
    except FileNotFoundError:
        return 0


def compact_swarm(log: Log, dry_run: bool = False, now: float | None = None) -> Result:
    """Compact ``log`` by the retention policy in its configuration (``swarmlog compact``)."""
    if not isinstance(log, FileLog):
        raise SwarmlogError(
            "compaction applies to a file log; a JetStream stream is bounded by its "
            "max_age/max_bytes limits (see docs/retention.md)"
        )
    return compact_by(log, log_config(log).config.retention, dry_run, now)


def compact_by(
    log: FileLog, policy: RetentionConfig, dry_run: bool = False, now: float | None = None
) -> Result:
    """Compact ``log`` by ``policy`` (the worker passes the configuration it folded)."""
    from swarmlog.file import compact_log as compact

    return compact(log, retention_point(log, policy, now), policy.mode, dry_run)


def oldest_readable(log: Log) -> int:
    """The oldest seq a read of ``log`` can still reach (1 unless history was deleted)."""
    if not isinstance(log, FileLog):
        return 1
    return load_archives(str(log.root)).oldest()[0]
