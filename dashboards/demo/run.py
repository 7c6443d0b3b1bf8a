"""The demo swarm (seed 002's experiment made real): a synthesizer worker and N agent
processes on one log, working through a scripted scenario, then a replay check.

``run_demo`` creates the plan fact, starts ``synthesizer.worker.main`` and the agents
(``dashboards.demo.agent``) as child processes, reports their steps through a callback,
waits for the synthesizer to decide every raw memory, stops it (it stores a checkpoint),
appends a final pool tick, and compares the digest of the newest checkpoint folded up to
the end with the digest of a fold from seq 1. Rendering is the caller's business
(``swarmlog demo`` draws the progress bar and the dashboard).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from dashboards.demo.agent import Scenario, agent_name
from swarmlog import SwarmlogError
from synthesizer.metrics import SwarmMetrics, compute
from synthesizer.replay import fold_into, load_checkpoint, state_at
from synthesizer.state import SwarmState
from synthesizer.swarm import Swarm

LEAD = "lead"
STOP_TIMEOUT = 15.0
CATCH_UP_TIMEOUT = 30.0

Progress = Callable[[str, int], None]
Phase = Callable[[str], None]


class DemoError(SwarmlogError):
    """The demo could not run to the end (a child failed, a timeout, a non-empty log)."""


@dataclass
class DemoResult:
    """What a demo run produced and the checks its result must pass."""

    target: str
    root: str | None
    temporary: bool
    agents: int
    steps: int
    scenario: str
    elapsed_s: float
    last_seq: int
    checkpoint_seq: int
    digest_checkpoint: str
    digest_start: str
    reports: list[dict[str, Any]]
    metrics: SwarmMetrics
    checks: dict[str, bool] = field(default_factory=dict)
    report_path: str | None = None

    @property
    def replay_equal(self) -> bool:
        """Newest checkpoint + tail == fold from the start."""
        return self.checks.get("replay_digest_equal", False)

    @property
    def ok(self) -> bool:
        """Every check passed."""
        return all(self.checks.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``swarmlog demo --json``)."""
        return {
            "target": self.target,
            "root": self.root,
            "temporary": self.temporary,
            "agents": self.agents,
            "steps": self.steps,
            "scenario": self.scenario,
            "elapsed_s": self.elapsed_s,
            "last_seq": self.last_seq,
            "checkpoint_seq": self.checkpoint_seq,
            "digest_checkpoint": self.digest_checkpoint,
            "digest_start": self.digest_start,
            "replay_equal": self.replay_equal,
            "ok": self.ok,
            "checks": self.checks,
            "report_path": self.report_path,
            "reports": self.reports,
            "metrics": self.metrics.to_dict(),
        }


def checks_for(m: SwarmMetrics, reports: list[dict[str, Any]], steps: int) -> dict[str, bool]:
    """The demo's acceptance facts, from the metrics and the agents' own reports."""
    return {
        "duplicates_merged_across_agents": m.duplicates_total > 0 and m.rediscoveries > 0,
        "contested_fact_resolved": m.contests_resolved > 0,
        "cas_conflict_retried": m.cas_conflicts > 0
        and all(r.get("plan_updates") == steps for r in reports),
        "correlation_lift_positive": m.correlation_lift > 0,
        "visibility_latency_recorded": m.latency_n > 0,
    }


