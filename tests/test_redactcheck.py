"""Redactions a forget request accounts for (synthesizer/forget/redactions.py).

The chain walk accepts a redacted record whose marker names its stored chain value, so
a redaction made outside ``forget`` — a direct ``Log.redact``, or a record rewritten by
hand into a marker with its length kept — still verifies. ``unexplained`` finds them:
a forget leaves its request in the log, an unexplained redaction does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import Event, FileLog, MemoryLog
from swarmlog.redaction import redact_line
from synthesizer import Swarm
from synthesizer.forget.redactions import MAX_LISTED, unexplained
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(120)


def _shares(sw: Swarm) -> None:
    for i in range(4):
        sw.agent("alice").share(f"alice finding {i}: the cache evicts keys under load")
        sw.agent("bob").share(f"bob finding {i}: the queue stalls after a deploy")
    sw.synthesize()


@pytest.mark.parametrize("backend", ["file", "memory"])
def test_a_forget_explains_its_redactions(tmp_path: Path, backend: str) -> None:
    with Swarm.open(tmp_path / "s") if backend == "file" else Swarm(MemoryLog()) as sw:
        _shares(sw)
        sw.agent("bob").recall("alice finding 2: the cache evicts keys under load")
        res = sw.forget(agent="alice")
        assert res.redacted > 0
        assert sw.log.verify().ok
        assert unexplained(sw.log) == []


def test_a_direct_redaction_is_reported(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s") as sw:
        _shares(sw)
        bob = next(e.seq for e in sw.log.read(1) if e.agent == "bob")
        sw.log.redact({bob: None})
        assert sw.log.verify().ok  # the chain cannot tell
        problems = unexplained(sw.log)
    assert len(problems) == 1
    assert problems[0].startswith(f"seq {bob}: a tombstone") and "'bob'" in problems[0]


def test_forgetting_alice_does_not_explain_a_redaction_of_bob(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s") as sw:
        _shares(sw)
        sw.forget(agent="alice")
        bob = next(e.seq for e in sw.log.read(1) if e.agent == "bob")
        sw.log.redact({bob: None})
        problems = unexplained(sw.log)
    assert [p.split(":")[0] for p in problems] == [f"seq {bob}"]


def test_a_hand_forged_marker_verifies_but_is_reported(tmp_path: Path) -> None:
    """A record rewritten in the segment file into a tombstone (padded like a real one):
    CRC, chain and ``verify`` are satisfied; the missing request is not."""
    root = tmp_path / "s"
    with FileLog(root) as log:
        for i in range(5):  # bodies longer than a marker: the tombstone is padded to fit
            log.append(Event(agent="a", type="note.added", body={"text": f"entry {i} " * 20}))
    seg = next((root / "segments").glob("*.jsonl"))
    lines = seg.read_bytes().splitlines(keepends=True)
    forged = redact_line(lines[2], None, pad_to=len(lines[2]))
    assert forged is not None
    lines[2] = forged
    seg.write_bytes(b"".join(lines))
    with FileLog(root) as log:
        assert log.verify().ok
        assert [p.split(":")[0] for p in unexplained(log)] == ["seq 3"]
    r = run_cli("--root", str(root), "verify")
    assert r.code == 1
    assert "problem: seq 3: a tombstone" in r.out


def test_scrubs_without_any_request_and_the_cap(tmp_path: Path) -> None:
    with FileLog(tmp_path / "s") as log:
        for i in range(MAX_LISTED + 5):
            log.append(Event(agent="a", type="note.added", body={"text": f"entry {i}"}))
        log.redact({1: {"text": "x"}, **{s: None for s in range(2, MAX_LISTED + 6)}})
        problems = unexplained(log)
    assert len(problems) == MAX_LISTED + 1
    assert problems[-1] == "... and 5 more unexplained redacted record(s)"
    assert any(p.startswith("seq 1: a scrubbed record") for p in problems)
