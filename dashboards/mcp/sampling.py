"""The connected agent's own model as the swarm's judge, through MCP sampling.

Why: a team whose agents already talk to a model need not run another one to settle
the pairs the merge rule is unsure about. The ``judge_question`` tool takes a few open
questions (``synthesizer.state.judging``), asks the client to sample an answer for each
(``sampling/createMessage``: the client's model, under the client's control), parses the
reply strictly (``synthesizer.merge.judge.parse_answer``: a hedge is no answer) and
appends ``judge.answered`` with judge ``mcp-sampling`` and the model the client names.
The fold honours an answer only from a configured judge: the server's agent must be
listed in ``synthesizer.judges`` (or ``operators``), else the tool says so and asks nothing.
"""

# no ``from __future__ import annotations``: the SDK reads the tool's and the resolvers'
# annotations (``Resolve``) at registration, and they close over this call's ``tools``

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from dashboards.mcp.tools import MemoryTools
from swarmlog import Event
from synthesizer import events as T
from synthesizer.merge.judge import PROMPT, parse_answer

JUDGE_NAME = "mcp-sampling"
MAX_TOKENS = 64


class Answered(BaseModel):
    """One question the client's model answered."""

    question: str
    answer: str


class JudgeResult(BaseModel):
    """What a ``judge_question`` call did."""

    asked: int = Field(description="Questions put to your model")
    answered: list[Answered] = Field(description="Answers recorded (judge.answered)")
    open_left: int = Field(description="Questions still open")


def trusted(tools: MemoryTools, agent: str) -> bool:
    """Whether the fold honours ``agent``'s answers (a configured judge or an operator)."""
    cfg = tools.swarm.refresh().config
    return agent in cfg.synthesizer.judges or agent in cfg.operators


def next_question(tools: MemoryTools) -> list[str] | None:
    """The oldest open question whose two facts are live: ``[question, a, b]`` (the
    statements), or None. Deterministic, so a retried call asks the same question."""
    with tools.lock:
        st = tools.swarm.refresh()
        for qid, (a, b, *_) in st.judging.open.items():
            fa, fb = st.facts.get(a), st.facts.get(b)
            if fa is not None and fb is not None:
                return [qid, fa.content, fb.content]
    return None


def sample_request(question: list[str]) -> Sample:
    """The ``Sample`` marker asking the client's model about ``question``."""
    _, a, b = question
    text = PROMPT.format(a=a, b=b)
    msg = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    return Sample([msg], max_tokens=MAX_TOKENS, temperature=0.0)


def record(tools: MemoryTools, agent: str, question: list[str] | None, sampled: Any) -> JudgeResult:
    """Record the client model's answer to ``question`` as ``agent`` (a hedge or no verdict
    records nothing: the question stays open)."""
    out: list[Answered] = []
    if question is not None and sampled is not None:
        content = getattr(sampled, "content", None)
        answer = parse_answer(content.text if isinstance(content, TextContent) else "")
        if answer is not None:
            model = str(getattr(sampled, "model", "") or "")[:200]
            body = {"question": question[0], "answer": answer, "judge": JUDGE_NAME, "model": model}
            with tools.lock:
                tools.swarm.log.append(Event(agent=agent, type=T.JUDGE_ANSWERED, body=body))
            out.append(Answered(question=question[0], answer=answer))
    with tools.lock:
        left = len(tools.swarm.refresh().judging.open)
    return JudgeResult(asked=int(question is not None), answered=out, open_left=left)


def register(
    srv: Any,
    tools: MemoryTools,
    client_of: Callable[[Context], str | None],
    call: Callable[..., Any],
    annotations: ToolAnnotations,
) -> None:
    """Register ``judge_question`` on ``srv``: the question comes from a resolver, the
    client's model answers through a ``Sample`` resolver (the SDK sends
    ``sampling/createMessage``, or asks for the input on newer protocol revisions), the
    body records the answer (``record``)."""

    def question(ctx: Context, agent: str | None = None) -> list[str] | None:
        who = tools.name(client_of(ctx), agent)
        if not trusted(tools, who):
            raise ToolError(
                f"agent {who!r} is not a judge: add it to synthesizer.judges "
                f"(swarmlog config set synthesizer.judges={who})"
            )
        return next_question(tools)

    def ask(q: Annotated[list[str] | None, Resolve(question)]) -> Sample | None:
        return None if q is None else sample_request(q)

    @srv.tool(annotations=annotations)
    def judge_question(
        ctx: Context,
        q: Annotated[list[str] | None, Resolve(question)],
        sampled: Annotated[CreateMessageResult | None, Resolve(ask)],
        agent: Annotated[str | None, Field(max_length=128)] = None,
    ) -> Any:
        """Settle a possible duplicate: for a pair of facts the synthesizer could not tell
        apart, your model is asked (sampling) whether they state the same fact, contradict,
        or differ; the answer is recorded for the whole team."""
        return call(record, tools, tools.name(client_of(ctx), agent), q, sampled)
