"""The MCP sampling judge: ``swarmlog mcp --judge`` asks the connected client's model
(``sampling/createMessage``) about open questions and records the answers as
``judge.answered`` (judge ``mcp-sampling``, the client's model). Official SDK client with
a ``sampling_callback``, in-process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp.client import Client
from mcp_types import CreateMessageResult, Implementation, TextContent

from dashboards.mcp.server import build_server
from dashboards.mcp.tools import MemoryTools
from synthesizer import events as T
from synthesizer.config import SynthConfig
from synthesizer.swarm import Swarm

pytestmark = pytest.mark.timeout(120)

A = "The login test is flaky on CI"
B = "The sign-in test passes and fails at random in CI"


def _swarm(root: Path, judges: list[str]) -> Swarm:
    cfg = SynthConfig.model_validate({"synthesizer": {"near_duplicate": 0.3, "judges": judges}})
    sw = Swarm.open(root, config=cfg)
    sw.agent("a1").share(A)
    sw.agent("a2").share(B)
    sw.synthesize()
    assert sw.state().judging.open
    return sw


def _run(sw: Swarm, reply: str, body: Any) -> list[str]:
    prompts: list[str] = []

    async def sampling(context: Any, params: Any) -> CreateMessageResult:
        prompts.append(params.messages[0].content.text)
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=reply), model="client-llm-1"
        )

    server = build_server(MemoryTools(sw, "reviewer", None, decide_wait=1.0), judge=True)

    async def main() -> None:
        info = Implementation(name="reviewer", version="1")
        async with Client(server, client_info=info, sampling_callback=sampling) as c:
            await body(c)

    anyio.run(main)
    return prompts


def test_the_clients_model_judges_through_sampling(tmp_path: Path) -> None:
    with _swarm(tmp_path / "s", ["reviewer"]) as sw:
        got: dict[str, Any] = {}

        async def body(c: Client) -> None:
            r = await c.call_tool("judge_question", {})
            assert not r.is_error, r.content
            got.update(r.structured_content or {})

        prompts = _run(sw, '{"verdict": "same"}', body)
        assert len(prompts) == 1 and A in prompts[0] and B in prompts[0]
        assert got["asked"] == 1 and got["open_left"] == 0
        (ans,) = [e for e in sw.log.read() if e.type == T.JUDGE_ANSWERED]
        assert ans.agent == "reviewer"
        assert (ans.body["judge"], ans.body["model"]) == ("mcp-sampling", "client-llm-1")
        st = sw.refresh()
        assert st.judging.merged and not st.judging.open


def test_a_hedged_sample_is_no_answer_and_an_untrusted_agent_is_refused(tmp_path: Path) -> None:
    with _swarm(tmp_path / "s", ["reviewer"]) as sw:

        async def hedge(c: Client) -> None:
            r = await c.call_tool("judge_question", {})
            assert not r.is_error and (r.structured_content or {})["answered"] == []

        _run(sw, "Probably the same.", hedge)
        assert sw.refresh().judging.open
    with _swarm(tmp_path / "t", []) as sw:

        async def refused(c: Client) -> None:
            r = await c.call_tool("judge_question", {})
            assert r.is_error and "synthesizer.judges" in r.content[0].text  # type: ignore[union-attr]

        assert _run(sw, '{"verdict": "same"}', refused) == []
