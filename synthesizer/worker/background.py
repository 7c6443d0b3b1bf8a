"""A synthesizer running on a background thread of an agent-facing process.

Why: an MCP server (one per agent process) should turn shared memories into facts
without a separately managed ``swarmlog synth --follow``. Every such process runs one;
the log's lease (the ``synthesizer`` key's CAS) lets exactly one of them decide at a
time, and the others stand by and take over when the holder stops appending.

The worker gets its own log handle and its own folded state, so it never shares mutable
state with the threads that serve the agent.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from swarmlog import Log, SwarmlogError, open_log
from synthesizer.worker.follow import Follower
from synthesizer.worker.synth import Synthesizer


@dataclass(frozen=True)
class SynthStatus:
    """What the background worker is doing: ``role``: off, ready, holding, standby or stopped."""

    role: str
    decisions: int
    error: str | None = None
    holder: str | None = None
    """The lease holder as this worker last saw it (one line), while it stands by."""
    storage: str | None = None
    """The storage error (disk full, I/O error) the worker is waiting out, one line; None
    while the log takes its writes (follow.py)."""


class BackgroundSynth:
    """``start()`` a worker thread on ``target``; ``stop()`` folds, checkpoints and joins."""

    def __init__(
        self,
        target: str | os.PathLike[str],
        poll: float = 0.25,
        *,
        name: str | None = None,
        lease_timeout_s: float | None = None,
        **log_options: Any,
    ) -> None:
        """``name`` names the worker in the lease; ``lease_timeout_s`` overrides the
        swarm's ``synthesizer.lease_timeout_s`` (how long before a silent holder is
        replaced)."""
        self.target = target
        self.poll = poll
        self.name = name
        self.lease_timeout_s = lease_timeout_s
        self.log_options = log_options
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._worker: Synthesizer | None = None
        self._follower: Follower | None = None
        self._error: str | None = None

    def start(self) -> BackgroundSynth:
        """Open a log handle and start the worker thread (daemon: never blocks exit)."""
        log = open_log(self.target, **self.log_options)
        self._worker = Synthesizer(log, name=self.name, lease_timeout_s=self.lease_timeout_s)
        self._follower = Follower(self._worker)
        self._thread = threading.Thread(
            target=self._run, args=(log,), name="swarmlog-synth", daemon=True
        )
        self._thread.start()
        return self

    def _run(self, log: Log) -> None:
        worker, follower = self._worker, self._follower
        assert worker is not None and follower is not None
        try:
            follower.run(stop=self._stop.is_set, poll=self.poll)  # (waits out a full disk)
            worker.catch_up()
            worker.maybe_checkpoint(force=True)
            worker.release()  # the next server takes over at once, not after the timeout
        except SwarmlogError as e:  # the log went away: report it, never kill the host
            self._error = str(e).splitlines()[0] if str(e) else type(e).__name__
        finally:
            log.close()

    def status(self) -> SynthStatus:
        """The worker's role and decision count (read without locking: ints and bools)."""
        w = self._worker
        if w is None or self._thread is None:
            return SynthStatus("off", 0)
        if not self._thread.is_alive():
            return SynthStatus("stopped", w.decisions, self._error)
        storage = self._follower.condition if self._follower is not None else None
        if w.decisions == 0 and not w.standing_by:
            return SynthStatus("ready", 0, storage=storage)
        if w.standing_by:
            h = w.holder
            return SynthStatus(
                "standby", w.decisions, holder=h.describe() if h else None, storage=storage
            )
        return SynthStatus("holding", w.decisions, storage=storage)

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the worker to finish its pass and wait for it."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
