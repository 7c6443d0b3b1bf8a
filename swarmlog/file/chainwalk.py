"""The hash chain over a FileLog's whole history: archives, then segments (issue 26).

``chain.verify_files`` walks the segments only, taking the first segment's link as given
when older segments were compacted. So an archived record could be edited (CRC and the
manifest's checksum fixed) without a trace, and deleting the oldest segments of a log
that was never compacted went unnoticed. Here the walk starts at seq 1: every archive
(mode ``archive``) is decompressed and walked in order, the segments continue the same
chain; only a range the retention manifest records as *deleted* (mode ``delete``) lets
the next record's link be taken as given. Segments that start past seq 1 with no
manifest entry accounting for the seqs before them are a problem, not a note.
"""

from __future__ import annotations

import os

from swarmlog.chain import Walk
from swarmlog.contract import VerifyReport
from swarmlog.errors import SwarmlogError
from swarmlog.file import archive


def _broken(rep: VerifyReport, w: Walk, where: str) -> None:
    rep.problems.append(
        f"seq {w.broken}: hash chain broken{where} (this record or one before it was"
        " changed, inserted or removed after it was written)"
    )


def verify_all(root: str, segdir: str, names: list[str], window: int, rep: VerifyReport) -> None:
    """Walk the chain over the archives below seq ``window`` (the first segment's) and the
    segment files ``names`` into ``rep`` (as ``chain.verify_files`` does for segments)."""
    w = Walk()
    start = True
    covered = 0
    try:
        entries = archive.load(root).entries
    except SwarmlogError:
        entries = []  # (fileverify reported it)
    for ent in entries:
        if ent.first >= window:
            continue
        covered = max(covered, ent.last)
        if not ent.archived:
            start = True  # history deleted by retention: the next link is taken as given
            continue
        try:
            data = archive.archived_bytes(root, ent)
        except SwarmlogError:
            start = True  # (fileverify reported it)
            continue
        w.feed(data, start)
        start = False
        if w.broken is not None:
            _broken(rep, w, f" in archive {archive.archive_name(ent.first)}")
            return
    if window > 1 and covered < window - 1:
        rep.problems.append(
            f"seqs {covered + 1}..{window - 1} are missing: segments start at seq {window}"
            " and no retention manifest entry accounts for them (deleted by hand?)"
        )
    for j, name in enumerate(names):
        try:
            with open(os.path.join(segdir, name), "rb") as f:
                data = f.read()
        except OSError as e:
            rep.problems.append(f"{name}: unreadable for the hash chain: {e}")
            return
        w.feed(data, start and j == 0)
        start = False
        if w.broken is not None:
            _broken(rep, w, "")
            break
    if w.legacy:
        rep.notes.append(f"{w.legacy} record(s) at the start predate the hash chain")
    rep.head = w.head.decode()
    rep.head_seq = w.head_seq


__all__ = ["verify_all"]
