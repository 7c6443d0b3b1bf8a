"""The append lock of a FileLog, opened only when needed and only as far as needed.

Readers take no lock (they consume complete, CRC-valid batches), so opening a log to
read needs no write access at all: a log on a read-only mount, in a backup or owned by
another user can be inspected. Writers open ``lock`` read-write (creating it); a reader
that must rule out a race with a writer (a suspected corruption) flocks a read-only
descriptor of it for a moment. On a read-only root a write fails with ReadOnlyLog.
"""

from __future__ import annotations

import fcntl
import os

from swarmlog.file.fsguard import FILE_MODE, open_nofollow

LOCK_NAME = "lock"


def open_write_lock(root: str) -> int:
    """The writers' lock descriptor (ReadOnlyLog "read-only: …" if it cannot be written)."""
    return open_nofollow(os.path.join(root, LOCK_NAME), os.O_RDWR | os.O_CREAT, FILE_MODE)


def open_read_lock(root: str) -> int:
    """A read-only descriptor of the lock, or -1 if none exists (no writer ever ran)."""
    try:
        return open_nofollow(os.path.join(root, LOCK_NAME), os.O_RDONLY, writing=False)
    except FileNotFoundError:
        return -1


class Flock:
    """``with Flock(fd):`` holds an exclusive flock on ``fd``; closes ``fd`` after if owned.

    ``fd`` -1 (no lock file: no writer to exclude) holds nothing.
    """

    def __init__(self, fd: int, owned: bool = False) -> None:
        self.fd = fd
        self.owned = owned

    def __enter__(self) -> None:
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        if self.fd < 0:
            return
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        if self.owned:
            os.close(self.fd)
