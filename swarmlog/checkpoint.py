"""Checkpoints: opaque snapshots tagged (seq, format, config digest, checksum).

The log does not know what a checkpoint holds; the synthesizer stores its folded state
here so a reader can start from the newest valid snapshot at or below a seq and fold
only the rest. A checkpoint file is one JSON header line followed by the payload bytes::

    {"seq":1200,"format":"swarmstate/1","config":"ab12…","checksum":"…","size":5120}\\n<payload>

Writes are atomic (temporary file, fsync, rename, fsync of the directory); a corrupt or
truncated checkpoint is skipped with a warning, never trusted.
"""

from __future__ import annotations

import abc
import hashlib
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from .errors import SwarmlogError


def checksum(data: bytes) -> str:
    """The checksum stored with a checkpoint's payload (blake2b, 16 bytes, hex)."""
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


@dataclass(frozen=True)
class Checkpoint:
    """A loaded, checksum-verified checkpoint."""

    info: CheckpointInfo
    data: bytes = field(repr=False)  # the payload: its size is in ``info``

    @property
    def seq(self) -> int:
        return self.info.seq


class CheckpointStore(abc.ABC):
    """Where a log keeps its checkpoints."""

    @abc.abstractmethod
    def save(self, seq: int, data: bytes, format: str, config: str = "") -> CheckpointInfo:
        """Store ``data`` as the checkpoint at ``seq`` atomically."""

    @abc.abstractmethod
    def list(self) -> list[CheckpointInfo]:
        """Every checkpoint whose header reads, oldest first (payloads unchecked)."""

    @abc.abstractmethod
    def _read(self, info: CheckpointInfo) -> bytes:
        """The raw payload of a listed checkpoint."""

    @abc.abstractmethod
    def delete(self, info: CheckpointInfo) -> None:
        """Remove one checkpoint (used when erasure invalidates it)."""

    def load(self, info: CheckpointInfo) -> Checkpoint:
        """Load and verify one checkpoint; raises SwarmlogError if it is corrupt."""
        data = self._read(info)
        if len(data) != info.size or checksum(data) != info.checksum:
            raise SwarmlogError(f"checkpoint {info.name} is corrupt (checksum mismatch)")
        return Checkpoint(info, data)

    def latest(
        self, at_or_below: int | None = None, format: str | None = None, config: str | None = None
    ) -> Checkpoint | None:
        """The newest valid checkpoint with seq <= ``at_or_below`` matching format/config.

        Corrupt ones are skipped with a warning, so a bad file costs time, never correctness.
        """
        for info in reversed(self.list()):
            if at_or_below is not None and info.seq > at_or_below:
                continue
            if format is not None and info.format != format:
                continue
            if config is not None and info.config != config:
                continue
            try:
                return self.load(info)
            except (SwarmlogError, OSError) as e:
                warnings.warn(f"skipping checkpoint: {e}", RuntimeWarning, stacklevel=2)
        return None

    def invalidate_after(self, seq: int) -> int:
        """Delete every checkpoint with seq >= ``seq``; return how many."""
        gone = [i for i in self.list() if i.seq >= seq]
        for info in gone:
            self.delete(info)
        return len(gone)


def encode_header(seq: int, data: bytes, format: str, config: str) -> dict[str, object]:
    """The header stored in front of a payload."""
    return {
        "seq": seq,
        "format": format,
        "config": config,
        "checksum": checksum(data),
        "size": len(data),
    }


def parse_header(raw: bytes, name: str) -> CheckpointInfo:
    """Parse a header (as written by ``encode_header``); raises SwarmlogError if unreadable."""
    try:
        h = orjson.loads(raw)
        return CheckpointInfo(
            int(h["seq"]),
            str(h["format"]),
            str(h["config"]),
            str(h["checksum"]),
            int(h["size"]),
            name,
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise SwarmlogError(f"checkpoint {name} has an unreadable header: {e}") from None


class FileCheckpointStore(CheckpointStore):
    """Checkpoints as files ``ckpt-<seq>.bin`` in a directory beside the segments."""

    def __init__(self, directory: str | os.PathLike[str], fsync: bool = True) -> None:
        self.dir = Path(directory)
        self.fsync = fsync

    def save(self, seq: int, data: bytes, format: str, config: str = "") -> CheckpointInfo:
        self.dir.mkdir(parents=True, exist_ok=True)
        header = encode_header(seq, data, format, config)
        name = f"ckpt-{seq:020d}.bin"
        tmp = self.dir / f".{name}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(orjson.dumps(header) + b"\n")
            f.write(data)
            f.flush()
            if self.fsync:
                os.fsync(f.fileno())
        os.replace(tmp, self.dir / name)
        if self.fsync:
            fd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        return parse_header(orjson.dumps(header), name)

    def list(self) -> list[CheckpointInfo]:
        if not self.dir.is_dir():
            return []
        out = []
        for p in sorted(self.dir.glob("ckpt-*.bin")):
            try:
                with open(p, "rb") as f:
                    out.append(parse_header(f.readline(), p.name))
            except (SwarmlogError, OSError) as e:
                warnings.warn(f"skipping checkpoint: {e}", RuntimeWarning, stacklevel=2)
        out.sort(key=lambda i: (i.seq, i.name))
        return out

    def _read(self, info: CheckpointInfo) -> bytes:
        with open(self.dir / info.name, "rb") as f:
            f.readline()
            return f.read()

    def delete(self, info: CheckpointInfo) -> None:
        try:
            os.unlink(self.dir / info.name)
        except FileNotFoundError:
            pass
