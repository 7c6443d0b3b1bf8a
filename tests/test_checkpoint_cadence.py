"""The worker's periodic checkpoint: every ``checkpoint_every`` events, but on a large
state no more often than once per len(facts) / FACTS_PER_CHECKPOINT_EVENT events."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.config import SynthConfig, SynthSettings
from synthesizer.worker import synth as worker_mod
from synthesizer.worker.synth import Synthesizer


def _notes(n: int) -> list[Event]:
    return [Event(agent="a", type="x.note", body={"i": i}) for i in range(n)]


@pytest.mark.parametrize(("per_event", "gap"), [(2, 5), (20, 1)])
def test_cadence_scales_with_the_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, per_event: int, gap: int
) -> None:
    monkeypatch.setattr(worker_mod, "FACTS_PER_CHECKPOINT_EVENT", per_event)
    log = open_log(tmp_path / "s")
    cfg = SynthConfig(synthesizer=SynthSettings(checkpoint_every=1))
    w = Synthesizer(log, config=cfg)
    log.append_many(
        [
            Event(agent="a", type=T.MEMORY_SHARED, body={"content": f"distinct fact {i} zz{i}"})
            for i in range(10)
        ]
    )
    assert w.run_once() == 10 and len(w.state.facts) == 10
    assert w.last_checkpoint == w.state.last_seq  # written at the end of the pass
    # 10 facts: the gap is max(1, 10 // per_event) events
    for _ in range(gap - 1):
        log.append_many(_notes(1))
        w.catch_up()
        assert not w.maybe_checkpoint()
    log.append_many(_notes(1))
    w.catch_up()
    assert w.maybe_checkpoint()
    assert log.checkpoints.latest() is not None
    log.close()
