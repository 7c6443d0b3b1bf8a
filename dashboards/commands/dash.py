"""Operator commands: dashboard, stats, demo — thin faces over ``synthesizer.metrics``
and ``dashboards.demo``, rendered by ``dashboard`` (rich) and ``markdown``."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.rule import Rule

from dashboards import fmt, markdown
from dashboards.app import (
    EXIT_ERROR,
    JsonOpt,
    RootOpt,
    UrlOpt,
    Where,
    app,
    emit_json,
    fail,
    open_swarm,
    register,
)
from dashboards.commands.act_stats import STATS
from dashboards.dashboard import render, watch
from dashboards.demo.agent import agent_name
from dashboards.demo.run import DemoError, DemoResult, cleanup, report_path, run_demo
from swarmlog import Log
from synthesizer.metrics import TOP_FACTS, SwarmMetrics, compute
from synthesizer.swarm import Swarm

FORMATS = ("terminal", "markdown")
LOG_WIDTH = 120


def make_console(stderr: bool = False) -> Console:
    """A console; when not a terminal (CI logs, pipes) and $COLUMNS is unset, 120 wide."""
    c = Console(stderr=stderr)
    if not c.is_terminal and not os.environ.get("COLUMNS"):
        c = Console(stderr=stderr, width=LOG_WIDTH)
    return c


def _write(path: str, text: str) -> None:
    """Write a report file, creating its directory."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def report_charts(log: Log, m: SwarmMetrics, out: str) -> list[tuple[str, str]] | str:
    """The report's charts as PNG files beside ``out`` (series from ``log``), or why there
    are none."""
    from dashboards.activity import activity

    try:
        from dashboards.charts import write_charts

        return write_charts(m, activity(log), Path(out))
    except ImportError:
        from swarmlog.extras import install_hint

        return f"No charts: they need the charts extra; install it {install_hint('charts')}."


def _shower(
    fmt_: str, out: str | None, console: Console, swarm: Swarm | None = None
) -> Any:
    """A function that shows one set of metrics once (print, or rewrite --out; a
    markdown --out gets its charts beside it when ``swarm`` is given)."""

    def show(m: SwarmMetrics) -> None:
        if fmt_ == "markdown":
            if out:
                charts = report_charts(swarm.log, m, out) if swarm is not None else None
                _write(out, markdown.render(m, charts=charts))
            else:
                text = markdown.render(m)
                console.print(text, markup=False, highlight=False, soft_wrap=True)
        elif out:
            rec = Console(record=True, width=LOG_WIDTH, file=io.StringIO())
            rec.print(render(m))
            _write(out, rec.export_text())
        else:
            console.print(render(m, console.width))

    return show


@app.command()
def dashboard(
    ctx: typer.Context,
    live: bool = typer.Option(False, "--live", help="Refresh whenever the log changes"),
    format_: str = typer.Option("terminal", "--format", help="terminal | markdown"),
    out: str | None = typer.Option(None, "--out", help="Write the report to FILE"),
    top: int = typer.Option(TOP_FACTS, "--top", help="How many top facts to list"),
    max_refreshes: int | None = typer.Option(
        None, "--max-refreshes", help="With --live: stop after N renders"
    ),
    duration: float | None = typer.Option(
        None, "--duration", help="With --live: stop after S seconds"
    ),
    charts: bool = typer.Option(
        True, "--charts/--no-charts", help="With --format markdown --out: PNG charts beside it"
    ),
    root: str | None = RootOpt,
    url: str | None = UrlOpt,
    json: bool = JsonOpt,
) -> None:
    """The swarm at a glance: top facts, contests, agents and metrics."""
    if format_ not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, not {format_!r}")
    if top < 1:
        fail("--top must be >= 1", code=2)
    swarm = open_swarm(ctx, root, url)
    console = make_console()
    try:
        if json and live:  # one JSON document per refresh (JSON lines)
            watch(
                swarm, lambda m: emit_json(m.to_dict()), top=top,
                max_refreshes=max_refreshes, duration=duration,
            )
        elif json:
            m = compute(swarm.refresh(), swarm=swarm.name, top=top, log=swarm.log)
            emit_json(m.to_dict())
        elif not live:
            with_charts = swarm if charts else None
            metrics = compute(swarm.refresh(), swarm=swarm.name, top=top, log=swarm.log)
            _shower(format_, out, console, with_charts)(metrics)
            if out:
                typer.echo(f"wrote {out}")
        else:
            _live(swarm, format_, out, console, top, max_refreshes, duration)
    except KeyboardInterrupt:
        pass
    finally:
        swarm.close()


def _live(
    swarm: Swarm, format_: str, out: str | None, console: Console, top: int,
    max_refreshes: int | None, duration: float | None,
) -> None:
    """--live: redraw in place on a terminal; elsewhere print one frame per change."""
    opts: dict[str, Any] = {"top": top, "max_refreshes": max_refreshes, "duration": duration}
    if format_ == "terminal" and not out and console.is_terminal:
        import time

        from dashboards.activity import activity
        from dashboards.keys import quit_keys
        from dashboards.liveview import render_live

        def view(m: SwarmMetrics) -> Any:
            w, h = console.size
            return render_live(m, activity(swarm.log), w, h - 1, time.time())

        opts["top"] = max(top, console.size.height)
        with quit_keys() as pressed, Live(
            console=console, auto_refresh=False, screen=False, transient=False
        ) as lv:
            watch(swarm, lambda m: lv.update(view(m), refresh=True), stop=pressed.is_set, **opts)
        return
    show = _shower(format_, out, console)

    def frame(m: SwarmMetrics) -> None:
        if not out:
            console.print(Rule(f"seq {m.last_seq}"))
        show(m)
        sys.stdout.flush()

    watch(swarm, frame, **opts)


