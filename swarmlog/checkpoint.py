"""Checkpoints: opaque snapshots tagged with their log's identity, seq, format and config.

The log does not know what a checkpoint holds; the synthesizer stores its folded state
here so a reader can start from the newest valid snapshot at or below a seq and fold
only the rest. A checkpoint file is one JSON header line followed by the payload bytes::

    {"v":2,"swarm":"…","seq":1200,"event":"…","format":"swarmstate/1","config":"ab12…",
     "pinned":false,"size":5120,"side":{"vec-…f32":"<sha256>"},"checksum":"…"}\\n<payload>

``checksum`` covers every other header field *and* the payload, so an edited header is
as detectable as a rotted payload. ``side`` (absent when empty) names the files a reader
keeps beside the checkpoint (the synthesizer's vectors and codes) with the SHA-256 of
each: written before the checkpoint, they are trusted only when their bytes hash to it
(swarmlog/sidefile.py). ``swarm`` is the log's identity (``Log.swarm_id``) and
``event`` the id of the log's record at ``seq``. A checkpoint is used only when its
checksum holds, its identity is this log's, its seq is at most the log's last seq and the
log's record at that seq is the one it recorded; any other is skipped with a one-line
warning (logger ``swarmlog.checkpoint``) naming the file and the reason, and the next
older one is tried. So a checkpoint copied from another swarm, one from a log restored
from an older backup, or one whose header was edited costs time, never correctness.

Writes are atomic (temporary file, fsync, rename, fsync of the directory), and a
checkpoint file is never changed in place (only replaced by a rename or unlinked), so a
file store hands out its payloads as read-only memory maps: processes that load one
checkpoint share its pages, and a mapping outlives the file's replacement or deletion. After a save
the store keeps the newest ``keep`` unpinned checkpoints of this log plus every pinned
one; older ones are deleted only after the new one is durable, oldest first, so a crash
at any point leaves every checkpoint that was usable before the save, or the new one.
"""

from __future__ import annotations

import abc
import builtins
import errno
import fcntl
import hashlib
import mmap
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO, Protocol

import orjson

from swarmlog.errors import CheckpointNotWritten, SwarmlogError
from swarmlog.sidefile import alive, tmp_writer

VERSION = 2
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
TMP_GRACE = 10.0
"""Seconds a live process's unheld temporary file is left alone (``clean_tmp``): its
writer creates it, then locks it, microseconds later."""


class CheckpointOwner(Protocol):
    """What a store needs of its log to tell its own checkpoints from stale or foreign ones."""

    @property
    def swarm_id(self) -> str: ...

    @property
    def last_seq(self) -> int: ...

    def record_id(self, seq: int) -> str | None: ...


def checksum(data: bytes) -> str:
    """A blake2b-128 hex digest (see ``_sum`` for what a checkpoint hashes)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True)
class CheckpointInfo:
    """What is known of a checkpoint without loading its payload."""

    seq: int
    format: str
    config: str
    checksum: str
    size: int
    name: str
    swarm: str = ""
    """Identity of the log it was taken from ("" in a checkpoint older than identities)."""
    event: str = ""
    """Id of the log's record at ``seq`` when it was taken ("" at seq 0)."""
    pinned: bool = False
    """Kept whatever the retention (``swarmlog checkpoint --keep``)."""
    version: int = VERSION
    side: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """(file name, SHA-256 hex) of each side file written with it, sorted by name (not
    in the repr: two 64-hex digests a file)."""

    def side_files(self) -> dict[str, str]:
        """The side files this checkpoint names: file name -> SHA-256 hex of its bytes."""
        return dict(self.side)

    def fields(self) -> dict[str, object]:
        """The header fields the checksum covers (everything but the checksum)."""
        return {
            "v": self.version,
            "swarm": self.swarm,
            "seq": self.seq,
            "event": self.event,
            "format": self.format,
            "config": self.config,
            "pinned": self.pinned,
            "size": self.size,
            **({"side": dict(self.side)} if self.side else {}),
        }


