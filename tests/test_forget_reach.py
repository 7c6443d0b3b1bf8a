"""Erasure reaches partial quotes and reports (issue 26, erasure coverage).

* another agent's recall query that quotes four or more consecutive words of the
  identity (in another case, with other punctuation around) loses the quote;
* the dashboard report under the root (``metrics/swarm_memory_dashboard.md``, as
  ``swarmlog demo --keep`` writes it) is rendered again from the rewritten log.
After ``forget`` a byte scan of the whole root finds none of it; the log verifies; the
replay from a checkpoint equals the replay from the start.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarmlog import FileLog
from synthesizer import Swarm
from synthesizer.replay import state_at
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(120)

WORDS = "the vault combination is orange seven falcon ninety"
PARTIAL = "ORANGE seven falcon, ninety"  # four consecutive words, other case and commas


def _scan(root: Path, needles: list[bytes]) -> list[str]:
    found = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            data = (Path(dirpath) / n).read_bytes().lower()
            if any(x.lower() in data for x in needles):
                found.append(os.path.relpath(Path(dirpath) / n, root))
    return found


def test_partial_quotes_and_the_report_are_erased(tmp_path: Path) -> None:
    root = tmp_path / "s"
    sw = Swarm.open(root)
    try:
        sw.agent("victim").share(WORDS, category="note")
        sw.agent("other").share("the build takes nine minutes on main", category="ops")
        sw.synthesize()
        sw.agent("other").recall(f"did someone say {PARTIAL} somewhere?")
        sw.checkpoint()
    finally:
        sw.close()
    report = root / "metrics" / "swarm_memory_dashboard.md"
    r = run_cli("--root", str(root), "dashboard", "--format", "markdown", "--out", str(report))
    assert r.code == 0, r.err
    needles = [b"falcon", b"orange seven"]
    assert "metrics/swarm_memory_dashboard.md" in _scan(root, needles)
    assert [p for p in _scan(root, needles) if p.startswith("segments")]
    r = run_cli("--root", str(root), "forget", "--agent", "victim")
    assert r.code == 0, r.err
    assert _scan(root, needles) == []
    assert report.exists(), "the report is rendered again"
    assert "nine minutes" in report.read_text()
    log = FileLog(root)
    try:
        assert log.verify().ok
        q = [ev.body.get("query") for ev in log.read() if ev.type == "memory.recalled"]
        assert q == ["did someone say [redacted] somewhere?"]
    finally:
        log.close()
    sw = Swarm.open(root)
    try:
        assert state_at(sw.log).digest() == state_at(sw.log, from_start=True).digest()
    finally:
        sw.close()
