"""Erasure reaches partial quotes and reports (trust work, erasure coverage).

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

import orjson
import pytest

from swarmlog import FileLog
from synthesizer import Swarm
from synthesizer.replay import state_at
from tests.cli_util import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

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
    v = run_cli("--root", str(root), "verify")  # the partial-quote scrub is explained
    assert v.code == 0 and "problem" not in v.out, v.out
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


def test_session_and_thread_names_only_the_agent_used_are_renamed(tmp_path: Path) -> None:
    """The names the forgotten agent chose (a session it alone wrote in, a thread it
    alone wrote in) are replaced by stable pseudonyms in its records, wordless ones too
    (session bounds, reinforcements); a thread others also wrote in keeps its name in
    their records. Seqs and types do not move; the rewritten log replays as the original
    fold with the intent did."""
    root = tmp_path / "s"
    secret_s, secret_t = "session-about-SECRET-divorce", "thread-about-SECRET-divorce"
    sw = Swarm.open(root)
    try:
        sw.start_session(secret_s, agent="victim")
        v = sw.agent("victim", session=secret_s, thread=secret_t)
        v.share("my lawyer meets me on tuesday", category="note")
        sw.agent("victim", session=secret_s, thread="shared-thread").share(
            "the build is slow today", category="ops"
        )
        sw.agent("other", session="o", thread="shared-thread").share(
            "the build is slow today", category="ops"
        )
        sw.synthesize()
        fid = next(f.id for f in sw.refresh().facts.values() if f.content.startswith("the build"))
        v.reinforce(fid)
        sw.end_session(secret_s, agent="victim")
        sw.checkpoint()
    finally:
        sw.close()
    log = FileLog(root)
    try:
        before = [(ev.seq, ev.type) for ev in log.read()]
    finally:
        log.close()
    r = run_cli("--root", str(root), "forget", "--agent", "victim")
    assert r.code == 0, r.err
    assert _scan(root, [b"SECRET"]) == []
    log = FileLog(root)
    try:
        assert log.verify().ok
        evs = list(log.read())
        assert [(ev.seq, ev.type) for ev in evs][: len(before)] == before
        assert not [ev for ev in evs if "victim" in (ev.agent, orjson.dumps(ev.body).decode())]
        gone = {ev.agent for ev in evs if ev.agent.startswith("~erased-")}
        assert len(gone) == 1  # one stable pseudonym for the agent's name (global-memory work)
        sessions = {ev.session for ev in evs if ev.agent in gone}
        assert len(sessions) == 1 and next(iter(sessions)).startswith("~erased-")
        threads = {ev.thread for ev in evs if ev.agent in gone}
        assert "shared-thread" in threads  # others wrote in it: not the victim's name
        assert any(t and t.startswith("~erased-") for t in threads)
    finally:
        log.close()
    sw = Swarm.open(root)
    try:
        st = sw.refresh()
        f = st.facts[fid]
        assert f.content == "the build is slow today" and f.thread == "shared-thread"
        assert state_at(sw.log).digest() == state_at(sw.log, from_start=True).digest()
        assert st.digest() == state_at(sw.log, from_start=True).digest()
    finally:
        sw.close()
    v = run_cli("--root", str(root), "verify")  # renamed wordless records are explained
    assert v.code == 0 and "problem" not in v.out, v.out
    again = run_cli("--root", str(root), "forget", "--agent", "victim", "--json")
    assert again.code == 0 and '"redacted":0' in again.out.replace(" ", "")
