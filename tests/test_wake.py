"""LogWaiter: one notifier per follower, so an append made between two waits is not missed."""

from __future__ import annotations

from pathlib import Path

from swarmlog import Event, open_log
from synthesizer.worker.wake import LogWaiter


def test_append_between_waits_wakes_the_next_wait(tmp_path: Path) -> None:
    log = open_log(tmp_path / "s")
    with LogWaiter(log) as waiter:
        assert waiter.wait(0.05) is False  # nothing changed: the timeout net
        log.append(Event(agent="a", type="x.note", body={}))  # while nobody waits
        assert waiter.wait(30.0) is True  # buffered: notified, not timed out
        assert waiter.wait(0.05) is False  # consumed
    # a fresh notifier per call (the log's own wait) cannot see the earlier append
    log.append(Event(agent="a", type="x.note", body={}))
    assert log.wait_for_change(0.05) is False
    log.close()

