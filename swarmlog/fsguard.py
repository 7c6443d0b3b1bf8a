"""Refuse file systems on which ``flock`` cannot be trusted across machines."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from .errors import LogUnavailable

NETWORK_FS = {
    "nfs",
    "nfs4",
    "cifs",
    "smb3",
    "smbfs",
    "9p",
    "ceph",
    "glusterfs",
    "lustre",
    "afs",
    "fuse.sshfs",
    "fuse.s3fs",
    "fuse.gcsfuse",
    "fuse.rclone",
    "davfs",
    "ncpfs",
    "gpfs",
}


def filesystem_type(path: Path) -> str | None:
    """The type of the file system holding ``path`` (Linux /proc/mounts), or None if unknown."""
    try:
        with open("/proc/mounts") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = "", None
    for parts in mounts:
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, kind = mnt, parts[2]
    return kind


def check_local(path: Path, allow_network: bool = False) -> None:
    """Raise LogUnavailable on a network file system (or only warn when ``allow_network``)."""
    kind = filesystem_type(path)
    if kind in NETWORK_FS:
        msg = (
            f"{path} is on a network file system ({kind}) where flock is not reliable "
            "across machines; use the JetStream backend for a swarm that spans machines"
        )
        if not allow_network:
            raise LogUnavailable(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
