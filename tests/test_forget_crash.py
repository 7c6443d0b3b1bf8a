"""Kill -9 during ``swarmlog forget`` (trust work, acceptance 2).

A real ``swarmlog forget`` process (a forked child running the CLI) SIGKILLs itself at
its Nth durable step (test hook ``SWARMLOG_TEST_CRASH_AT``: after a temporary file is
fsynced, after a segment's old inode is marked, after a rename, after a directory
fsync, after the intent, after each redaction phase, after checkpoints are dropped), N
random over the whole job. Each time: the log reopens and verifies clean, ``forget`` is
run again, and the end state equals an uninterrupted forget's: every record byte for
byte (but the intent, whose id and ts are its own), the same facts, a checkpoint at the
intent, no marker anywhere, no temporary file left.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, FileLog
from swarmlog.file import redact
from synthesizer import Swarm
from synthesizer.replay import state_at
from synthesizer.worker.synth import facts_digest
from tests.cli_util import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

MARK = "ZQXCRASHMARK"
KILLS = 30


def build(root: Path) -> None:
    """Victim and other share interleaved memories over many small segments (so a forget
    rewrites many files), some corroborated; checkpoints along the way."""
    sw = Swarm.open(root, segment_bytes=4096)
    try:
        v, o = sw.agent("victim", session="sv"), sw.agent("other", session="so")
        for i in range(24):
            o.share(f"shared topic {i} about the billing pipeline stage {i}", category="ops")
            v.share(f"{MARK}{i} victim note number {i} on the garage", category="note")
            if i % 3 == 0:
                v.share(
                    f"shared topic {i} about the billing pipeline stage {i} {MARK}", category="ops"
                )
                v.recall(f"{MARK} billing stage {i}")
            if i == 10:  # a key and an id the victim chose (trust work: renamed too)
                v1 = sw.board.cas(f"door-{MARK}", 0, content="door code", agent="victim")
                sw.board.cas(f"door-{MARK}", v1, value="changed", agent="other")
                body = {"content": "a retried note", "category": "note"}
                rid = f"req-{MARK}-1"
                sw.log.append(
                    Event(agent="victim", session="sv", type="memory.shared", body=body, id=rid)
                )
            if i % 6 == 5:
                sw.synthesize()
                sw.checkpoint()
        sw.synthesize()
        sw.checkpoint()
    finally:
        sw.close()


def records(root: Path) -> list[bytes]:
    out: list[bytes] = []
    for seg in sorted((root / "segments").glob("*.jsonl")):
        out.extend(seg.read_bytes().splitlines())
    return out


def fingerprint(root: Path) -> tuple[object, ...]:
    """What must equal an uninterrupted forget's (see module docstring)."""
    lines = records(root)
    at = max(k for k, ln in enumerate(lines) if b'"type":"identity.forgotten"' in ln)
    intent = orjson.loads(lines[at])
    # then its plan (synthesizer/forget/planned.py)
    plan = [orjson.loads(ln) for ln in lines[at + 1 :]]
    assert [d["type"] for d in plan] == ["forget.planned"], plan
    sw = Swarm.open(root)
    try:
        st = sw.refresh()
        ckpts = [i.seq for i in sw.log.checkpoints.list()]
        assert state_at(sw.log).digest() == state_at(sw.log, from_start=True).digest()
        facts = facts_digest(st)
    finally:
        sw.close()
    tmp = [p.name for p in root.rglob("*.tmp")]
    return (
        lines[:at],
        intent["agent"],
        intent["body"],
        intent["seq"],
        plan[0]["body"],
        facts,
        ckpts[-1],
        tmp,
    )


def no_marker(root: Path) -> bool:
    return not any(MARK.encode() in p.read_bytes() for p in root.rglob("*") if p.is_file())


def forget_child(root: Path, at: int) -> int:
    """Run ``swarmlog forget --agent victim`` (the CLI's ``main``) in a forked child that
    SIGKILLs itself at step ``at``; its wait status as ``subprocess`` reports it.

    Forked rather than spawned: the child starts with the CLI already imported, so 30
    kills cost seconds, not the minutes of 30 interpreter starts on a loaded machine.
    """
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.environ[redact.CRASH_ENV] = str(at)
            redact._steps = 0
            from dashboards.cli import main

            main(["--root", str(root), "forget", "--agent", "victim"])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def count_steps(root: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Durable steps of an uninterrupted forget (counted in-process, never reached)."""
    monkeypatch.setenv(redact.CRASH_ENV, str(10**9))
    monkeypatch.setattr(redact, "_steps", 0)
    r = run_cli("--root", str(root), "forget", "--agent", "victim")
    assert r.code == 0, r.err
    n = redact._steps
    monkeypatch.delenv(redact.CRASH_ENV)
    return n


def test_kill_during_forget_at_random_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "base"
    build(base)
    assert not no_marker(base)
    clean = tmp_path / "clean"
    shutil.copytree(base, clean)
    steps = count_steps(clean, monkeypatch)
    assert steps >= 20, f"only {steps} steps: the crash points would be too coarse"
    want = fingerprint(clean)
    assert no_marker(clean)
    rng = random.Random(16)
    points = [rng.randint(1, steps) for _ in range(KILLS)]
    killed = 0
    for k, at in enumerate(points):
        root = tmp_path / f"run{k}"
        shutil.copytree(base, root)
        code = forget_child(root, at)
        assert code == -signal.SIGKILL, f"step {at} of {steps}: exit {code}"
        killed += 1
        log = FileLog(root)
        try:
            rep = log.verify()
            assert rep.ok, (at, rep.problems)
        finally:
            log.close()
        r = run_cli("--root", str(root), "forget", "--agent", "victim")
        assert r.code == 0, (at, r.err)
        assert no_marker(root), f"a marker survived a kill at step {at}"
        got = fingerprint(root)
        assert got[1:] == want[1:], f"kill at step {at}"
        assert got[0] == want[0], f"kill at step {at}: records differ"
        shutil.rmtree(root)
    assert killed == KILLS
