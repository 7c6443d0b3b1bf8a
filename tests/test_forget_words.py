"""Erasure keeps the others' words (merge-rule work, item 5).

A fact the forgotten identity created and others support takes the earliest surviving
evidence's own words (and category, importance); a fact left with no evidence goes; no
fact anywhere (live, evicted, recall, board, dashboard) is a "[redacted]" placeholder.
The original log folded with the intent and the rewritten log replayed agree, and a
replay from a checkpoint equals one from the start, also after a second forget.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from synthesizer import Swarm
from synthesizer.events import IDENTITY_FORGOTTEN
from synthesizer.forget.planned import PLANNED
from synthesizer.replay import state_at
from synthesizer.state.erasure import REDACTED
from tests.cli_util import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

VICTIM = "Deploys are FROZEN on Fridays."
OTHER = "deploys are frozen on fridays"
THIRD = "Deploys are frozen on fridays!!"


def _swarm(root: Path) -> str:
    """victim discovers, other then third corroborate (other words each); victim also
    shares a fact nobody else supports. Returns the shared fact's id."""
    sw = Swarm.open(root)
    try:
        sw.agent("victim", session="sv").share(VICTIM, category="policy", importance=0.2)
        sw.agent("victim", session="sv").share("victim alone knows the garage code 4711")
        sw.synthesize()
        sw.checkpoint()
        sw.agent("other", session="so").share(OTHER, category="ops", importance=0.9)
        sw.agent("third", session="st").share(THIRD, category="misc")
        sw.synthesize()
        st = sw.refresh()
        f = next(f for f in st.facts.values() if f.content == VICTIM)
        assert [e.agent for e in f.evidence] == ["victim", "other", "third"]
        sw.checkpoint()
        return f.id
    finally:
        sw.close()


def _no_placeholder(root: Path) -> None:
    sw = Swarm.open(root)
    try:
        st = sw.refresh()
        for f in [*st.facts.values(), *st.evicted.values()]:
            assert REDACTED not in f.content, f
        hits = sw.agent("reader").recall("deploys frozen fridays garage code")
        assert hits and not [h for h in hits if REDACTED in h.fact.content]
    finally:
        sw.close()
    for args in (("board",), ("board", "--json"), ("dashboard", "--format", "markdown")):
        r = run_cli("--root", str(root), *args)
        assert r.code == 0, r.err
        assert REDACTED not in r.out, args


def _replays_agree(root: Path) -> None:
    sw = Swarm.open(root)
    try:
        st = sw.refresh()
        assert state_at(sw.log).digest() == state_at(sw.log, from_start=True).digest()
        assert st.digest() == state_at(sw.log, from_start=True).digest()
    finally:
        sw.close()


def test_the_co_shared_fact_keeps_the_other_agents_words(tmp_path: Path) -> None:
    root = tmp_path / "s"
    fid = _swarm(root)
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    r = run_cli("--root", str(root), "forget", "--agent", "victim")
    assert r.code == 0, r.err
    sw = Swarm.open(root)
    try:
        st = sw.refresh()
        f = st.facts[fid]
        assert (f.content, f.category, f.importance) == (OTHER, "ops", 0.9)
        assert f.session == "so" and [e.agent for e in f.evidence] == ["other", "third"]
        assert not [g for g in st.facts.values() if "garage" in g.content]  # no evidence left
    finally:
        sw.close()
    # a process that folded the original log and then the intent agrees with the replay
    with FileLog(root) as done:  # the plan forget appended after its request
        plan = [e for e in done.read() if e.type == PLANNED]
    log = FileLog(twin)
    try:
        log.append(Event(agent="operator", type=IDENTITY_FORGOTTEN, body={"agent": "victim"}))
        log.append(Event(agent="operator", type=PLANNED, body=plan[0].body))
        original = state_at(log, from_start=True)
    finally:
        log.close()
    sw = Swarm.open(root)
    try:
        rewritten = state_at(sw.log, from_start=True)
        rewritten.last_ts = original.last_ts  # (the twin's intent was appended later)
        assert rewritten.digest() == original.digest()
    finally:
        sw.close()
    _no_placeholder(root)
    _replays_agree(root)
    # forgetting the next survivor too: the fact moves on to the third agent's words
    r = run_cli("--root", str(root), "forget", "--agent", "other")
    assert r.code == 0, r.err
    sw = Swarm.open(root)
    try:
        f = sw.refresh().facts[fid]
        assert (f.content, f.category, [e.agent for e in f.evidence]) == (THIRD, "misc", ["third"])
    finally:
        sw.close()
    _no_placeholder(root)
    _replays_agree(root)


def test_forgetting_a_session_keeps_the_same_agents_other_session(tmp_path: Path) -> None:
    """The survivor may be the same agent in another session: its own words stay."""
    root = tmp_path / "s"
    sw = Swarm.open(root)
    try:
        sw.agent("al", session="secret").share(VICTIM, category="policy")
        sw.synthesize()
        sw.agent("al", session="open").share(OTHER, category="ops")
        sw.synthesize()
        fid = next(iter(sw.refresh().facts))
        sw.forget(session="secret", by="operator")
        f = sw.refresh().facts[fid]
        assert (f.content, f.session) == (OTHER, "open")
    finally:
        sw.close()
    _no_placeholder(root)
    _replays_agree(root)
