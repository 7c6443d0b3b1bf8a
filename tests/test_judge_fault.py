"""A hanging judge beside a real ``swarmlog synth --follow`` (docs/faults.md, the judge
rows): every plain memory is decided while the judge's call stays open, and SIGTERM ends
the process cleanly with that call still in flight. No timing is asserted (the figures
are scripts/bench/judge_fault_bench.py's); the waits below are guards only."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.config import SynthConfig
from synthesizer.merge.judge import Judge
from synthesizer.swarm import Swarm
from synthesizer.worker.judging import JudgeThread
from synthesizer.worker.synth import Synthesizer
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(180)
PAIR = ("The login test is flaky on CI", "The sign-in test passes and fails at random in CI")


class Hanging:
    """A loopback endpoint that accepts connections and never answers."""

    def __init__(self) -> None:
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.held: list[socket.socket] = []
        self.url = f"http://127.0.0.1:{self.srv.getsockname()[1]}/v1/chat/completions"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            self.held.append(conn)

    def close(self) -> None:
        self.srv.close()
        for c in self.held:
            c.close()


def _scan(root: Path) -> tuple[set[int], set[int], int, int]:
    """(plain memory seqs, seqs cited by decisions, judge.asked, judge.answered)."""
    plain: set[int] = set()
    decided: set[int] = set()
    asked = answered = 0
    with open_log(root) as log:
        for ev in log.read():
            if ev.type == T.MEMORY_SHARED and ev.body.get("category") != "unsure":
                plain.add(ev.seq or 0)
            elif ev.type in (T.FACT_CREATED, T.FACT_CORROBORATED):
                decided.add(ev.body["evidence"])
            asked += ev.type == T.JUDGE_ASKED
            answered += ev.type == T.JUDGE_ANSWERED
    return plain, decided, asked, answered


def _wait(cond: object, within: float) -> None:
    end = time.monotonic() + within
    while not cond():  # type: ignore[operator]
        assert time.monotonic() < end, "guard expired"
        time.sleep(0.1)


def test_synth_follow_decides_and_stops_while_the_judge_hangs(tmp_path: Path) -> None:
    judge = Hanging()
    root = tmp_path / "s"
    assert run_cli("init", "--root", str(root)).code == 0
    settings = [f"synthesizer.judge={judge.url}", "synthesizer.near_duplicate=0.3"]
    assert run_cli("config", "set", "--root", str(root), *settings).code == 0
    exe = Path(sys.executable).with_name("swarmlog")
    p = subprocess.Popen(
        [str(exe), "--root", str(root), "synth", "--follow"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        with open_log(root) as log:
            log.append_many(
                Event(agent=f"a{i}", type=T.MEMORY_SHARED,
                      body={"content": text, "category": "unsure"})
                for i, text in enumerate(PAIR)
            )  # fmt: skip
        _wait(lambda: judge.held, 90)  # the judge is asked, and hangs ...
        with open_log(root) as log:
            log.append_many(
                Event(agent=f"agent-{i % 3}", type=T.MEMORY_SHARED,
                      body={"content": f"plain note {i} zq{i} about module m{i}"})
                for i in range(30)
            )  # fmt: skip
        _wait(lambda: _scan(root)[0] <= _scan(root)[1], 90)  # ... while all are decided
        plain, decided, asked, answered = _scan(root)
        assert len(plain) == 30 and plain <= decided
        assert asked >= 1 and answered == 0 and judge.held  # the question open, the call too
        assert p.poll() is None
        os.kill(p.pid, signal.SIGTERM)  # the judge's call still open
        _, err = p.communicate(timeout=60)  # (a guard, not a timing)
        assert p.returncode == 0, err.decode()[-2000:]
        assert b"Traceback" not in err
    finally:
        if p.poll() is None:
            p.kill()
        judge.close()


def test_a_stop_does_not_wait_for_a_judge_call_in_flight(tmp_path: Path) -> None:
    """The judge thread's stop returns while its call is in flight (the thread is a
    daemon; the call ends at its deadline) instead of waiting out its join timeout."""
    release = threading.Event()
    entered = threading.Event()

    def slow(a: str, b: str) -> str:
        entered.set()
        release.wait(120)
        return "same"

    root = tmp_path / "s"
    cfg = SynthConfig.model_validate({"synthesizer": {"near_duplicate": 0.3}})
    with Swarm.open(root, config=cfg) as sw:
        for i, text in enumerate(PAIR):
            sw.agent(f"a{i}").share(text)
    log = open_log(root)
    try:
        worker = Synthesizer(log)
        worker.run_once()
        assert worker.state.judging.open
        t = JudgeThread(log, source=lambda: worker.state, judge=Judge("slow", "", slow),
                        poll_s=0.01).start()  # fmt: skip
        assert entered.wait(60) and t.worker.in_call
        stopped: list[bool] = []
        threading.Thread(target=lambda: stopped.append(t.stop(timeout=3600)), daemon=True).start()
        _wait(lambda: stopped, 60)  # returned though the call never ended ...
        assert stopped == [False] and not release.is_set()  # ... the thread still in it
        assert worker.state.judging.open
    finally:
        release.set()
        log.close()
