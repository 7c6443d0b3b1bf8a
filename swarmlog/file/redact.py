"""FileLog.redact: rewrite the segments (and archives) that hold the given seqs.

Each affected file is rewritten whole: the new bytes (records redacted by
``redaction.redact_line``, every other record byte for byte) go to a temporary file in the
same directory, which is fsynced, renamed over the old name, and the directory fsynced.
So a crash at any point leaves every file either old or new, never torn, and re-running
the same redaction finishes the job (a record already redacted is left alone). Stale
temporary files of a killed run hold original bytes: every run deletes them first.

All of it happens under the append lock (and compaction's lock), so no writer appends
meanwhile. Processes that hold a descriptor of an old file find out:

* a writer's descriptor of the current segment points at the old inode. Before the rename
  a single zero byte is appended to the old file: the writer's cheap "nothing changed"
  check (file size = its end) fails, and its slow path sees the file unlinked
  (``st_nlink == 0``) and rescans the segment under its new name (``reopen``). If the
  redaction dies before its rename, the zero byte is an ordinary torn tail that the next
  writer cuts (and ``repairs.jsonl`` records).
* readers' cached descriptors (segfiles.py) and followers check ``st_nlink`` too and
  reopen by name, so a re-read sees the redacted records; a follower yields only
  records it read before the rename.

Archives (archive.py) are rewritten under a new file name and the manifest is switched
to it atomically before the old file is deleted, so the manifest's checksum always
matches the file it names.
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import signal
from typing import TYPE_CHECKING, Any

import orjson

from swarmlog.errors import SwarmlogError
from swarmlog.file import archive, lockfile, tmpclean
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import fsync_dir, open_nofollow, read_nofollow
from swarmlog.file.view import slotfile
from swarmlog.file.view.state import FileState
from swarmlog.redaction import check_changes, redact_line, renames_index

if TYPE_CHECKING:
    from collections.abc import Mapping


TMP_SUFFIX = ".redact.tmp"
CRASH_ENV = "SWARMLOG_TEST_CRASH_AT"
"""Test hook: a positive number N makes the process SIGKILL itself at its Nth durable
step of an erasure (a real kill -9 at a chosen point; tests/test_forget_crash.py)."""

_steps = 0


def step() -> None:
    """Count one durable step; die here (SIGKILL) if the crash test asks for this one."""
    global _steps
    at = os.environ.get(CRASH_ENV)
    if not at:
        return
    _steps += 1
    if _steps == int(at):
        os.kill(os.getpid(), signal.SIGKILL)


def redact(log: FileState, changes: Mapping[int, Mapping[str, Any] | None]) -> int:
    """``FileLog.redact`` (see ``Log.redact`` and the module docstring)."""
    todo = check_changes(changes)
    if not todo:
        return 0
    log.check_writable()
    root = log._root_s
    with lockfile.operator_lock(root), log._tlock, log._locked(write=True):
        log._catch_up(locked=True)
        past = [q for q in todo if q > log._end.last]
        if past:
            raise SwarmlogError(f"redact: seq {min(past)} is past the end of the log")
        clean_tmp(log)
        if renames_index(todo):
            drop_indexes(root)
        n = _archives(root, todo)
        firsts = seg.list_segments(log._segdir_s)
        groups: dict[int, dict[int, Any]] = {}
        for q, body in todo.items():
            i = bisect.bisect_right(firsts, q) - 1
            if i >= 0:
                groups.setdefault(firsts[i], {})[q] = body
        for first in sorted(groups):
            n += _segment(log, first, groups[first], first == firsts[-1])
        if n:
            _bump(root)
        return n


COUNT_FILE = "redactions"
"""The root's file holding ``FileLog.redactions()`` (absent: 0)."""


def count(root: str) -> int:
    """The redaction count kept in ``root`` (0 when there is none or it is unreadable:
    the count only gates reloads, and a reader that sees it move reloads anyway)."""
    try:
        return int(read_nofollow(os.path.join(root, COUNT_FILE))[:32] or b"0")
    except (OSError, ValueError):
        return 0


