"""Writer-view snapshots: a new FileLog handle starts from a saved view, not from seq 1.

Before its first append a writing process needs the whole log's id index (idempotency)
and key versions (expectations); building them means reading every record, seconds on a
log of a few hundred thousand events, paid by every short-lived agent process. So a
writer whose catch-up read at least ``SAVE_AFTER`` records saves what it built to
``view.json`` in the root, and a fresh handle loads it and reads only the records after.

The snapshot is a cache, never a source of truth: it is used only if its checksum
holds, it names this log's identity, and the record it says is the last one it covers
is still there, byte-valid, with the same seq, id and chain value (so the log before it
is the one the view was built from: redaction keeps ids and chain values, compaction
makes the check fail and the handle scans as before). Anything else and it is ignored.
It is written by writers only (read-only inspection never writes), atomically (a temp
file renamed over), without fsync: a torn or lost snapshot only costs a full scan.
"""

from __future__ import annotations

import os
import zlib
from typing import Any, Protocol

import orjson

from . import codec
from . import segment as seg
from .fsguard import open_nofollow

NAME = "view.json"
FORMAT = "swarmlog-view/1"
SAVE_AFTER = 20_000
"""Records a locked catch-up must have read before it saves a snapshot."""
_PREFIX = b"%08x\n"
_TAIL_READ = 64 * 1024


class View(Protocol):
    """The writer-view fields of a FileLog handle (see filestate.FileState)."""

    _root_s: str
    _segdir_s: str
    _swarm_id: str
    _ids: dict[str, int]
    _versions: dict[str, int]
    _last: int
    _last_ts: float
    _tip: bytes
    _seg_first: int
    _seg_end: int
    _view_at: int


def save(log: View) -> None:
    """Write the handle's view to ``view.json`` (best effort: errors are ignored)."""
    if log._last == 0 or not log._swarm_id:
        return
    body = orjson.dumps(
        {
            "format": FORMAT,
            "swarm": log._swarm_id,
            "last": log._last,
            "last_ts": log._last_ts,
            "tip": log._tip.decode(),
            "seg_first": log._seg_first,
            "seg_end": log._seg_end,
            "ids": log._ids,
            "versions": log._versions,
        }
    )
    path = os.path.join(log._root_s, NAME)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, writing=True)
        with os.fdopen(fd, "wb") as f:
            f.write(_PREFIX % zlib.crc32(body))
            f.write(body)
        os.replace(tmp, path)
    except Exception:  # a cache: never fail an append over it
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return
    log._view_at = log._last


def load(log: View) -> bool:
    """Set a fresh handle's view from ``view.json`` if it can be trusted; True if it was."""
    snap = _read(os.path.join(log._root_s, NAME))
    if snap is None or snap.get("format") != FORMAT or snap.get("swarm") != log._swarm_id:
        return False
    try:
        last, seg_first, seg_end = int(snap["last"]), int(snap["seg_first"]), int(snap["seg_end"])
        tip = str(snap["tip"]).encode()
        ids, versions = snap["ids"], snap["versions"]
        if not (isinstance(ids, dict) and isinstance(versions, dict)):
            return False
        last_id = next((i for i, s in reversed(ids.items()) if s == last), None)
        if last_id is None or not _ends_with(log, seg_first, seg_end, last, last_id, tip):
            return False
        log._ids.update(ids)
        log._versions.update(versions)
        log._last, log._last_ts, log._tip = last, float(snap["last_ts"]), tip
        log._seg_first, log._seg_end = seg_first, seg_end
    except (KeyError, TypeError, ValueError):
        return False
    log._view_at = last
    return True


def _read(path: str) -> dict[str, Any] | None:
    """The snapshot's payload if the file is there and its checksum holds."""
    try:
        fd = open_nofollow(path, os.O_RDONLY, writing=False)
    except Exception:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head, _, body = data.partition(b"\n")
    try:
        if int(head, 16) != zlib.crc32(body):
            return None
        snap = orjson.loads(body)
    except (ValueError, orjson.JSONDecodeError):
        return None
    return snap if isinstance(snap, dict) else None


def _ends_with(log: View, first: int, end: int, seq: int, eid: str, tip: bytes) -> bool:
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
