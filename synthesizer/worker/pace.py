"""When a following synthesizer starts its next pass: batches under a stream, at once after quiet.

Why: every batch the worker appends ends with a ``synth.progress`` mark (the lease's CAS,
``lease``). A worker that starts a pass as soon as the previous one ended, and that
decides whatever its catch-up finds after each batch, meets a steady stream of shared
memories one or two at a time: about one mark per decision, so the log grew by ~3
events per shared memory where the memory and its decision make 2.

The rule (``Synthesizer.run``; the wall clock decides only *when* the worker writes,
never *what*: decisions inside a batch see each other through the overlay, so batch
boundaries do not change the outcome, and the fold never reads this clock):

* After a quiet spell (the last pass decided nothing) the worker waits for the log to
  change and starts a pass at once: the first memory after quiet is decided without
  delay.
* While passes keep deciding, a pass starts no earlier than ``gather_s`` after the
  previous one started, and a pass decides only the raws pending when it began plus
  full batches (``decide_pending(gather=True)``): what arrives meanwhile waits for the
  next pass and is decided in one batch, with one mark.
* A pass that took longer than the window is followed at once: when the worker falls
  behind, batches grow with the backlog (up to ``batch_size``) and no wait is added.

The cost is latency while busy: a memory waits at most ``gather_s`` more for its
decision (the lease timeout is seconds: a holder that gathers is never taken for gone).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

GATHER_S = 0.025
"""The gather window of a busy worker (seconds): at most this much added latency."""


class Pace:
    """Start times of a following worker's passes (see module docstring)."""

    def __init__(
        self, gather_s: float = GATHER_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not gather_s >= 0:
            raise ValueError(f"gather_s must be >= 0, got {gather_s}")
        self.gather_s = gather_s
        self._clock = clock
        self._began = -math.inf

    def begin(self) -> None:
        """A pass begins now."""
        self._began = self._clock()

    def rest(self, decided: int) -> float:
        """Seconds to wait before the next pass, after one that decided ``decided`` raws:
        none after a pass that decided nothing (the worker then waits for the log to
        change and decides the first new memory at once), else what is left of the
        window that began with the pass (none if the pass outlasted it)."""
        if not decided:
            return 0.0
        return max(0.0, self._began + self.gather_s - self._clock())