def _bump(root: str) -> None:
    """Raise the count by one (temporary file, fsync, rename: never half-written)."""
    archive.write_atomic(root, COUNT_FILE, b"%d\n" % (count(root) + 1))


def clean_tmp(log: FileState) -> int:
    """Delete temporary files a killed redaction left (they hold original bytes), and
    those of a killed compaction (archives and ids files: records too; tmpclean.py)."""
    n = tmpclean.clean(log._root_s, locked=True, appending=True)
    for d in (log._segdir_s, os.path.join(log._root_s, archive.ARCHIVE)):
        try:
            names = os.listdir(d)
        except FileNotFoundError:
            continue
        for name in names:
            if name.startswith(".") and name.endswith(TMP_SUFFIX):
                try:
                    os.unlink(os.path.join(d, name))
                    n += 1
                except FileNotFoundError:
                    pass
    return n


def _rewrite(data: bytes, sub: dict[int, Any]) -> tuple[bytes, int]:
    """``data`` (complete record lines) with the records of ``sub`` redacted."""
    lines = data.split(b"\n")
    tail = lines.pop()
    n = 0
    for i, line in enumerate(lines):
        q = seg.record_seq(line)
        if q is not None and q in sub:
            new = redact_line(line + b"\n", sub[q], len(line) + 1)
            if new is not None:
                lines[i] = new[:-1]
                n += 1
    if not n:
        return data, 0
    return b"\n".join(lines) + b"\n" + tail, n


INDEX_FILES = ("index", "view.idx", "view.json")
"""The root's files that index records by id and key: the shared writer index
(view/writerindex.py ``NAME``) and the writer-view snapshot (view/snapshot.py ``NAME``,
``OLD_NAME``). Named here, not imported: the view imports this module."""
_RETIRED_AT = 16
"""Offset of the writer index's ``retired`` word (u64, little-endian; writerindex.py)."""


def drop_indexes(root: str) -> None:
    """Before a redaction renames event ids or keys (under the append lock): retire the
    shared writer index and delete it and the view snapshot, so that no file keeps the
    old strings and every writer's next append rebuilds its view from the rewritten
    records (a writer holding the index mapped finds it retired and reopens it by name;
    the new, empty one is untrusted and rebuilt). Done first, so that a redaction killed
    half way leaves no index to trust; a re-run drops them again. The redaction count
    moves first of all, so a writer that copied its view before this does not save it
    after, and one whose save raced this (checked the count before it moved, renamed its
    file after the deletion) finds it moved and deletes what it wrote (view/index.py).
    Slots of flat combining that no live writer holds are wiped (``slotfile.scrub_dead``)."""
    _bump(root)
    for name in INDEX_FILES:
        path = os.path.join(root, name)
        if name == INDEX_FILES[0]:
            try:
                fd = open_nofollow(path, os.O_RDWR)
            except FileNotFoundError:
                continue
            try:
                if os.fstat(fd).st_size >= _RETIRED_AT + 8:
                    os.pwrite(fd, (1).to_bytes(8, "little"), _RETIRED_AT)
            finally:
                os.close(fd)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
    slotfile.scrub_dead(root)  # (flat combining's slots: a dead writer's post)
    fsync_dir(root)
    step()


def _ids_of(data: bytes, first: int, name: str) -> bytes:
    """An ids file (compact.py's format) for the archived segment bytes ``data``."""
    ids: list[str] = []
    keys: dict[str, int] = {}
    for recs in archive.records(data, first, name):
        for d in recs:
            ids.append(d["id"])
            k = d.get("key")
            if k is not None:
                keys[k] = d["seq"]
    return archive.pack(orjson.dumps({"ids": ids, "keys": keys}))


def _write_tmp(directory: str, name: str, data: bytes) -> str:
    tmp = os.path.join(directory, f".{name}{TMP_SUFFIX}")
    archive.write_synced(tmp, data)
    step()
    return tmp


