"""The merge-rule work item 6 (seed 003): facts accessed in the same session co-activate.

The seed builds its co-activation graph from memories ACCESSED_IN the same session; main
counted only the facts returned by one recall, so two facts an agent looked up one after
the other in a session never co-activated, and recalling one pair over and over in one
session counted every time. Now a pair counts once per session in which both were
accessed, and clusters once that count exceeds the threshold (3). A recall without a
session co-activates its own hits, as before. Real swarm on a FileLog for the last test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import FileLog
from synthesizer import Swarm
from synthesizer import events as T
from synthesizer.replay import save_checkpoint, state_at
from tests.test_fold_facts import Stream


def test_facts_accessed_in_one_session_coactivate_once_per_session() -> None:
    st = Stream()
    a, b, c = (st.fact(x) for x in "abc")
    for k in range(3):  # three sessions: a, then b, in separate recalls
        st.recall([a], session=f"s{k}")
        st.recall([b], session=f"s{k}")
        st.recall([a, b], session=f"s{k}")  # again in the same session: not counted again
    assert st.state.coact[a][b] == st.state.coact[b][a] == 3  # main: 3 (same-recall only)
    assert st.state.facts[a].cluster is None  # 3 is not above the threshold
    st.recall([b], session="s3")
    st.recall([c], session="s3")
    assert st.state.coact[b][c] == 1 and c not in st.state.coact.get(a, {})
    st.recall([a], session="s3")  # a fourth session with both a and b
    cid = f"c{st.state.facts[a].created_seq}"
    assert st.state.facts[a].cluster == st.state.facts[b].cluster == cid
    assert st.state.coact[a][c] == 1  # a joins c too in s3


def test_session_end_and_forget_drop_the_session() -> None:
    st = Stream()
    a, b = (st.fact(x) for x in "ab")
    st.recall([a], session="s1")
    st.recall([a], session="s2", agent="a2")
    st.ev(T.SESSION_ENDED, {"session": "s1"}, session="s1")
    assert st.state.accessed == {"a2": {"s2": [a]}}
    st.recall([b], session="s1")  # a new s1: a was accessed in the old one only
    assert b not in st.state.coact.get(a, {})
    st.ev(T.IDENTITY_FORGOTTEN, {"session": "s2"}, agent="operator")
    assert "a2" not in st.state.accessed
    st.ev(T.IDENTITY_FORGOTTEN, {"agent": "a1"}, agent="operator")
    assert st.state.accessed == {}


@pytest.mark.slow
def test_swarm_sessions_cluster_and_replay_from_a_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with Swarm.open(root) as swarm:
        writer = swarm.agent("w")
        writer.share("The cache TTL is five minutes for session tokens")
        writer.share("Deploys to production are frozen on Fridays")
        swarm.synthesize()
        ids = {f.content.split()[1]: f.id for f in swarm.refresh().facts.values()}
        cache, deploys = ids["cache"], ids["to"]
        for k in range(4):  # each session looks both up, one recall each
            agent = swarm.agent("r", session=f"s{k}")
            assert agent.recall("cache TTL session tokens", limit=1)[0].fact.id == cache
            assert agent.recall("production deploys Fridays", limit=1)[0].fact.id == deploys
            if k == 1:
                save_checkpoint(swarm.log, state_at(swarm.log))
        facts = swarm.refresh().facts
        assert facts[cache].cluster is not None and facts[cache].cluster == facts[deploys].cluster
    log = FileLog(root)
    assert state_at(log).digest() == state_at(log, from_start=True).digest()
