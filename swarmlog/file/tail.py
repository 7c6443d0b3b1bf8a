"""Waiting for a log directory to change: file-system notifications plus a timeout net.

``Waiter.wait`` returns as soon as watchfiles reports a change in the directory (a few
milliseconds after a write, thanks to a short debounce), or after ``poll_interval`` at
the latest, so a missed notification costs at most one interval. With ``notify=False``
it only sleeps (the timeout path, used to test that path and on file systems without
inotify).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from swarmlog.contract import ChangeWaiter

if TYPE_CHECKING:  # watchfiles is imported by the first Waiter (only followers need it)
    from watchfiles._rust_notify import RustNotify

DEBOUNCE_MS = 20
STEP_MS = 1


class Waiter(ChangeWaiter):
    """Blocks until a directory may have changed; see module docstring."""

    def __init__(self, directory: Path, notify: bool = True, poll_interval: float = 0.25) -> None:
        self.poll_interval = poll_interval
        self._notify: RustNotify | None = None
        if notify:
            from watchfiles._rust_notify import RustNotify

            directory.mkdir(parents=True, exist_ok=True)
            self._notify = RustNotify([str(directory)], False, False, 50, False, True)

    def wait(self, timeout: float | None) -> bool:
        """Wait for a change, at most ``min(timeout, poll_interval)``; True if notified."""
        span = self.poll_interval if timeout is None else max(0.0, min(timeout, self.poll_interval))
        if self._notify is None:
            time.sleep(span)
            return False
        res = self._notify.watch(DEBOUNCE_MS, STEP_MS, max(1, int(span * 1000)), None)
        return isinstance(res, set)

    def close(self) -> None:
        """Stop the notifier's watching thread."""
        if self._notify is not None:
            close = getattr(self._notify, "close", None)
            if close is not None:
                close()
            self._notify = None