class _Child:
    """A child process whose stdout lines go to a queue and whose stderr is kept."""

    def __init__(self, name: str, argv: list[str], out: queue.Queue[tuple[str, str | None]]):
        self.name = name
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_child_env(),
        )
        self.err: list[str] = []
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, out), daemon=True),
            threading.Thread(target=self._keep, args=(self.proc.stderr,), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _pump(self, stream: IO[str] | None, out: queue.Queue[tuple[str, str | None]]) -> None:
        if stream is not None:
            for line in stream:
                out.put((self.name, line))
        out.put((self.name, None))

    def _keep(self, stream: IO[str] | None) -> None:
        if stream is not None:
            for line in stream:
                self.err.append(line.rstrip("\n"))

    def wait(self, timeout: float) -> int:
        """Wait for exit (then for the pipes to drain); kill after ``timeout``."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        for t in self._threads:
            t.join(5.0)
        return rc

    def stop(self, timeout: float) -> int:
        """SIGTERM, then wait (kill after ``timeout``)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def failure(self) -> str:
        """The last stderr line (the error), for a one-line message."""
        lines = [ln for ln in self.err if ln.strip()]
        return lines[-1] if lines else f"exit code {self.proc.returncode}"


def _child_env() -> dict[str, str]:
    """The environment of children: this package importable even when not installed."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])  # the directory holding dashboards/
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _wait_synthesized(swarm: Swarm, timeout: float) -> SwarmState:
    """Wait (on log notifications) until no raw memory is left undecided."""
    deadline = time.monotonic() + timeout
    while True:
        st = swarm.refresh()
        if not st.pending:
            return st
        left = deadline - time.monotonic()
        if left <= 0:
            raise DemoError(f"the synthesizer left {len(st.pending)} raw memories undecided")
        swarm.log.wait_for_change(min(left, 0.5))


def _run_agents(
    children: dict[str, _Child],
    worker: _Child,
    out: queue.Queue[tuple[str, str | None]],
    timeout: float,
    progress: Progress | None,
) -> list[dict[str, Any]]:
    """Relay agents' step lines to ``progress`` until all exit; return their reports.
    A child that fails (or the worker exiting early) ends the run with DemoError."""
    reports: dict[str, dict[str, Any]] = {}
    open_ = set(children)
    deadline = time.monotonic() + timeout
    while open_:
        left = deadline - time.monotonic()
        if left <= 0:
            raise DemoError(f"agents did not finish within {timeout:.0f}s: {sorted(open_)}")
        try:
            name, line = out.get(timeout=min(left, 1.0))
        except queue.Empty:
            continue
        if name == worker.name and line is None:
            worker.wait(5.0)
            raise DemoError(f"the synthesizer worker exited early: {worker.failure()}")
        if name not in children:
            continue
        if line is None:
            open_.discard(name)
            child = children[name]
            if child.wait(10.0) != 0:
                raise DemoError(f"{name} failed: {child.failure()}")
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "report" in msg:
            reports[name] = msg["report"]
        elif "step" in msg and progress is not None:
            progress(name, int(msg["step"]))
    return [reports[n] for n in children if n in reports]


def prepare_target(root: str | None, url: str | None) -> tuple[str, str | None, bool]:
    """(target, root dir, temporary?) — a fresh temp dir unless --root or --url is given."""
    if url:
        return url, None, False
    if root:
        return root, root, False
    tmp = tempfile.mkdtemp(prefix="swarmlog-demo-")
    return tmp, tmp, True


def run_demo(
    agents: int = 3,
    steps: int = 8,
    root: str | None = None,
    url: str | None = None,
    scenario_path: str | None = None,
    progress: Progress | None = None,
    phase: Phase | None = None,
    timeout: float | None = None,
) -> DemoResult:
    """Run the demo swarm end to end (see module docstring); raise DemoError on failure."""
    if agents < 1 or steps < 1:
        raise DemoError("--agents and --steps must be >= 1")
    scenario = Scenario.load(scenario_path)
    target, root_dir, temporary = prepare_target(root, url)
    say = phase or (lambda _msg: None)
    t0 = time.monotonic()
    py = sys.executable
    out: queue.Queue[tuple[str, str | None]] = queue.Queue()
    swarm = Swarm.open(target)
    worker: _Child | None = None
    children: dict[str, _Child] = {}
    try:
        if swarm.log.last_seq:
            raise DemoError(f"{target} is not empty; the demo needs a fresh swarm")
        swarm.board.cas(
            scenario.plan_id, 0, content=scenario.plan_content,
            category=scenario.plan_category, value="", agent=LEAD,
        )
        say("starting the synthesizer worker")
        worker = _Child("synthesizer", [py, "-m", "synthesizer.worker.main", target], out)
        say(f"starting {agents} agent(s)")
        extra = ["--scenario", scenario_path] if scenario_path else []
        for i in range(agents):
            argv = [
                py, "-m", "dashboards.demo.agent", target, "--index", str(i),
                "--agents", str(agents), "--steps", str(steps), *extra,
            ]
            children[agent_name(i)] = _Child(agent_name(i), argv, out)
        limit = timeout if timeout is not None else 60.0 + 2.0 * agents * steps
        reports = _run_agents(children, worker, out, limit, progress)
        say("waiting for the synthesizer to decide every raw memory")
        _wait_synthesized(swarm, CATCH_UP_TIMEOUT)
        say("stopping the synthesizer (it stores a checkpoint)")
        rc = worker.stop(STOP_TIMEOUT)
        if rc != 0:
            raise DemoError(f"the synthesizer worker failed: {worker.failure()}")
        swarm.tick(agent=LEAD)
        say("replaying: newest checkpoint vs from the start")
        return _finish(swarm, target, root_dir, temporary, agents, steps, scenario, reports, t0)
    finally:
        for c in [*children.values(), *([worker] if worker else [])]:
            if c.proc.poll() is None:
                c.stop(5.0)
        swarm.close()


def _finish(
    swarm: Swarm, target: str, root: str | None, temporary: bool, agents: int, steps: int,
    scenario: Scenario, reports: list[dict[str, Any]], t0: float,
) -> DemoResult:
    """Replay check and metrics of the finished run."""
    log = swarm.log
    last = log.last_seq
    ck = load_checkpoint(log, last)
    ck_seq = ck.last_seq if ck is not None else 0
    from_ck = fold_into(ck if ck is not None else SwarmState(), log, last)
    from_start = state_at(log, at_seq=last, from_start=True)
    m = compute(from_start, swarm=log.name)
    checks = checks_for(m, reports, steps)
    checks["replay_digest_equal"] = ck is not None and from_ck.digest() == from_start.digest()
    return DemoResult(
        target=target,
        root=root,
        temporary=temporary,
        agents=agents,
        steps=steps,
        scenario=scenario.name,
        elapsed_s=time.monotonic() - t0,
        last_seq=last,
        checkpoint_seq=ck_seq,
        digest_checkpoint=from_ck.digest(),
        digest_start=from_start.digest(),
        reports=reports,
        metrics=m,
        checks=checks,
    )


def report_path(result: DemoResult, keep: bool, asked: str | None = None) -> Path | None:
    """Where the markdown report goes: the asked file, else the kept log directory.

    None (no report file) for a temporary log that is removed, or a JetStream log, unless
    asked: reports are not left behind in the temp directory unasked.
    """
    if asked is not None:
        return Path(asked)
    if result.root is not None and (keep or not result.temporary):
        return Path(result.root) / "metrics" / "swarm_memory_dashboard.md"
    return None


def cleanup(result: DemoResult, keep: bool) -> bool:
    """Remove the temporary log directory unless kept; True if removed."""
    if result.temporary and not keep and result.root is not None:
        with contextlib.suppress(OSError):
            shutil.rmtree(result.root)
        return True
    return False


__all__ = ["DemoError", "DemoResult", "checks_for", "cleanup", "report_path", "run_demo"]
