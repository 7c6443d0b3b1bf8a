"""The live dashboard at 80×24 (polish work): every line fits, all of it fits, and it shows
activity over time, the strength histogram as bars, board values, an "updated" line and
the quit hint; the series come from the log's own ts. The tmux check runs the real
command in a real 80×24 terminal, changes the log from outside, and quits with q."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from dashboards.activity import TICKS, activity, hbar, sparkline
from dashboards.dashboard import render
from dashboards.liveview import QUIT_HINT, render_live
from swarmlog import open_log
from synthesizer.metrics import compute
from synthesizer.swarm import Swarm
from tests.swarmscript import SCRIPT, script_clock, write_script

ROOT = Path(__file__).resolve().parent.parent


def _text(renderable: object, width: int, height: int | None = None) -> list[str]:
    c = Console(record=True, width=width, height=height, file=open(os.devnull, "w"))  # noqa: SIM115
    c.print(renderable)
    return c.export_text().rstrip("\n").split("\n")


def test_sparkline_and_bars() -> None:
    assert sparkline([0, 1, 7]) == "▁▂█"
    assert sparkline([None, 3.0, None]) == " █ "
    assert sparkline([0.0, 0.0]) == "▁▁" and sparkline([]) == ""
    assert sparkline([0, 9, 0, 0, 0, 0], 3) == "█▁▁"  # resampled: the max of each pair
    assert len(sparkline([float(i) for i in range(100)], 20)) == 20
    assert sparkline([float(i) for i in range(100)], 20)[-1] == TICKS[-1]
    assert hbar(4, 4, 5) == "█████" and hbar(0, 4, 5) == "" and hbar(1, 8, 4) == "▌"


def test_activity_series_from_the_log_ts(tmp_path: Path) -> None:
    log = open_log(tmp_path / "scripted", name="scripted", clock=script_clock())
    try:
        write_script(log)
        act = activity(log, buckets=8)
    finally:
        log.close()
    stamps = [ev.ts for ev in SCRIPT]
    assert (act.start, act.end) == (min(stamps), max(stamps))
    assert act.events == len(SCRIPT) == 16
    assert round(sum(r * act.bucket_s for r in act.rate)) == 16  # every event counted once
    assert any(v is not None and v >= 0 for v in act.latency)  # decisions found their memory
    assert set(act.shares) <= {ev.agent for ev in SCRIPT}


def _swarm_metrics(tmp_path: Path) -> tuple[object, object]:
    with Swarm.open(tmp_path / "s", name="team") as sw:
        for i in range(30):
            sw.agent(f"agent-{i % 3}").share(
                f"Finding {i}: the {['cache', 'queue', 'auth'][i % 3]} layer misbehaves "
                f"under load {i * 37 % 100} with a very long explanation that goes on and on",
                importance=0.4 + (i % 5) / 10,
            )
        for a in ("agent-0", "agent-1", "agent-2"):  # backed by all: a top fact
            sw.agent(a).share(
                "The cache TTL is five minutes", subject="cache.ttl", value="300s",
                importance=1.0,
            )
        sw.synthesize()
        return compute(sw.state(), swarm=sw.name, top=30), activity(sw.log)


def test_live_view_fits_80x24_and_shows_everything(tmp_path: Path) -> None:
    m, act = _swarm_metrics(tmp_path)
    lines = _text(render_live(m, act, 80, 23, time.time()), 80)  # type: ignore[arg-type]
    assert len(lines) <= 23 and all(len(ln) <= 80 for ln in lines), lines
    text = "\n".join(lines)
    assert lines[0].startswith("swarmlog · swarm team · seq")
    assert "events/s" in text and "latency" in text and "strength  0 " in text
    assert any(ch in text for ch in TICKS[1:])  # bars, not a list of numbers
    assert "[cache.ttl=300s]" in text  # board values shown
    assert "agents (3)" in text and "agent-0" in text
    assert lines[-1].startswith("updated ") and lines[-1].endswith(QUIT_HINT)
    fact_lines = [ln for ln in lines if ln.startswith("f")]
    assert len(fact_lines) >= 10  # one line per fact


def test_full_dashboard_at_80_columns_has_one_line_per_fact(tmp_path: Path) -> None:
    m, _ = _swarm_metrics(tmp_path)
    lines = _text(render(m, 80), 80)  # type: ignore[arg-type]
    assert all(len(ln) <= 80 for ln in lines)
    assert "[cache.ttl=300s] The cache TTL is five" in "\n".join(lines)  # not squeezed
    assert any(ln.strip().startswith("agent-0 ") for ln in lines)  # names in full
    ids = [f.id for f in m.top]  # type: ignore[attr-defined]
    rows = [ln for ln in lines if ln.strip().split(" ")[0] in ids]
    assert len(rows) == len(ids)
    start = lines.index(rows[0])
    assert lines[start : start + len(ids)] == rows  # no wrapped continuation lines


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
@pytest.mark.timeout(120)
def test_live_dashboard_in_a_real_80x24_terminal(tmp_path: Path) -> None:
    _m, _ = _swarm_metrics(tmp_path)
    root = tmp_path / "s"
    session = f"swarmlog-test-{os.getpid()}"
    done = tmp_path / "done"
    cmd = (
        f"{sys.executable} -m dashboards --root {root} dashboard --live; "
        f"echo $? > {done}; sleep 60"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", cmd],
        check=True, env=env,
    )  # fmt: skip

    def screen() -> list[str]:
        out = subprocess.run(["tmux", "capture-pane", "-p", "-t", session],
                             capture_output=True, text=True, check=True)  # fmt: skip
        return out.stdout.rstrip("\n").split("\n")

    try:
        deadline = time.monotonic() + 60
        while not any(QUIT_HINT in ln for ln in screen()) and time.monotonic() < deadline:
            time.sleep(0.2)
        first = screen()
        assert any(QUIT_HINT in ln for ln in first), first
        assert len(first) <= 24 and all(len(ln) <= 80 for ln in first)
        assert first[0].startswith("swarmlog · swarm team")
        assert any(ln.startswith("agent-") for ln in first)  # the agents are in view
        with Swarm.open(root) as sw:  # another process writes: the view follows
            sw.agent("agent-7").share("A brand new finding about the scheduler")
            seq = sw.log.last_seq
        while not any(f"seq {seq}" in ln for ln in screen()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert any(f"seq {seq} · 1 undecided" in ln for ln in screen()), screen()
        subprocess.run(["tmux", "send-keys", "-t", session, "q"], check=True)
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert done.read_text().strip() == "0"  # q quit it, cleanly
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def test_agent_content_is_never_rich_markup(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s", name="m") as sw:
        sw.agent("ann").share("[bold red]alarm[/] the [link=x]queue[/link] is [b]down")
        sw.synthesize()
        m = compute(sw.state(), swarm=sw.name)
    for width in (200, 80):
        text = "\n".join(_text(render(m, width), width))
        assert "[bold red]alarm[/]" in text and "[link=x]queue" in text, width
