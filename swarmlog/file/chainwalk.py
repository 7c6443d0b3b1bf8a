"""The hash chain over a FileLog's whole history: archives, then segments (tamper evidence).

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
        entries = []  # (verify.py reported it)
    try:
        key = archive.chain_key()
    except SwarmlogError as e:
        rep.problems.append(str(e))
        key = None
    links = _Links(key)
    for ent in entries:
        if ent.first >= window:
            continue
        covered = max(covered, ent.last)
        links.check(ent, rep)
        if not ent.archived:
            if ent.chain and ent.link:  # vouched for: the next record links to its cut
                w.resume(ent.chain.encode(), ent.last)
                start = False
            else:
                rep.problems.append(
                    f"retention manifest: seqs {ent.first}..{ent.last} are recorded as"
                    " deleted with no chain value and link: nothing vouches for that"
                    " history (a manifest written by hand, or before it was chained)"
                )
                start = True
            continue
        try:
            data = archive.archived_bytes(root, ent)
        except SwarmlogError:
            start = True  # (verify.py reported it)
            continue
        w.feed(data, start)
        start = False
        if w.broken is not None:
            _broken(rep, w, f" in archive {archive.archive_file(ent)}")
            return
        if ent.chain and w.head != ent.chain.encode():
            rep.problems.append(
                f"retention manifest: the archive of seqs {ent.first}..{ent.last} ends at"
                f" chain value {w.head.decode()}, the manifest says {ent.chain} (edited)"
            )
    if links.legacy:
        rep.notes.append(
            f"retention manifest: {links.legacy} archived entr(y/ies) predate its chain"
            " (their records are chain-walked all the same)"
        )
    if links.unchecked:
        rep.notes.append(
            f"retention manifest: {links.unchecked} keyed link(s) not checked: set"
            f" {archive.KEY_ENV} or {archive.KEY_FILE_ENV} (verify --key)"
        )
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


class _Links:
    """The retention manifest's own chain: each entry's link must be the hash of the
    previous entry's link and the entry (``archive.entry_link``), keyed where it says so.
    Without the key a keyed link cannot be checked (counted in ``unchecked``)."""

    def __init__(self, key: bytes | None) -> None:
        self.key = key
        self.prev = ""
        self.legacy = 0
        self.unchecked = 0

    def check(self, ent: archive.Entry, rep: VerifyReport) -> None:
        prev, self.prev = self.prev, ent.link
        if not ent.link:
            self.legacy += ent.archived  # (a deleted one is a problem: verify_all)
            return
        keyed = ent.link.startswith(archive.KEYED)
        if keyed and self.key is None:
            self.unchecked += 1
            return
        if ent.link != archive.entry_link(prev, ent, self.key if keyed else None):
            rep.problems.append(
                f"retention manifest: the entry for seqs {ent.first}..{ent.last} does not"
                " link to the one before it (the manifest was edited"
                + (", or the chain key is not the one it was written with)" if keyed else ")")
            )


__all__ = ["verify_all"]
