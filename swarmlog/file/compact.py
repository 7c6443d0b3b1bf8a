"""Compaction of a FileLog: segments wholly before a retention point leave ``segments/``.

The log layer knows nothing of retention policies: the caller (the synthesizer's
``retention`` module, the CLI) computes a retention point (a seq) and a mode, and
``compact`` moves every segment whose last seq is at or before it — never the segment
being written, and never past the newest checkpoint, so the state stays reconstructible
— into ``archive/`` (mode "archive") or drops it keeping only its ids (mode "delete").

Order of a segment's compaction (see archive.py for the files), each step durable before
the next, so kill -9 anywhere leaves a log that verifies and a re-run that completes:
ids file, then archive, then the manifest entry, then the segment's unlink. A re-run
redoes a segment that is still in ``segments/`` from scratch (files are overwritten).
Compactions are serialized by ``compact.lock``; appenders and readers never wait on it.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import orjson

from swarmlog import chain as hashchain
from swarmlog.contract import Log
from swarmlog.errors import SwarmlogError
from swarmlog.file import archive, lockfile, tmpclean
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import fsync_dir, read_nofollow
from swarmlog.file.log import FileLog


def compactable(log: Log) -> TypeGuard[FileLog]:
    """``log.compactable()`` (see ``Log.compactable``), for callers that then compact it."""
    return log.compactable()


@dataclass(frozen=True)
class Span:
    """One segment: its seqs, size on disk, and the ts of its last record."""

    first: int
    last: int
    bytes: int
    last_ts: float


@dataclass
class Result:
    """What a compaction did (or, dry run, would do)."""

    point: int
    mode: str
    dry_run: bool
    segments: list[Span] = field(default_factory=list)
    freed: int = 0
    """Bytes of segments removed (would be, on a dry run)."""
    archived: int = 0
    """Bytes the archives written take (0 on a dry run or with mode "delete")."""
    first_seq: int = 1
    """First seq left in segments afterwards."""
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "point": self.point,
            "mode": self.mode,
            "dry_run": self.dry_run,
            "segments": [s.__dict__ for s in self.segments],
            "freed_bytes": self.freed,
            "archive_bytes": self.archived,
            "first_seq": self.first_seq,
            "seconds": round(self.seconds, 4),
        }


def spans(log: FileLog) -> list[Span]:
    """Every segment but the one being written (the ones compaction may take), oldest first."""
    firsts = seg.list_segments(log.segdir)
    out = []
    for first, nxt in itertools.pairwise(firsts):
        try:
            size = os.stat(os.path.join(log.segdir, seg.segment_name(first))).st_size
        except FileNotFoundError:
            continue  # compacted meanwhile
        last = list(log.read_batches(nxt - 1, nxt - 1))
        ts = float(last[0][-1]["ts"]) if last and last[0] else 0.0
        out.append(Span(first, nxt - 1, size, ts))
    return out


def eligible(log: FileLog, point: int) -> list[Span]:
    """Segments wholly at or before ``point`` and at or before the newest checkpoint at
    or before it that loads (this log's identity and record at its seq, its checksum;
    a header alone proves nothing: a rotted or foreign one is passed over)."""
    ck = log.checkpoints.latest(point) if point > 0 else None
    limit = 0 if ck is None else ck.seq
    return [s for s in spans(log) if s.last <= limit]


def compact(log: FileLog, point: int, mode: str = "archive", dry_run: bool = False) -> Result:
    """Compact segments up to ``point`` (see module docstring); ``dry_run`` changes nothing."""
    if mode not in archive.MODES:
        raise ValueError(f"mode must be one of {', '.join(archive.MODES)}, not {mode!r}")
    if point < 0:
        raise ValueError(f"retention point must be >= 0, got {point}")
    t0 = time.perf_counter()
    res = Result(point, mode, dry_run)
    if dry_run:
        res.segments = eligible(log, point)
        res.freed = sum(s.bytes for s in res.segments)
        firsts = seg.list_segments(log.segdir)
        res.first_seq = res.segments[-1].last + 1 if res.segments else (firsts or [1])[0]
        res.seconds = time.perf_counter() - t0
        return res
    log.check_writable()
    root = os.fspath(log.root)
    with lockfile.operator_lock(root):
        tmpclean.clean(root, locked=True)  # a killed compaction's temporaries
        os.makedirs(os.path.join(root, archive.ARCHIVE), exist_ok=True)
        for span in eligible(log, point):
            res.archived += _compact_one(log, root, span, mode)
            res.segments.append(span)
            res.freed += span.bytes
        firsts = seg.list_segments(log.segdir)
        res.first_seq = firsts[0] if firsts else 1
    res.seconds = time.perf_counter() - t0
    return res


def _cut_value(raw: bytes) -> str:
    """The chain value of the segment's last record (the manifest keeps it: a deleted
    range is then vouched for by the next record's link); empty for an unchained one."""
    last = raw.rstrip(b"\n").rpartition(b"\n")[2]
    parts = hashchain.stored(last)
    return parts[1].decode() if parts is not None else ""


def _compact_one(log: FileLog, root: str, span: Span, mode: str) -> int:
    """Archive (or drop) one segment, durably, then unlink it; returns the archive's size."""
    name = seg.segment_name(span.first)
    path = os.path.join(log.segdir, name)
    raw = read_nofollow(path)
    ids: list[str] = []
    keys: dict[str, int] = {}
    first_ts = last_ts = 0.0
    for recs in archive.records(raw, span.first, name):
        if not ids:
            first_ts = float(recs[0]["ts"])
        last_ts = float(recs[-1]["ts"])
        for d in recs:
            ids.append(d["id"])
            k = d.get("key")
            if k is not None:
                keys[k] = d["seq"]
    if len(ids) != span.last - span.first + 1:
        raise archive.ArchiveCorrupt(
            f"{name}: holds {len(ids)} events, expected seqs {span.first}..{span.last}"
        )
    adir = os.path.join(root, archive.ARCHIVE)
    ids_data = archive.pack(orjson.dumps({"ids": ids, "keys": keys}))
    archive.write_atomic(adir, archive.ids_name(span.first), ids_data)
    packed = b""
    if mode == "archive":
        packed = archive.pack(raw)
        archive.write_atomic(adir, archive.archive_name(span.first), packed)
    m = archive.load(root)
    ent = archive.Entry(
        span.first,
        span.last,
        mode,
        len(raw),
        archive.checksum(ids_data),
        first_ts,
        last_ts,
        len(packed),
        archive.checksum(packed) if packed else "",
        chain=_cut_value(raw),
    )
    before = [e.link for e in m.entries if e.first < span.first]
    link = archive.entry_link(before[-1] if before else "", ent, archive.chain_key())
    m.put(dataclasses.replace(ent, link=link))
    nxt = span.last + 1
    if m.first_seq <= nxt:
        m.first_seq = nxt
        head = next(iter(log.read_batches(nxt, nxt)), [])
        m.first_ts = float(head[0]["ts"]) if head else None
    archive.save(root, m)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fsync_dir(log.segdir)
    return len(packed)


def retained_first(log: FileLog) -> int:
    """First seq still in segments (1 if nothing was compacted)."""
    firsts = seg.list_segments(log.segdir)
    return firsts[0] if firsts else 1


__all__ = ["Result", "Span", "SwarmlogError", "compact", "eligible", "retained_first", "spans"]
