"""Support for promotion counts clients, not names (docs/faults.md, "The writer index lost,
replaced or cut; ..."): one client of a pattern team (``--agents 'worker-*'``) could mint
ten member names, share one statement as each, and pass ``promote --min-support 10``.
Official SDK client against the real server; the promotion through the CLI."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client import Client
from mcp_types import Implementation

from dashboards.mcp.guard import Team
from dashboards.mcp.server import build_server
from dashboards.mcp.tools import MemoryTools
from synthesizer.swarm import Swarm

from .cli_util import run_cli
from .test_mcp import ok

pytestmark = pytest.mark.timeout(120)
STATEMENT = "the staging database rejects connections after 500 clients"


def _connect(root: Path, team: str, body: Callable[[Client], Awaitable[None]]) -> None:
    """One server (its own connection) on ``root`` for the team ``team``; run ``body``."""
    swarm = Swarm.open(root)
    tools = MemoryTools(swarm, synth=None, decide_wait=0.0, team=Team(team))

    async def main() -> None:
        info = Implementation(name="orchestrator", version="1")
        async with Client(build_server(tools), client_info=info) as c:
            await body(c)

    try:
        anyio.run(main)
    finally:
        swarm.close()


def _share_as(*names: str) -> Callable[[Client], Awaitable[None]]:
    async def body(c: Client) -> None:
        for name in names:
            r = await ok(c, "share_memory", content=STATEMENT, agent=name)
            assert r["agent"] == name

    return body


def _fact(root: Path) -> tuple[int, list[str]]:
    with Swarm.open(root) as sw:
        sw.synthesize()
        (f,) = sw.state().facts.values()
        return f.support, f.agents


def _promote(root: Path, target: Path, min_support: int) -> dict[str, object]:
    args = ["--root", str(root), "promote", "--to", str(target), "--tier", "working"]
    r = run_cli(*args, "--min-support", str(min_support), "--json")
    assert r.code == 0, r.err
    out: dict[str, object] = json.loads(r.out)
    return out


def test_ten_minted_names_from_one_client_back_a_fact_once(tmp_path: Path) -> None:
    root, target = tmp_path / "s", tmp_path / "global"
    minted = [f"worker-{i}" for i in range(10)]
    _connect(root, "worker-*", _share_as(*minted))
    support, agents = _fact(root)
    assert support == 1 and agents == minted  # the fact lists every name, backed once ...
    for n in (10, 2):  # ... but they are one client: no promotion needs two
        report = _promote(root, target, n)
        assert report["promoted"] == 0 and report["skipped"] == 1, report
        assert report["support_counts"] == "clients"
    assert _promote(root, target, 1)["promoted"] == 1


def test_a_second_client_or_a_listed_name_is_a_second_backer(tmp_path: Path) -> None:
    root, target = tmp_path / "s", tmp_path / "global"
    _connect(root, "worker-*", _share_as("worker-1", "worker-2", "worker-3"))
    _connect(root, "worker-*", _share_as("worker-9"))  # another connection
    assert _fact(root)[0] == 2  # two clients
    assert _promote(root, target, 2)["promoted"] == 1
    assert _promote(root, target, 3)["promoted"] == 0  # two clients, not three

    other, target2 = tmp_path / "t", tmp_path / "global2"
    _connect(other, "lead,worker-*", _share_as("lead", "worker-1", "worker-2"))
    assert _fact(other)[0] == 2  # lead (listed) and the pair one client minted
    assert _promote(other, target2, 3)["promoted"] == 0
    assert _promote(other, target2, 2)["promoted"] == 1  # lead (listed) + the minted pair


def test_promote_says_what_min_support_counts(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _connect(root, "worker-*", _share_as("worker-1"))
    _fact(root)
    args = ["--root", str(root), "promote", "--to", str(tmp_path / "g"), "--tier", "working"]
    r = run_cli(*args, "--min-support", "2")
    assert r.code == 0, r.err
    assert "0 new" in r.out and "support counted as distinct clients" in r.out, r.out
    assert "distinct" in run_cli("promote", "--help").out
