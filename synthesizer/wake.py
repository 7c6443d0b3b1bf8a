"""Waiting for a log to change without missing an append made between two waits.

``FileLog.wait_for_change`` starts a fresh file-system notifier on every call, so an
append that lands while the caller is busy (the worker deciding a batch, a reader
folding) is not seen: the next wait sleeps its whole timeout although the log has
already changed. A follower that waits in a loop (the synthesizer worker, a watching
reader) keeps one notifier for its whole life instead: it buffers changes between
waits, so a wait after an unseen append returns at once. Logs without a local
directory (memory, JetStream) wait as their contract says.
"""

from __future__ import annotations

from pathlib import Path

from swarmlog import Log
from swarmlog.tail import Waiter

__all__ = ["LogWaiter"]


class LogWaiter:
    """One notifier per follower: ``wait`` returns early for any change since the last one."""

    def __init__(self, log: Log) -> None:
        self.log = log
        segdir = getattr(log, "segdir", None)
        self._waiter: Waiter | None = None
        if segdir is not None and getattr(log, "notify", False):
            self._waiter = Waiter(Path(segdir), True, float(getattr(log, "poll_interval", 0.25)))

    def wait(self, timeout: float) -> bool:
        """Wait until the log may have changed (since the previous wait) or ``timeout``."""
        if self._waiter is None:
            return self.log.wait_for_change(timeout)
        return self._waiter.wait(timeout)

    def close(self) -> None:
        """Stop the notifier (idempotent)."""
        if self._waiter is not None:
            self._waiter.close()
            self._waiter = None

    def __enter__(self) -> LogWaiter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