def _segment(log: FileState, first: int, sub: dict[int, Any], current: bool) -> int:
    """Rewrite one segment; ``current``: the last one, which writers hold open."""
    name = seg.segment_name(first)
    path = os.path.join(log._segdir_s, name)
    data = read_nofollow(path)
    new, n = _rewrite(data, sub)
    if not n:
        return 0
    tmp = _write_tmp(log._segdir_s, name, new)
    if current:  # make writers holding the old inode leave their fast path (docstring)
        fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, b"\0")
        finally:
            os.close(fd)
        step()
    os.replace(tmp, path)
    step()
    fsync_dir(log._segdir_s)
    step()
    log._hints.pop(first, None)
    if first == log._end.seg_first:
        # this handle's view is caught up: same seqs, ids, keys and chain tip; only the
        # file (and its size: redacted records never shrink, they may grow) is new
        log._end.close_segment()  # (then the new file: the handle's own, opened next)
        log._end.reopened(open_nofollow(path, os.O_WRONLY | os.O_APPEND), len(new))
    return n


def reopen(log: FileState, locked: bool) -> bool:
    """FileLog hook: the writer view's segment was replaced under it (a redaction), so
    scan it again under its name; False if no file has that name (compaction's case)."""
    if not os.path.exists(os.path.join(log._segdir_s, seg.segment_name(log._end.seg_first))):
        return False
    _rescan(log, locked)
    return True


def _rescan(log: FileState, locked: bool) -> None:
    """Read the writer view's current segment again from its start (same seqs, ids and
    keys; new offsets)."""
    log._end.reset(log._end.seg_first)
    log._hints.pop(log._end.seg_first, None)
    log._catch_up_once(locked)
    log._end.offs_new()


def _archives(root: str, todo: dict[int, Any]) -> int:
    """Redact the records of ``todo`` that live in archives; returns how many."""
    try:
        m = archive.load(root)
    except SwarmlogError:
        raise
    n = 0
    adir = os.path.join(root, archive.ARCHIVE)
    for e in list(m.entries):
        _orphans(adir, e)
        sub = {q: b for q, b in todo.items() if e.first <= q <= e.last}
        if not sub or not e.archived:
            continue  # (a deleted segment's records are gone already)
        data = archive.archived_bytes(root, e)
        new, k = _rewrite(data, sub)
        if not k:
            continue
        packed = archive.pack(new)
        gen = _generation(e) + 1
        fname = f"{e.first:020d}.r{gen}.jsonl.gz"
        tmp = _write_tmp(adir, fname, packed)
        os.replace(tmp, os.path.join(adir, fname))
        ids_file, ids_sum = e.ids_file, e.ids_checksum
        if renames_index(sub):  # (its ids file names them too: a new one, switched with it)
            ids_data = _ids_of(new, e.first, fname)
            ids_file = f"{e.first:020d}.r{gen}.ids.gz"
            tmp = _write_tmp(adir, ids_file, ids_data)
            os.replace(tmp, os.path.join(adir, ids_file))
            ids_sum = archive.checksum(ids_data)
        fsync_dir(adir)
        step()
        ne = dataclasses.replace(
            e,
            raw_bytes=len(new),
            ids_checksum=ids_sum,
            bytes=len(packed),
            checksum=archive.checksum(packed),
            file=fname,
            ids_file=ids_file,
        )
        m.put(ne)
        archive.save(root, m)
        step()
        _orphans(adir, ne)
        n += k
    return n


def _generation(e: archive.Entry) -> int:
    """How many times an archive was rewritten (from its file name ``<first>.r<k>…``)."""
    part = e.file.split(".")[1] if e.file else ""
    return int(part[1:]) if part.startswith("r") and part[1:].isdigit() else 0


def _orphans(adir: str, e: archive.Entry) -> None:
    """Delete archive files of ``e``'s segment that the manifest no longer names."""
    keep = (archive.archive_file(e), archive.ids_file(e))
    prefix = f"{e.first:020d}."
    try:
        names = os.listdir(adir)
    except FileNotFoundError:
        return
    for name in names:
        if name.startswith(prefix) and name.endswith((".jsonl.gz", ".ids.gz")) and name not in keep:
            try:
                os.unlink(os.path.join(adir, name))
            except FileNotFoundError:
                pass


__all__ = ["CRASH_ENV", "clean_tmp", "redact", "reopen", "step"]
