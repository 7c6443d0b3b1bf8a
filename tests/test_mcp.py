"""The MCP server (integrations work): every tool through the SDK's in-process client, happy path
and bad input; then two real ``swarmlog mcp`` processes over stdio on one root."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation

from dashboards.mcp.server import build_server
from dashboards.mcp.tools import MemoryTools
from swarmlog import open_log
from synthesizer.swarm import Swarm
from synthesizer.worker.background import BackgroundSynth

pytestmark = pytest.mark.timeout(120)


class Served:
    """One in-process server on a root, with its background synthesizer."""

    def __init__(self, root: Path, agent: str | None = None, synth: bool = True) -> None:
        self.swarm = Swarm.open(root)
        self.synth = BackgroundSynth(root, poll=0.05).start() if synth else None
        self.tools = MemoryTools(self.swarm, agent, None, decide_wait=20.0, synth=self.synth)
        self.server = build_server(self.tools)

    def close(self) -> None:
        if self.synth is not None:
            self.synth.stop()
        self.swarm.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = Served(tmp_path / "swarm")
    try:
        yield s
    finally:
        s.close()


def run(served: Served, body: Callable[[Client], Awaitable[None]], name: str = "alpha") -> None:
    """Connect an in-process client named ``name`` and run ``body`` with it."""

    async def main() -> None:
        async with Client(served.server, client_info=Implementation(name=name, version="1")) as c:
            await body(c)

    anyio.run(main)


async def ok(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    r = await c.call_tool(tool, args)
    assert not r.is_error, r.content
    assert r.structured_content is not None
    return r.structured_content


async def err(c: Client, tool: str, **args: Any) -> str:
    r = await c.call_tool(tool, args)
    assert r.is_error, r.structured_content
    text = r.content[0].text  # type: ignore[union-attr]
    assert "\n" not in text.strip(), text
    return text


def test_tools_are_listed_with_descriptions_and_output_schemas(served: Served) -> None:
    async def body(c: Client) -> None:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert set(tools) == {
            "share_memory",
            "search_memory",
            "get_fact",
            "list_facts",
            "reinforce_memory",
            "give_feedback",
            "update_fact",
            "swarm_stats",
            "read_events",
        }
        for t in tools.values():
            assert t.description and len(t.description) > 30, t.name
            # dedented: one paragraph, no docstring indentation or line breaks
            assert "\n" not in t.description and "  " not in t.description, t.description
            assert t.output_schema is None, t.name  # the result's JSON says enough
            assert "title" not in str(t.input_schema), t.name
        assert "ctx" not in tools["share_memory"].input_schema["properties"]
        assert "agent" not in tools["share_memory"].input_schema["properties"]  # single agent

    run(served, body)


def test_share_then_search_get_list(served: Served) -> None:
    async def body(c: Client) -> None:
        r = await ok(c, "share_memory", content="the login test is flaky on CI", category="bug")
        assert r["agent"] == "alpha" and r["seq"] >= 1
        assert r["decision"] == "created" and r["fact_id"]
        fid = r["fact_id"]
        dup = await ok(c, "share_memory", content="The login test is flaky on CI.")
        assert dup["decision"] == "corroborated" and dup["fact_id"] == fid

        hits = (await ok(c, "search_memory", query="login test flaky", limit=3))["hits"]
        assert hits[0]["fact_id"] == fid
        h = hits[0]
        assert h["similarity"] > 0.3 and h["relevance"] > 0 and h["strength"] > 0
        assert h["support"] == 1 and h["status"] == "active" and h["agents"] == ["alpha"]
        assert (await ok(c, "search_memory", query="login", category="nope"))["hits"] == []

        f = await ok(c, "get_fact", fact_id=fid)
        assert f["content"] == "the login test is flaky on CI"
        assert [e["seq"] for e in f["evidence"]] == [r["seq"], dup["seq"]]
        assert f["evidence"][0]["agent"] == "alpha"
        assert f["evidence"][1]["content"] == "The login test is flaky on CI."
        assert f["evidence_total"] == 2
        types = [h["type"] for h in f["history"]]
        assert types[:2] == ["fact.created", "fact.corroborated"]

        listed = await ok(c, "list_facts", category="bug")
        assert listed["total"] == 1 and listed["facts"][0]["fact_id"] == fid
        assert (await ok(c, "list_facts", status="retracted"))["total"] == 0

    run(served, body)


@pytest.mark.slow
def test_reinforce_feedback_update(served: Served) -> None:
    async def body(c: Client) -> None:
        fid = (await ok(c, "share_memory", content="builds need 4 GB of RAM"))["fact_id"]
        assert (await ok(c, "get_fact", fact_id=fid))["reinforcements"] == 0
        w = await ok(c, "reinforce_memory", fact_id=fid)
        assert w["fact_id"] == fid and w["counted"] is True and w["reinforcements"] == 1
        again = await ok(c, "reinforce_memory", fact_id=fid)
        assert again["counted"] is False and again["reinforcements"] == 1
        assert (await ok(c, "get_fact", fact_id=fid))["reinforcements"] == 1
        w = await ok(c, "give_feedback", fact_id=fid, usefulness=0.8)
        f = await ok(c, "get_fact", fact_id=fid)
        assert f["feedback_count"] == 1 and f["feedback_average"] == pytest.approx(0.8)

        v = f["version"]
        u = await ok(
            c, "update_fact", fact_id=fid, expected_version=v, content="builds need 6 GB of RAM"
        )
        assert u["version"] > v
        f2 = await ok(c, "get_fact", fact_id=fid)
        assert f2["content"] == "builds need 6 GB of RAM" and f2["version"] == u["version"]
        assert f2["history"][-1]["agent"] == "alpha"

        stale = await err(c, "update_fact", fact_id=fid, expected_version=v, content="x y z")
        assert "version conflict" in stale and f"current version is {u['version']}" in stale
        assert (await ok(c, "get_fact", fact_id=fid))["content"] == "builds need 6 GB of RAM"

        r = await ok(
            c,
            "update_fact",
            fact_id=fid,
            expected_version=u["version"],
            status="retracted",
            reason="measured wrong",
        )
        assert r["status"] == "retracted"

    run(served, body)


def test_stats_and_read_events(served: Served) -> None:
    async def body(c: Client) -> None:
        s = await ok(c, "share_memory", content="the cache TTL is five minutes")
        st = await ok(c, "swarm_stats")
        assert st["facts_total"] == 1 and st["undecided"] == 0 and st["agents"] == ["alpha"]
        assert st["synthesizer"] == "holding" and st["synthesizer_decisions"] >= 1
        page = await ok(c, "read_events", after_seq=0, limit=2)
        assert [e["seq"] for e in page["events"]] == [1, 2][: len(page["events"])]
        assert page["events"][0]["type"] == "memory.shared"
        assert page["events"][0]["body"]["content"] == "the cache TTL is five minutes"
        nxt = await ok(c, "read_events", after_seq=page["next_after_seq"], limit=100)
        assert all(e["seq"] > page["next_after_seq"] for e in nxt["events"])
        created = await ok(c, "read_events", types=["fact.created"])
        assert [e["key"] for e in created["events"]] == [s["fact_id"]]
        assert created["last_seq"] >= created["next_after_seq"]

    run(served, body)


def test_bad_input_is_a_one_line_tool_error(served: Served) -> None:
    async def body(c: Client) -> None:
        fid = (await ok(c, "share_memory", content="deploys run at noon"))["fact_id"]
        assert "importance" in await err(c, "share_memory", content="x", importance=3)
        assert "content" in await err(c, "share_memory", content="")
        assert "content" in await err(c, "share_memory", content="   ")
        assert "subject" in await err(c, "share_memory", content="x", value="5")
        assert "category" in await err(c, "share_memory", content="x", category="a b")
        assert "query" in await err(c, "search_memory", query="   ")
        assert "limit" in await err(c, "search_memory", query="x", limit=0)
        assert "unknown fact" in await err(c, "get_fact", fact_id="f999999")
        assert "status" in await err(c, "list_facts", status="bogus")
        assert "unknown fact" in await err(c, "reinforce_memory", fact_id="nope")
        assert "usefulness" in await err(c, "give_feedback", fact_id=fid, usefulness=7)
        assert "unknown fact" in await err(c, "give_feedback", fact_id="nope", usefulness=1)
        assert "expected_version" in await err(
            c, "update_fact", fact_id=fid, expected_version=-1, content="y"
        )
        assert "nothing to change" in await err(c, "update_fact", fact_id=fid, expected_version=1)
        assert "retraction" in await err(
            c, "update_fact", fact_id=fid, expected_version=1, status="retracted", content="z"
        )
        assert "after_seq" in await err(c, "read_events", after_seq=-1)
        assert "limit" in await err(c, "read_events", limit="many")
        # the server is still serving, and nothing bad was written
        st = await ok(c, "swarm_stats")
        assert st["facts_total"] == 1 and st["raw_total"] == 1

    run(served, body)


def test_agent_name_from_flag_wins_over_client_name(tmp_path: Path) -> None:
    s = Served(tmp_path / "swarm", agent="gamma", synth=False)
    try:

        async def body(c: Client) -> None:
            r = await ok(c, "share_memory", content="x marks the spot")
            assert r["agent"] == "gamma" and r["decision"] == "pending" and r["fact_id"] is None
            st = await ok(c, "swarm_stats")
            assert st["synthesizer"] == "off" and st["undecided"] == 1

        s.tools.decide_wait = 0.2
        run(s, body, name="Claude Desktop")
    finally:
        s.close()


def test_client_name_is_made_a_valid_agent_name(served: Served) -> None:
    async def body(c: Client) -> None:
        r = await ok(c, "share_memory", content="names get cleaned")
        assert r["agent"] == "Claude-Desktop/x".replace("/", "-")

    run(served, body, name="Claude Desktop/x")


# ---------------------------------------------------------------- two processes over stdio


def _params(root: Path, agent: str | None) -> StdioServerParameters:
    exe = Path(sys.executable).with_name("swarmlog")
    args = ["--root", str(root), "mcp", "--lease-timeout", "1"]
    args += ["--agent", agent] if agent else []
    return StdioServerParameters(command=str(exe), args=args, env=dict(os.environ))


async def _call(s: ClientSession, tool: str, **args: Any) -> Any:
    return await s.call_tool(tool, args)


async def _open(
    stack: AsyncExitStack, root: Path, agent: str | None, client: str = "test-client"
) -> ClientSession:
    read, write = await stack.enter_async_context(stdio_client(_params(root, agent)))
    info = Implementation(name=client, version="1")
    s = await stack.enter_async_context(ClientSession(read, write, client_info=info))
    await s.initialize()
    return s


@pytest.mark.slow
def test_stdio_server_names_the_agent_after_the_client(tmp_path: Path) -> None:
    async def main() -> None:
        async with AsyncExitStack() as stack:
            s = await _open(stack, tmp_path / "swarm", None, client="gamma")
            r = await _call(s, "share_memory", content="named by initialize")
            assert not r.is_error, r.content
            assert r.structured_content["agent"] == "gamma"
            bad = await _call(s, "share_memory", content="x", importance="very")
            assert bad.is_error and "importance" in bad.content[0].text
            assert not (await _call(s, "swarm_stats")).is_error  # still serving

    anyio.run(main)


def _child_pid(agent: str) -> int:
    """The pid of the ``swarmlog mcp --agent AGENT`` process this test spawned."""
    me = os.getpid()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == me and b"mcp" in argv and agent.encode() in argv:
            return int(d.name)
    raise AssertionError(f"no swarmlog mcp child for {agent}")


@pytest.mark.slow
def test_two_stdio_servers_share_one_memory_and_hand_over_the_synthesizer(tmp_path: Path) -> None:
    root = tmp_path / "swarm"

    async def main() -> None:
        async with AsyncExitStack() as stack:
            alpha = await _open(stack, root, "alpha")
            beta = await _open(stack, root, "beta")
            sessions = {"alpha": alpha, "beta": beta}

            r = await _call(alpha, "share_memory", content="the staging DB password rotates daily")
            assert not r.is_error, r.content
            fid = r.structured_content["fact_id"]
            assert fid, r.structured_content

            # beta finds alpha's fact, with alpha in its provenance
            found = await _call(beta, "search_memory", query="staging DB password rotation")
            hits = found.structured_content["hits"]
            assert hits and hits[0]["fact_id"] == fid and hits[0]["agents"] == ["alpha"]
            detail = (await _call(beta, "get_fact", fact_id=fid)).structured_content
            assert detail["evidence"][0]["agent"] == "alpha"
            v = detail["version"]

            # compare-and-swap across processes: beta wins, alpha's stale write is refused
            won = await _call(beta, "update_fact", fact_id=fid, expected_version=v, value="daily")
            assert not won.is_error, won.content
            newv = won.structured_content["version"]
            stale = await _call(alpha, "update_fact", fact_id=fid, expected_version=v, value="x")
            assert stale.is_error
            assert f"current version is {newv}" in stale.content[0].text

            # kill -9 the server that synthesized; the other one decides the next share
            decisions = {}
            for name, s in sessions.items():
                st = (await _call(s, "swarm_stats")).structured_content
                decisions[name] = st["synthesizer_decisions"]
            holder = max(decisions, key=lambda k: decisions[k])
            other = "beta" if holder == "alpha" else "alpha"
            assert decisions[holder] >= 1
            os.kill(_child_pid(holder), signal.SIGKILL)

            r2 = await _call(sessions[other], "share_memory", content="CI runners moved to arm64")
            assert not r2.is_error, r2.content
            # decided at once, or once the dead holder's lease times out (1 s here)
            while True:
                st = (await _call(sessions[other], "swarm_stats")).structured_content
                if st["undecided"] == 0:
                    break
                if st["synthesizer"] == "standby":
                    assert f"mcp:{holder}:" in st["synthesizer_holder"], st
                await anyio.sleep(0.1)
            assert st["synthesizer_decisions"] > decisions[other]
            assert st["synthesizer"] == "holding" and st["synthesizer_holder"] is None
            created = await _call(sessions[other], "read_events", types=["fact.created"])
            evidence = [e["body"]["evidence"] for e in created.structured_content["events"]]
            assert r2.structured_content["seq"] in evidence

    anyio.run(main)


def test_cli_mcp_rejects_a_bad_agent_name_in_one_line(tmp_path: Path) -> None:
    from tests.cli_util import run_cli

    r = run_cli("--root", str(tmp_path / "s"), "mcp", "--agent", "a b")
    assert r.code == 1 and r.err.startswith("error: agent") and r.err.count("\n") == 1, r


def test_the_cli_and_the_library_do_not_import_the_sdks() -> None:
    code = (
        "import sys, dashboards.cli, synthesizer, synthesizer.swarm;"
        "bad = [m for m in ('mcp', 'langgraph', 'langchain_core') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


@pytest.mark.slow
def test_sigterm_stops_the_server_cleanly(tmp_path: Path) -> None:
    root = tmp_path / "swarm"
    with Swarm.open(root) as swarm:
        raw = swarm.agent("seed").share("shared before the server started").seq
    exe = Path(sys.executable).with_name("swarmlog")
    proc = subprocess.Popen(
        [str(exe), "--root", str(root), "mcp", "--agent", "delta"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        with open_log(root) as log:  # wait for its synthesizer to decide the memory
            for ev in log.follow(1):
                if ev.type == "fact.created" and ev.body["evidence"] == raw:
                    break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    with open_log(root) as log:  # the stop folded everything, checkpointed, released the lease
        assert log.checkpoints.list()
        mark = next(iter(log.read(log.version("synthesizer"))))
        assert mark.body["released"] is True and mark.body["worker"].startswith("mcp:delta:")
