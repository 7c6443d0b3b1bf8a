"""One scripted demo agent, run as its own process: ``python -m dashboards.demo.agent``.

Agent ``i`` of ``n`` works on bug ``(step + i) % len(bugs)`` at each step, so every bug is
visited by the agents in turn, highest index first. A step: wait for the peers to finish
the previous step and for the synthesizer to catch up (a soft barrier read from the log,
so the run is reproducible); recall the bug; share a finding citing, in ``causes``, the
peers' evidence behind the recalled facts; share a structured claim when the bug has
one; reinforce and rate the most useful peer fact; record the triage in the shared plan
fact through ``board.update`` (CAS with retries). Agent 0 reviews last; it reads the plan
before working on its bug and writes after (a slow read-modify-write). Until one of its
writes has lost, the peers write the plan only once agent 0's recall of the step is in
the log, and agent 0 waits for a peer's write before its own: so its first write
conflicts and is retried, in every run. It also ticks the pool once per step.

Prints JSON lines: ``{"agent", "step"}`` per step, then a final report.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from synthesizer.board import Attempt
from synthesizer.errors import UnknownFact
from synthesizer.search.recall import Hit
from synthesizer.state import SwarmState
from synthesizer.state.facts import Fact
from synthesizer.swarm import Agent, Swarm

BARRIER_TIMEOUT = 5.0
SLOW_THINK_TIMEOUT = 3.0
CITE_MIN_SIMILARITY = 0.3


@dataclass(frozen=True)
class Claim:
    """A structured claim: subject, content template (``{value}``), value per agent slot."""

    subject: str
    content: str
    values: list[str]


@dataclass(frozen=True)
class Bug:
    """A bug report: the recall query and the finding each agent slot phrases."""

    id: str
    query: str
    findings: list[str]
    claim: Claim | None = None


@dataclass(frozen=True)
class Scenario:
    """A scripted swarm task (see ``dashboards/demo/scenarios/*.json``)."""

    name: str
    description: str
    plan_id: str
    plan_content: str
    plan_category: str
    bugs: list[Bug]

    @classmethod
    def load(cls, path: str | Path | None = None) -> Scenario:
        """Load a scenario file (default: the packaged ``bugtriage.json``)."""
        if path is None:
            packaged = resources.files("dashboards.demo").joinpath("scenarios/bugtriage.json")
            text = packaged.read_text()
        else:
            text = Path(path).read_text(encoding="utf-8")
        d = json.loads(text)
        bugs = [
            Bug(
                b["id"],
                b["query"],
                list(b["findings"]),
                Claim(**b["claim"]) if b.get("claim") else None,
            )
            for b in d["bugs"]
        ]
        plan = d["plan"]
        return cls(
            d["name"], d.get("description", ""), plan["id"], plan["content"],
            plan.get("category", "plan"), bugs,
        )

    def bug_for(self, index: int, step: int) -> Bug:
        """The bug agent ``index`` works on at ``step``."""
        return self.bugs[(step + index) % len(self.bugs)]


def agent_name(index: int) -> str:
    """Display name of agent ``index`` (0-based): agent-1, agent-2, …"""
    return f"agent-{index + 1}"


def plan_with(value: str | None, bug: str, agent: str) -> str:
    """The plan value with ``agent`` added to ``bug``'s triagers (``BUG: a, b | BUG: c``)."""
    entries: dict[str, list[str]] = {}
    for part in (value or "").split(" | "):
        if ":" in part:
            k, names = part.split(":", 1)
            entries[k.strip()] = [n.strip() for n in names.split(",") if n.strip()]
    triagers = entries.setdefault(bug, [])
    if agent not in triagers:
        triagers.append(agent)
    return " | ".join(f"{k}: {', '.join(v)}" for k, v in sorted(entries.items()))


@dataclass
class AgentReport:
    """What one agent did (its final stdout line)."""

    agent: str
    steps: int = 0
    shares: int = 0
    recalls: int = 0
    cited: int = 0
    reinforced: int = 0
    plan_updates: int = 0
    cas_attempts: int = 0
    cas_conflicts: int = 0
    barrier_timeouts: int = 0
    reinforced_ids: list[str] = field(default_factory=list)


class DemoAgent:
    """Agent ``index`` of ``n`` working through a scenario on a swarm."""

    def __init__(
        self, swarm: Swarm, scenario: Scenario, index: int, n: int, steps: int
    ) -> None:
        self.swarm = swarm
        self.scenario = scenario
        self.index = index
        self.n = n
        self.steps = steps
        self.name = agent_name(index)
        self.peers = [agent_name(j) for j in range(n) if j != index]
        self.session = f"triage-{self.name}"
        self.agent: Agent = swarm.agent(self.name, session=self.session)
        self.report = AgentReport(self.name)
        self._slow = index == 0 and n > 1

    # ------------------------------------------------------------------ waiting

    def wait_until(self, pred: Callable[[SwarmState], bool], timeout: float) -> bool:
        """Wait (on log change notifications) until ``pred(state)``; False on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            if pred(self.swarm.refresh()):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.swarm.log.wait_for_change(min(left, 0.5))

    def _peers_done(self, st: SwarmState, steps_done: int) -> bool:
        cas = st.metrics.cas
        return all(cas.get(p, (0, 0, 0))[1] >= steps_done for p in self.peers)

    def barrier(self, step: int) -> None:
        """Peers finished ``step`` steps (their plan writes) and nothing is undecided."""
        ok = self.wait_until(
            lambda st: self._peers_done(st, step) and not st.pending, BARRIER_TIMEOUT
        )
        if not ok:
            self.report.barrier_timeouts += 1

    # ------------------------------------------------------------------ one step

    def _peer_hits(self, hits: list[Hit]) -> list[Hit]:
        return [
            h
            for h in hits
            if h.similarity >= CITE_MIN_SIMILARITY
            and any(e.agent != self.name for e in h.fact.evidence)
        ]

    def step(self, k: int) -> None:
        """One scripted step (see module docstring)."""
        bug = self.scenario.bug_for(self.index, k)
        self.barrier(k)
        if self.index == 0:
            self.edit_plan(bug.id, k, work=lambda: self.work(bug))
            self.swarm.tick(agent=self.name)
        else:
            shared = self.work(bug)
            self.wait_for_lead(k)
            self.edit_plan(bug.id, k, evidence=shared)
        self.report.steps += 1

    def work(self, bug: Bug) -> int:
        """Recall the bug, share the finding (and claim) citing peers, endorse the best
        peer fact; return the seq of the shared finding."""
        hits = self.agent.recall(bug.query, limit=3)
        self.report.recalls += 1
        peer = self._peer_hits(hits)
        causes = sorted({e.seq for h in peer for e in h.fact.evidence if e.agent != self.name})
        if causes:
            self.report.cited += 1
        text = bug.findings[self.index % len(bug.findings)]
        shared = self.agent.share(
            text, category="root-cause", importance=0.7, causes=causes or None
        )
        self.report.shares += 1
        if bug.claim is not None:
            c = bug.claim
            value = c.values[self.index % len(c.values)]
            self.agent.share(
                c.content.format(value=value), category="config", importance=0.6,
                subject=c.subject, value=value, causes=causes or None,
            )
            self.report.shares += 1
        if peer:
            self.endorse(peer[0].fact.id)
        return shared.seq or 0

    def endorse(self, fid: str) -> None:
        """Reinforce (once per fact) and rate a useful peer fact."""
        try:
            if fid not in self.report.reinforced_ids:
                self.agent.reinforce(fid)
                self.report.reinforced_ids.append(fid)
                self.report.reinforced += 1
            self.agent.feedback(fid, 1.0)
        except UnknownFact:
            pass  # evicted between recall and now

    def edit_plan(
        self, bug: str, k: int, evidence: int | None = None,
        work: Callable[[], int] | None = None,
    ) -> None:
        """Add this agent to the bug's triagers in the plan (CAS with retries). ``work``
        runs between the first read and the first write (a slow read-modify-write)."""
        first = [True]
        cited = [evidence]

        def change(f: Fact) -> dict[str, Any]:
            if first[0]:
                first[0] = False
                if work is not None:
                    cited[0] = work()
                if self._slow:
                    self.think(f.version, k)
            out: dict[str, Any] = {"value": plan_with(f.value, bug, self.name)}
            if cited[0]:
                out["evidence"] = [cited[0]]
            return out

        def seen(a: Attempt) -> None:
            self.report.cas_attempts += 1
            if not a.ok:
                self.report.cas_conflicts += 1
                self._slow = False

        self.swarm.board.update(
            self.scenario.plan_id, change, agent=self.name, session=self.session,
            on_attempt=seen,
        )
        self.report.plan_updates += 1

    def wait_for_lead(self, k: int) -> None:
        """While agent 0 has not yet lost a plan CAS, write the plan only after it has
        read the plan for this step (its recall of step ``k`` is in the log)."""
        lead = agent_name(0)
        self.wait_until(
            lambda st: st.metrics.cas.get(lead, (0, 0, 0))[2] > 0
            or st.metrics.recalls.get(lead, 0) > k,
            SLOW_THINK_TIMEOUT,
        )

    def think(self, read_version: int, k: int) -> None:
        """Deliberate between reading and writing the plan: until a peer writes it, or
        every peer is done with this step (bounded)."""
        plan = self.scenario.plan_id
        self.wait_until(
            lambda st: self.swarm.log.version(plan) != read_version
            or self._peers_done(st, k + 1),
            SLOW_THINK_TIMEOUT,
        )

    # ------------------------------------------------------------------ the run

    def run(self, emit: Callable[[dict[str, Any]], None]) -> AgentReport:
        """All steps inside one session; ``emit`` receives the progress lines."""
        self.swarm.start_session(self.session, agent=self.name)
        for k in range(self.steps):
            self.step(k)
            emit({"agent": self.name, "step": k + 1})
        self.swarm.end_session(self.session, agent=self.name)
        return self.report


def _emit(d: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(d) + "\n")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    """Entry point of an agent process."""
    p = argparse.ArgumentParser(prog="python -m dashboards.demo.agent")
    p.add_argument("target")
    p.add_argument("--index", type=int, required=True)
    p.add_argument("--agents", type=int, required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--scenario", default=None)
    a = p.parse_args(argv)
    swarm = Swarm.open(a.target)
    try:
        agent = DemoAgent(swarm, Scenario.load(a.scenario), a.index, a.agents, a.steps)
        report = agent.run(_emit)
    finally:
        swarm.close()
    _emit({"report": asdict(report)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
