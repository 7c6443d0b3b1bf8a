"""``open_log(target)``: a directory gives a FileLog, ``nats://…/STREAM`` a JetStreamLog,
``":memory:"`` a fresh in-process MemoryLog."""

from __future__ import annotations

import os
from typing import Any

from .contract import Log
from .memlog import MEMORY_TARGET, MemoryLog


def open_log(target: str | os.PathLike[str], **options: Any) -> Log:
    """Open the log at ``target`` (created if missing unless ``create=False``).

    ``":memory:"`` makes a new, private MemoryLog each call (nothing is shared or kept).
    """
    t = os.fspath(target)
    if t == MEMORY_TARGET:
        return MemoryLog(**options)
    if t.startswith(("nats://", "tls://")):
        from .jetstream import JetStreamLog

        return JetStreamLog(t, **options)
    from .filelog import FileLog

    return FileLog(t, **options)
