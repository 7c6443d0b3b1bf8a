"""Waiting for a log to change without missing an append made between two waits.

``Log.wait_for_change`` may start a fresh watch per call (FileLog does), so an append
that lands while the caller is busy (the worker deciding a batch, a reader folding) is
not seen and the next wait sleeps its whole timeout. A follower that waits in a loop
(the synthesizer worker, a watching reader) holds one ``Log.change_waiter`` for its
whole life instead: it buffers changes between waits.
"""

from __future__ import annotations

from swarmlog import Log

__all__ = ["LogWaiter"]


class LogWaiter:
    """One watch per follower: ``wait`` returns early for any change since the last one."""

    def __init__(self, log: Log) -> None:
        self.log = log
        self._waiter = log.change_waiter()

    def wait(self, timeout: float) -> bool:
        """Wait until the log may have changed (since the previous wait) or ``timeout``."""
        return self._waiter.wait(timeout)

    def close(self) -> None:
        """Stop the watch (idempotent)."""
        self._waiter.close()

    def __enter__(self) -> LogWaiter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
