"""Free-text decisions of the synthesizer: merge, contest, keep apart, or link, and resolution.

For a plain memory (no subject) the worker's scorer proposes candidate facts by cosine;
``TextContests.choose`` asks the merge rule (``synthesizer/merge/rule.py``) about each:

- a ``same`` candidate at or above the near-duplicate cosine: the memory corroborates it;
- ``contradicts`` candidates (from the lower contest floor up): the memory becomes a new
  fact, and a ``fact.contested`` names it and its rivals (``reason``); the fold makes
  each list the others in ``contested_with``;
- ``unsure`` candidates at or above the near-duplicate cosine: the memory becomes a new
  fact, and a ``judge.asked`` per candidate links the two as possible duplicates (ids and
  cosine only) until a judge answers; the decision never waits for one (the judge
  worker, ``synthesizer.worker.judging``, answers later, off the decision path);
- anything else: a new fact, apart.

Resolution is as for subject/value claims, from evidence only: when the agents vouching
for one side outnumber the other's (then average feedback), ``fact.resolved`` makes it
``active`` and the rivals ``superseded``; while they tie, all stay ``contested``. It is
re-decided whenever a rival gains evidence, so it flips back when the evidence changes.
All of it is in the log: a replay folds the decisions and asks no rule or judge again.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from swarmlog import Event
from synthesizer import events as T
from synthesizer.config import CONTEST_FLOOR
from synthesizer.merge.rule import CONTRADICTS, SAME, UNSURE, Verdict, compare, may_bind, settle
from synthesizer.search.embed import Embedder
from synthesizer.state.facts import ACTIVE, CONTESTED, RETRACTED, SUPERSEDED, RawMemory
from synthesizer.state.judging import question_id
from synthesizer.state.swarmstate import SwarmState

__all__ = ["Choice", "TextContests"]

MAX_LINKED = 3
"""Unsure candidates linked as possible duplicates (and asked about) per memory, best first."""
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
    unsure: list[tuple[str, float, str]] = field(default_factory=list)
    """Possible duplicates: (fact id, cosine, the rule's reason), best first."""


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


class TextContests:
    """The worker's free-text decisions for one batch at a time (``begin`` resets)."""

    def __init__(self, worker: ContestWorker, embedder: Callable[[], Embedder]) -> None:
        self.worker = worker
        self._embedder = embedder
        self.begin()

    def begin(self) -> None:
        """Forget the previous batch's overlay."""
        self._sides: dict[str, _Side] = {}
        self._rivals: dict[str, set[str]] = {}
        self._touched: list[str] = []
        self._spans: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------ the rule

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
        above = [c for c in candidates[:MAX_CANDIDATES] if c[1] >= near]
        below = [c for c in candidates[len(above) :][:MAX_RIVALS] if c[1] >= floor]
        for fid, sim in above + below:
            other = content_of(fid)
            if other is None:
                continue
            if sim >= near:
                # the exhaustive verdict: an ``unsure`` pair must be told from a different one
                v: Verdict = compare(content, other, self.span_sim)
            elif _may_share_a_frame(content, other) and may_bind(content, other):
                # below the near-duplicate cosine only "contradicts" matters: ``settle``
                # finds the others sooner (the same verdict whenever it is that one)
                v = settle(content, other, self.span_sim)
            else:
                continue  # the rule would only say "different" or "unsure": skip it
            if v.kind == SAME and sim >= near:
                return Choice(same=(fid, sim))
            if v.kind == CONTRADICTS and self._status(fid) != RETRACTED:  # a retraction
                out.rivals.append(fid)  # takes a statement out of any rivalry
                out.reason = out.reason or v.reason
            elif (
                v.kind == UNSURE
                and sim >= near
                and len(out.unsure) < MAX_LINKED
                and self._status(fid) not in (RETRACTED, None)
            ):
                out.unsure.append((fid, sim, v.reason))
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
        """A new plain fact: its ``fact.contested`` when it has rivals, and a
        ``judge.asked`` per possible duplicate (a pair asked before is not asked again)."""
        self._sides[fid] = _Side({r.agent}, 0.0, ACTIVE)
        self._rivals[fid] = set()
        asked = self._asked(fid, choice)
        if not choice.rivals:
            return asked
        for other in choice.rivals:
            self._rivals[fid].add(other)
            self._rivals_of(other).add(fid)
            side = self._side(other)
            if side is not None and side.status != RETRACTED:
                side.status = CONTESTED
        self._sides[fid].status = CONTESTED
        self._touched.append(fid)
        body: dict[str, object] = {"rivals": sorted(choice.rivals), "reason": choice.reason}
        return [Event(agent=T.SYNTH_AGENT, type=T.FACT_CONTESTED, key=fid, body=body), *asked]

    def _asked(self, fid: str, choice: Choice) -> list[Event]:
        """The ``judge.asked`` events linking new fact ``fid`` with its possible duplicates."""
        out: list[Event] = []
        known = self.worker.state.judging
        for other, sim, reason in choice.unsure:
            qid = question_id(fid, other)
            if known.known(qid) or other in choice.rivals:
                continue
            body = {
                "question": qid,
                "a": fid,
                "b": other,
                "score": max(-1.0, min(1.0, round(float(sim), 6))),
                "reason": reason[:200],
            }
            out.append(Event(agent=T.SYNTH_AGENT, type=T.JUDGE_ASKED, body=body))
        return out

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
