"""Archives of compacted segments, and the manifest saying where a log's history went.

Compaction (compact.py) takes whole segments out of ``segments/``. What it leaves::

    archive/<first seq>.jsonl.gz    the segment's bytes, gzip-compressed (mode "archive")
    archive/<first seq>.ids.gz      the segment's event ids and key versions (both modes)
    retention.json                  manifest: first retained seq and one entry per segment

An archive holds the segment byte for byte (records keep their CRCs), so reading one is
decompressing it and scanning it like a segment. The ids file keeps idempotency: a
writer whose view reaches past the retained window loads the ids of the archived range
into its id index (``skip``), as it would have by scanning the segment (same memory as
before compaction; ~15 bytes per event on disk). Every file here is written atomically
(temporary file, fsync, rename, fsync of the directory) and never through a symlink.
Seqs never move: a segment keeps its seqs in its archive.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

import orjson

from swarmlog.errors import SwarmlogError
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import fsync_dir, open_nofollow, read_nofollow
from swarmlog.file.view.state import FileState

ARCHIVE = "archive"
MANIFEST = "retention.json"
GZIP_LEVEL = 6
MODES = ("archive", "delete")


class RetentionError(SwarmlogError):
    """A read reached before the retained window where no archive holds the events."""


class ArchiveCorrupt(SwarmlogError):
    """The manifest, an archive or an ids file is missing, altered or unreadable."""


@dataclass(frozen=True)
class Entry:
    """One compacted segment: its seqs, what was kept of it and checksums to verify."""

    first: int
    last: int
    mode: str
    raw_bytes: int
    ids_checksum: str
    first_ts: float
    last_ts: float
    bytes: int = 0
    """Size of the archive file (0 when deleted)."""
    checksum: str = ""
    """blake2b of the archive file (empty when deleted)."""
    file: str = ""
    """The archive's file name when an erasure rewrote it (redact.py); empty: the
    original ``archive_name(first)``."""
    ids_file: str = ""
    """The ids file's name when an erasure renamed ids or keys in it (redact.py); empty:
    the original ``ids_name(first)``."""
    chain: str = ""
    """The chain value of record ``last`` (the cut): the walk checks an archive ends at
    it, and continues past a deleted range from it (empty: an entry written before the
    manifest was chained)."""
    link: str = ""
    """``entry_link`` of the previous entry's link and this entry: the manifest is a
    chain of its own (``KEYED`` first: keyed by the operator's chain key)."""

    @property
    def archived(self) -> bool:
        return self.mode == "archive"


@dataclass
class Manifest:
    """``retention.json``: the first seq still in segments and the compacted entries."""

    first_seq: int = 1
    first_ts: float | None = None
    entries: list[Entry] = field(default_factory=list)

    def put(self, e: Entry) -> None:
        """Add (or replace, on a re-run) the entry of segment ``e.first``."""
        self.entries = sorted(
            [x for x in self.entries if x.first != e.first] + [e], key=lambda x: x.first
        )

    def oldest(self) -> tuple[int, float | None]:
        """Oldest seq a read can still reach, and its ts: archives back from the window."""
        seq, ts = self.first_seq, self.first_ts
        for e in reversed(self.entries):
            if e.last >= seq:
                continue  # its segment is still there (a compaction cut short)
            if e.last + 1 != seq or not e.archived:
                break
            seq, ts = e.first, e.first_ts
        return seq, ts


def checksum(data: bytes) -> str:
    """blake2b-128 hex of ``data`` (the archive and ids files' checksum)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def archive_name(first: int) -> str:
    return f"{first:020d}.jsonl.gz"


def archive_file(e: Entry) -> str:
    """The file name of ``e``'s archive (a redacted archive has a name of its own)."""
    return e.file or archive_name(e.first)


KEY_ENV = "SWARMLOG_CHAIN_KEY"
"""The operator's chain key (any text), kept outside the root (docs/trust.md)."""
KEY_FILE_ENV = "SWARMLOG_CHAIN_KEY_FILE"
"""A file holding the chain key (wins over ``KEY_ENV``)."""
KEYED = "k:"
"""How a keyed link (or seal) starts."""


def chain_key() -> bytes | None:
    """The operator's chain key from the environment (``KEY_FILE_ENV``, else ``KEY_ENV``),
    as 32 bytes; None when neither is set. A key file that cannot be read, or is empty,
    is a one-line error (a check must never quietly run without the key it was given).
    Both are read the same way, surrounding whitespace stripped (a key file's newline,
    a variable's stray space), so one key text gives one key whichever carries it."""
    path = os.environ.get(KEY_FILE_ENV)
    if path:
        try:
            with open(path, "rb") as f:
                raw = f.read().strip()
        except OSError as e:
            raise SwarmlogError(
                f"{KEY_FILE_ENV}={path}: cannot read the chain key: {e.strerror}"
            ) from None
        if not raw:
            raise SwarmlogError(f"{KEY_FILE_ENV}={path}: the chain key file is empty")
    else:
        text = os.environ.get(KEY_ENV, "")
        if not text:
            return None
        raw = text.encode("utf-8", "surrogateescape").strip()
        if not raw:
            raise SwarmlogError(f"{KEY_ENV} holds only whitespace: no chain key")
    return hashlib.blake2b(raw, digest_size=32, person=b"swarmlog-key").digest()


def entry_link(prev: str, e: Entry, key: bytes | None) -> str:
    """The link of manifest entry ``e`` after an entry whose link is ``prev``: a hash of
    ``prev`` and what the entry says of the history (its seqs, mode and the chain value
    at its cut), keyed by ``key`` when given (then ``KEYED`` + hex). A redaction rewrites
    an archive and keeps the link: the files' checksums are not in it."""
    doc = f"{prev}|{e.first}|{e.last}|{e.mode}|{e.chain}".encode()
    h = hashlib.blake2b(doc, digest_size=16, key=key or b"", person=b"swarmlog-retain")
    return (KEYED if key else "") + h.hexdigest()


def ids_name(first: int) -> str:
    return f"{first:020d}.ids.gz"


def ids_file(e: Entry) -> str:
    """The file name of ``e``'s ids file (an erasure that renamed ids gives it its own)."""
    return e.ids_file or ids_name(e.first)


def load(root: str) -> Manifest:
    """The manifest of the log at ``root`` (empty if nothing was ever compacted)."""
    try:
        raw = read_nofollow(os.path.join(root, MANIFEST))
    except FileNotFoundError:
        return Manifest()
    try:
        d = orjson.loads(raw)
        return Manifest(int(d["first_seq"]), d.get("first_ts"), [Entry(**e) for e in d["entries"]])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise ArchiveCorrupt(f"{MANIFEST} is unreadable: {e}") from None


def save(root: str, m: Manifest) -> None:
    """Write the manifest atomically."""
    doc = {
        "first_seq": m.first_seq,
        "first_ts": m.first_ts,
        "entries": [asdict(e) for e in m.entries],
    }
    write_atomic(root, MANIFEST, orjson.dumps(doc, option=orjson.OPT_INDENT_2))


def write_synced(path: str, data: bytes) -> None:
    """Create (or truncate) the file at ``path`` with ``data`` and fsync it."""
    fd = open_nofollow(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError as e:  # EFBIG (ulimit -f), ENOSPC: name the file
            raise OSError(e.errno, e.strerror, path) from None
    finally:
        os.close(fd)


def write_atomic(directory: str, name: str, data: bytes) -> None:
    """``directory/name`` = ``data``, all or nothing: tmp, fsync, rename, fsync dir."""
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    try:
        write_synced(tmp, data)
        os.replace(tmp, os.path.join(directory, name))
    except BaseException:
        with contextlib.suppress(OSError):  # never leave a partial copy (tmpclean.py)
            os.unlink(tmp)
        raise
    fsync_dir(directory)


def pack(data: bytes) -> bytes:
    """gzip (stdlib): on agent JSONL ~4.7x at ~11 MB/s on a loaded 2-core machine, where
    lzma -6 reached 6.3x at 0.3 MB/s (a 64 MiB segment would take minutes)."""
    return gzip.compress(data, GZIP_LEVEL, mtime=0)


def _unpack(path: str, want: str, what: str) -> bytes:
    try:
        raw = read_nofollow(path)
    except FileNotFoundError:
        raise ArchiveCorrupt(f"{what} {path} is missing") from None
    if checksum(raw) != want:
        raise ArchiveCorrupt(f"{what} {path} is corrupt (checksum mismatch)")
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as e:
        raise ArchiveCorrupt(f"{what} {path} does not decompress: {e}") from None


def archived_bytes(root: str, e: Entry) -> bytes:
    """The segment bytes an archive holds (checksum verified)."""
    return _unpack(os.path.join(root, ARCHIVE, archive_file(e)), e.checksum, "archive")


T = TypeVar("T")


def current(root: str, e: Entry, read: Callable[[str, Entry], T]) -> T:
    """``read(root, e)``, where ``e`` comes from a manifest loaded without
    ``compact.lock``: if its file is gone because a redaction replaced it since (a new
    generation, the manifest switched to it, the old file deleted), read the entry the
    manifest names now. A file still named and missing is corrupt, as before."""
    try:
        return read(root, e)
    except ArchiveCorrupt:
        now = next((x for x in load(root).entries if x.first == e.first), None)
        if now is None or now == e:
            raise
        return read(root, now)


def archived_ids(root: str, e: Entry) -> dict[str, Any]:
    """``{"ids": [id of seq first, first+1, ...], "keys": {key: last seq}}`` of an entry."""
    data = _unpack(os.path.join(root, ARCHIVE, ids_file(e)), e.ids_checksum, "ids file")
    d: dict[str, Any] = orjson.loads(data)
    if len(d["ids"]) != e.last - e.first + 1:
        raise ArchiveCorrupt(
            f"ids file of seq {e.first} holds {len(d['ids'])} ids, not {e.last - e.first + 1}"
        )
    return d


def archived_id(root: str, seq: int) -> str | None:
    """The id of the event at ``seq`` from the ids files (which outlive deleted segments)."""
    for e in load(root).entries:
        if e.first <= seq <= e.last:
            return str(archived_ids(root, e)["ids"][seq - e.first])
    return None


def records(data: bytes, first: int, name: str) -> Iterator[list[dict[str, Any]]]:
    """Record batches of segment bytes (scanned like a segment: CRCs, gapless seqs)."""
    # scanned in memory: a memfd copy counted against RLIMIT_FSIZE, and a short write
    # there once made the scan re-read a torn tail forever
    sc = None
    for recs, sc in seg.read_records(data, 0, len(data), first, name):
        if recs:
            yield recs
    if sc is not None and sc.end < len(data):
        raise ArchiveCorrupt(f"archive {name}: torn at byte {sc.end}")


def _gone(m: Manifest, seq: int) -> RetentionError:
    oldest, ts = m.oldest()
    when = "" if ts is None else f" (ts {ts:.3f})"
    return RetentionError(
        f"seq {seq} is before the retained window and was deleted by "
        f"retention; oldest available: seq {oldest}{when}"
    )


def read_before(
    root: str, from_seq: int, to_seq: int | None, window: int
) -> Generator[list[dict[str, Any]], None, int]:
    """Batches of seqs ``from_seq``.. (< ``window``, the first segment's seq) from archives;
    returns where reading goes on. Raises RetentionError if a needed part was deleted."""
    m = load(root)
    hi = window - 1 if to_seq is None else min(to_seq, window - 1)
    for e in m.entries:
        if e.last < from_seq or e.first > hi:
            continue
        if e.first > from_seq or not e.archived:
            raise _gone(m, from_seq)
        data = current(root, e, archived_bytes)  # (a redaction may have replaced it)
        for recs in records(data, e.first, archive_name(e.first)):
            if recs[-1]["seq"] < from_seq:
                continue
            recs = [d for d in recs if from_seq <= d["seq"] <= hi]
            if recs:
                yield recs
                from_seq = recs[-1]["seq"] + 1
        if from_seq > hi:
            break
    if from_seq <= hi:
        raise _gone(m, from_seq)
    return from_seq


def skip(log: FileState) -> bool:
    """FileLog hook: move the writer view past segments compaction removed, loading the
    archived ids and key versions it skips; False if nothing was removed under it."""
    cur = os.path.join(log._segdir_s, seg.segment_name(log._end.seg_first))
    later = [f for f in seg.list_segments(log._segdir_s) if f > log._end.seg_first]
    if not later or os.path.exists(cur):
        return False
    nxt = later[0]
    for e in load(log._root_s).entries:
        if e.last <= log._end.last or e.first >= nxt:
            continue
        d = current(log._root_s, e, archived_ids)  # (a redaction may have replaced it)
        log._ids.update(zip(d["ids"], range(e.first, e.last + 1), strict=True))
        log._versions.update(d["keys"])
    log._end.reset(nxt)
    return True
