"""The demo swarm end to end (a synthesizer and 3 agent processes, small size) and its
pieces: the packaged scenario, the plan edits, the CLI's output and errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from dashboards.demo.agent import Scenario, agent_name, plan_with
from swarmlog import open_log
from synthesizer.replay import state_at
from synthesizer.worker.synth import facts_digest

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)

ROOT = Path(__file__).resolve().parent.parent


def _swarmlog(
    *args: str, timeout: float = 240, tmpdir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="140", PYTHONPATH=str(ROOT))
    if tmpdir is not None:  # the demo's temporary directory, private to the test
        env["TMPDIR"] = str(tmpdir)
    return subprocess.run(
        [sys.executable, "-m", "dashboards", *args],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout,
    )


def test_scenario_is_packaged_and_rotates_bugs() -> None:
    sc = Scenario.load()
    assert sc.name == "bugtriage" and len(sc.bugs) >= 8
    assert any(b.claim is not None for b in sc.bugs)
    # bug b is visited by agent i at step b - i: each agent meets its peers' bugs later
    assert sc.bug_for(0, 3) == sc.bug_for(1, 2) == sc.bug_for(2, 1)
    assert agent_name(0) == "agent-1"


def test_plan_with_adds_each_agent_once() -> None:
    v = plan_with("", "BUG-102", "agent-2")
    v = plan_with(v, "BUG-101", "agent-1")
    v = plan_with(v, "BUG-102", "agent-3")
    assert plan_with(v, "BUG-102", "agent-3") == v
    assert v == "BUG-101: agent-1 | BUG-102: agent-2, agent-3"


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("demo") / "swarm"
    r = _swarmlog("demo", "--agents", "3", "--steps", "8", "--root", str(root), "--json")
    assert r.returncode == 0, r.stderr
    out: dict[str, Any] = orjson.loads(r.stdout)
    return out


@pytest.mark.timeout(300)
def test_demo_shows_the_acceptance_facts(demo_json: dict[str, Any]) -> None:
    d = demo_json
    assert d["ok"] and all(d["checks"].values()), d["checks"]
    m = d["metrics"]
    # duplicates merged across agents
    assert m["duplicates_total"] > 0 and m["rediscoveries"] > 0
    assert set(m["duplicates"]) == {"exact", "near"}
    # at least one contested fact resolved
    assert m["contests_resolved"] >= 1 and m["resolutions"] >= 1
    contest = next(c for c in m["contests"] if c["resolved"])
    assert contest["subject"] == "auth.session_ttl_seconds"
    winner = next(c for c in contest["claims"] if c["id"] == contest["winner"])
    assert winner["value"] == "3600" and winner["support"] == 2
    # at least one CAS conflict, retried until every plan edit landed
    assert m["cas_conflicts"] >= 1
    assert all(r["plan_updates"] == 8 for r in d["reports"])
    assert sum(r["cas_conflicts"] for r in d["reports"]) == m["cas_conflicts"]
    # correlation lift and visibility latency
    assert m["correlation_lift"] > 0 and m["cites_peers"] > 0
    assert m["latency_n"] == m["raw_total"] > 0 and m["latency_p99"] >= m["latency_p50"] >= 0
    # replay: newest checkpoint + tail == from the start
    assert d["replay_equal"] and d["digest_checkpoint"] == d["digest_start"]
    assert 0 < d["checkpoint_seq"] < d["last_seq"]
    assert d["metrics"]["undecided"] == 0
    assert {a["agent"] for a in m["agents"]} >= {"agent-1", "agent-2", "agent-3"}


@pytest.mark.timeout(300)
def test_demo_log_and_report_are_kept_with_root(demo_json: dict[str, Any]) -> None:
    root = demo_json["root"]
    report = Path(demo_json["report_path"])
    assert report == Path(root) / "metrics" / "swarm_memory_dashboard.md"
    text = report.read_text()
    m = demo_json["metrics"]
    assert "## Top facts" in text and "## Demo run" in text
    assert f"seq {demo_json['last_seq']}" in text
    assert f"({m['duplicates_total']} of {m['raw_total']} raw" in text
    assert "✓ replay digest equal" in text and "✗" not in text
    log = open_log(root, create=False)
    try:
        a = state_at(log, at_seq=demo_json["last_seq"])
        b = state_at(log, at_seq=demo_json["last_seq"], from_start=True)
    finally:
        log.close()
    assert a.digest() == b.digest() == demo_json["digest_start"]
    assert facts_digest(a) == facts_digest(b)


@pytest.mark.timeout(300)
def test_demo_terminal_output_and_temp_cleanup(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = _swarmlog("demo", "--agents", "2", "--steps", "5", tmpdir=tmp)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for s in ("Top facts", "Contested facts", "Agents", "Metrics", "markdown report:"):
        assert s in out
    assert "✓ replay digest equal" in out
    assert "removed " in out
    removed = out.split("removed ")[-1].strip()
    assert not Path(removed).exists()
    # nothing left in the temp directory unasked: no report, no log
    assert "markdown report: none written" in out
    assert list(tmp.iterdir()) == []
    # asked for: the report is where the output says
    asked = tmp_path / "out" / "report.md"
    r = _swarmlog("demo", "--agents", "2", "--steps", "5", "--report", str(asked), tmpdir=tmp)
    assert r.returncode == 0, r.stderr
    assert f"markdown report: {asked}" in r.stdout
    assert "Swarm memory dashboard" in asked.read_text()
    assert list(tmp.iterdir()) == []


def test_demo_refuses_a_non_empty_log(tmp_path: Path) -> None:
    root = tmp_path / "busy"
    r = _swarmlog("init", "--root", str(root))
    assert r.returncode == 0, r.stderr
    r = _swarmlog("append", "--root", str(root), "--agent", "x", "already here")
    assert r.returncode == 0, r.stderr
    r = _swarmlog("demo", "--root", str(root), "--agents", "1", "--steps", "1")
    assert r.returncode == 1
    assert r.stderr.strip() == f"error: {root} is not empty; the demo needs a fresh swarm"


def test_demo_usage_errors() -> None:
    r = _swarmlog("demo", "--agents", "0")
    assert r.returncode == 2 and "--agents and --steps must be >= 1" in r.stderr


@pytest.mark.timeout(300)
def test_demo_over_jetstream_agents_share_one_swarm(nats_url: str) -> None:
    """Agents and the synthesizer in separate processes share one swarm through the server."""
    url = f"{nats_url}/DEMO{os.getpid()}"
    r = _swarmlog("demo", "--agents", "3", "--steps", "3", "--url", url, "--json")
    assert r.returncode == 0, r.stderr
    d = orjson.loads(r.stdout)
    assert d["ok"] and all(d["checks"].values()), d["checks"]
    assert d["replay_equal"]
    log = open_log(url, create=False)
    try:
        agents = {ev.agent for ev in log.read()}
        assert {"agent-1", "agent-2", "agent-3", "synthesizer"} <= agents
        assert log.verify().ok
    finally:
        log.close()
