"""CLI of the log (init, append, tail, verify) on both backends, bad input included."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import orjson
import pytest

from swarmlog import open_log
from tests.cli_util import run_cli
from tests.conftest import LogTarget


def where(t: LogTarget) -> list[str]:
    return ["--url", t.target] if t.backend == "nats" else ["--root", t.target]


@pytest.fixture
def target(log_target: LogTarget) -> LogTarget:
    r = run_cli(*where(log_target), "init", "--name", "team")
    assert r.code == 0, r.err
    assert "team" in r.out
    return log_target


def test_init_is_idempotent_and_reports_json(target: LogTarget) -> None:
    r = run_cli("init", *where(target), "--json")
    assert r.code == 0 and orjson.loads(r.out)["last_seq"] == 0


@pytest.mark.slow
def test_append_single_and_tail(target: LogTarget) -> None:
    w = where(target)
    r = run_cli(*w, "append", "--agent", "a1", "--session", "s1", "--category", "insight",
                "--importance", "0.9", "Payments retry twice")
    assert r.code == 0 and "appended seq 1" in r.out
    r = run_cli("append", *w, "--agent", "a2", "--type", "custom.note", "--key", "k1",
                "--body", '{"x": 1}', "--json")
    stored = orjson.loads(r.out)
    assert stored[0]["seq"] == 2 and stored[0]["key"] == "k1" and stored[0]["swarm"] == "team"
    r = run_cli(*w, "tail")
    lines = r.out.splitlines()
    assert len(lines) == 2 and "Payments retry twice" in lines[0] and "custom.note" in lines[1]
    r = run_cli(*w, "tail", "--json", "--type", "memory.shared")
    evs = [orjson.loads(x) for x in r.out.splitlines()]
    assert [e["seq"] for e in evs] == [1]
    assert evs[0]["body"] == {"category": "insight", "content": "Payments retry twice",
                              "importance": 0.9}
    r = run_cli(*w, "tail", "--agent", "a2", "--from", "1")
    assert r.out.count("\n") == 1 and "a2" in r.out
    r = run_cli(*w, "verify")
    assert r.code == 0 and r.out.startswith("ok: 2 events")
    r = run_cli(*w, "verify", "--json")
    assert orjson.loads(r.out)["ok"] is True


def test_append_expect_conflict_exit_3(target: LogTarget) -> None:
    w = where(target)
    r = run_cli(*w, "append", "--agent", "a", "--type", "x.y", "--key", "k", "--expect", "0")
    assert r.code == 0
    r = run_cli(*w, "append", "--agent", "a", "--type", "x.y", "--key", "k", "--expect", "0")
    assert r.code == 3 and "current version 1" in r.err


def test_jsonl_batch_is_atomic_and_errors_name_the_line(target: LogTarget) -> None:
    w = where(target)
    good = b'{"body": {"content": "one"}}\n{"agent": "b", "body": {"content": "two"}}\n'
    r = run_cli(*w, "append", "--agent", "a", "--jsonl", stdin=good)
    assert r.code == 0 and r.out.count("appended") == 2
    bad_cases = [
        (good + b'{"body": {"content": "x"\n', "line 3", "not valid JSON"),
        (good + b'{"agent": "a/b", "body": {"content": "x"}}\n', "line 3", "forbidden"),
        (b'{"body": {"content": "ok"}}\n[1, 2]\n', "line 2", "JSON object"),
        (b'{"body": {"content": "' + b"x" * 20000 + b'"}}\n', "line 1", "16384"),
        (b'{"type": "memory.shared", "body": {"importance": 3, "content": "x"}}\n',
         "line 1", "importance"),
        (b'{"bogus": 1, "body": {}}\n', "line 1", "unknown envelope field"),
        (b"\n\n", "no events", ""),
    ]
    for data, where_, what in bad_cases:
        r = run_cli(*w, "append", "--agent", "a", "--jsonl", stdin=data)
        assert r.code == 1, r
        assert where_ in r.err and what in r.err and r.err.count("\n") == 1
        assert "Traceback" not in r.err
    log = open_log(target.target)
    assert log.last_seq == 2  # nothing appended from any bad batch
    log.close()


def test_bad_single_appends(target: LogTarget) -> None:
    w = where(target)
    cases = [
        (["--agent", "bad/name", "x"], "forbidden character"),
        (["--agent", "a", "--session", "s 1", "x"], "forbidden character"),
        (["--agent", "a", "--type", "Not A Type", "x"], "dotted lowercase"),
        (["--agent", "a", "x" * 16385], "16384"),
        (["--agent", "a"], "missing CONTENT"),
        (["--agent", "a", "--body", "{nope", "--type", "x.y"], "--body is not valid JSON"),
        (["--agent", "a", "--expect", "3", "x"], "--expect needs --key"),
        (["--agent", "a", "--importance", "nan", "x"], "finite"),
        # a name the project writes as: the fold would refuse the memory, so the CLI does
        (["--agent", "synthesizer", "x"], "agent name 'synthesizer' is reserved"),
        (["--agent", "operator", "--type", "memory.recalled", "--body", "{}"], "reserved"),
    ]
    for args, needle in cases:
        r = run_cli(*w, "append", *args)
        assert r.code == 1 and needle in r.err, (args, r)
        assert r.err.count("\n") == 1 and "Traceback" not in r.err
    r = run_cli(*w, "append", "--agent", "a", "--importance", "high", "x")
    assert r.code == 2  # usage error
    log = open_log(target.target)
    assert log.last_seq == 0
    log.close()


@pytest.mark.slow
def test_tail_follow_sees_new_events(target: LogTarget) -> None:
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "dashboards", *where(target), "tail", "--follow", "--from", "1",
           "--timeout", "8", "--json"]  # idle: generous under load
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    time.sleep(0.8)
    for i in range(3):
        assert run_cli(*where(target), "append", "--agent", "a", f"event {i}").code == 0
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    seqs = [orjson.loads(x)["seq"] for x in out.splitlines()]
    assert seqs == [1, 2, 3]


@pytest.mark.slow
def test_unreachable_or_missing_log_is_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("--root", str(tmp_path / "none"), "tail")
    assert r.code == 1 and "swarmlog init" in r.err and r.err.count("\n") == 1
    r = run_cli("--url", "nats://127.0.0.1:1/S", "tail")
    assert r.code == 1 and r.err.count("\n") == 1 and "Traceback" not in r.err
    r = run_cli("--url", "http://x/y", "tail")
    assert r.code == 1 and "nats://" in r.err
    r = run_cli("--root", str(tmp_path), "--url", "nats://127.0.0.1:1/S", "tail")
    assert r.code == 1 and "not both" in r.err


def test_verify_reports_corruption_exit_1(file_target: LogTarget) -> None:
    assert run_cli("--root", file_target.target, "init").code == 0
    for i in range(3):
        run_cli("--root", file_target.target, "append", "--agent", "a", f"event number {i}")
    seg = next((open_log(file_target.target).root / "segments").glob("*.jsonl"))  # type: ignore[attr-defined]
    data = bytearray(seg.read_bytes())
    first_nl = data.index(b"\n")
    data[first_nl // 2] ^= 0x01
    seg.write_bytes(bytes(data))
    r = run_cli("--root", file_target.target, "verify")
    assert r.code == 1 and "CORRUPT" in r.out and "seq 1" in r.out


def test_missing_stream_is_one_line(nats_url: str) -> None:
    r = run_cli("--url", f"{nats_url}/NOSUCHSTREAM", "tail")
    assert r.code == 1 and "swarmlog init" in r.err and r.err.count("\n") == 1