@dataclass(frozen=True)
class Checkpoint:
    """A loaded, checksum-verified checkpoint."""

    info: CheckpointInfo
    data: bytes | memoryview = field(repr=False)
    """The payload (its size is in ``info``); a read-only memoryview of a mapped file
    from a file store, keeping the mapping alive as long as it is referenced."""

    @property
    def seq(self) -> int:
        return self.info.seq


def _sum(info: CheckpointInfo, data: bytes | memoryview) -> str:
    """The checksum of a header's fields and its payload (no copy of the payload)."""
    h = hashlib.blake2b(orjson.dumps(info.fields(), option=orjson.OPT_SORT_KEYS), digest_size=16)
    h.update(b"\n")
    h.update(data)
    return h.hexdigest()


class CheckpointStore(abc.ABC):
    """Where a log keeps its checkpoints (``owner``: the log, None for a bare store)."""

    owner: CheckpointOwner | None = None

    @abc.abstractmethod
    def _put(self, info: CheckpointInfo, header: bytes, data: bytes) -> None:
        """Store one checkpoint atomically under ``info.name`` (replacing one of that name)."""

    @abc.abstractmethod
    def list(self) -> builtins.list[CheckpointInfo]:
        """Every checkpoint whose header reads, oldest first (payloads unchecked)."""

    @abc.abstractmethod
    def _read(self, info: CheckpointInfo) -> bytes | memoryview:
        """The raw payload of a listed checkpoint."""

    @abc.abstractmethod
    def delete(self, info: CheckpointInfo) -> None:
        """Remove one checkpoint (retention, or erasure invalidating it)."""

    @abc.abstractmethod
    def _name(self, seq: int) -> str:
        """The name of the checkpoint at ``seq``."""

    def local_dir(self) -> Path | None:
        """The directory on this machine that holds the checkpoint files, or None.

        Why: a reader may keep derived files beside a checkpoint (the synthesizer's
        memory-mapped vectors, synthesizer/checkpoints/vectors.py). The default None is the
        documented answer of a store whose checkpoints are not local files (MemoryLog's
        dict, JetStream's object store): nothing is kept beside them.
        """
        return None

    def publish(self, name: str) -> None:
        """Share the side file ``name``, just written into ``local_dir()``, with readers
        on other machines. A store whose checkpoints are local files needs nothing more:
        the directory is the shared place."""
        return None

    def fetch(self, name: str) -> bool:
        """Make the side file ``name`` present in ``local_dir()`` (fetching it from where
        ``publish`` put it); False when there is no such file."""
        d = self.local_dir()
        return d is not None and (d / name).is_file()

    def unpublish(self, keep: set[str]) -> int:
        """Remove published side files whose names are not in ``keep``; return how many
        (none to remove where ``publish`` keeps nothing beyond ``local_dir()``)."""
        return 0

    def save(
        self,
        seq: int,
        data: bytes,
        format: str,
        config: str = "",
        *,
        pinned: bool = False,
        keep: int | None = None,
        side: dict[str, str] | None = None,
    ) -> CheckpointInfo:
        """Store ``data`` as the checkpoint at ``seq`` atomically, then apply retention.

        ``keep``: how many unpinned checkpoints of this log to keep (None: all). ``side``:
        the side files already written for it (name -> SHA-256 hex, sidefile.py). Raises
        CheckpointNotWritten (saying which checkpoint is kept instead) if it cannot store it.
        """
        swarm, event = "", ""
        if self.owner is not None:
            swarm = self.owner.swarm_id
            if seq > 0:
                event = self.owner.record_id(seq) or ""
                if not event:
                    raise SwarmlogError(f"cannot checkpoint at seq {seq}: not in the log")
        info = CheckpointInfo(
            seq,
            format,
            config,
            "",
            len(data),
            self._name(seq),
            swarm,
            event,
            pinned,
            side=tuple(sorted((side or {}).items())),
        )
        info = replace(info, checksum=_sum(info, data))
        header = orjson.dumps({**info.fields(), "checksum": info.checksum})
        self._put(info, header, data)
        if keep is not None:
            self.prune(keep, protect=info.name)
        return info

    def _not_written(self, where: str, e: OSError) -> CheckpointNotWritten:
        """The one-line error of a failed save, naming the checkpoint kept instead."""
        what = "disk full" if e.errno in _DISK_FULL else (e.strerror or str(e))
        return CheckpointNotWritten(f"checkpoint not written: {what} at {where}; {self._kept()}")

    def _kept(self) -> str:
        """Which checkpoint a reader falls back to now (for the error of a failed save)."""
        try:
            mine = [i for i in self.list() if self._own(i)]
        except (SwarmlogError, OSError):
            return "the earlier checkpoints are kept"
        if mine:
            return f"the previous checkpoint at seq {mine[-1].seq} is kept"
        return "there is no earlier checkpoint (replay starts from seq 1)"

    def load(self, info: CheckpointInfo) -> Checkpoint:
        """Load and verify one checkpoint; raises SwarmlogError if it is corrupt."""
        data = self._read(info)
        why = _payload_problem(info, data)
        if why is not None:
            raise SwarmlogError(f"checkpoint {info.name}: {why}")
        return Checkpoint(info, data)

    def _own(self, info: CheckpointInfo) -> bool:
        """Whether a listed checkpoint claims to be this log's (identity, current format)."""
        if info.version != VERSION:
            return False
        return self.owner is None or info.swarm == self.owner.swarm_id

    def problem(self, info: CheckpointInfo, last_seq: int | None = None) -> str | None:
        """Why this checkpoint cannot be used for its log (None: it may be, checksum aside)."""
        if info.version != VERSION:
            return f"format version {info.version} predates log identities"
        o = self.owner
        if o is None:
            return None
        if info.swarm != o.swarm_id:
            return f"it belongs to another swarm (id {info.swarm or '?'}, this log is {o.swarm_id})"
        last = o.last_seq if last_seq is None else last_seq
        if info.seq > last:
            return f"its seq {info.seq} is past the log's last seq {last}"
        if info.seq > 0:
            rid = o.record_id(info.seq)
            if rid != info.event:
                return (
                    f"the log's record at seq {info.seq} is {rid!r}, not the {info.event!r} "
                    "it was taken after"
                )
        return None

    def candidates(
        self, at_or_below: int | None = None, format: str | None = None, config: str | None = None
    ) -> Iterator[Checkpoint]:
        """Usable checkpoints, newest first, with seq <= ``at_or_below`` and this format/config.

        Foreign, stale and corrupt ones are skipped with a one-line warning each, so a bad
        file costs time, never correctness. A caller that cannot decode a payload takes
        the next one.
        """
        last = self.owner.last_seq if self.owner is not None else None
        infos = [i for i in self.list() if at_or_below is None or i.seq <= at_or_below]
        old = [i for i in infos if i.version != VERSION]
        if old:  # after an upgrade: one line, not one per checkpoint
            skip(
                old[-1].name if len(old) == 1 else f"{old[0].name} … {old[-1].name} ({len(old)})",
                "written before checkpoints carried their log's identity; the next "
                "checkpoint replaces them",
            )
        for info in reversed(infos):
            if info.version != VERSION:
                continue
            if format is not None and info.format != format:
                continue
            if config is not None and info.config != config:
                continue
            try:
                why = self.problem(info, last)
                if why is None:
                    data = self._read(info)
                    why = _payload_problem(info, data)
                    if why is None:
                        yield Checkpoint(info, data)
                        continue
            except (SwarmlogError, OSError) as e:
                why = f"it cannot be read ({e})"
            skip(info.name, why)

    def latest(
        self, at_or_below: int | None = None, format: str | None = None, config: str | None = None
    ) -> Checkpoint | None:
        """The newest usable checkpoint with seq <= ``at_or_below`` matching format/config."""
        return next(self.candidates(at_or_below, format, config), None)

    def prune(self, keep: int, protect: str | None = None) -> int:
        """Delete this log's unpinned checkpoints beyond the newest ``keep``; return how many.

        Only checkpoints of this log are counted or deleted (a foreign one is left for its
        owner to judge); ones written before identities are deleted as superseded. The
        checkpoint named ``protect`` (the one just saved) is never deleted.
        """
        if keep < 1:
            raise ValueError(f"keep must be >= 1, got {keep}")
        infos = self.list()
        last = self.owner.last_seq if self.owner is not None else None
        mine = [
            i for i in infos if self._own(i) and not i.pinned and (last is None or i.seq <= last)
        ]
        old = [i for i in infos if i.version != VERSION]
        gone = [i for i in mine[: max(0, len(mine) - keep)] if i.name != protect]
        n = 0
        for info in sorted(old + gone, key=lambda i: i.seq):
            self.delete(info)
            n += 1
        return n

    def invalidate_after(self, seq: int) -> int:
        """Delete every checkpoint with seq >= ``seq``; return how many."""
        gone = [i for i in self.list() if i.seq >= seq]
        for info in gone:
            self.delete(info)
        return len(gone)


