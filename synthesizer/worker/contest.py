"""Free-text decisions of the synthesizer: merge, contest, or keep apart, and resolution.

For a plain memory (no subject) the worker's scorer proposes candidate facts by cosine;
``TextContests.choose`` asks the merge rule (``mergerule``) about each, and a configured
judge (``judge``) about those the rule calls ``unsure``:

- a ``same`` candidate at or above the near-duplicate cosine: the memory corroborates it;
- ``contradicts`` candidates (from the lower contest floor up): the memory becomes a new
  fact, and a ``fact.contested`` names it and its rivals (``reason``, and the judge and
  its model when a judge answered); the fold makes each list the others in
  ``contested_with``;
- anything else: a new fact, apart.

Resolution is as for subject/value claims, from evidence only: when the agents vouching
for one side outnumber the other's (then average feedback), ``fact.resolved`` makes it
``active`` and the rivals ``superseded``; while they tie, all stay ``contested``. It is
re-decided whenever a rival gains evidence, so it flips back when the evidence changes.
All of it is in the log: a replay folds the decisions and asks no rule or judge again.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from swarmlog import Event
from synthesizer import events as T
from synthesizer.config import CONTEST_FLOOR
from synthesizer.merge.judge import Judge, judge_for
from synthesizer.merge.rule import (
    CONTRADICTS,
    DIFFERENT,
    SAME,
    UNSURE,
    Verdict,
    compare,
    may_bind,
    settle,
)
from synthesizer.search.embed import Embedder
from synthesizer.state.facts import ACTIVE, CONTESTED, RETRACTED, SUPERSEDED, RawMemory
from synthesizer.state.swarmstate import SwarmState

__all__ = ["Choice", "TextContests"]

LOG = logging.getLogger("synthesizer.judge")
MAX_JUDGED = 3
"""Unsure candidates a judge is asked about per memory (best first)."""
MAX_CANDIDATES = 8
"""Candidates at or above the near-duplicate cosine the merge rule compares per memory."""
MAX_RIVALS = 3
"""Candidates below it (from the contest floor) compared for a contradiction per memory:
in a swarm of statements on one narrow topic the floor finds a hundred, and each
comparison costs (~0.5 ms)."""


class ContestWorker(Protocol):
    """What the contests read of the worker."""

    state: SwarmState

    @property
    def near_duplicate(self) -> float: ...


@dataclass
class Choice:
    """What to do with one plain memory (see module docstring)."""

    same: tuple[str, float] | None = None
    rivals: list[str] = field(default_factory=list)
    reason: str = ""
    judge: str | None = None
    model: str | None = None
    judged: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Side:
    agents: set[str]
    feedback: float
    status: str


@functools.lru_cache(maxsize=1 << 15)
def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\w+", text.casefold()))


def _may_share_a_frame(a: str, b: str) -> bool:
    """A cheap necessary condition for a ``same`` or ``contradicts`` verdict: the two
    share at least a third of their words as written (the rule needs half of their
    lemmas; inflections and number words lower the written overlap, hence the margin)."""
    wa, wb = _words(a), _words(b)
    return 3 * len(wa & wb) >= max(len(wa), len(wb))


def judged_any(c: Choice) -> bool:
    """Whether a judge's answer is part of the choice (a rival or a 'different')."""
    return bool(c.judged) or c.reason == "judge"


