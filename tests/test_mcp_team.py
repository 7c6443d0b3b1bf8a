"""The MCP surface a model reads (polish work): its size, one server for a team of agents,
refusals in one line, share_memory that never waits for a synthesizer nobody runs, and
read_events without the machinery's fields. Official SDK client, in-process and stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation

from dashboards.mcp.guard import MAX_QUERY, Team
from dashboards.mcp.server import build_server
from dashboards.mcp.tools import MemoryTools
from swarmlog.version import __version__
from synthesizer.swarm import Swarm
from synthesizer.worker.background import BackgroundSynth

pytestmark = pytest.mark.timeout(120)
MAX_TOOLS_CHARS = 7000


def _serve(root: Path, synth: bool, **kw: Any) -> tuple[Swarm, BackgroundSynth | None, Any]:
    swarm = Swarm.open(root)
    worker = BackgroundSynth(root, poll=0.05).start() if synth else None
    kw.setdefault("decide_wait", 20.0)
    tools = MemoryTools(swarm, synth=worker, **kw)
    return swarm, worker, build_server(tools)


def _run(
    root: Path, body: Callable[[Client], Awaitable[None]], synth: bool = True, **kw: Any
) -> None:
    swarm, worker, server = _serve(root, synth, **kw)

    async def main() -> None:
        async with Client(server, client_info=Implementation(name="client", version="1")) as c:
            await body(c)

    try:
        anyio.run(main)
    finally:
        if worker is not None:
            worker.stop()
        swarm.close()


async def ok(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    r = await c.call_tool(tool, args)
    assert not r.is_error, r.content
    assert r.structured_content is not None
    # the text content is the same object as JSON (what a client shows the model)
    assert json.loads(r.content[0].text) == r.structured_content  # type: ignore[union-attr]
    return r.structured_content


async def err(c: Client, tool: str, **args: Any) -> str:
    r = await c.call_tool(tool, args)
    assert r.is_error, r.structured_content
    text: str = r.content[0].text  # type: ignore[union-attr]
    assert "\n" not in text.strip() and text.startswith(f"{tool}: "), text
    return text


@pytest.mark.parametrize("team", [None, "lead,worker-*"], ids=["single", "team"])
def test_all_tool_definitions_fit_in_7000_characters(tmp_path: Path, team: str | None) -> None:
    async def body(c: Client) -> None:
        tools = (await c.list_tools()).tools
        dumped = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]
        total = sum(len(json.dumps(d)) for d in dumped)
        assert len(tools) == 9
        assert total <= MAX_TOOLS_CHARS, total  # was ~18,200 (output schemas ~10k of it)
        assert c.server_info is not None and c.server_info.version == __version__
        assert c.server_info.name == "swarmlog"

    _run(tmp_path / "s", body, synth=False, team=Team(team) if team else None)


def test_a_team_server_writes_as_the_agent_each_call_names(tmp_path: Path) -> None:
    async def body(c: Client) -> None:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        share = tools["share_memory"].input_schema
        assert "agent" in share["required"]
        assert "lead" in share["properties"]["agent"]["description"]
        assert "agent" not in tools["get_fact"].input_schema["properties"]
        a = await ok(c, "share_memory", content="the cache ttl is 5 minutes", agent="lead")
        b = await ok(c, "share_memory", content="The cache TTL is 5 minutes.", agent="worker-2")
        assert (a["agent"], b["agent"]) == ("lead", "worker-2")
        assert a["fact_id"] == b["fact_id"] and b["decision"] == "corroborated"
        hits = (await ok(c, "search_memory", query="cache ttl", agent="worker-7"))["hits"]
        assert hits[0]["agents"] == ["lead", "worker-2"]
        r = await ok(c, "reinforce_memory", fact_id=a["fact_id"], agent="worker-7")
        assert r["counted"]
        f = await ok(c, "get_fact", fact_id=a["fact_id"])
        v = await ok(c, "update_fact", fact_id=f["fact_id"], expected_version=f["version"],
                     value="5m", agent="lead")  # fmt: skip
        assert v["version"] > f["version"]
        # refused, in one line each, and nothing written for any of them
        before = (await ok(c, "swarm_stats"))["last_seq"]
        assert "agent is required" in await err(c, "share_memory", content="x")
        assert "not one of this server's agents" in await err(
            c, "share_memory", content="x", agent="intruder"
        )
        for reserved in ("synthesizer", "operator", "langgraph"):
            assert "reserved" in await err(c, "share_memory", content="x", agent=reserved)
        assert "forbidden character" in await err(c, "search_memory", query="q", agent="a b")
        assert "unknown argument 'agent'" in await err(c, "get_fact", fact_id="f1", agent="lead")
        assert (await ok(c, "swarm_stats"))["last_seq"] == before

    _run(tmp_path / "s", body, team=Team("lead,worker-*"))


def test_team_spec_refuses_reserved_names_and_empty_lists() -> None:
    for bad in ("synthesizer", "lead,operator", " , ", "a b"):
        with pytest.raises(ValueError):
            Team(bad)
    t = Team("lead, worker-*")
    assert t.check("worker-12") == "worker-12" and t.check("lead") == "lead"


def test_a_single_agent_server_refuses_an_agent_argument(tmp_path: Path) -> None:
    async def body(c: Client) -> None:
        assert "unknown argument 'agent'" in await err(
            c, "share_memory", content="x", agent="someone-else"
        )
        assert (await ok(c, "swarm_stats"))["last_seq"] == 0

    _run(tmp_path / "s", body, synth=False, agent="solo")


def test_unknown_arguments_and_oversized_inputs_are_refused_in_one_line(tmp_path: Path) -> None:
    async def body(c: Client) -> None:
        e = await err(c, "search_memory", query="x", tier="hot")
        assert "unknown argument 'tier'" in e and "query" in e
        e = await err(c, "search_memory", query="q" * 10_000_000)  # was: 13-20 s under the lock
        assert f"query is 10000000 characters (max {MAX_QUERY})" in e
        assert "content is" in await err(c, "share_memory", content="c" * 1_000_000)
        assert "arguments are" in await err(c, "read_events", types=["t" * 10_000] * 100)
        st = await ok(c, "swarm_stats")
        assert st["last_seq"] == 0  # nothing logged, not even a recall

    _run(tmp_path / "s", body, synth=False)


def test_share_without_any_synthesizer_returns_pending_at_once(tmp_path: Path) -> None:
    # decide_wait of an hour: the old server waited for it (the test's timeout would hit)
    async def body(c: Client) -> None:
        for i in range(3):
            r = await ok(c, "share_memory", content=f"finding {i} about the build")
            assert r["decision"] == "pending" and r["fact_id"] is None
        assert (await ok(c, "swarm_stats"))["undecided"] == 3

    _run(tmp_path / "s", body, synth=False, decide_wait=3600.0)


@pytest.mark.slow
def test_share_waits_for_a_decision_when_another_process_holds_the_lease(tmp_path: Path) -> None:
    root = tmp_path / "s"
    Swarm.open(root).close()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboards", "--root", str(root), "synth", "--follow"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        with Swarm.open(root) as sw:  # wait until it holds the lease (its first batch)
            a = sw.agent("warmup")
            a.share("warm the synthesizer up")
            for _ in range(600):
                if sw.refresh().facts:
                    break
                anyio.run(anyio.sleep, 0.05)

        async def body(c: Client) -> None:
            r = await ok(c, "share_memory", content="the release branch is frozen on fridays")
            assert r["decision"] == "created" and r["fact_id"], r

        _run(root, body, synth=False)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_read_events_hides_internal_fields_and_reports_the_real_last_seq(tmp_path: Path) -> None:
    async def body(c: Client) -> None:
        await ok(c, "share_memory", content="the queue drops messages over 1 MB")
        page = await ok(c, "read_events", limit=500)
        types = {e["type"] for e in page["events"]}
        assert {"memory.shared", "fact.created", "synth.progress"} <= types, types
        for e in page["events"]:
            assert not {"lease", "signature", "embedding"} & set(e["body"]), e
        last = page["last_seq"]
        assert last == page["next_after_seq"] == page["events"][-1]["seq"]
        past = await ok(c, "read_events", after_seq=last + 1000)
        assert past["events"] == [] and past["last_seq"] == last
        assert past["next_after_seq"] == last  # a cursor that ran ahead misses nothing

    _run(tmp_path / "s", body)


@pytest.mark.slow
def test_cli_team_options(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "dashboards", "--root", str(tmp_path / "s"), "mcp", *args],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    for args, why in (
        (["--agent", "a", "--agents", "b,c"], "not both"),
        (["--agents", "lead,synthesizer"], "reserved"),
        (["--agent", "operator"], "reserved"),
    ):
        r = cli(*args)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 1 and len(lines) == 1 and why in lines[0], r.stderr


@pytest.mark.slow
def test_one_stdio_server_serves_a_parent_and_its_subagents(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("swarmlog")
    params = StdioServerParameters(
        command=str(exe),
        args=["--root", str(tmp_path / "s"), "mcp", "--agents", "lead,researcher-*"],
        env=dict(os.environ),
    )

    async def main() -> None:
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(stdio_client(params))
            s = await stack.enter_async_context(ClientSession(read, write))
            init = await s.initialize()
            assert init.server_info.version == __version__
            assert "agent" in (init.instructions or "")
            r1 = await s.call_tool(
                "share_memory", {"content": "the flaky test is test_login", "agent": "lead"}
            )
            r2 = await s.call_tool(
                "share_memory",
                {"content": "The flaky test is test_login.", "agent": "researcher-1"},
            )
            assert not r1.is_error and not r2.is_error, (r1.content, r2.content)
            a, b = r1.structured_content, r2.structured_content
            assert a is not None and b is not None
            assert b["fact_id"] == a["fact_id"] and b["decision"] == "corroborated"
            bad = await s.call_tool("share_memory", {"content": "x", "agent": "writer-1"})
            assert bad.is_error

    anyio.run(main)


def test_json_true_is_not_a_version_or_a_number(tmp_path: Path) -> None:
    # lax validation read true as 1 and false as 0: expected_version false *created* a fact
    async def body(c: Client) -> None:
        for bad in (True, False):
            e = await err(c, "update_fact", fact_id="plan", expected_version=bad, content="x")
            assert "expected_version" in e
        assert "importance" in await err(c, "share_memory", content="x", importance=True)
        assert "limit" in await err(c, "search_memory", query="x", limit=True)
        assert "after_seq" in await err(c, "read_events", after_seq=False)
        assert (await ok(c, "swarm_stats"))["last_seq"] == 0  # nothing written
        v = await ok(c, "update_fact", fact_id="plan", expected_version=0, content="x")
        assert v["version"] >= 1  # a real 0 still creates

    _run(tmp_path / "s", body, synth=False)


def test_contested_rivals_show_in_results(tmp_path: Path) -> None:
    """Two agents contradict each other: the search hits and get_fact name the rival,
    so an agent reading one side learns that the other exists."""

    async def body(c: Client) -> None:
        a = await ok(c, "share_memory", content="The build is green on main.", agent="lead")
        b = await ok(c, "share_memory", content="The build is red on main.", agent="worker-1")
        assert a["fact_id"] and b["fact_id"] and a["fact_id"] != b["fact_id"], (a, b)
        hits = (await ok(c, "search_memory", query="build on main", agent="lead"))["hits"]
        rivals = {h["fact_id"]: (h["status"], h["contested_with"]) for h in hits}
        assert rivals[a["fact_id"]] == ("contested", [b["fact_id"]]), hits
        assert rivals[b["fact_id"]] == ("contested", [a["fact_id"]]), hits
        f = await ok(c, "get_fact", fact_id=a["fact_id"])
        assert f["contested_with"] == [b["fact_id"]]

    _run(tmp_path / "s", body, team=Team("lead,worker-*"))
