"""The small-items work's smaller items: reinforce says whether it counted, verify gives the valid
prefix, enum-like options name their values, replay past the end is an error, readable
reprs, and an idempotent, quiet scripts/setup."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, SwarmlogError, open_log
from synthesizer.errors import InvalidOption
from synthesizer.metrics import compute
from synthesizer.replay import state_at
from synthesizer.swarm import Swarm
from tests.cli_util import run_cli
from tests.conftest import LogTarget

ROOT = Path(__file__).resolve().parent.parent


def where(t: LogTarget) -> list[str]:
    return ["--url", t.target] if t.backend == "nats" else ["--root", t.target]


@pytest.fixture
def swarm(log_target: LogTarget) -> Iterator[Swarm]:
    sw = Swarm(log_target.open())
    yield sw
    sw.close()


def test_reinforce_counts_once_per_agent_and_says_so(
    swarm: Swarm, log_target: LogTarget
) -> None:
    fid = f"f{swarm.agent('a1').share('The cache key ignores the locale').seq}"
    swarm.synthesize()
    b = swarm.agent("b")
    assert b.reinforce(fid) is True
    last = swarm.log.last_seq
    assert b.reinforce(fid) is False  # a repeat: nothing appended
    assert swarm.log.last_seq == last
    assert swarm.state().facts[fid].reinforcements == 1
    assert swarm.agent("c").reinforce(fid) is True
    r = run_cli(*where(log_target), "reinforce", "--agent", "b", fid)
    assert r.code == 0 and "b already reinforced" in r.out and "not counted" in r.out
    r = run_cli(*where(log_target), "reinforce", "--agent", "d", fid, "--json")
    assert r.code == 0 and orjson.loads(r.out) == {"fact": fid, "agent": "d", "counted": True}
    r = run_cli(*where(log_target), "reinforce", "--agent", "d", fid, "--json")
    assert orjson.loads(r.out)["counted"] is False
    log = open_log(log_target.target)
    try:
        assert sum(1 for e in log.read() if e.type == "memory.reinforced") == 3
    finally:
        log.close()


def test_verify_reports_the_valid_prefix_and_where_the_corruption_is(
    file_target: LogTarget,
) -> None:
    log = open_log(file_target.target)
    for i in range(6):
        log.append(Event(agent="a", type="memory.shared", body={"content": f"event {i}"}))
    log.close()
    seg = next((Path(file_target.target) / "segments").glob("*.jsonl"))
    data = bytearray(seg.read_bytes())
    starts = [0, *[i + 1 for i, b in enumerate(data) if b == ord("\n")][:-1]]
    bad = starts[4]  # the 5th record rots; the 6th stays valid: corruption, not a torn tail
    i = data.index(b"event 4", bad)
    data[i] ^= 0x01
    seg.write_bytes(bytes(data))
    rep = open_log(file_target.target).verify()
    assert not rep.ok
    assert (rep.events, rep.last_seq) == (4, 4)
    assert rep.corruption == {"segment": seg.name, "offset": bad, "seq": rep.corruption["seq"]}
    assert rep.corruption["seq"] in (5, None)
    assert "events=4" in repr(rep) and "last_seq=4" in repr(rep) and seg.name in repr(rep)
    r = run_cli("--root", file_target.target, "verify")
    assert r.code == 1
    assert "valid prefix 4 events, last good seq 4" in r.out
    assert f"corruption: {seg.name} at byte {bad}" in r.out
    r = run_cli("--root", file_target.target, "verify", "--json")
    d = orjson.loads(r.out)
    assert d["events"] == 4 and d["corruption"]["offset"] == bad


def test_enum_like_options_name_the_allowed_values(swarm: Swarm, log_target: LogTarget) -> None:
    a = swarm.agent("a1")
    fid = f"f{a.share('Retries double the load on the gateway').seq}"
    swarm.synthesize()
    with pytest.raises(InvalidOption, match="working, short_term, long_term"):
        a.recall("gateway", tier="bogus")
    with pytest.raises(ValueError):  # also a ValueError, and a SwarmlogError
        swarm.search("gateway", tier="Working")
    assert issubclass(InvalidOption, SwarmlogError)
    assert a.recall("gateway", tier="working")  # a valid tier still works
    w = where(log_target)
    cases = [
        (("search", "gateway", "--tier", "bogus"), "working, short_term, long_term"),
        (("board", "cas", fid, "--expect", "0", "--status", "bogus"), "active, contested"),
        (("dashboard", "--format", "html"), "terminal, markdown"),
    ]
    for args, allowed in cases:
        r = run_cli(*w, *args)
        assert r.code == 1 and allowed in r.err, (args, r)
        assert r.err.count("\n") == 1 and "Traceback" not in r.err


def test_replay_past_the_end_is_an_error_naming_the_last_seq(
    swarm: Swarm, log_target: LogTarget
) -> None:
    swarm.agent("a1").share("one")
    swarm.agent("a1").share("two")
    last = swarm.log.last_seq
    with pytest.raises(InvalidOption, match=f"last seq {last}"):
        state_at(swarm.log, at_seq=last + 1)
    with pytest.raises(InvalidOption, match=f"last seq {last}"):
        swarm.state(at_seq=999999)
    assert state_at(swarm.log, at_seq=last).last_seq == last
    r = run_cli(*where(log_target), "replay", "--at", "999999")
    assert r.code == 1 and f"last seq {last}" in r.err and r.err.count("\n") == 1
    assert run_cli(*where(log_target), "replay", "--at", str(last)).code == 0


def test_reports_have_readable_reprs(swarm: Swarm) -> None:
    a = swarm.agent("a1")
    a.share("The nightly export skips archived projects", embedding=[0.5] * 8, embedder="toy")
    a.share("The login page crashes on Safari 17")
    swarm.synthesize()
    swarm.checkpoint()
    st = swarm.state()
    assert repr(st).startswith("SwarmState(last_seq=") and "facts=2" in repr(st)
    m = compute(st, swarm="team")
    assert repr(m).startswith("SwarmMetrics(team: seq") and len(repr(m)) < 200
    hit = a.recall("login page Safari", limit=1)[0]
    assert repr(hit).startswith(f"Hit({hit.fact.id}, similarity=") and "Safari" in repr(hit)
    toy = next(f for f in st.facts.values() if f.embedder == "toy")
    assert "embedding" not in repr(toy) and "0.5, 0.5" not in repr(toy)
    ck = swarm.log.checkpoints.latest()
    assert ck is not None
    assert "data=" not in repr(ck) and "seq=" in repr(ck) and len(repr(ck)) < 400
    rep = swarm.log.verify()
    assert repr(rep).startswith("VerifyReport(ok, events=")


# ---------------------------------------------------------------- scripts/setup

FAKE_PYTHON = """#!/bin/sh
# stands in for .venv/bin/python: pip calls are recorded (and succeed), the rest runs
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  echo "$@" >> "$(dirname "$0")/../pip-calls"
  exit 0
