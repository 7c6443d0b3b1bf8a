"""Who may erase what (trust work): from the log, not from claims.

* a session belongs to the agent whose event opened it: another agent naming it on its
  own envelope cannot forget it (API, CLI and a raw intent the fold refuses);
* ``memstore.forgotten`` checks its writer like ``identity.forgotten``;
* store identities forget by prefix (seed 001: DELETE WHERE prefix);
* ``forget`` of an identity with no events exits 1 ("no events by ...") unless --force;
* reserved names (``synthesizer``, ``operator``, ...) are refused for agents, and the
  fold refuses memories written under one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboards.mcp.tools import agent_name
from swarmlog import Event, FileLog, InvalidEvent
from synthesizer import Swarm
from synthesizer.compat.events import STORE_FORGOTTEN
from synthesizer.compat.store import MemoryEntry, MemoryIdentity, MemoryStore, encode_identity
from synthesizer.events import IDENTITY_FORGOTTEN, MEMORY_SHARED
from synthesizer.forget.erase import ForgetError
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(120)

SECRET = "alice keeps the spare key under the blue flower pot"


def _alice(root: Path) -> None:
    sw = Swarm.open(root)
    try:
        sw.agent("alice", session="alice-s").share(SECRET, category="note")
        sw.agent("bob", session="bob-s").share("the build takes nine minutes", category="ops")
        sw.synthesize()
    finally:
        sw.close()


def _alice_remembered(root: Path) -> bool:
    sw = Swarm.open(root)
    try:
        return any(f.content == SECRET for f in sw.refresh().facts.values())
    finally:
        sw.close()


def test_another_agent_cannot_forget_a_session_by_naming_it(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _alice(root)
    sw = Swarm.open(root)
    try:
        with pytest.raises(ForgetError, match="opened it"):
            sw.forget(session="alice-s", by="bob", by_session="alice-s")
    finally:
        sw.close()
    r = run_cli("--root", str(root), "forget", "--session", "alice-s", "--as", "bob")
    assert r.code == 1 and "opened it" in r.err and "Traceback" not in r.err
    # a raw intent written past the API: the fold does not honour it
    log = FileLog(root)
    try:
        log.append(
            Event(
                agent="bob", session="alice-s", type=IDENTITY_FORGOTTEN, body={"session": "alice-s"}
            )
        )
    finally:
        log.close()
    assert _alice_remembered(root)
    # the opener may forget its own session from the CLI
    r = run_cli("--root", str(root), "forget", "--session", "alice-s", "--as", "alice")
    assert r.code == 0, r.err
    assert not _alice_remembered(root)


def _store(root: Path) -> None:
    store = MemoryStore(root)
    try:
        for conv in ("c1", "c2"):
            store.put(
                MemoryIdentity(tenant="acme", principal="u7", conversation_id=conv),
                MemoryEntry(id="e", value=f"u7 secret in {conv}"),
            )
        store.put(MemoryIdentity(tenant="acme", principal="carol"), MemoryEntry(id="e", value="c"))
        store.put(
            MemoryIdentity(tenant="acme", principal="u70", conversation_id="c1"),
            MemoryEntry(id="e", value="u70 is another principal"),
        )
    finally:
        store.close()


def test_store_identities_forget_by_prefix_and_only_by_an_operator(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _store(root)
    carol = MemoryIdentity(tenant="acme", principal="carol")
    r = run_cli(
        "--root", str(root), "forget", "--tenant", "acme", "--principal", "carol", "--as", "mallory"
    )
    assert r.code == 1 and "needs an operator" in r.err
    log = FileLog(root)
    try:  # a raw store-forget by a non-operator: refused by the fold
        ns = encode_identity(carol)
        log.append(Event(agent="mallory", type=STORE_FORGOTTEN, body={"ns": ns}))
    finally:
        log.close()
    store = MemoryStore(root)
    try:
        assert store.get(carol, "e") is not None
    finally:
        store.close()
    r = run_cli("--root", str(root), "forget", "--tenant", "acme", "--principal", "u7")
    assert r.code == 0, r.err
    store = MemoryStore(root)
    try:
        for conv in ("c1", "c2"):
            ident = MemoryIdentity(tenant="acme", principal="u7", conversation_id=conv)
            assert store.get(ident, "e") is None, conv
        u70 = MemoryIdentity(tenant="acme", principal="u70", conversation_id="c1")
        assert store.get(u70, "e") is not None  # a prefix of fields, not of strings
        assert store.get(carol, "e") is not None
    finally:
        store.close()
    data = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
    assert b"u7 secret" not in data


def test_forgetting_nobody_exits_1_unless_forced(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _alice(root)
    assert run_cli("--root", str(root), "forget", "--agent", "alice").code == 0
    before = sorted(p.name for p in (root / "segments").iterdir())
    r = run_cli("--root", str(root), "forget", "--agent", "nobdy")
    assert r.code == 1 and "no events by agent 'nobdy'" in r.err, r.err
    assert sorted(p.name for p in (root / "segments").iterdir()) == before
    log = FileLog(root)
    try:
        last = log.last_seq
    finally:
        log.close()
    r = run_cli("--root", str(root), "forget", "--agent", "nobdy", "--force")
    assert r.code == 0, r.err
    log = FileLog(root)
    try:
        # the request is recorded, and its (empty) plan: synthesizer/forget/planned.py
        assert log.last_seq == last + 2
    finally:
        log.close()


def test_reserved_names_are_refused_for_agents(tmp_path: Path) -> None:
    root = tmp_path / "s"
    sw = Swarm.open(root)
    try:
        for name in ("synthesizer", "operator", "memstore"):
            with pytest.raises(InvalidEvent, match="reserved"):
                sw.agent(name)
        # written past the API: the fold refuses it, so nothing unforgettable is a fact
        sw.log.append(
            Event(agent="synthesizer", type=MEMORY_SHARED, body={"content": "unforgettable"})
        )
        sw.synthesize()
        st = sw.refresh()
        assert not [f for f in st.facts.values() if "unforgettable" in f.content]
        assert st.metrics.ignored.get("refused:memory.shared") == 1
    finally:
        sw.close()
    assert agent_name(None, "synthesizer") == "mcp-synthesizer"
    assert agent_name(None, "operator") == "mcp-operator"
    r = run_cli("--root", str(root), "forget", "--agent", "x", "--as", "memstore")
    assert r.code == 1 and "reserved" in r.err


def test_an_agent_forgets_a_thread_it_opened_and_no_other(tmp_path: Path) -> None:
    root = tmp_path / "s"
    sw = Swarm.open(root)
    try:
        sw.agent("alice", thread="alice-t").share(SECRET, category="note")
        sw.agent("bob", thread="bob-t").share("the build takes nine minutes", category="ops")
        sw.synthesize()
    finally:
        sw.close()
    r = run_cli("--root", str(root), "forget", "--thread", "alice-t", "--as", "bob")
    assert r.code == 1 and "opened it" in r.err
    assert _alice_remembered(root)
    r = run_cli("--root", str(root), "forget", "--thread", "alice-t", "--as", "alice")
    assert r.code == 0, r.err
    assert not _alice_remembered(root)
