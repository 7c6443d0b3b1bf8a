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
OPERATOR_LOCK = "compact.lock"
"""Held by compactions, redactions and seals (the operators' writes), never by appends."""
SPIN_MAX = 64
"""Non-blocking tries (about a microsecond each) an appender may make before it sleeps."""
_EX_NB = fcntl.LOCK_EX | fcntl.LOCK_NB


def open_write_lock(root: str) -> int:
    """The writers' lock descriptor (ReadOnlyLog "read-only: …" if it cannot be written)."""
    return open_nofollow(os.path.join(root, LOCK_NAME), os.O_RDWR | os.O_CREAT, FILE_MODE)


def open_read_lock(root: str) -> int:
    """A read-only descriptor of the lock, or -1 if none exists (no writer ever ran)."""
    try:
        return open_nofollow(os.path.join(root, LOCK_NAME), os.O_RDONLY, writing=False)
    except FileNotFoundError:
        return -1


def operator_lock(root: str) -> Flock:
    """``with operator_lock(root):`` holds ``compact.lock``: one operator write at a time
    (a compaction, a redaction, a seal); appenders and readers never wait on it."""
    fd = open_nofollow(os.path.join(root, OPERATOR_LOCK), os.O_RDWR | os.O_CREAT, FILE_MODE)
    return Flock(fd, owned=True)


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


def lock_spinning(fd: int, budget: int) -> int:
    """Take the exclusive flock on ``fd``, first by up to ``budget`` non-blocking tries,
    then asleep; the budget for the next time: ``SPIN_MAX`` again when a try got the
    lock, halved (at least 1) when the writer had to sleep.

    Why: an appender holds the lock for microseconds, and a waiter that sleeps in flock
    costs a wake-up on both sides (2 writers on 2 cores: 27-33k appends/s sleeping at
    once, 35-45k trying first; docs/benchmarks.md, "what the append lock holds"). Where waiting
    awake does not pay (more writers than cores, a holder descheduled), the tries fail
    and the budget falls, so little CPU is spent on them (16 writers: within noise).
    """
    flock = fcntl.flock
    try:
        flock(fd, _EX_NB)
        return budget
    except BlockingIOError:
        pass
    for _ in range(budget):
        try:
            flock(fd, _EX_NB)
        except BlockingIOError:
            continue
        return SPIN_MAX
    flock(fd, fcntl.LOCK_EX)
    return max(1, budget // 2)
