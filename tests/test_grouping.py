"""One finding per group for readers: facts linked as possible duplicates (an open
question to a judge) show as one recall / search hit naming the others in ``also``;
``grouped=False`` lists them apart; a ``different`` answer unlinks them; the metrics
count a group as one finding; the MCP tool's output carries "also reported as"."""

from __future__ import annotations

from pathlib import Path

from swarmlog import Event
from synthesizer import events as T
from synthesizer.config import SynthConfig
from synthesizer.metrics import compute
from synthesizer.state.judging import question_id
from synthesizer.swarm import Swarm

A = "The login test is flaky on CI"
B = "The sign-in test passes and fails at random in CI"
OTHER = "The database migration needs a maintenance window"


def _swarm(tmp_path: Path) -> tuple[Swarm, str, str]:
    cfg = SynthConfig.model_validate({"synthesizer": {"near_duplicate": 0.3}})
    sw = Swarm.open(tmp_path / "s", config=cfg)
    a = sw.agent("a1").share(A).seq
    b = sw.agent("a2").share(B).seq
    sw.agent("a3").share(OTHER)
    sw.synthesize()
    return sw, f"f{a}", f"f{b}"


def test_possible_duplicates_show_as_one_hit_with_also(tmp_path: Path) -> None:
    sw, fa, fb = _swarm(tmp_path)
    with sw:
        hits = sw.agent("reader").recall("login test flaky CI", limit=5)
        ids = [h.fact.id for h in hits]
        assert (fa in ids) != (fb in ids)  # one of the two, never both
        (hit,) = [h for h in hits if h.fact.id in (fa, fb)]
        other = fb if hit.fact.id == fa else fa
        assert hit.also == ((other, ("a2" if other == fb else "a1",)),)
        assert hit.fact.id == fa  # the better-ranked wording leads (it matches the query)
        (recalled,) = [e for e in sw.log.read() if e.type == T.MEMORY_RECALLED]
        assert recalled.body["hits"] == ids  # the log names what the reader saw
        apart = sw.search("login test flaky CI", limit=5, grouped=False)
        assert {fa, fb} <= {h.fact.id for h in apart} and all(not h.also for h in apart)
        grouped = sw.search("login test flaky CI", limit=1)
        assert len(grouped) == 1 and grouped[0].also


def test_a_different_answer_shows_them_apart_and_metrics_count_one_finding(
    tmp_path: Path,
) -> None:
    sw, fa, fb = _swarm(tmp_path)
    with sw:
        m = compute(sw.state())
        assert m.open_questions == 1 and m.possible_duplicates == 1
        assert m.rediscoveries == 1  # a1 and a2 found the same (possibly): one finding
        assert m.duplication_rate == 1 / 3
        body = {"question": question_id(fa, fb), "answer": "different"}
        sw.log.append(Event(agent="operator", type=T.JUDGE_ANSWERED, body=body))
        hits = sw.search("login test flaky CI", limit=5)
        assert {fa, fb} <= {h.fact.id for h in hits} and all(not h.also for h in hits)
        m = compute(sw.state())
        assert (m.open_questions, m.possible_duplicates, m.rediscoveries) == (0, 0, 0)
        assert m.duplication_rate == 0.0


def test_the_mcp_search_tool_shows_also_reported_as(tmp_path: Path) -> None:
    from dashboards.mcp.tools import MemoryTools

    sw, fa, fb = _swarm(tmp_path)
    with sw:
        out = MemoryTools(sw, agent="reader").search(
            None, "login test flaky CI", 5, None, None, None
        )
        (hit,) = [h for h in out.hits if h.fact_id in (fa, fb)]
        (also,) = hit.also_reported_as
        assert {hit.fact_id, also.fact_id} == {fa, fb} and also.agents
        assert "also_reported_as" in out.model_dump_json()


def test_the_dashboard_shows_open_questions(tmp_path: Path) -> None:
    from dashboards import fmt

    sw, _, _ = _swarm(tmp_path)
    with sw:
        rows = dict(fmt.metric_rows(compute(sw.state())))
        assert rows["possible duplicates"].startswith("1 open question")


def test_a_judged_merge_counts_as_a_duplicate(tmp_path: Path) -> None:
    sw, fa, fb = _swarm(tmp_path)
    with sw:
        body = {"question": question_id(fa, fb), "answer": "same"}
        sw.log.append(Event(agent="operator", type=T.JUDGE_ANSWERED, body=body))
        m = compute(sw.state())
        assert m.duplicates == {"judged": 1} and m.duplication_rate == 1 / 3
        assert (m.open_questions, m.possible_duplicates, m.rediscoveries) == (0, 0, 1)
