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

Hashed once, not once per process: a verified file's identity (device, inode, size,
mtime and ctime in ns) is kept in a *stamp* (``.side-verified-<uid>.json`` beside the
files, see ``stamped``), and a process whose file still has that identity skips the hash.
Why ctime: no write, truncation, rename or ``utime`` leaves it as it was (only a clock
set back by root does), so a file changed after its check never matches its stamp.
``swarmlog verify`` still hashes every byte (``full``): rot that changes no metadata is
what it is for. docs/trust.md says what each check stops.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_CHUNK = 1 << 22  # 4 MiB a read: the GIL is dropped for the read and the update
_lock = threading.Lock()
_Key = tuple[str, int, int, int, int, int]
_verified: dict[_Key, str] = {}
STAMPS = ".side-verified-{uid}.json"
RACY_NS = 2_000_000_000  # coarse clocks: a ctime this close to its check proves nothing
_fine: dict[int, bool] = {}  # device -> whether its ctimes are fine-grained (see _fine_ctime)


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


def _ident(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _key(path: Path) -> _Key | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (os.fspath(path), *_ident(st))  # type: ignore[return-value]


def problem(path: Path, digest: str, full: bool = False) -> str | None:
    """Why the side file at ``path`` is not the one whose SHA-256 is ``digest`` (None: it
    is). A missing file is a problem too ("missing"); the caller decides what that costs.
    A file verified before (this process, or a stamp this user wrote) with the same
    identity is not hashed again, unless ``full`` (``swarmlog verify``)."""
    key = _key(path)
    if key is None:
        return "missing"
    if not full:
        with _lock:
            if _verified.get(key) == digest:
                return None
        if stamped(path, digest, list(key[1:])):
            with _lock:
                _verified[key] = digest
            return None
    at = time.time_ns()
    try:
        got = file_digest(path)
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    if got != digest:
        return f"checksum mismatch (SHA-256 {got[:12]}…, its checkpoint says {digest[:12]}…)"
    after = _key(path)
    if after == key:  # (changed while hashed: neither remembered nor stamped)
        with _lock:
            _verified[key] = digest
        stamp(path, digest, list(key[1:]), at)
    return None


def _stamp_file(directory: Path) -> Path:
    return directory / STAMPS.format(uid=os.getuid())


def _read_stamps(directory: Path) -> dict[str, dict[str, object]]:
    """This user's stamps in ``directory`` ({} when none, unreadable, or not its own: a
    stamp file owned by another user, or writable by others, is never trusted)."""
    try:
        fd = os.open(_stamp_file(directory), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() or st.st_mode & 0o022 or st.st_size > 1 << 20:
            return {}
        got = json.loads(os.read(fd, st.st_size + 1))
    except (OSError, ValueError):
        return {}
    finally:
        os.close(fd)
    return got if isinstance(got, dict) else {}


def stamped(path: Path, digest: str, ident: list[int]) -> bool:
    """Whether this user's stamp says the file of identity ``ident`` (device, inode,
    size, mtime_ns, ctime_ns, as now) hashed to ``digest``. On a file system with coarse
    timestamps a change in the same clock tick as the check keeps the ctime, so such a
    stamp counts only when the check began ``RACY_NS`` after the file's last change."""
    e = _read_stamps(path.parent).get(path.name)
    if not isinstance(e, dict) or e.get("digest") != digest or e.get("ident") != ident:
        return False
    at = e.get("at")
    return e.get("fine") is True or (isinstance(at, int) and ident[4] < at - RACY_NS)


def stamp(path: Path, digest: str, ident: list[int], at: int) -> None:
    """Record that the file of identity ``ident`` hashed to ``digest`` (its check began
    at ``at``, ns); stamps of files gone are dropped. Best effort: a read-only directory
    keeps none (every process then hashes), and two writers racing lose one entry."""
    d = path.parent
    stamps = {n: e for n, e in _read_stamps(d).items() if (d / n).exists()}
    stamps[path.name] = {"digest": digest, "ident": ident, "at": at, "fine": _fine_ctime(d)}
    tmp = d / f"{STAMPS.format(uid=os.getuid())}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, json.dumps(stamps).encode())
        finally:
            os.close(fd)
        os.replace(tmp, _stamp_file(d))
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _fine_ctime(directory: Path) -> bool:
    """Whether the file system of ``directory`` gives a change after a ``stat`` a ctime of
    its own (Linux's multigrain timestamps): then a stamp counts at once, without waiting
    ``RACY_NS``. Probed once per device with a scratch file: five writes, each with a new
    ctime, one of them less than 0.5 ms on (a coarse clock repeats a ctime or jumps a tick)."""
    try:
        dev = os.stat(directory).st_dev
    except OSError:
        return False
    if dev in _fine:
        return _fine[dev]
    tmp = directory / f".side-probe.{os.getpid()}-{threading.get_ident()}.tmp"
    steps: list[int] = []
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            for _ in range(5):
                a = os.fstat(fd).st_ctime_ns
                os.write(fd, b"x")
                steps.append(os.fstat(fd).st_ctime_ns - a)
        finally:
            os.close(fd)
            os.unlink(tmp)
    except OSError:
        steps = [0]
    fine = min(steps) > 0 and min(steps) < 500_000  # (a preempted step may take longer)
    _fine[dev] = fine
    return fine


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
            _allocate(f.fileno())
            os.fsync(f.fileno())
            at = time.time_ns()
            before = os.fstat(f.fileno())
            out.digest = file_digest(tmp)
            out.name = f"{prefix}{out.digest}{suffix}"
            os.replace(tmp, directory / out.name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    _stamp_written(directory / out.name, out.digest, before, at)


def _allocate(fd: int) -> None:
    """Give every block of the file its storage now (the holes a writer seeked over:
    spare rows). Readers map side files, and on tmpfs the first touch of a hole page
    allocates it: on a full disk that touch is a SIGBUS, where this is an ENOSPC the
    writer reports (no side files; readers embed)."""
    size = os.fstat(fd).st_size
    if size:
        os.posix_fallocate(fd, 0, size)


def _stamp_written(path: Path, digest: str, before: os.stat_result, at: int) -> None:
    """Stamp a file this process just wrote and hashed, if it is still what was hashed
    (same inode, size and mtime: the rename moved its ctime, a write would move both)."""
    key = _key(path)
    if key is None or list(key[2:5]) != [before.st_ino, before.st_size, before.st_mtime_ns]:
        return
    with _lock:
        _verified[key] = digest
    stamp(path, digest, list(key[1:]), at)


def seq_of(name: str) -> int | None:
    """The checkpoint seq in a side file's name ``<kind>-<seq>-<digest>.<ext>``."""
    parts = name.split("-")
    return int(parts[1]) if len(parts) >= 3 and parts[1].isdigit() else None
