"""What the three facades share: opening their log, folding up to an event, closing.

``target=None`` is a private in-memory log (a MemoryLog); a directory or ``nats://…``
target shares the facade with every other process that opens it.
"""

from __future__ import annotations

import os
from typing import TypeVar

from swarmlog import Event, Log, open_log
from swarmlog.memlog import MEMORY_TARGET
from synthesizer.config import SynthConfig
from synthesizer.replay import fold_into
from synthesizer.search.embed import Embedder
from synthesizer.state import SwarmState, apply
from synthesizer.swarm import Swarm


def open_target(target: str | os.PathLike[str] | None) -> Log:
    """The log of ``target``; None is a fresh, private MemoryLog."""
    return open_log(MEMORY_TARGET if target is None else target)


_F = TypeVar("_F", bound="FacadeBase")


class FacadeBase:
    """A Swarm over the target's log; the facade's calls are events folded at once."""

    def __init__(
        self,
        target: str | os.PathLike[str] | None,
        embedder: Embedder | None,
        config: SynthConfig | None = None,
    ) -> None:
        log = open_target(target)
        try:
            self._open(Swarm(log, config, embedder))
        except BaseException:
            log.close()
            raise

    def _open(self, swarm: Swarm) -> None:
        self.swarm = swarm
        self._state = swarm.refresh()

    @property
    def log(self) -> Log:
        """The log every call of this facade appends to."""
        return self.swarm.log

    def refresh(self) -> SwarmState:
        """Fold what any process appended since the last look (another process's
        writes become visible here); nothing to read when the log has not moved."""
        if self.log.last_seq != self._state.last_seq:
            self._state = self.swarm.refresh()
        return self._state

    def _append(self, event: Event, expect: dict[str, int] | None = None) -> Event:
        """Append, then fold up to and including it; returns the stored event. When
        nothing came in between, the stored event is folded as it is (no read back)."""
        stored = self.log.append(event, expect=expect)
        if stored.seq == self._state.last_seq + 1:
            apply(self._state, stored)
            observe = self.swarm.observer()
            if observe is not None:
                observe([stored.envelope])
        else:
            self._state = self.swarm.refresh()
        return stored

    def _around(self, event: Event) -> tuple[SwarmState, int]:
        """Append ``event`` and fold up to just before it: (state, its seq). Measure,
        then ``refresh()`` folds the event itself: the difference is its effect."""
        state = self.refresh()
        seq = self.log.append(event).seq or 0
        fold_into(state, self.log, seq - 1, observe=self.swarm.observer())
        return state, seq

    def close(self) -> None:
        """Close the log."""
        self.swarm.close()

    def __enter__(self: _F) -> _F:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
