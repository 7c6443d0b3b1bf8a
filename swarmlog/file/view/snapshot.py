"""Writer-view snapshots: a new FileLog handle starts from a saved view, not from seq 1.

Before its first append a writing process needs the whole log's id index (idempotency)
and key versions (expectations); building them means reading every record, seconds on a
log of a few hundred thousand events, paid by every short-lived agent process. So a
writer whose catch-up read at least ``SAVE_AFTER`` records saves what it built to
``view.idx`` in the root, and a fresh handle maps it and reads only the records after.
The index and the versions are sorted columns of that file (columns.py), looked up in
place: loading is a checksum and a few checks, not a parse of every entry.

Layout: ``%08x\\n`` (crc32 of everything after it), one JSON header line (padded with
spaces so what follows is 8-byte aligned), then for the ids and then the keys: hashes
(u64), seqs (i64), string offsets (i64, n + 1), the strings (padded to 8), little-endian.

The snapshot is a cache, never a source of truth: it is used only if its checksum
holds, it names this log's identity, its columns are well formed, and the record it
says is the last one it covers is still there, byte-valid, with the same seq, id and
chain value (so the log before it is the one the view was built from: redaction keeps
ids and chain values, compaction makes the check fail and the handle scans as before).
Anything else and it is ignored. It is written by writers only (read-only inspection
never writes), atomically (a temp file renamed over, never changed in place), without
fsync: a torn or lost snapshot only costs a full scan.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from swarmlog import codec
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import open_nofollow
from swarmlog.file.view.columns import BasedDict, Table, full_table
from swarmlog.file.view.state import FileState

if TYPE_CHECKING:
    import numpy as np

NAME = "view.idx"
FORMAT = "swarmlog-view/2"
OLD_NAME = "view.json"
"""Where format 1 (one JSON object) was saved: removed by the next save."""
SAVE_AFTER = 20_000
"""Records a writer's view must have moved past the last snapshot before it saves one."""
SAVE_FRACTION = 4
"""...and, on a big log, a 1/SAVE_FRACTION part of what that snapshot covered (``due``)."""
_PREFIX = b"%08x\n"
_TAIL_READ = 64 * 1024
_ALIGN = 8


View = FileState
"""What ``save`` and ``load`` take: a FileLog handle (its fields: view/state.py)."""


def due(last: int, saved_at: int) -> bool:
    """Whether a writer whose view ends at seq ``last`` saves a new snapshot, the last one
    having covered ``saved_at`` records: once ``SAVE_AFTER`` records came after it, and
    a ``1/SAVE_FRACTION`` part of ``saved_at``.

    Why the fraction: a save costs O(n) (every id and key: 0.86 s at 1,000,000 ids), so
    a save every fixed ``SAVE_AFTER`` records cost O(n / SAVE_AFTER) per append: appends
    on a 1,000,000-record log ran at half the rate of a fresh one. Saved geometrically
    (each snapshot at least 1.25x the last), a save costs O(1) per append at any size,
    and a fresh handle reads at most ``max(SAVE_AFTER, saved_at / SAVE_FRACTION)``
    records after the snapshot (docs/benchmarks.md, "View snapshots at size").
    """
    tail = last - saved_at
    return tail >= SAVE_AFTER and tail * SAVE_FRACTION >= saved_at


@dataclass
class Pending:
    """A save of a handle's own view (its whole dicts) that became due under the append
    lock and is made after it (``IndexedView._ix_flush_save``): building the columns of
    every id is O(n) (1.3 s at 1,000,000 ids) and no other writer should wait for it.
    ``redactions``: the redaction count when the dicts began (``_view_redactions``; a
    redaction since: no save, the dicts may hold names it renamed)."""

    redactions: int


def save(log: FileState) -> bool:
    """Write the handle's view to ``view.idx`` (best effort: errors are ignored); True if
    it was written."""
    if log._end.last == 0 or not log._swarm_id:
        return False
    last = log._end.last
    last_id = next((i for i, s in reversed(log._ids.items()) if s == last), None)
    if last_id is None:
        return False  # (the last record came from an ids file: no segment record to check)
    ids, keys = full_table(log._ids), full_table(log._versions)
    saved = save_tables(
        log._root_s,
        log._swarm_id,
        ids,
        keys,
        last=last,
        last_id=last_id,
        last_ts=log._end.last_ts,
        tip=log._end.tip,
        seg_first=log._end.seg_first,
        seg_end=log._end.seg_end,
    )
    return saved


def save_tables(
    root: str,
    swarm_id: str,
    ids: Table,
    keys: Table,
    *,
    last: int,
    last_id: str,
    last_ts: float,
    tip: bytes,
    seg_first: int,
    seg_end: int,
) -> bool:
    """Write ``view.idx`` from ready columns (``save``; ixsnap.py from the writer index):
    True if it was written."""
    if last == 0 or not swarm_id:
        return False
    header = {
        "format": FORMAT,
        "swarm": swarm_id,
        "last": last,
        "last_id": last_id,
        "last_ts": last_ts,
        "tip": tip.decode(),
        "seg_first": seg_first,
        "seg_end": seg_end,
        "ids": [len(ids), len(ids.blob)],
        "keys": [len(keys), len(keys.blob)],
    }
    parts = [_header_line(header)]
    for t in (ids, keys):
        parts += [
            t.hashes.astype("<u8").tobytes(),
            t.seqs.astype("<i8").tobytes(),
            t.offs.astype("<i8").tobytes(),
            t.blob.tobytes() + b"\0" * _pad(len(t.blob)),
        ]
    body = b"".join(parts)
    if not _write(os.path.join(root, NAME), _PREFIX % zlib.crc32(body) + body):
        return False
    try:
        os.unlink(os.path.join(root, OLD_NAME))
    except OSError:
        pass
    return True


