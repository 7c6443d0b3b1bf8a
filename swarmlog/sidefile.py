"""Side files of a checkpoint, named and trusted by their SHA-256.

A reader keeps derived files beside a checkpoint (the synthesizer's memory-mapped vectors
and recall codes). They are written *before* the checkpoint, and the checkpoint's header
names each with the SHA-256 of its bytes (``CheckpointInfo.side``, covered by the
checkpoint's checksum). So a side file is used only when its bytes hash to what the
checkpoint that names it recorded: a rotted, zeroed, permuted or foreign file (even one
of the right size and header) is refused, and the reader rebuilds what it held.

Why SHA-256: the JetStream object store that shares side files between machines
(swarmlog/jetstream/checkpoint.py) keeps the same digest of each object, so a per-machine cache can
be
checked against either; and it runs at ~1 GB/s here (hashlib releases the GIL, so a
reader hashes in a background thread while it opens the rest).

A file's name carries its digest (``<prefix><seq>-<sha256><suffix>``): two writers of
the same bytes write the same name, and a name never points at other bytes than it says.
A process hashes a file once: a verified (path, inode, size, mtime) is remembered.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_CHUNK = 1 << 22  # 4 MiB a read: the GIL is dropped for the read and the update
_lock = threading.Lock()
_verified: dict[tuple[str, int, int, int], str] = {}


def file_digest(path: Path) -> str:
    """SHA-256 hex of the file's bytes, read in chunks (the GIL is dropped for each read
    and each update). Why not a memory map: a fault on a hole of a sparse file (a vector
    file's spare rows) on a full tmpfs, or on a page past a concurrent truncation, is
    SIGBUS, which kills the process; a read returns zeros or a short count."""
    h = hashlib.sha256()
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(view[:n])
    return h.hexdigest()


def _key(path: Path) -> tuple[str, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.fspath(path), st.st_ino, st.st_size, st.st_mtime_ns)


def _remember(path: Path, digest: str) -> None:
    key = _key(path)
    if key is not None:
        with _lock:
            _verified[key] = digest


def problem(path: Path, digest: str) -> str | None:
    """Why the side file at ``path`` is not the one whose SHA-256 is ``digest`` (None: it
    is). A missing file is a problem too ("missing"); the caller decides what that costs."""
    key = _key(path)
    if key is None:
        return "missing"
    with _lock:
        if _verified.get(key) == digest:
            return None
    try:
        got = file_digest(path)
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    if got != digest:
        return f"checksum mismatch (SHA-256 {got[:12]}…, its checkpoint says {digest[:12]}…)"
    _remember(path, digest)
    return None


def discard(path: Path, why: str) -> None:
    """Unlink a side file that failed its check (never served) with a one-line note
    (logger ``swarmlog.checkpoint``); a read-only directory leaves it, still unused."""
    import logging

    try:
        os.unlink(path)
        done = "deleted"
    except FileNotFoundError:
        done = "gone"
    except OSError:
        done = "left (read-only)"
    logging.getLogger("swarmlog.checkpoint").warning(
        "swarmlog: side file %s not used: %s; %s, rebuilding what it held", path.name, why, done
    )


_TMP_PID = re.compile(r"\.(\d+)(?:-\d+)?\.tmp$")


def alive(pid: int) -> bool:
    """True unless no process ``pid`` exists (this one and other users' count as alive)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def tmp_writer(name: str) -> int | None:
    """The writer's pid in a temporary file's name ``….<pid>.tmp`` or ``….<pid>-<thread>.tmp``
    (None if it has none)."""
    m = _TMP_PID.search(name)
    return int(m.group(1)) if m else None


@dataclass
class Written:
    """A side file written by ``write``: its final name and SHA-256 (set on exit)."""

    file: BinaryIO
    name: str = ""
    digest: str = ""


@contextmanager
def write(directory: Path, prefix: str, suffix: str) -> Iterator[Written]:
    """Write a side file all or nothing, named ``<prefix><sha256><suffix>`` by its bytes:
    a temporary file held under an exclusive flock (``FileCheckpointStore.clean_tmp``
    deletes only unheld ones), fsynced, hashed and renamed into place, still locked."""
    tmp = directory / f".{prefix}{suffix}.{os.getpid()}-{threading.get_ident()}.tmp"
    with open(tmp, "wb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            out = Written(f)
            yield out
            f.flush()
            os.fsync(f.fileno())
            out.digest = file_digest(tmp)
            out.name = f"{prefix}{out.digest}{suffix}"
            os.replace(tmp, directory / out.name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    _remember(directory / out.name, out.digest)


def seq_of(name: str) -> int | None:
    """The checkpoint seq in a side file's name ``<kind>-<seq>-<digest>.<ext>``."""
    parts = name.split("-")
    return int(parts[1]) if len(parts) >= 3 and parts[1].isdigit() else None
