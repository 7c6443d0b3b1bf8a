"""A FileLog's ``swarm.json``: written once at init, atomically, and never half-left.

It holds the log's format, name, segment size and identity (``id``, a random hex string
made at init: checkpoints carry it, so one copied from another swarm is recognised). A
log created before identities has no ``id``; it then falls back to the contract's
default (derived from its first record).
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path
from typing import Any

import orjson

from swarmlog.errors import LogUnavailable
from swarmlog.file import lockfile
from swarmlog.file.fsguard import FILE_MODE, check_real_dir, fsync_dir, os_error, read_nofollow
from swarmlog.names import check_name, default_swarm_name, new_swarm_id

FORMAT = "swarmlog-file/1"
TMP_PREFIX = "swarm.tmp"


def open_meta(
    root: Path, create: bool, name: str | None, segment_bytes: int
) -> tuple[str, int, str]:
    """The log at ``root``: (name, segment size, identity) from its ``swarm.json``, made
    first (``create``) if absent; LogUnavailable if it is absent, unreadable or foreign."""
    meta_path = root / "swarm.json"
    if not meta_path.exists():
        if not create:
            raise LogUnavailable(f"no swarm log at {root} (run 'swarmlog init')")
        _create(root, meta_path, name, segment_bytes)
    try:
        meta = orjson.loads(read_nofollow(meta_path))
        got = (meta["name"], int(meta["segment_bytes"]), str(meta.get("id") or ""))
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise LogUnavailable(f"{meta_path} is unreadable: {e}") from None
    for d in ("segments", "checkpoints"):
        check_real_dir(root / d)
    if meta.get("format") != FORMAT:
        raise LogUnavailable(f"{meta_path} has format {meta.get('format')!r}, not {FORMAT}")
    return got


def _create(root: Path, meta_path: Path, name: str | None, segment_bytes: int) -> None:
    """A new log's directory, ``segments/`` and ``swarm.json`` (under the append lock:
    two processes creating one log at once make one ``swarm.json``)."""
    if segment_bytes < 4096:
        raise ValueError("segment_bytes must be at least 4096")
    name = check_name("swarm", name or default_swarm_name(root))
    try:
        root.mkdir(parents=True, exist_ok=True)
        (root / "segments").mkdir(exist_ok=True)
    except OSError as e:
        raise os_error(e, e.filename or root, writing=True) from None
    check_real_dir(root / "segments")
    fd = lockfile.open_write_lock(os.fspath(root))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not meta_path.exists():
            meta = {"format": FORMAT, "name": name, "segment_bytes": segment_bytes}
            write_meta(meta_path, {**meta, "id": new_swarm_id()})
    finally:
        os.close(fd)


def write_meta(meta_path: Path, meta: dict[str, Any]) -> None:
    """Write ``swarm.json`` atomically (tmp, fsync, rename, fsync dir); no tmp left on failure.

    Called under the log's lock with ``swarm.json`` absent, so any ``swarm.tmp*`` there is
    a leftover of an init that died: it is removed first.
    """
    clean_meta_tmp(meta_path.parent)
    tmp = meta_path.with_name(f"{TMP_PREFIX}{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
        with open(fd, "wb") as f:
            f.write(orjson.dumps(meta, option=orjson.OPT_INDENT_2))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, meta_path)
        fsync_dir(meta_path.parent)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        what = "disk full" if e.errno in (errno.ENOSPC, errno.EDQUOT) else (e.strerror or e)
        raise LogUnavailable(
            f"swarm not created: {what} at {meta_path}; run init again once there is room"
        ) from None


def clean_meta_tmp(root: Path) -> None:
    """Remove ``swarm.tmp*`` leftovers (only safe under the lock, or once swarm.json exists)."""
    try:
        names = [n for n in os.listdir(root) if n.startswith(TMP_PREFIX)]
    except OSError:
        return
    for n in names:
        try:
            os.unlink(root / n)
        except OSError:
            pass