def discard(root: str) -> None:
    """Delete ``view.idx`` (a save that a redaction overtook; it is only a cache)."""
    try:
        os.unlink(os.path.join(root, NAME))
    except FileNotFoundError:
        pass


def _pad(n: int) -> int:
    return -n % _ALIGN


def _header_line(header: dict[str, Any]) -> bytes:
    """The header as one JSON line, space-padded so the columns after it are aligned."""
    line = orjson.dumps(header)
    return line + b" " * _pad(len(_PREFIX % 0) + len(line) + 1) + b"\n"


def _write(path: str, data: bytes) -> bool:
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, writing=True)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except Exception:  # a cache: never fail an append over it
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True


def load(log: FileState) -> bool:
    """Set a fresh handle's view from ``view.idx`` if it can be trusted; True if it was."""
    got = _read(os.path.join(log._root_s, NAME))
    if got is None:
        return False
    header, buf, at = got
    if header.get("format") != FORMAT or header.get("swarm") != log._swarm_id:
        return False
    try:
        last, last_ts = int(header["last"]), float(header["last_ts"])
        seg_first, seg_end = int(header["seg_first"]), int(header["seg_end"])
        tip, last_id = str(header["tip"]).encode(), str(header["last_id"])
        ids, at = _table(buf, at, header["ids"], last)
        keys, at = _table(buf, at, header["keys"], last)
    except (KeyError, TypeError, ValueError):
        return False
    if at != len(buf) or ids.find(last_id) != last:
        return False
    if not _ends_with(log, seg_first, seg_end, last, last_id, tip):
        return False
    log._end.adopt(last, seg_end, last_ts, tip, seg_first)
    log._adopt_view(_based(ids, log._ids), _based(keys, log._versions), last)
    return True


def _based(base: Table, have: dict[str, int]) -> BasedDict:
    d = BasedDict(base)
    d.update(have)
    return d


def _read(path: str) -> tuple[dict[str, Any], memoryview, int] | None:
    """(header, the whole file read, where the columns start) if its checksum holds.

    Read into memory, not mapped: the tables serve the handle's lookups for as long as it
    lives, and a page of a mapping past the end of a file cut meanwhile is SIGBUS."""
    try:
        fd = open_nofollow(path, os.O_RDONLY, writing=False)
    except Exception:
        return None
    try:
        size = os.fstat(fd).st_size
        parts, got = [], 0
        while got < size:
            part = os.read(fd, size - got)
            if not part:
                break
            parts.append(part)
            got += len(part)
        mm = b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)
    buf, n = memoryview(mm), len(_PREFIX % 0)
    end = mm.find(b"\n", n)
    try:
        if end < 0 or int(bytes(buf[: n - 1]), 16) != zlib.crc32(buf[n:]):
            return None
        header = orjson.loads(bytes(buf[n:end]))
    except (ValueError, orjson.JSONDecodeError):
        return None
    return (header, buf, end + 1) if isinstance(header, dict) else None


def _table(buf: memoryview, at: int, shape: Any, last: int) -> tuple[Table, int]:
    """The table whose columns start at ``at`` and where the next starts; ValueError if
    the columns do not fit the file or are not well formed (sorted, offsets in order,
    seqs of the log before ``last``)."""
    from swarmlog.numpyload import np  # (on first use: see columns.py)

    n, blob_len = (int(x) for x in shape)
    if n < 0 or blob_len < 0 or at % _ALIGN:
        raise ValueError("bad shape")

    def col(dtype: str, count: int) -> np.ndarray[Any, Any]:
        nonlocal at
        size = np.dtype(dtype).itemsize * count
        if at + size > len(buf):
            raise ValueError("short")
        a = np.frombuffer(buf, dtype=dtype, count=count, offset=at)
        at += size + _pad(size)
        return a

    hashes, seqs, offs, blob = col("<u8", n), col("<i8", n), col("<i8", n + 1), col("u1", blob_len)
    if n and not (
        np.all(hashes[1:] >= hashes[:-1])
        and np.all(np.diff(offs) >= 0)
        and int(seqs.min()) >= 1
        and int(seqs.max()) <= last
    ):
        raise ValueError("not well formed")
    if int(offs[0]) != 0 or int(offs[-1]) != blob_len:
        raise ValueError("offsets")
    return Table(hashes, seqs, offs, blob), at


def _ends_with(log: FileState, first: int, end: int, seq: int, eid: str, tip: bytes) -> bool:
    """Whether segment ``first``'s valid bytes up to ``end`` end with the record
    (seq, id, chain value) the snapshot names."""
    path = os.path.join(log._segdir_s, seg.segment_name(first))
    try:
        fd = open_nofollow(path, os.O_RDONLY, writing=False)
    except Exception:
        return False
    try:
        if end <= 0 or os.fstat(fd).st_size < end:
            return False
        want = min(end, _TAIL_READ)
        while True:
            data = os.pread(fd, want, end - want)
            if not data.endswith(b"\n"):
                return False
            i = data.rfind(b"\n", 0, len(data) - 1)
            if i >= 0 or want == end:
                break
            want = min(end, want * 4)
        d = codec.decode_record(data[i + 1 :])
    except (OSError, codec.RecordError):
        return False
    finally:
        os.close(fd)
    chain = d.get("chain")
    stored = chain.encode() if isinstance(chain, str) else b""
    return d.get("seq") == seq and d.get("id") == eid and stored == tip
