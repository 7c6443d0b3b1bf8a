"""``open_log(target)``: a directory path gives a FileLog, ``nats://…/STREAM`` a JetStreamLog."""

from __future__ import annotations

import os
from typing import Any

from .contract import Log


def open_log(target: str | os.PathLike[str], **options: Any) -> Log:
    """Open the log at ``target`` (created if missing unless ``create=False``)."""
    t = os.fspath(target)
    if t.startswith(("nats://", "tls://")):
        from .jetstream import JetStreamLog

        return JetStreamLog(t, **options)
    from .filelog import FileLog

    return FileLog(t, **options)
