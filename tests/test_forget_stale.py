"""A state folded before a forget is never checkpointed (synthesizer/replay.py
``ErasedSince``): a process that folded another agent's quote of the forgotten words
keeps it in memory after folding ``identity.forgotten`` (the fold cannot know what the
log's rewrite scrubbed), so its next checkpoint would write the words back to disk. The
log's redaction count, taken when the fold began, tells it to fold anew first.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarmlog import Event, MemoryLog
from synthesizer import Swarm, SynthConfig
from synthesizer.config import SynthSettings
from synthesizer.replay import ErasedSince, save_checkpoint_info, state_at
from synthesizer.worker.synth import Synthesizer
from tests.conftest import LogTarget

pytestmark = pytest.mark.timeout(120)

MARK = "ZQXSTALEMARKER"
SEASON = "the quarterly sales dataset shows a strong twelve month seasonal cycle"


def files_with(root: Path, needle: str) -> list[str]:
    found = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            if needle.encode() in (Path(dirpath) / n).read_bytes():
                found.append(n)
    return found


SECRET = f"{MARK} private note about the garage door"


def _quoted(sw: Swarm) -> None:
    """The victim shares a secret; a board write quotes it on another agent's fact."""
    sw.agent("other").share(SEASON, category="discovery")
    sw.agent("victim").share(SECRET, category="note")
    sw.synthesize()
    season = next(f for f in sw.refresh().facts.values() if "seasonal" in f.content)
    sw.board.cas(season.id, season.version, value=f"see {SECRET!r}")


@pytest.mark.slow
def test_a_swarm_folded_before_the_forget_checkpoints_the_rewritten_log(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with Swarm.open(root) as live, Swarm.open(root) as operator:
        _quoted(live)
        assert any(MARK in (f.value or "") for f in live.refresh().facts.values())
        operator.forget(agent="victim")
        assert files_with(root, MARK) == []
        live.refresh()  # folds the intent: the quote is still in this process's memory
        assert any(MARK in (f.value or "") for f in live.state().facts.values())
        with pytest.raises(ErasedSince):
            save_checkpoint_info(live.log, live.state())
        seq = live.checkpoint()  # folds anew from the rewritten log, then stores that
        assert seq == live.log.last_seq
        assert files_with(root, MARK) == []
        assert not any(MARK in (f.value or "") for f in live.state().facts.values())
        assert live.state().digest() == state_at(live.log, from_start=True).digest()


def test_a_worker_reloads_instead_of_checkpointing(tmp_path: Path) -> None:
    root = tmp_path / "s"
    every_event = SynthConfig(synthesizer=SynthSettings(checkpoint_every=1))
    with Swarm.open(root, config=every_event) as sw:
        _quoted(sw)
        worker = Synthesizer(sw.log)
        worker.catch_up()
        with Swarm.open(root) as operator:
            operator.forget(agent="victim")
        worker.catch_up()
        assert not worker.maybe_checkpoint()  # refused, and folded anew instead
        assert not any(MARK in (f.value or "") for f in worker.state.facts.values())
        assert worker.maybe_checkpoint(force=True)
        assert files_with(root, MARK) == []


def test_memorylog_counts_redactions() -> None:
    log = MemoryLog()
    with Swarm(log) as sw:
        _quoted(sw)
        before = log.redactions()
        sw.forget(agent="victim")
        assert log.redactions() > before


def test_every_backend_counts_redactions(log_target: LogTarget) -> None:
    """``Log.redactions`` grows with each redaction that rewrote a record, on each backend."""
    with log_target.open() as log:
        for i in range(3):
            log.append(Event(agent="a", type="note.added", body={"text": f"entry {i}"}))
        assert log.redactions() == 0
        assert log.redact({2: None}) == 1
        once = log.redactions()
        assert once > 0
        log.redact({2: None})  # already a tombstone: nothing rewritten
        log.redact({3: {"text": "x"}})
        assert log.redactions() > once
