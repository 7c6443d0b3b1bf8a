"""``open_log(target)``: a directory gives a FileLog, ``nats://…/STREAM`` a JetStreamLog,
``":memory:"`` a fresh in-process MemoryLog."""

from __future__ import annotations

import os
from typing import Any

from swarmlog.contract import Log

MEMORY_TARGET = ":memory:"  # (memlog.MEMORY_TARGET; memlog loads only when asked for)


def open_log(target: str | os.PathLike[str], *, writable: bool = False, **options: Any) -> Log:
    """Open the log at ``target`` (created if missing unless ``create=False``).

    ``":memory:"`` makes a new, private MemoryLog each call (nothing is shared or kept).
    A directory log opened to be read needs no write access (a read-only mount, a backup,
    another user's log); ``writable=True`` checks at once that this process could append,
    raising ReadOnlyLog ("read-only: …") if not, rather than at the first write.
    """
    t = os.fspath(target)
    if t == MEMORY_TARGET:
        from swarmlog.memlog import MemoryLog

        return MemoryLog(**options)
    if t.startswith(("nats://", "tls://")):
        from swarmlog.jetstream import JetStreamLog

        return JetStreamLog(t, **options)
    from swarmlog.file.log import FileLog

    log = FileLog(t, **options)
    if writable:
        try:
            log.check_writable()
        except BaseException:
            log.close()
            raise
    return log