@contextmanager
def side_file(path: Path) -> Iterator[BinaryIO]:
    """Write ``path``, a file beside the checkpoints, all or nothing: a temporary file in
    the same directory, held under an exclusive flock while it is written, fsynced and
    renamed into place. Why the flock: ``FileCheckpointStore.clean_tmp`` (run by every
    checkpoint save) deletes temporary files nobody holds, i.e. those of writers that
    died; an unlocked one of a live writer was deleted under it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield f
            f.flush()
            os.fsync(f.fileno())
            os.replace(tmp, path)  # still locked: never an unheld temporary file
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def side_header(path: Path, magic: str, size: int) -> dict[str, object] | None:
    """The JSON header in the first ``size`` bytes of a side file, or None when the file
    is missing, unreadable or not of this ``magic``."""
    try:
        with open(path, "rb") as f:
            raw = f.read(size)
        h = orjson.loads(raw)
    except (OSError, orjson.JSONDecodeError):
        return None
    return h if isinstance(h, dict) and h.get("magic") == magic else None


def prune_side(directory: Path, pattern: str, keep: set[str]) -> int:
    """Unlink the side files matching ``pattern`` not named in ``keep``; return how many."""
    gone = 0
    for p in directory.glob(pattern):
        if p.name not in keep:
            try:
                p.unlink()
                gone += 1
            except FileNotFoundError:
                pass
    return gone


def _payload_problem(info: CheckpointInfo, data: bytes | memoryview) -> str | None:
    """Why a checkpoint's bytes are not what its header promises (None: they are)."""
    if info.version != VERSION:
        return f"format version {info.version} predates log identities"
    if len(data) != info.size:
        return f"it is truncated or padded ({len(data)} bytes, header says {info.size})"
    if _sum(info, data) != info.checksum:
        return "its header or payload was altered (checksum mismatch)"
    return None


