"""A FileLog's ``swarm.json``: written once at init, atomically, and never half-left.

It holds the log's format, name, segment size and identity (``id``, a random hex string
made at init: checkpoints carry it, so one copied from another swarm is recognised). A
log created before identities has no ``id``; it then falls back to the contract's
default (derived from its first record).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import orjson

from swarmlog.errors import LogUnavailable
from swarmlog.file.fsguard import FILE_MODE, fsync_dir

TMP_PREFIX = "swarm.tmp"


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
