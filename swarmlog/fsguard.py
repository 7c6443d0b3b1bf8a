"""Refuse file systems on which ``flock`` cannot be trusted across machines."""

from __future__ import annotations

import os
import warnings

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


def filesystem_type(path: str | os.PathLike[str], mounts: str | None = None) -> str | None:
    """The type of the file system holding ``path``, or None if unknown.

    Read from the mount table ``mounts`` (default: ``$SWARMLOG_MOUNTS`` or /proc/mounts;
    the override lets tests present a network mount without mounting one).
    """
    table = mounts or os.environ.get("SWARMLOG_MOUNTS") or "/proc/mounts"
    try:
        with open(table) as f:
            rows = [line.split() for line in f]
    except OSError:
        return None
    real = os.path.realpath(path)
    best, kind = "", None
    for parts in rows:
        if len(parts) < 3:
            continue
        mnt = parts[1].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
            best, kind = mnt, parts[2]
    return kind


def check_local(
    path: str | os.PathLike[str], allow_network: bool = False, mounts: str | None = None
) -> None:
    """Raise LogUnavailable on a network file system (or only warn when ``allow_network``).

    flock over NFS/SMB is either a no-op or a best-effort lock manager: two machines could
    both "hold" it and interleave seqs, so the embedded log refuses such directories.
    """
    kind = filesystem_type(path, mounts)
    if kind in NETWORK_FS:
        msg = (
            f"{path} is on a network file system ({kind}) where flock is not reliable "
            "across machines; use the JetStream backend for a swarm that spans machines"
        )
        if not allow_network:
            raise LogUnavailable(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
