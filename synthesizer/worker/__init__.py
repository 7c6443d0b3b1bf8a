"""The synthesizer: the one worker that turns raw memories into facts, exactly once.

``synth`` (``Synthesizer``: the decision loop) with ``claims`` (claims on a subject
resolved by evidence), ``scorer``, ``candidates``,
``signature`` (exact duplicates), ``guards`` and ``contest`` (the merge rule applied to
candidates: merge, contest or keep apart); ``lease`` (one writer of decisions at a time),
``wake`` (waiting for appends), ``background`` (a worker thread inside an agent process)
and ``main`` (``python -m synthesizer.worker.main TARGET``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from synthesizer.worker.background import BackgroundSynth
    from synthesizer.worker.synth import Synthesizer

__all__ = ["BackgroundSynth", "Synthesizer"]

__getattr__, __dir__ = lazy_names(
    __name__, {"BackgroundSynth": ".background", "Synthesizer": ".synth"}
)
