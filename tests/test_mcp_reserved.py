"""A reserved prefix is refused whoever chose the name (docs/faults.md, "The writer index
lost, replaced or cut; ..."): ``--agent mcp:x`` was refused as reserved while an MCP client
*named* ``mcp:team:4242`` (the server's own synthesizer's name) was taken as its agent."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp.client import Client

from dashboards.mcp.guard import GuardError, Team, check_agent_name
from synthesizer.reserved import ReservedName
from synthesizer.swarm import Swarm

from .test_mcp import Served, err, ok, run

pytestmark = pytest.mark.timeout(120)


def test_a_client_named_with_a_reserved_prefix_is_refused(tmp_path: Path) -> None:
    s = Served(tmp_path / "swarm", synth=False)
    try:

        async def body(c: Client) -> None:
            before = (await ok(c, "swarm_stats"))["last_seq"]
            msg = await err(c, "share_memory", content="x")
            assert "reserved" in msg and "--agent" in msg, msg
            assert (await ok(c, "swarm_stats"))["last_seq"] == before

        s.tools.decide_wait = 0.2
        run(s, body, name="mcp:team:4242")
    finally:
        s.close()


def test_a_reserved_prefix_is_refused_from_every_source(tmp_path: Path) -> None:
    with pytest.raises(GuardError, match="reserved"):
        check_agent_name("mcp:team:4242")
    with pytest.raises(GuardError, match="reserved"):
        Team("lead,mcp:lead:1")
    with pytest.raises(GuardError, match="reserved"):
        Team("mcp:*").check("mcp:team:1")
    with Swarm.open(tmp_path / "s") as sw, pytest.raises(ReservedName):
        sw.agent("mcp:client:77")
