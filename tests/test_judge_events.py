"""A judge's questions and answers are events: the synthesizer links a pair the merge
rule is unsure about as possible duplicates (``judge.asked``) and never waits; a judge
worker answers later (``judge.answered``) and the fold merges, contests or unlinks.
Replay never calls a judge; the same pair is never asked twice; answers are idempotent
and honoured only from the synthesizer, an operator or a configured judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import Event
from synthesizer import events as T
from synthesizer.config import SynthConfig
from synthesizer.merge.judge import judge_for, parse_answer, register_judge
from synthesizer.merge.rule import UNSURE, compare
from synthesizer.state import SwarmState, fold
from synthesizer.state.judging import question_id
from synthesizer.swarm import Swarm
from synthesizer.worker.judging import JudgeWorker
from synthesizer.worker.synth import Synthesizer
from tests.conftest import LogTarget

A = "The login test is flaky on CI"
B = "The sign-in test passes and fails at random in CI"  # a paraphrase: the rule is unsure
C = "The login test is not flaky on CI"  # the rule settles this one: never asked
D = "The build breaks on Windows runners"
E = "Windows runners fail to build the project"

LABELS = {frozenset((A, B)): "same", frozenset((D, E)): "different"}
ASKED: list[tuple[str, str]] = []


def _labelled(a: str, b: str) -> str:
    ASKED.append((a, b))
    return LABELS.get(frozenset((a, b)), "different")


register_judge("test-labels", _labelled)


def _config(judge: str = "", **more: object) -> SynthConfig:
    # hashing embedder with a low threshold, so the paraphrase is a candidate at all
    synth = {"judge": judge, "near_duplicate": 0.3, **more}
    return SynthConfig.model_validate({"synthesizer": synth})


def test_the_rule_is_unsure_about_the_paraphrase_but_settles_the_negation() -> None:
    assert compare(A, B).kind == UNSURE
    assert compare(A, C).kind == "contradicts"


def test_without_a_judge_an_unsure_pair_is_linked_and_asked_once(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s", config=_config()) as sw:
        a = sw.agent("a1").share(A).seq
        b = sw.agent("a2").share(B).seq
        sw.synthesize()
        st = sw.state()
        fa, fb = f"f{a}", f"f{b}"
        assert set(st.facts) == {fa, fb}  # two facts, as before ...
        qid = question_id(fa, fb)
        assert list(st.judging.open) == [qid]  # ... linked both ways, with the cosine
        links = st.judging.links()
        assert fb in links[fa] and fa in links[fb] and links[fa][fb] > 0.3
        (asked,) = [e for e in sw.log.read() if e.type == T.JUDGE_ASKED]
        assert set(asked.body) == {"question", "a", "b", "score", "reason", "lease"}
        assert A not in str(asked.body) and B not in str(asked.body)  # ids only
        # nothing decided twice: another pass asks nothing
        sw.synthesize()
        assert len([e for e in sw.log.read() if e.type == T.JUDGE_ASKED]) == 1


def test_an_in_process_judge_merges_after_one_synthesize_and_replay_needs_none(
    tmp_path: Path,
) -> None:
    ASKED.clear()
    with Swarm.open(tmp_path / "s", config=_config("test-labels")) as sw:
        a = sw.agent("a1").share(A).seq
        b = sw.agent("a2").share(B).seq
        c = sw.agent("a3").share(C).seq
        sw.synthesize()
        st = sw.state()
        # only unsure pairs, the new statement first; A / C the rule settles itself
        assert ASKED[0] == (B, A) and (C, A) not in ASKED
        fa, fb = st.facts[f"f{a}"], st.facts[f"f{b}"]
        assert [e.seq for e in fa.evidence] == [a, b]  # B's evidence joined A (older)
        assert fb.status == "superseded" and st.judging.merged == {fb.id: fa.id}
        assert not st.judging.open
        assert st.facts[f"f{c}"].contested_with == [fa.id]  # the rule alone
        ans = [e for e in sw.log.read() if e.type == T.JUDGE_ANSWERED]
        assert ans[0].body["answer"] == "same" and ans[0].body["judge"] == "test-labels"
        assert ans[0].body["question"] == question_id(fa.id, fb.id)
        events = list(sw.log.read())
        digest = st.digest()
        sw.checkpoint()
    ASKED.clear()
    # replay folds the recorded answers: same state, from the start and from a checkpoint
    assert fold(events, SwarmState(_config("test-labels"))).digest() == digest
    with Swarm.open(tmp_path / "s") as sw:
        assert sw.refresh().digest() == digest
        worker = Synthesizer(sw.log)
        assert worker.run_once() == 0
        assert worker.state.digest() == digest
    assert ASKED == []


def test_answers_contradicts_and_different(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s", config=_config()) as sw:
        a = sw.agent("a1").share(A).seq
        b = sw.agent("a2").share(B).seq
        d = sw.agent("a1").share(D).seq
        e = sw.agent("a2").share(E).seq
        sw.synthesize()
        st = sw.state()
        q1, q2 = question_id(f"f{a}", f"f{b}"), question_id(f"f{d}", f"f{e}")
        assert set(st.judging.open) == {q1, q2}
        op = "operator"
        sw.log.append_many(
            [
                Event(
                    agent=op, type=T.JUDGE_ANSWERED, body={"question": q1, "answer": "contradicts"}
                ),
                Event(
                    agent=op, type=T.JUDGE_ANSWERED, body={"question": q2, "answer": "different"}
                ),
            ]
        )
        st = sw.state()
        assert st.facts[f"f{a}"].contested_with == [f"f{b}"]
        assert st.facts[f"f{b}"].status == "contested"
        assert not st.judging.open and st.judging.links() == {}
        assert {k: v[0] for k, v in st.judging.answered.items()} == {
            q1: "contradicts",
            q2: "different",
        }


def test_answers_are_idempotent_and_need_a_trusted_writer(log_target: LogTarget) -> None:
    log = log_target.open()
    with Swarm(log, config=_config(judges=["judge-bot"])) as sw:
        a = sw.agent("a1").share(A).seq
        b = sw.agent("a2").share(B).seq
        sw.synthesize()
        q = question_id(f"f{a}", f"f{b}")

        def answer(agent: str, verdict: str, question: str = q) -> None:
            body = {"question": question, "answer": verdict}
            sw.log.append(Event(agent=agent, type=T.JUDGE_ANSWERED, body=body))

        answer("a1", "same")  # an agent is no judge: refused, the question stays open
        st = sw.state()
        assert q in st.judging.open and st.metrics.ignored.get("refused:judge.answered") == 1
        answer("judge-bot", "same", "f1/f999")  # an answer must name an open question
        assert sw.state().metrics.ignored.get("judge.answered:not_open") == 1
        answer("judge-bot", "different")
        before = sw.state()
        assert not before.judging.open
        answer("judge-bot", "same")  # a second answer to a closed question: ignored
        after = sw.state()
        assert after.facts[f"f{b}"].status == "active"
        assert after.metrics.ignored.get("judge.answered:not_open") == 2


def test_a_synthesizer_never_asks_a_closed_pair_again(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s", config=_config()) as sw:
        a = sw.agent("a1").share(A).seq
        b = sw.agent("a2").share(B).seq
        sw.synthesize()
        q = question_id(f"f{a}", f"f{b}")
        # a forged duplicate question (not under the lease) is refused by the fold
        body = {"question": q, "a": f"f{a}", "b": f"f{b}", "score": 0.5}
        sw.log.append(Event(agent="synthesizer", type=T.JUDGE_ASKED, body=body))
        assert sw.state().metrics.ignored.get("refused:judge.asked") == 1


def test_judge_worker_leaves_hedged_answers_open_and_does_not_spin(tmp_path: Path) -> None:
    calls: list[str] = []
    answers = iter(["maybe same", "not the same", "same"])

    def hedging(a: str, b: str) -> str:
        calls.append(a)
        return next(answers)

    now = [0.0]
    with Swarm.open(tmp_path / "s", config=_config()) as sw:
        sw.agent("a1").share(A)
        sw.agent("a2").share(B)
        sw.synthesize()
        from synthesizer.merge.judge import Judge

        w = JudgeWorker(sw.log, Judge("hedger", "m", hedging), retry_s=10, clock=lambda: now[0])
        assert w.run_once(sw.state()) == 0  # "maybe same": no answer
        assert w.run_once(sw.state()) == 0 and len(calls) == 1  # not again at once
        now[0] = 11.0
        assert w.run_once(sw.state()) == 0  # "not the same": no answer either
        now[0] = 22.0
        assert w.run_once(sw.state()) == 1 and len(calls) == 3
        assert not sw.state().judging.open


def test_a_failing_judge_trips_the_breaker(tmp_path: Path) -> None:
    calls: list[str] = []

    def broken(a: str, b: str) -> str:
        calls.append(a)
        raise RuntimeError("model offline")

    from synthesizer.merge.judge import Judge

    now = [0.0]
    with Swarm.open(tmp_path / "s", config=_config()) as sw:
        for i, agent in enumerate(("a1", "a2", "a3", "a4")):
            sw.agent(agent).share((A, B, "The login test is flaky in CI runs", E)[i])
        sw.synthesize()
        w = JudgeWorker(
            sw.log,
            Judge("broken", "", broken),
            trip_after=2,
            backoff_s=5,
            retry_s=0,
            clock=lambda: now[0],
        )
        w.run_once(sw.state())
        assert len(calls) == 2 and w.closed_until == 5.0  # tripped after 2 in a row
        assert w.run_once(sw.state()) == 0 and len(calls) == 2  # open breaker: no call
        now[0] = 6.0
        w.run_once(sw.state())
        assert w.closed_until == 6.0 + 10.0  # the pause doubles
        assert sw.state().judging.open  # questions stay open


def test_parse_answer_is_strict() -> None:
    assert parse_answer('{"verdict": "same"}') == "same"
    assert parse_answer(" Contradicts. ") == "contradicts"
    assert parse_answer("different") == "different"
    for bad in (
        "not the same",
        "maybe same",
        "same?",
        "They are the same",
        '{"verdict": "Same, probably"}',
        '{"verdict": "same", "extra": 1}',
        '{"answer": "same"}',
        "",
        "{",
    ):
        assert parse_answer(bad) is None, bad


def test_judge_specs() -> None:
    assert judge_for("") is None
    j = judge_for("http://127.0.0.1:9/v1/chat/completions", "m")
    assert j is not None and (j.name, j.model) == ("http://127.0.0.1:9/v1/chat/completions", "m")
    assert judge_for("json:dumps") is not None
    with pytest.raises(ValueError, match="not a registered name"):
        judge_for("no such judge")
    with pytest.raises(ValueError, match="judge 'nosuchmodule:x'"):
        judge_for("nosuchmodule:x")


def test_a_judge_that_names_nothing_is_ignored_not_a_crash(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s", config=_config("no such judge")) as sw:
        sw.agent("a1").share(A)
        sw.agent("a2").share(B)
        assert sw.synthesize() >= 2  # two new facts, linked, and no crash
        assert len(sw.state().facts) == 2 and sw.state().judging.open


def test_forgetting_an_agent_leaves_no_words_in_judge_events(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s", config=_config("test-labels")) as sw:
        sw.agent("a1").share(A)
        sw.agent("a2").share(B)
        sw.synthesize()
        assert sw.state().judging.merged  # merged on the judge's word
        sw.forget(agent="a2")
        for e in sw.log.read():
            if e.type in (T.JUDGE_ASKED, T.JUDGE_ANSWERED):
                assert B not in str(e.body) and "a2" not in str(e.body)
        st = sw.refresh()
        events = list(sw.log.read())
        assert fold(events, SwarmState(_config("test-labels"))).digest() == st.digest()
        assert all(e.agent != "a2" for f in st.facts.values() for e in f.evidence)