register(STATS)


CHECK_LABELS = {
    "duplicates_merged_across_agents": "duplicates merged across agents",
    "contested_fact_resolved": "contested fact resolved",
    "cas_conflict_retried": "CAS conflict retried",
    "correlation_lift_positive": "correlation lift > 0",
    "visibility_latency_recorded": "visibility latency recorded",
    "replay_digest_equal": "replay digest equal",
}


def _check_detail(r: DemoResult, name: str) -> str:
    m = r.metrics
    return {
        "duplicates_merged_across_agents": (
            f"{fmt.plural(m.duplicates_total, 'duplicate')} merged,"
            f" {fmt.plural(m.rediscoveries, 'fact')} found by ≥ 2 agents"
        ),
        "contested_fact_resolved": f"{m.contests_resolved} resolved, {m.contests_open} open",
        "cas_conflict_retried": (
            f"{fmt.plural(m.cas_conflicts, 'conflict')} in {m.cas_attempts} attempts,"
            " all retried until the plan edit landed"
        ),
        "correlation_lift_positive": fmt.pct(m.correlation_lift),
        "visibility_latency_recorded": (
            f"p50 {fmt.seconds(m.latency_p50)}, p99 {fmt.seconds(m.latency_p99)}"
        ),
        "replay_digest_equal": (
            f"checkpoint at seq {r.checkpoint_seq} + tail to seq {r.last_seq}:"
            f" {r.digest_checkpoint[:16]}… vs from seq 1: {r.digest_start[:16]}…"
        ),
    }[name]


def _progress_run(console: Console, agents: int, steps: int, **kw: Any) -> DemoResult:
    """Run the demo under a rich progress bar (one bar per agent)."""
    columns = (
        TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as bar:
        tasks = {agent_name(i): bar.add_task(agent_name(i), total=steps) for i in range(agents)}
        return run_demo(
            agents, steps,
            progress=lambda a, s: bar.update(tasks[a], completed=s),
            phase=lambda msg: bar.console.print(f"· {msg}", style="dim"),
            **kw,
        )


@app.command()
def demo(
    ctx: typer.Context,
    agents: int = typer.Option(3, "--agents", help="How many agent processes"),
    steps: int = typer.Option(10, "--steps", help="Steps per agent"),
    root: str | None = typer.Option(
        None, "--root", help="Log directory [default: a fresh temp dir]"
    ),
    keep: bool = typer.Option(False, "--keep", help="Keep the temporary log directory"),
    report: str | None = typer.Option(
        None, "--report", help="Write the markdown report to FILE [default: in a kept log dir]"
    ),
    url: str | None = UrlOpt,
    scenario: str | None = typer.Option(None, "--scenario", help="Scenario JSON file", hidden=True),
    json: bool = JsonOpt,
) -> None:
    """Run the demo swarm: a synthesizer and N agents triaging bugs; then its dashboard."""
    if agents < 1 or steps < 1:
        fail("--agents and --steps must be >= 1", code=2)
    where: Where = ctx.obj if isinstance(ctx.obj, Where) else Where()
    root, url = root or where.root, url or where.url
    if root and url:
        fail("give either --root or --url, not both", code=2)
    console = make_console(stderr=json)
    kw: dict[str, Any] = {"root": root, "url": url, "scenario_path": scenario}
    if not json:
        where_ = url or root or "a fresh temporary directory"
        console.print(f"demo swarm: {agents} agents × {steps} steps, bug triage, on {where_}")
    try:
        if json:
            result = run_demo(agents, steps, **kw)
        else:
            result = _progress_run(console, agents, steps, **kw)
    except DemoError as e:
        fail(str(e))
        return
    path = report_path(result, keep, report)
    if path is not None:
        notes = [
            f"{'✓' if ok else '✗'} {CHECK_LABELS[k]}: {_check_detail(result, k)}"
            for k, ok in result.checks.items()
        ]
        head = f"Demo run: {agents} agents × {steps} steps ({result.scenario})"
        from swarmlog import open_log

        log = open_log(result.target)
        try:
            charts = report_charts(log, result.metrics, str(path))
        finally:
            log.close()
        text = markdown.render(result.metrics, "Swarm memory dashboard", (head, notes), charts)
        _write(str(path), text)
        result.report_path = str(path)
    removed = cleanup(result, keep)
    if json:
        emit_json(result.to_dict())
    else:
        _print_result(console, result, removed)
    if not result.ok:
        bad = [CHECK_LABELS[k] for k, v in result.checks.items() if not v]
        why = " (a swarm needs at least 2 agents)" if agents < 2 else ""
        fail(f"demo checks failed: {', '.join(bad)}{why}", code=EXIT_ERROR)


def _print_result(console: Console, r: DemoResult, removed: bool) -> None:
    """The dashboard, the report path, the replay check and the acceptance facts."""
    console.print(render(r.metrics, console.width))
    if r.report_path is not None:
        console.print(f"markdown report: {r.report_path}")
    else:
        console.print("markdown report: none written (pass --report FILE, or --keep)")
    for name, ok in r.checks.items():
        mark = "[green]✓[/]" if ok else "[red]✗[/]"
        console.print(f"{mark} {CHECK_LABELS[name]}: {_check_detail(r, name)}", highlight=False)
    where = f"removed {r.root}" if removed else f"log kept at {r.target}"
    console.print(f"{r.last_seq} events in {r.elapsed_s:.1f}s; {where}")
