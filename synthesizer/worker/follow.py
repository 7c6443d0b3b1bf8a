"""A following synthesizer outlives a full or failing disk: it waits, retries, catches up.

Why: ``Synthesizer.run`` stops at the first decision batch the log cannot write
(``SynthInterrupted``: nothing of that batch is written, the worker's state is rolled
back). ``swarmlog synth --follow`` then exited 1 and never resumed, and the MCP server's
embedded synthesizer reported ``stopped`` for good, though a full disk is usually made
room on within minutes. ``Follower.run`` runs the same loop, and when it stops on a
storage error (ENOSPC, EIO, EDQUOT, EFBIG: as an OSError, or as the log's own error
wrapping one) it logs one line, keeps the condition for ``status``/``stats``, waits with
a growing backoff (``BACKOFF_MIN`` to ``BACKOFF_MAX`` seconds, watching ``stop``), tries
one pass, and once a pass goes through clears the condition and follows again: the
memories shared meanwhile are decided by that pass. Any other error ends the loop as it
did before.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from collections.abc import Callable

from swarmlog import SwarmlogError
from synthesizer.worker.synth import Synthesizer

LOG = logging.getLogger("synthesizer")

STORAGE_ERRNOS = frozenset((errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG))
"""The write errors a follower waits out: the disk (or quota, or file size limit) is full,
or the device failed a write; room is made or the device comes back."""
_REASONS = tuple(os.strerror(n) for n in STORAGE_ERRNOS)

BACKOFF_MIN = 0.25
"""Seconds before the first retry after a storage error."""
BACKOFF_MAX = 5.0
"""The longest wait between two retries (so a disk made room on is used within it)."""


def storage_error(e: BaseException) -> bool:
    """Whether ``e`` (or an error it wraps) is one of ``STORAGE_ERRNOS``: an OSError with
    that errno, or one of the log's errors whose message carries its reason (the log's
    errors name the path and the OS's reason, not the number)."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, OSError) and cur.errno in STORAGE_ERRNOS:
            return True
        if isinstance(cur, SwarmlogError) and any(r in str(cur) for r in _REASONS):
            return True
        cause = getattr(cur, "cause", None)  # (SynthInterrupted keeps the batch's error)
        nxt = cause if isinstance(cause, BaseException) else None
        cur = nxt or cur.__cause__ or cur.__context__
    return False


class Follower:
    """``Synthesizer.run`` that waits out storage errors (see module docstring)."""

    def __init__(
        self,
        worker: Synthesizer,
        backoff_min: float = BACKOFF_MIN,
        backoff_max: float = BACKOFF_MAX,
    ) -> None:
        self.worker = worker
        self.backoff_min = backoff_min
        self.backoff_max = backoff_max
        self.condition: str | None = None
        """The storage error the follower is waiting out (one line), None while writes go."""
        self.retries = 0
        """How many passes were retried after a storage error, in all."""

    def run(
        self,
        stop: Callable[[], bool] | None = None,
        poll: float = 0.5,
        idle_exit: float | None = None,
    ) -> None:
        """Follow until ``stop()`` (or ``idle_exit`` s idle), retrying through storage errors."""
        delay = self.backoff_min
        while not (stop and stop()):
            try:
                if self.condition is not None:
                    self.worker.run_once()  # (one pass: does the log take writes again?)
                    LOG.warning("synth: writes succeed again; following")
                    self.condition = None
                    delay = self.backoff_min
                self.worker.run(stop=stop, poll=poll, idle_exit=idle_exit)
                return
            except (SwarmlogError, OSError) as e:
                if not storage_error(e):
                    raise
                line = (str(e).splitlines() or [type(e).__name__])[0]
                if self.condition is None:
                    LOG.warning("synth: %s; retrying until the log takes writes again", line)
                self.condition = line
                self.retries += 1
                self._sleep(delay, stop)
                delay = min(self.backoff_max, delay * 2)

    @staticmethod
    def _sleep(seconds: float, stop: Callable[[], bool] | None) -> None:
        """Wait ``seconds``, returning early once ``stop()`` is true."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0 and not (stop and stop()):
            time.sleep(min(left, 0.05))
