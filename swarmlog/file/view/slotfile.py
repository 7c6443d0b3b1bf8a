"""The slot file of flat combining (``combine``): its layout, and wiping dead writers' posts.

A leaf beside ``combine`` (which posts and takes records through it) so that an erasure
(``redact``) can wipe it without importing the append path.
"""

from __future__ import annotations

import fcntl
import os
import struct

from swarmlog.file.fsguard import open_nofollow

NAME = "combine"
SLOTS = 64
SLOT_BYTES = 2048
HEAD = 64


def slot_lock(off: int, kind: int = fcntl.F_WRLCK) -> bytes:
    """Linux's ``struct flock``: a write lock on byte ``off`` (l_pid 0, as OFD locks need)."""
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, off, 1, 0)


def scrub_dead(root: str) -> int:
    """Wipe every slot that no live handle holds; the number wiped.

    Why: a writer killed while its record was posted leaves the record's bytes in its slot
    until another handle claims the slot, and an erasure must find the erased words
    nowhere (``redact.drop_indexes`` calls this under the append lock; a leaf module, so that
    the redaction imports nothing of the append path). A live handle's
    slot holds bytes only while its post is in flight, and it wipes them once the post
    is taken or cleared."""
    try:
        fd = open_nofollow(os.path.join(root, NAME), os.O_RDWR)
    except FileNotFoundError:
        return 0
    wiped = 0
    try:
        size = os.fstat(fd).st_size
        for i in range(SLOTS):
            off = HEAD + i * SLOT_BYTES
            if off + SLOT_BYTES > size:
                break
            try:
                fcntl.fcntl(fd, fcntl.F_OFD_SETLK, slot_lock(off))
            except OSError:
                continue  # (a live handle's slot)
            try:
                os.pwrite(fd, bytes(SLOT_BYTES), off)
                wiped += 1
            finally:
                fcntl.fcntl(fd, fcntl.F_OFD_SETLK, slot_lock(off, fcntl.F_UNLCK))
    finally:
        os.close(fd)
    return wiped


__all__ = ["HEAD", "NAME", "SLOTS", "SLOT_BYTES", "scrub_dead", "slot_lock"]