fi
exec {python} "$@"
"""


def _setup_copy(tmp: Path) -> Path:
    """A checkout holding scripts/setup and pyproject.toml, with a venv whose pip is fake."""
    (tmp / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup", tmp / "scripts" / "setup")
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    py = tmp / ".venv" / "bin" / "python"
    py.parent.mkdir(parents=True)
    py.write_text(FAKE_PYTHON.format(python=sys.executable))
    py.chmod(0o755)
    return tmp


def _run_setup(tmp: Path, *extras: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(tmp / "scripts" / "setup"), *extras],
        capture_output=True, text=True, timeout=60, env=dict(os.environ),
    )


def _pip_calls(tmp: Path) -> list[str]:
    f = tmp / ".venv" / "pip-calls"
    return f.read_text().splitlines() if f.exists() else []


def test_setup_is_idempotent_and_quiet(tmp_path: Path) -> None:
    tmp = _setup_copy(tmp_path)
    r = _run_setup(tmp, "test")
    assert r.returncode == 0, r.stderr
    calls = _pip_calls(tmp)
    install = [c for c in calls if " -e " in f" {c} "]
    assert len(install) == 1 and "-q" in install[0].split() and ".[test]" in install[0]
    # a second run, and the demo's plain run after it: nothing installed, nothing printed
    for extras in (("test",), ()):
        r = _run_setup(tmp, *extras)
        assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r
    assert _pip_calls(tmp) == calls
    # a changed pyproject.toml installs again (once)
    with open(tmp / "pyproject.toml", "a") as f:
        f.write("\n# changed\n")
    assert _run_setup(tmp, "test").returncode == 0
    assert _run_setup(tmp, "test").returncode == 0
    assert len([c for c in _pip_calls(tmp) if " -e " in f" {c} "]) == 2
