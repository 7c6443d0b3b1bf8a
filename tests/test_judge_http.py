"""The HTTP judge against a local stub of the chat-completions API, well behaved and not:
a server that trickles a byte at a time, one that never answers, one whose answer is
huge, one that hedges. One deadline bounds each whole call, the answer's size is capped,
a hedge is no answer, and none of it ever delays a decision: memories are decided while
the judge misbehaves, and the judge thread stops promptly."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from swarmlog import open_log
from synthesizer import events as T
from synthesizer.config import SynthConfig
from synthesizer.merge.judge import JudgeError, judge_for
from synthesizer.swarm import Swarm
from synthesizer.worker.judging import JudgeThread
from synthesizer.worker.synth import Synthesizer

A = "The login test is flaky on CI"
B = "The sign-in test passes and fails at random in CI"


def _completion(content: str, model: str = "m") -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
    ).encode()


class _Chat:
    """A chat-completions stub on 127.0.0.1; ``mode``: ok, hedge, trickle, hang, huge."""

    def __init__(self, mode: str, verdict: str = "same") -> None:
        self.mode = mode
        self.verdict = verdict
        self.requests: list[dict] = []
        self.finished = 0  # requests the stub has finished answering (or giving up on)
        self.closing = threading.Event()
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                try:
                    self._answer()
                finally:
                    chat.finished += 1

            def _answer(self) -> None:
                n = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(n))
                chat.requests.append({"path": self.path, **body})
                if chat.mode == "hang":
                    chat.closing.wait(30)
                    return
                if chat.mode == "huge":
                    out = _completion("x" * (1 << 20))
                elif chat.mode == "hedge":
                    out = _completion("Maybe the same, hard to say.")
                else:
                    out = _completion(json.dumps({"verdict": chat.verdict}), body["model"])
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if chat.mode != "huge":
                    self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                if chat.mode == "trickle":  # a byte every 0.3 s: each read is quick
                    for i in range(len(out)):
                        if chat.closing.wait(0.3):
                            return
                        self.wfile.write(out[i : i + 1])
                        self.wfile.flush()
                    return
                try:
                    self.wfile.write(out)
                except OSError:
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/chat/completions"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def chat(request: pytest.FixtureRequest) -> Iterator[_Chat]:
    c = _Chat(getattr(request, "param", "ok"))
    yield c
    c.close()


def _config(judge: str = "", model: str = "") -> SynthConfig:
    return SynthConfig.model_validate(
        {"synthesizer": {"judge": judge, "judge_model": model, "near_duplicate": 0.3}}
    )


def test_an_http_judge_merges_an_unsure_pair(tmp_path: Path, chat: _Chat) -> None:
    with Swarm.open(tmp_path / "s", config=_config(chat.url, "tiny-judge")) as sw:
        a = sw.agent("a1").share(A).seq
        sw.agent("a2").share(B)
        sw.synthesize()
        st = sw.state()
        (req,) = chat.requests
        assert req["path"] == "/v1/chat/completions" and req["model"] == "tiny-judge"
        assert req["response_format"] == {"type": "json_object"}
        assert A in req["messages"][0]["content"] and B in req["messages"][0]["content"]
        assert len(st.facts[f"f{a}"].evidence) == 2  # B merged into A on the judge's word
        (ans,) = [e for e in sw.log.read() if e.type == T.JUDGE_ANSWERED]
        assert (ans.body["judge"], ans.body["model"]) == (chat.url, "tiny-judge")


@pytest.mark.parametrize("chat", ["trickle", "hang", "huge"], indirect=True)
def test_one_deadline_and_a_size_cap_bound_every_call(chat: _Chat) -> None:
    judge = judge_for(chat.url, "m", deadline_s=1.5)
    assert judge is not None
    with pytest.raises(JudgeError):
        judge.answer(A, B)
    if chat.mode != "huge":  # the client gave up first: the stub was still trickling or
        assert chat.finished == 0  # holding the request (30 s) when the call ended


@pytest.mark.parametrize("chat", ["hedge"], indirect=True)
def test_a_hedged_http_answer_is_no_answer(chat: _Chat) -> None:
    judge = judge_for(chat.url, "m")
    assert judge is not None and judge.answer(A, B) is None


def test_a_refused_connection_is_a_failure_not_a_hang() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens
    judge = judge_for(f"http://127.0.0.1:{port}/v1/chat/completions", "m", deadline_s=2)
    assert judge is not None
    with pytest.raises(JudgeError):
        judge.answer(A, B)


@pytest.mark.slow
@pytest.mark.parametrize("chat", ["hang", "trickle"], indirect=True)
def test_decisions_never_wait_for_a_misbehaving_judge(tmp_path: Path, chat: _Chat) -> None:
    target = str(tmp_path / "s")
    with Swarm.open(target, config=_config(chat.url, "m")) as sw:
        sw.agent("a1").share(A)
        sw.agent("a2").share(B)
    log = open_log(target)
    try:
        worker = Synthesizer(log)
        judge = judge_for(chat.url, "m", deadline_s=120.0)  # in flight for the whole test
        thread = JudgeThread(log, source=lambda: worker.state, judge=judge, poll_s=0.05).start()
        assert worker.run_once() >= 3  # two facts and the question, at once
        deadline = time.monotonic() + 60.0
        while not chat.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert chat.requests  # the judge is being asked (and misbehaving) ...
        with Swarm.open(target) as sw:
            sw.agent("a3").share("The release notes mention the new flag")
        assert worker.run_once() >= 1  # ... while more memories are decided,
        assert chat.finished == 0 and thread.worker.answered == 0  # the call still open
        assert worker.state.judging.open  # no answer: the question stays open
        thread.stop(timeout=0.1)  # (a daemon: the call ends when the stub closes)
    finally:
        log.close()
