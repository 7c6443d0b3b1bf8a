"""The pluggable judge (issue 21): asked only about pairs the merge rule cannot settle, its
answer recorded in the decision event, so a replay needs no judge. Tested against a real
local HTTP server speaking the chat-completions API, and as a Python callable."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from synthesizer.config import SynthConfig
from synthesizer.merge.judge import judge_for, register_judge
from synthesizer.merge.rule import UNSURE, compare
from synthesizer.state import SwarmState, fold
from synthesizer.swarm import Swarm
from synthesizer.worker.synth import Synthesizer

A = "The login test is flaky on CI"
B = "The sign-in test passes and fails at random in CI"  # a paraphrase: the rule is unsure
C = "The login test is not flaky on CI"  # the rule settles this one: never asked


class _Chat:
    """A chat-completions server on 127.0.0.1 answering ``answer``; records requests."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.requests: list[dict] = []
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(n))
                chat.requests.append({"path": self.path, **body})
                out = json.dumps(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": chat.answer},
                                "finish_reason": "stop",
                            }
                        ],
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/chat/completions"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat() -> Iterator[_Chat]:
    c = _Chat("same")
    yield c
    c.close()


def _config(judge: str, model: str = "") -> SynthConfig:
    # hashing embedder with a low threshold, so the paraphrase is a candidate at all
    return SynthConfig.model_validate(
        {"synthesizer": {"judge": judge, "judge_model": model, "near_duplicate": 0.3}}
    )


def test_the_rule_cannot_settle_the_paraphrase_but_settles_the_negation() -> None:
    assert compare(A, B).kind == UNSURE
    assert compare(A, C).kind == "contradicts"


def test_an_http_judge_merges_an_unsure_pair_and_replay_needs_no_judge(
    tmp_path: Path, chat: _Chat
) -> None:
    with Swarm.open(tmp_path / "s", config=_config(chat.url, "tiny-judge")) as sw:
        a = sw.agent("a1").share(A).seq
        sw.agent("a2").share(B)
        sw.agent("a3").share(C)
        sw.synthesize()
        st = sw.state()
        assert len(chat.requests) == 1  # only the unsure pair was asked
        req = chat.requests[0]
        assert req["path"] == "/v1/chat/completions" and req["model"] == "tiny-judge"
        assert A in req["messages"][0]["content"] and B in req["messages"][0]["content"]
        f = st.facts[f"f{a}"]
        assert len(f.evidence) == 2  # B merged into A on the judge's word
        (corr,) = [e for e in sw.log.read() if e.type == "fact.corroborated"]
        assert (corr.body["judge"], corr.body["model"]) == (chat.url, "tiny-judge")
        # C contradicts A by the rule alone
        (contest,) = [e for e in sw.log.read() if e.type == "fact.contested"]
        assert "judge" not in contest.body and contest.body["rivals"] == [f"f{a}"]
        events = list(sw.log.read())
        digest = st.digest()
    chat.close()  # no judge from here on
    # replay folds the recorded decisions: same state, from the start and from a checkpoint
    assert fold(events, SwarmState(_config(chat.url, "tiny-judge"))).digest() == digest
    with Swarm.open(tmp_path / "s") as sw:
        sw.checkpoint()
        assert sw.refresh().digest() == digest
        worker = Synthesizer(sw.log)
        assert worker.run_once() == 0  # nothing undecided: the judge is not needed
        assert worker.state.digest() == digest


def test_a_python_judge_can_say_contradicts(tmp_path: Path) -> None:
    asked: list[tuple[str, str]] = []

    def judge(a: str, b: str) -> str:
        asked.append((a, b))
        return "Contradicts."

    judge.model = "rules-v0"  # type: ignore[attr-defined]
    register_judge("test-contradicts", judge)
    with Swarm.open(tmp_path / "s", config=_config("test-contradicts")) as sw:
        a = sw.agent("a1").share(A).seq
        b = sw.agent("a2").share(B).seq
        sw.synthesize()
        st = sw.state()
        assert asked == [(B, A)]
        assert st.facts[f"f{a}"].contested_with == [f"f{b}"]
        assert st.facts[f"f{b}"].contested_with == [f"f{a}"]
        (contest,) = [e for e in sw.log.read() if e.type == "fact.contested"]
        assert contest.body["reason"] == "judge" and contest.body["judge"] == "test-contradicts"


def test_a_failing_judge_keeps_the_pair_apart(tmp_path: Path) -> None:
    def broken(a: str, b: str) -> str:
        raise RuntimeError("model offline")

    register_judge("test-broken", broken)
    with Swarm.open(tmp_path / "s", config=_config("test-broken")) as sw:
        sw.agent("a1").share(A)
        sw.agent("a2").share(B)
        sw.synthesize()
        facts = sw.state().facts
        assert len(facts) == 2 and all(not f.contested_with for f in facts.values())


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
        assert sw.synthesize() == 2  # two new facts, apart
        assert len(sw.state().facts) == 2
