"""The dashboards: terminal rendering on a fixed-width console, the markdown report with
the same numbers, the CLI commands, and ``--live`` refreshing on a change made by
another process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from rich.console import Console
from typer.testing import CliRunner

from dashboards import fmt, markdown
from dashboards.cli import app
from dashboards.dashboard import render
from swarmlog import open_log
from synthesizer.metrics import SwarmMetrics, compute
from synthesizer.replay import state_at
from synthesizer.swarm import Swarm
from tests.swarmscript import script_clock, write_script

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("Top facts", "Contested facts", "Agents", "Metrics")


def text_of(m: SwarmMetrics, width: int = 200) -> str:
    """The terminal dashboard as plain text on a fixed-width console."""
    console = Console(record=True, width=width, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(render(m))
    return console.export_text()


def scripted_metrics(tmp_path: Path) -> SwarmMetrics:
    log = open_log(tmp_path / "scripted", name="scripted", clock=script_clock())
    try:
        write_script(log)
        return compute(state_at(log), swarm=log.name, log=log)
    finally:
        log.close()


def small_metrics(tmp_path: Path) -> SwarmMetrics:
    with Swarm.open(tmp_path / "small", name="small") as swarm:
        swarm.agent("ann").share("Retries double-charge cards on timeout", importance=0.9)
        swarm.agent("bob").share("Retries double-charge cards on timeout", importance=0.9)
        swarm.agent("bob").share("The webhook secret is read once at boot")
        swarm.synthesize()
        return compute(swarm.state(), swarm=swarm.name)


def test_empty_swarm_says_so(tmp_path: Path) -> None:
    log = open_log(tmp_path / "empty", name="empty")
    m = compute(state_at(log), swarm=log.name)
    log.close()
    text = text_of(m, width=100)
    assert "swarm empty · seq 0" in text
    assert "Empty swarm: no events yet" in text
    assert "Top facts" not in text
    md = markdown.render(m)
    assert "Empty swarm: no events yet" in md and "seq 0" in md


def test_small_swarm(tmp_path: Path) -> None:
    m = small_metrics(tmp_path)
    text = text_of(m, width=160)
    for section in SECTIONS:
        assert section in text
    assert "swarm small · seq" in text
    assert "Retries double-charge cards on timeout" in text
    assert "The webhook secret is read once at boot" in text
    assert "33.3% (1 of 3 raw; exact 1)" in text
    assert "1 fact found by ≥ 2 agents" in text
    assert "Contested facts: none" in text
    for agent in ("ann", "bob"):
        assert agent in text


def test_scripted_swarm_terminal_and_markdown_agree(tmp_path: Path) -> None:
    m = scripted_metrics(tmp_path)
    text = text_of(m)
    md = markdown.render(m)
    expected = [
        "swarm scripted · seq 16 · 1 undecided · 4 facts",
        "1 memory not decided yet",
        "12 events past the synthesizer's progress mark (seq 4)",
        "16 (2.0 ev/s over 8.0 s)",
        "20.0% (1 of 5 raw; exact 1)",
        "20.0% (1 of 5 raw cite recalled peer events)",
        "p50 1.00 s · p99 2.00 s (4 samples)",
        "3 attempts, 2 ok, 1 conflict",
        "1 resolved, 0 open (1 resolution)",
        "4 (active 3, superseded 1)",
        "[0 0 0 0 0 0 0 0 0 4]",
        "10 (f3 active, 1 agent); 20 (f4 superseded, 1 agent)",
        "resolved → f3",
        "Cache keys ignore the locale",
        "Plan: fix caching first",
    ]
    for s in expected:
        assert s in text, s
        assert s in md, s
    for label, value in fmt.metric_rows(m):  # every metric, in both, verbatim
        assert value in text and f"| {label} | {value} |" in md
    for section in SECTIONS:
        assert section in text and f"## {section}" in md
    # the top fact row: id, support, strength bar, tier, version, status
    assert "| f1 | 2 | ████████ 1.00 | working | 6 | active |" in md
    row = next(line for line in text.splitlines() if " f1 " in line)
    for cell in ("2", "████████ 1.00", "working", "6", "active"):
        assert cell in row


def test_narrow_console_still_renders(tmp_path: Path) -> None:
    text = text_of(scripted_metrics(tmp_path), width=80)
    assert all(len(line) <= 80 for line in text.splitlines())
    for section in SECTIONS:
        assert section in text


# ---------------------------------------------------------------------- CLI


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.output


def test_cli_dashboard_stats_and_markdown(tmp_path: Path) -> None:
    root = str(tmp_path / "scripted")
    m = scripted_metrics(tmp_path)
    code, out = _cli("dashboard", "--root", root)
    assert code == 0 and "Top facts" in out
    code, out = _cli("stats", "--root", root)
    assert code == 0 and "correlation lift: 20.0%" in out
    code, out = _cli("stats", "--root", root, "--json")
    assert code == 0 and orjson.loads(out)["cas_conflicts"] == 1
    code, out = _cli("dashboard", "--root", root, "--json")
    assert code == 0 and orjson.loads(out)["latency_p99"] == 2.0
    report = tmp_path / "metrics" / "swarm_memory_dashboard.md"
    code, out = _cli(
        "dashboard", "--root", root, "--format", "markdown", "--out", str(report), "--no-charts"
    )
    assert code == 0 and f"wrote {report}" in out
    assert report.read_text() == markdown.render(m)  # (charts: tests/test_charts.py)


@pytest.mark.slow
def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    code, out = _cli("dashboard", "--root", str(tmp_path), "--format", "html")
    assert code == 1 and "--format must be one of terminal, markdown" in out
    r = subprocess.run(
        [sys.executable, "-m", "dashboards", "dashboard", "--root", str(tmp_path / "nope")],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )
    assert r.returncode == 1
    assert r.stderr.strip().startswith("error: no swarm log at")
    assert len(r.stderr.strip().splitlines()) == 1


def test_cli_empty_swarm(tmp_path: Path) -> None:
    open_log(tmp_path / "e").close()
    code, out = _cli("dashboard", "--root", str(tmp_path / "e"))
    assert code == 0 and "Empty swarm" in out
    code, out = _cli("stats", "--root", str(tmp_path / "e"))
    assert code == 0 and "Empty swarm" in out


# ---------------------------------------------------------------------- --live


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_live_refreshes_when_another_process_appends(tmp_path: Path) -> None:
    root = tmp_path / "live"
    open_log(root, name="live").close()
    env = dict(os.environ, COLUMNS="160", PYTHONPATH=str(ROOT))
    dash = subprocess.Popen(
        [
            sys.executable, "-m", "dashboards", "dashboard", "--live", "--root", str(root),
            "--max-refreshes", "2", "--duration", "3600",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )
    try:
        assert dash.stdout is not None
        first: list[str] = []
        for line in dash.stdout:  # the first frame: the empty swarm
            first.append(line)
            if "Empty swarm" in line:
                break
        assert any("seq 0" in ln for ln in first)
        subprocess.run(
            [
                sys.executable, "-m", "dashboards", "append", "--root", str(root),
                "--agent", "zed", "Fresh finding: the cache never expires",
            ],
            check=True, capture_output=True, env=env, cwd=ROOT, timeout=60,
        )
        # a hang guard, not a timing check: --duration is an hour, so ending at all
        # means the refresh on the append (and --max-refreshes) ended it
        rest, err = dash.communicate(timeout=120)
    finally:
        if dash.poll() is None:
            dash.kill()
    assert dash.returncode == 0, err
    assert "swarm live · seq 1" in rest
    assert "zed" in rest and "1 undecided" in rest