def skip(name: str, reason: str) -> None:
    """Warn, in one line naming the checkpoint, that it is not used and why.

    Through the logger ``swarmlog.checkpoint`` (imported here, not at start: the CLI's
    per-action commands never pay for it); with logging unconfigured Python prints the
    message alone on stderr.
    """
    import logging

    logging.getLogger("swarmlog.checkpoint").warning(
        "swarmlog: skipping checkpoint %s: %s", name, reason
    )


def parse_header(raw: bytes, name: str) -> CheckpointInfo:
    """Parse a header line (this version's or the first); SwarmlogError if unreadable."""
    try:
        h = orjson.loads(raw)
        v = int(h.get("v", 1))
        side = h.get("side") or {}
        if not isinstance(side, dict) or not all(
            isinstance(k, str) and isinstance(d, str) for k, d in side.items()
        ):
            raise ValueError(f"side must map file names to digests, not {side!r}")
        return CheckpointInfo(
            int(h["seq"]),
            str(h["format"]),
            str(h["config"]),
            str(h["checksum"]),
            int(h["size"]),
            name,
            str(h.get("swarm", "")),
            str(h.get("event", "")),
            h.get("pinned", False) is True,
            v,
            tuple(sorted(side.items())),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise SwarmlogError(f"checkpoint {name} has an unreadable header: {e}") from None


class FileCheckpointStore(CheckpointStore):
    """Checkpoints as files ``ckpt-<seq>.bin`` in a directory beside the segments.

    A save writes ``.ckpt-<seq>.bin.<pid>.tmp`` under an flock and renames it; a
    temporary file whose flock is free belongs to a dead writer and is deleted on open
    and before each save (a failed save deletes its own at once).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        fsync: bool = True,
        owner: CheckpointOwner | None = None,
    ) -> None:
        self.dir = Path(directory)
        self.fsync = fsync
        self.owner = owner
        self.clean_tmp()

    def _name(self, seq: int) -> str:
        return f"ckpt-{seq:020d}.bin"

    def clean_tmp(self) -> int:
        """Delete temporary files of writers that died; return how many (0 if read-only).

        A temporary nobody holds is a dead writer's, except in the instant between its
        creation and its writer's flock: one of a live process (by the pid in its name)
        is left alone while it is younger than ``TMP_GRACE`` (every process that opens
        a log runs this, and one once took a ``forget``'s checkpoint from under it:
        "checkpoint not written: No such file or directory")."""
        try:
            names = [n for n in os.listdir(self.dir) if n.endswith(".tmp")]
        except OSError:
            return 0
        n = 0
        for name in names:
            path = self.dir / name
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                pid = tmp_writer(name)
                if (pid is None or alive(pid)) and time.time() - os.fstat(fd).st_mtime < TMP_GRACE:
                    continue  # (just made: its writer may not hold its lock yet)
                os.unlink(path)  # still locked by us: no writer can be using it
                n += 1
            except OSError:
                pass  # a live writer holds it, or the directory is read-only
            finally:
                os.close(fd)
        return n

    def _put(self, info: CheckpointInfo, header: bytes, data: bytes) -> None:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise self._not_written(str(self.dir), e) from None
        self.clean_tmp()
        tmp = self.dir / f".{info.name}.{os.getpid()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
        except OSError as e:
            raise self._not_written(str(self.dir), e) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # marks it live for clean_tmp in other processes
            with open(fd, "wb", closefd=False) as f:
                f.write(header + b"\n")
                f.write(data)
                f.flush()
                if self.fsync:
                    os.fsync(fd)
            os.replace(tmp, self.dir / info.name)
        except OSError as e:
            _unlink(tmp)
            raise self._not_written(str(self.dir), e) from None
        except BaseException:
            _unlink(tmp)
            raise
        finally:
            os.close(fd)
        if self.fsync:
            try:
                dfd = os.open(self.dir, os.O_RDONLY)
                try:
                    os.fsync(dfd)
                finally:
                    os.close(dfd)
            except OSError as e:
                raise self._not_written(str(self.dir), e) from None

    def local_dir(self) -> Path:
        return self.dir

    def list(self) -> builtins.list[CheckpointInfo]:
        if not self.dir.is_dir():
            return []
        out = []
        for p in sorted(self.dir.glob("ckpt-*.bin")):
            try:
                with _open_nofollow(p) as f:
                    out.append(parse_header(f.readline(65536), p.name))
            except FileNotFoundError:
                continue  # pruned meanwhile
            except (SwarmlogError, OSError) as e:
                skip(p.name, str(e).removeprefix(f"checkpoint {p.name} "))
        out.sort(key=lambda i: (i.seq, i.name))
        return out

    def _read(self, info: CheckpointInfo) -> bytes | memoryview:
        """The payload as a read-only view of the file mapped in memory (shared with other
        readers of it; safe because checkpoint files are replaced, never rewritten)."""
        with _open_nofollow(self.dir / info.name) as f:
            start = len(f.readline(65536))
            size = os.fstat(f.fileno()).st_size
            if size <= start:
                return b""
            mm = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
        return memoryview(mm)[start:]

    def delete(self, info: CheckpointInfo) -> None:
        try:
            os.unlink(self.dir / info.name)
        except FileNotFoundError:
            pass


def _open_nofollow(path: Path) -> BinaryIO:
    """Open a checkpoint for reading, never through a symlink (ELOOP: it is skipped)."""
    return open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb")


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
