"""FileLog.verify: every segment's CRCs and seq order, then the archives behind them.

Archives (archive.py) are checked the same way a segment is, plus their checksums: the
manifest's entries must be contiguous from seq 1 up to the first segment, each ids file
and archive must match its checksum, an archive must hold exactly its seqs with valid
CRCs, and no event id may appear twice across archives and segments.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from swarmlog.contract import VerifyReport
from swarmlog.errors import SwarmlogError
from swarmlog.file import archive, repairs
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import open_nofollow
from swarmlog.file.verifyscan import check_segment


class _Dirs(Protocol):
    root: Path
    segdir: Path


def verify(log: _Dirs) -> VerifyReport:
    """The report of ``log.verify()`` (see module docstring)."""
    rep = VerifyReport()
    root = os.fspath(log.root)
    firsts = seg.list_segments(log.segdir)
    ids: set[str] = set()
    window = firsts[0] if firsts else 1
    _verify_archives(root, window, ids, rep)
    rep.segments = len(firsts)
    nxt = window
    for j, first in enumerate(firsts):
        name = seg.segment_name(first)
        if first != nxt:
            rep.problems.append(f"{name}: starts at seq {first}, expected {nxt} (gap)")
            nxt = first
        try:
            fd = open_nofollow(os.path.join(log.segdir, name), os.O_RDONLY)
        except FileNotFoundError:  # compacted while we listed (its archive came first)
            rep.notes.append(f"{name}: compacted during verify")
            continue
        except SwarmlogError as e:
            rep.problems.append(str(e))
            continue
        try:
            after = check_segment(
                fd, os.fstat(fd).st_size, nxt, name, ids, rep, j == len(firsts) - 1
            )
        finally:
            os.close(fd)
        if after is None:  # corrupt: the report holds the valid prefix
            if j < len(firsts) - 1:
                rep.notes.append(f"{len(firsts) - 1 - j} later segment(s) not checked")
            break
        nxt = after
    if rep.corruption is None:
        rep.last_seq = nxt - 1
    repairs.report(root, rep)
    return rep


def _verify_archives(root: str, window: int, ids: set[str], rep: VerifyReport) -> None:
    """Check the compacted entries below seq ``window``; their ids go into ``ids``."""
    try:
        m = archive.load(root)
    except SwarmlogError as err:
        rep.problems.append(str(err))
        return
    nxt = 1
    kept = deleted = 0
    for ent in m.entries:
        if ent.first >= window:  # compaction cut short: the segment is still there
            rep.notes.append(
                f"seq {ent.first}..{ent.last}: archived, segment not yet removed (re-run compact)"
            )
            continue
        if ent.first != nxt:
            rep.problems.append(f"archive: seq {ent.first}..{ent.last} follows seq {nxt - 1} (gap)")
        nxt = ent.last + 1
        try:
            got = archive.archived_ids(root, ent)["ids"]
            for s, i in enumerate(got, ent.first):
                if i in ids:
                    rep.problems.append(f"seq {s}: duplicate event id {i}")
                ids.add(i)
            if not ent.archived:
                deleted += len(got)
                continue
            name = archive.archive_name(ent.first)
            seqs = [
                d["id"]
                for recs in archive.records(archive.archived_bytes(root, ent), ent.first, name)
                for d in recs
            ]
            if seqs != got:
                rep.problems.append(f"archive {name}: its events differ from its ids file")
            kept += len(seqs)
        except (SwarmlogError, KeyError, TypeError, ValueError) as err:
            rep.problems.append(str(err))
    if m.entries and nxt < window:
        rep.problems.append(f"archive ends at seq {nxt - 1} but segments start at {window} (gap)")
    if m.entries:
        rep.notes.append(
            f"retention: {kept} events archived, {deleted} deleted (seq 1.."
            f"{window - 1}); segments from seq {window}"
        )
