"""docs/quickstart.md works as written: its client configs start a team server that the
official MCP client can use, with the paths a user would substitute."""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "quickstart.md"
pytestmark = pytest.mark.timeout(120)


def _configs() -> list[dict[str, object]]:
    blocks = re.findall(r"^```json\n(.*?)^```", DOC.read_text(), re.S | re.M)
    return [json.loads(b)["mcpServers"]["team-memory"] for b in blocks]


def test_configs_are_json_with_absolute_paths() -> None:
    configs = _configs()
    assert len(configs) == 2
    for c in configs:
        assert str(c["command"]).startswith("/") and str(c["command"]).endswith("/swarmlog")
        args = list(c["args"])  # type: ignore[call-overload]
        assert args[args.index("--root") + 1].startswith("/")
        assert "--agents" in args


@pytest.mark.slow
def test_the_claude_code_config_serves_a_team(tmp_path: Path) -> None:
    cfg = _configs()[0]
    exe = str(Path(sys.executable).with_name("swarmlog"))
    args = [
        str(tmp_path / "team-memory") if a == "/home/me/team-memory" else str(a)
        for a in cfg["args"]  # type: ignore[attr-defined]
    ]
    assert str(cfg["command"]) == "/home/me/swarmlog/.venv/bin/swarmlog"
    params = StdioServerParameters(command=exe, args=args, env=dict(os.environ))

    async def main() -> None:
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(params))
            s = await stack.enter_async_context(ClientSession(read, write))
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            assert "share_memory" in names and "search_memory" in names
            for agent in ("lead", "researcher-3", "reviewer"):
                r = await s.call_tool(
                    "share_memory", {"content": f"note from {agent}", "agent": agent}
                )
                assert not r.is_error, r.content
            r = await s.call_tool("share_memory", {"content": "x", "agent": "writer"})
            assert r.is_error

    anyio.run(main)


def test_the_snippet_names_the_tools_that_exist() -> None:
    text = DOC.read_text()
    snippet = re.search(r"^```text\n(.*?)^```", text, re.S | re.M)
    assert snippet is not None
    used = set(re.findall(r"\b([a-z]+_[a-z_]+)\b", snippet.group(1)))
    tools = {"share_memory", "search_memory", "get_fact", "list_facts", "reinforce_memory",
             "give_feedback", "update_fact", "swarm_stats", "read_events"}  # fmt: skip
    assert used <= tools, used - tools
    assert {"search_memory", "share_memory", "update_fact"} <= used