class TextContests:
    """The worker's free-text decisions for one batch at a time (``begin`` resets)."""

    def __init__(self, worker: ContestWorker, embedder: Callable[[], Embedder]) -> None:
        self.worker = worker
        self._embedder = embedder
        self._judge_spec: tuple[str, str] | None = None
        self._judge: Judge | None = None
        self.begin()

    def begin(self) -> None:
        """Forget the previous batch's overlay."""
        self._sides: dict[str, _Side] = {}
        self._rivals: dict[str, set[str]] = {}
        self._touched: list[str] = []
        self._spans: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------ the judge

    @property
    def judge(self) -> Judge | None:
        """The configured judge (rebuilt when the folded configuration changes)."""
        cfg = self.worker.state.config.synthesizer
        spec = (cfg.judge, cfg.judge_model)
        if spec != self._judge_spec:
            self._judge_spec = spec
            try:
                self._judge = judge_for(*spec)
            except ValueError as e:  # no judge, not a stopped worker: pairs stay apart
                LOG.warning("synthesizer.judge ignored: %s", e)
                self._judge = None
        return self._judge

    def span_sim(self, x: str, y: str) -> float:
        """The local embedder's cosine of two short spans (vectors cached for the batch)."""
        vx, vy = self._span_vec(x), self._span_vec(y)
        return float(vx @ vy)

    def _span_vec(self, text: str) -> np.ndarray:
        got = self._spans.get(text)
        if got is None:
            got = self._spans[text] = self._embedder().embed([text])[0]
        return got

    # ------------------------------------------------------------ choosing

    def floor(self) -> float:
        """The cosine from which candidates are compared for a contradiction."""
        cfg = self.worker.state.config.synthesizer.contest_floor
        near = self.worker.near_duplicate
        return min(near, CONTEST_FLOOR if cfg is None else cfg)

    def choose(
        self,
        candidates: list[tuple[str, float]],
        content: str,
        content_of: Callable[[str], str | None],
    ) -> Choice:
        """The decision for a plain memory with ``content`` (candidates best first)."""
        near, floor = self.worker.near_duplicate, self.floor()
        out = Choice()
        asked = 0
        above = [c for c in candidates[:MAX_CANDIDATES] if c[1] >= near]
        below = [c for c in candidates[len(above) :][:MAX_RIVALS] if c[1] >= floor]
        judge = self.judge
        for fid, sim in above + below:
            other = content_of(fid)
            if other is None:
                continue
            if judge is None and not (
                _may_share_a_frame(content, other) and may_bind(content, other)
            ):
                continue  # the rule would only say "different" or "unsure": skip it
            # without a judge only "same" and "contradicts" matter: ``settle`` finds the
            # others sooner (the same verdict whenever it is one of those two)
            rule = compare if judge is not None else settle
            v: Verdict = rule(content, other, self.span_sim)
            kind = v.kind
            judged = False
            if kind == UNSURE and sim >= near and judge is not None and asked < MAX_JUDGED:
                asked += 1
                answer = judge.ask(content, other)
                if answer is not None:
                    judged = True
                    kind = {"same": SAME, "contradicts": CONTRADICTS}.get(answer, DIFFERENT)
                    out.judge, out.model = judge.name[:200], judge.model[:200] or None
                    if kind == DIFFERENT:
                        out.judged.append((fid, answer))
            if kind == SAME and sim >= near:
                same = Choice(same=(fid, sim), judged=out.judged)
                if judged or out.judged:
                    same.judge, same.model = out.judge, out.model
                return same
            if kind == CONTRADICTS and self._status(fid) != RETRACTED:  # a retraction
                out.rivals.append(fid)  # takes a statement out of any rivalry
                out.reason = out.reason or ("judge" if judged else v.reason)
        if out.judge is not None and not judged_any(out):
            out.judge = out.model = None
        return out

    # ------------------------------------------------------------ the overlay

    def _status(self, fid: str) -> str | None:
        side = self._sides.get(fid)
        if side is not None:
            return side.status
        f = self.worker.state.facts.get(fid)
        return None if f is None else f.status

    def _side(self, fid: str) -> _Side | None:
        side = self._sides.get(fid)
        if side is None:
            f = self.worker.state.facts.get(fid)
            if f is None:
                return None
            fb = f.feedback
            side = self._sides[fid] = _Side(set(f.agents), fb[0] if fb else 0.0, f.status)
        return side

    def _rivals_of(self, fid: str) -> set[str]:
        got = self._rivals.get(fid)
        if got is None:
            f = self.worker.state.facts.get(fid)
            got = self._rivals[fid] = set(f.contested_with) if f is not None else set()
        return got

    def created(self, fid: str, r: RawMemory, choice: Choice) -> list[Event]:
        """A new plain fact: its ``fact.contested`` when it has rivals."""
        self._sides[fid] = _Side({r.agent}, 0.0, ACTIVE)
        self._rivals[fid] = set()
        if not choice.rivals:
            return []
        for other in choice.rivals:
            self._rivals[fid].add(other)
            self._rivals_of(other).add(fid)
            side = self._side(other)
            if side is not None and side.status != RETRACTED:
                side.status = CONTESTED
        self._sides[fid].status = CONTESTED
        self._touched.append(fid)
        body: dict[str, object] = {"rivals": sorted(choice.rivals), "reason": choice.reason}
        if choice.judge is not None:
            body["judge"] = choice.judge
            if choice.model:
                body["model"] = choice.model
        return [Event(agent=T.SYNTH_AGENT, type=T.FACT_CONTESTED, key=fid, body=body)]

    def corroborated(self, fid: str, r: RawMemory) -> None:
        """Fact ``fid`` gained evidence from ``r``: re-resolve it if it has rivals."""
        side = self._side(fid)
        if side is None:
            return
        side.agents.add(r.agent)
        if self._rivals_of(fid):
            self._touched.append(fid)

    def resolve(self) -> list[Event]:
        """``fact.resolved`` / ``fact.contested`` events for the rivalries this batch touched."""
        out: list[Event] = []
        for fid in dict.fromkeys(self._touched):
            group = sorted({fid, *self._rivals_of(fid)})
            sides = {g: s for g in group if (s := self._side(g)) is not None}
            sides = {g: s for g, s in sides.items() if s.status != RETRACTED}
            if len(sides) < 2:
                continue
            ranked = sorted(sides, key=lambda g: (len(sides[g].agents), sides[g].feedback, g))
            top, second = ranked[-1], ranked[-2]
            tie = (len(sides[top].agents), sides[top].feedback) == (
                len(sides[second].agents),
                sides[second].feedback,
            )
            if tie:
                if any(s.status != CONTESTED for s in sides.values()):
                    body = {"rivals": [g for g in group if g != fid and g in sides]}
                    body_reason: dict[str, object] = {**body, "reason": "tie on evidence"}
                    out.append(
                        Event(agent=T.SYNTH_AGENT, type=T.FACT_CONTESTED, key=fid, body=body_reason)
                    )
                    for s in sides.values():
                        s.status = CONTESTED
                continue
            losers = sorted(g for g in sides if g != top)
            if sides[top].status == ACTIVE and all(sides[g].status == SUPERSEDED for g in losers):
                continue
            a, b = len(sides[top].agents), len(sides[second].agents)
            reason = f"{a} agent(s) vs {b}" if a != b else "tie on agents; decided by feedback"
            out.append(
                Event(
                    agent=T.SYNTH_AGENT,
                    type=T.FACT_RESOLVED,
                    key=top,
                    body={"winner": top, "losers": losers, "reason": reason},
                )
            )
            sides[top].status = ACTIVE
            for g in losers:
                sides[g].status = SUPERSEDED
        self._touched = []
        return out
