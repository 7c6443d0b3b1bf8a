"""``board FACT`` shows a fact's whole story (polish work): a contest it lost (the
resolution is keyed on the winner), and the reinforcements and feedback agents gave it
(keyed on nothing): the CLI, its JSON, and MCP's get_fact."""

from __future__ import annotations

from pathlib import Path

import orjson

from synthesizer.swarm import Swarm
from tests.cli_util import run_cli


def _contest(root: Path) -> tuple[str, str]:
    with Swarm.open(root) as sw:
        sw.agent("ann").share("The cache TTL is 300 s", subject="cache.ttl", value="300")
        sw.agent("bob").share("The cache TTL is 60 s", subject="cache.ttl", value="60")
        sw.agent("cy").share("The cache TTL is 300 s", subject="cache.ttl", value="300")
        sw.synthesize()
        facts = sw.state().facts.values()
        winner = next(f.id for f in facts if f.value == "300")
        loser = next(f.id for f in facts if f.value == "60")
        sw.agent("dan").reinforce(winner)
        sw.agent("dan").feedback(winner, 1.0)
        sw.agent("eve").reinforce(loser)
        return winner, loser


def test_both_sides_of_a_contest_and_the_votes_show(tmp_path: Path) -> None:
    root = tmp_path / "s"
    winner, loser = _contest(root)
    out = run_cli("--root", str(root), "board", loser).out
    assert "superseded" in out.splitlines()[0]
    lost = [ln for ln in out.splitlines() if "fact.resolved" in ln]
    assert lost and f"winner={winner}" in lost[0] and f"losers=['{loser}']" in lost[0]
    assert any("memory.reinforced" in ln and "eve" in ln for ln in out.splitlines())
    assert "lease=" not in out and "signature=" not in out  # the machinery's fields
    won = run_cli("--root", str(root), "board", winner).out.splitlines()
    assert any("memory.reinforced" in ln and "dan" in ln for ln in won)
    assert any("memory.feedback" in ln and "usefulness=1.0" in ln for ln in won)
    d = orjson.loads(run_cli("--root", str(root), "board", loser, "--json").out)
    types = [h["type"] for h in d["history"]]
    assert "fact.resolved" in types and "memory.reinforced" in types
    seqs = [h["seq"] for h in d["history"]]
    assert seqs == sorted(set(seqs))  # in order, each once


def test_mcp_get_fact_history_has_them_too(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("mcp")
    from dashboards.mcp.tools import MemoryTools

    root = tmp_path / "s"
    _winner, loser = _contest(root)
    with Swarm.open(root) as sw:
        d = MemoryTools(sw, "x", decide_wait=0).get_fact(loser)
    types = [h.type for h in d.history]
    assert "fact.resolved" in types and "memory.reinforced" in types
    assert all("lease" not in h.body and "signature" not in h.body for h in d.history)
