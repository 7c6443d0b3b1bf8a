"""The synthesizer's backlog over time (``synthesizer.backlog``), in ``stats --json`` and
the metrics panel: equal to a count from the log at every point."""

from __future__ import annotations

import json
import time
from pathlib import Path

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.backlog import DECIDED, backlog_series
from synthesizer.replay import state_at
from synthesizer.worker.synth import Synthesizer
from tests.cli_util import run_cli


def _share(log: object, lo: int, hi: int) -> None:
    for i in range(lo, hi):  # one append each: spread over log time
        log.append(  # type: ignore[attr-defined]
            Event(agent="a", type=T.MEMORY_SHARED, body={"content": f"note {i} about kq{i}"})
        )


def _reference(log: object, t: float) -> int:
    """Memories logged at or before ``t`` and not decided by ``t``, counted from the log."""
    shared, decided = set(), set()
    for e in log.read():  # type: ignore[attr-defined]
        if e.ts > t:
            continue
        if e.type == T.MEMORY_SHARED:
            shared.add(e.seq)
        elif e.type in DECIDED:
            decided.add(e.body["evidence"])
    return len(shared - decided)


def test_backlog_series_matches_a_count_from_the_log(tmp_path: Path) -> None:
    log = open_log(tmp_path / "s")
    w = Synthesizer(log)
    _share(log, 0, 30)
    time.sleep(0.05)
    assert w.run_once() == 30
    _share(log, 30, 45)  # decided in two passes: the backlog rises and falls
    time.sleep(0.05)
    w.run_once()
    _share(log, 45, 60)  # left pending
    state = state_at(log)
    series = backlog_series(log, state, span_s=60.0, points=25)
    assert len(series) == 25 and series[-1][1] == 15 == len(state.pending)
    assert [b for _, b in series] == [_reference(log, t) for t, _ in series]
    assert max(b for _, b in series) >= 15
    r = run_cli("--root", str(tmp_path / "s"), "stats", "--json")
    assert r.code == 0
    got = json.loads(r.out)["backlog"]
    assert got[-1][1] == 15 and len(got) == 13
    text = run_cli("--root", str(tmp_path / "s"), "stats")
    assert "synthesizer backlog: now 15" in text.out
    log.close()


def test_empty_swarm_has_no_series(tmp_path: Path) -> None:
    log = open_log(tmp_path / "s")
    assert backlog_series(log, state_at(log)) == []
    log.close()
