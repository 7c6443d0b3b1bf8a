"""Guards on where a log lives: no network file systems, no symlinks inside a root.

``flock`` cannot be trusted across machines, so network file systems are refused; and
paths inside a log root are opened without following symlinks (see below).
"""

from __future__ import annotations

import errno
import os
import stat
import warnings

from swarmlog.errors import LogUnavailable, ReadOnlyLog, SwarmlogError

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


# ---------------------------------------------------------------- paths inside a log root
#
# A log directory may be shared with other users or restored from somewhere else, so
# nothing inside it is trusted to be what its name says: a symlink planted as a segment,
# as ``repairs.jsonl`` or as ``segments/`` could make a repair truncate, or an append
# overwrite, a file outside the log. Files are opened with O_NOFOLLOW, directories are
# checked with lstat, and modes are 0o666/0o777 so that the umask decides (as for any
# file a program creates).

FILE_MODE = 0o666
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def symlink_refused(path: str | os.PathLike[str]) -> LogUnavailable:
    """The error for a symlink found where a log keeps a file or directory."""
    return LogUnavailable(
        f"{os.fspath(path)} is a symlink; swarmlog does not follow symlinks inside a log "
        "directory (replace it with the real file, or open the log at its real path)"
    )


def os_error(e: OSError, path: str | os.PathLike[str], writing: bool = False) -> SwarmlogError:
    """``e`` (raised on ``path``) as a one-line SwarmlogError naming the path.

    A write refused by a read-only mount or by permissions becomes ReadOnlyLog
    ("read-only: …"); a symlink met by O_NOFOLLOW names itself; anything else is
    LogUnavailable with the OS's reason.
    """
    p = os.fspath(path)
    if e.errno == errno.ELOOP:
        return symlink_refused(p)
    reason = e.strerror or str(e)
    if writing and e.errno in _READ_ONLY:
        return ReadOnlyLog(f"read-only: cannot write {p} ({reason})")
    return LogUnavailable(f"{p}: {reason}")


def open_nofollow(path: str, flags: int, mode: int = FILE_MODE, writing: bool | None = None) -> int:
    """``os.open`` that refuses a symlink as the last component; errors name ``path``.

    ``FileNotFoundError`` passes through unchanged (callers treat a missing file as
    "not there yet"); every other OSError becomes a SwarmlogError (see ``os_error``).
    """
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except FileNotFoundError:
        raise
    except OSError as e:
        w = bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)) if writing is None else writing
        raise os_error(e, path, w) from None


def check_real_dir(path: str | os.PathLike[str]) -> None:
    """Refuse ``path`` if it is a symlink (a missing path is fine: it is created later)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise os_error(e, path) from None
    if stat.S_ISLNK(st.st_mode):
        raise symlink_refused(path)
    if not stat.S_ISDIR(st.st_mode):
        raise LogUnavailable(f"{os.fspath(path)} is not a directory")


def read_nofollow(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the file at ``path`` (never through a symlink)."""
    with os.fdopen(open_nofollow(os.fspath(path), os.O_RDONLY, writing=False), "rb") as f:
        return f.read()


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make a directory's entries (a new or renamed file) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
