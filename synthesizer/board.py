"""The Board (docs/design.md §7): compare-and-swap over synthesized facts.

Reads come from the swarm's live state (the ``refresh`` function it is given, usually
``Swarm.refresh``); every write is one
``fact.updated`` or ``fact.retracted`` event keyed on the fact id and appended with
``expect={fact_id: expected_version}``, so the log's per-key expectation is the only
concurrency primitive: a stale write never lands, and a fact's version is the seq of
the last event keyed on it (``Fact.version == log.version(fact_id)``).

Choices worth knowing:

* **Conflicts are logged** as ``board.conflict`` events (target/expected/actual) so the
  fold's per-agent CAS counters (attempts, successes, conflicts) are exact. A direct
  ``cas()`` that loses appends its conflict event at once (one extra, unconditional
  append). Inside ``update()`` the conflicts of earlier attempts ride along in the batch
  of the attempt that wins (one atomic ``append_many``), or are flushed when it gives
  up, so a retry loop costs no extra appends under contention. The event's ``ts`` is the
  moment of the conflict; its seq may be later. ``record_conflicts=False`` turns it off.
* **History** is read from the log, not the fold (the state stays small and its
  checkpoint format unchanged): the board keeps a per-process index key -> seqs of the
  keyed events, built by one scan of the log on first use and extended incrementally;
  ``history(id)`` then reads just those seqs (one range read when they are dense).
* **Snapshots**: ``get``/``list`` return copies, so a Fact read earlier keeps the
  version it was read at (a read-then-``cas`` is never silently refreshed).
"""

from __future__ import annotations

import bisect
import builtins
import dataclasses
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swarmlog import Event, InvalidEvent, Log, SwarmlogError, VersionConflict
from synthesizer import events as T
from synthesizer.errors import UnknownFact
from synthesizer.retry import PendingAppends
from synthesizer.state.facts import RETRACTED, Fact

if TYPE_CHECKING:
    from synthesizer.state import SwarmState

BOARD_AGENT = "board"
"""Agent name of board writes that name no agent."""

CAS_FIELDS = frozenset(
    ("content", "value", "status", "reason", "evidence", "category", "subject", "importance")
)
"""Keyword arguments of ``cas`` that a ``update`` function may return."""

_SYNTH_ID = re.compile(r"f[0-9]+")


class BoardContention(SwarmlogError):
    """``update`` gave up: every attempt in its retry budget lost its CAS.

    ``attempts`` is how many CAS attempts were made; ``last`` is the final conflict
    (with the current version in ``last.actual``).
    """

    def __init__(self, fact_id: str, attempts: int, last: VersionConflict | None) -> None:
        cur = f"; current version {last.actual}" if last is not None else ""
        super().__init__(
            f"gave up updating {fact_id!r} after {attempts} conflicting CAS attempt(s){cur}"
        )
        self.fact_id = fact_id
        self.attempts = attempts
        self.last = last

    def __reduce__(self) -> tuple[Any, ...]:
        return (BoardContention, (self.fact_id, self.attempts, self.last))


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One event keyed on a fact: who did what, when, with which body."""

    seq: int
    agent: str
    type: str
    body: dict[str, Any]
    ts: float

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON output)."""
        return {
            "seq": self.seq,
            "agent": self.agent,
            "type": self.type,
            "body": self.body,
            "ts": self.ts,
        }


@dataclass(frozen=True, slots=True)
class Attempt:
    """One CAS attempt made by ``update`` (for tracing and the linearizability tests).

    ``version`` is the new version when ``ok``, else the current version the conflict
    reported; ``started``/``ended`` are ``time.monotonic_ns()`` around the append.
    """

    fact_id: str
    expected: int
    ok: bool
    version: int
    started: int
    ended: int
    change: Mapping[str, Any]


def snapshot(f: Fact) -> Fact:
    """An independent copy of a fact (its lists copied; evidence items are immutable)."""
    return dataclasses.replace(
        f,
        evidence=list(f.evidence),
        cited=list(f.cited),
        reinforced_by=list(f.reinforced_by),
        history=[list(h) for h in f.history],
        embedding=None if f.embedding is None else list(f.embedding),
    )


def _check_version(v: object) -> int:
    """An expected version is an integer >= 0 (0: the fact must not exist yet)."""
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise InvalidEvent(f"bad version {v!r}: expected an integer >= 0")
    return v


def _check_status(status: str | None) -> None:
    """Status must be one of the four the fold knows."""
    if status is not None and status not in T.STATUSES:
        raise InvalidEvent(f"invalid status {status!r}: use one of {', '.join(T.STATUSES)}")


class Board:
    """The CAS view over a swarm's facts (see module docstring).

    It needs only the log to write to and a ``refresh()`` that returns the live state
    with everything appended so far folded in (``Swarm.refresh``), so it knows nothing
    of the Swarm that owns it.
    """

    def __init__(
        self,
        log: Log,
        refresh: Callable[[], SwarmState],
        *,
        agent: str = BOARD_AGENT,
        record_conflicts: bool = True,
        retries: int = 32,
        base_delay: float = 0.0005,
        max_delay: float = 0.05,
        appends: PendingAppends | None = None,
    ) -> None:
        self.log = log
        self.appends = appends if appends is not None else PendingAppends(log)
        """Board writes go through it: a retry after an unanswered append reuses the ids."""
        self._refresh = refresh
        self.agent = agent
        self.record_conflicts = record_conflicts
        self.retries = retries
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._rng = random.SystemRandom()  # fork-safe: no shared PRNG state across workers
        self._keyed: dict[str, list[int]] = {}
        self._scanned = 0

    # ------------------------------------------------------------------ reads

    def refresh(self) -> SwarmState:
        """The live state, with everything appended so far folded in."""
        return self._refresh()

    def get(self, fact_id: str) -> Fact:
        """A snapshot of a live fact (retracted ones included); UnknownFact if none."""
        f = self.refresh().facts.get(fact_id)
        if f is None:
            raise UnknownFact(fact_id)
        return snapshot(f)

    def version(self, fact_id: str) -> int:
        """The fact's current version straight from the log (0 if never written)."""
        return self.log.version(fact_id)

    def list(
        self,
        status: str | None = None,
        tier: str | None = None,
        category: str | None = None,
        subject: str | None = None,
    ) -> builtins.list[Fact]:
        """Snapshots of live facts matching every given filter, oldest first (then id)."""
        _check_status(status)
        if tier is not None and tier not in T.TIERS:
            raise InvalidEvent(f"invalid tier {tier!r}: use one of {', '.join(T.TIERS)}")
        out = [
            snapshot(f)
            for f in self.refresh().facts.values()
            if (status is None or f.status == status)
            and (tier is None or f.tier == tier)
            and (category is None or f.category == category)
            and (subject is None or f.subject == subject)
        ]
        out.sort(key=lambda f: (f.created_seq, f.id))
        return out

    def history(self, fact_id: str) -> builtins.list[HistoryEntry]:
        """Every event keyed on the fact (synthesizer's and agents'), oldest first.

        Works for evicted facts too (their events stay in the log); UnknownFact when no
        event ever carried the id.
        """
        self._index()
        seqs = self._keyed.get(fact_id)
        if not seqs:
            raise UnknownFact(fact_id)
        return [
            HistoryEntry(ev.seq or 0, ev.agent, ev.type, ev.body, ev.ts)
            for ev in self._read_seqs(seqs)
        ]

    def events_since(
        self, fact_id: str, after: int, upto: int | None = None
    ) -> builtins.list[Event]:
        """The events keyed on the fact with ``after < seq <= upto`` (upto: the end)."""
        self._index()
        seqs = self._keyed.get(fact_id, [])
        lo = bisect.bisect_right(seqs, after)
        hi = len(seqs) if upto is None else bisect.bisect_right(seqs, upto)
        return list(self._read_seqs(seqs[lo:hi]))

    def _index(self) -> None:
        """Extend the key -> seqs index over what was appended since the last look."""
        keyed = self._keyed
        for ev in self.log.read(self._scanned + 1):
            k = ev.key
            s = ev.seq or 0
            if k is not None:
                lst = keyed.get(k)
                if lst is None:
                    keyed[k] = [s]
                else:
                    lst.append(s)
            self._scanned = s

    def _read_seqs(self, seqs: builtins.list[int]) -> Iterable[Event]:
        """Read the given (ascending) seqs: one range read when dense, else one by one."""
        if not seqs:
            return []
        log = self.log
        span = seqs[-1] - seqs[0] + 1
        if len(seqs) * 4 >= span:
            want = set(seqs)
            return [ev for ev in log.read(seqs[0], seqs[-1]) if ev.seq in want]
        out: list[Event] = []
        for s in seqs:
            out.extend(log.read(s, s))
        return out

    # ------------------------------------------------------------------ writes

    def cas(
        self,
        fact_id: str,
        expected_version: int,
        *,
        content: str | None = None,
        value: str | None = None,
        status: str | None = None,
        reason: str | None = None,
        evidence: builtins.list[int] | None = None,
        category: str | None = None,
        subject: str | None = None,
        importance: float | None = None,
        agent: str | None = None,
        session: str | None = None,
    ) -> int:
        """Write a change if the fact is still at ``expected_version``; return the new one.

        ``expected_version=0`` creates a fact that must not exist yet (``content``
        required). ``status="retracted"`` writes a ``fact.retracted`` (with ``reason``
        only). A lost race raises VersionConflict with the current version and the events
        keyed on the fact since ``expected_version``; nothing is written but the
        ``board.conflict`` record.
        """
        change = {
            "content": content,
            "value": value,
            "status": status,
            "reason": reason,
            "evidence": evidence,
            "category": category,
            "subject": subject,
            "importance": importance,
        }
        return self._cas(fact_id, expected_version, change, agent, session, carry=None, check=True)

    def _event(
        self,
        fact_id: str,
        expected: int,
        change: Mapping[str, Any],
        agent: str | None,
        session: str | None,
    ) -> Event:
        """Validate a change and build its keyed event."""
        _check_version(expected)
        if fact_id in (T.CONFIG_KEY, T.SYNTH_AGENT):
            raise InvalidEvent(f"{fact_id!r} is a reserved key, not a fact id")
        unknown = set(change) - CAS_FIELDS
        if unknown:
            raise InvalidEvent(f"unknown cas argument(s): {', '.join(sorted(unknown))}")
        body = {k: v for k, v in change.items() if v is not None}
        status = body.get("status")
        _check_status(status)
        who = agent or self.agent
        if status == RETRACTED:
            extra = sorted(set(body) - {"status", "reason"})
            if extra:
                raise InvalidEvent(
                    f"a retraction takes only a reason, not {', '.join(extra)} "
                    "(update first, then retract)"
                )
            if expected == 0:
                raise InvalidEvent("cannot create a fact as retracted")
            rb = {"reason": body["reason"]} if "reason" in body else {}
            rb["base"] = expected  # the CAS expectation, checked by the fold (authz)
            return Event(agent=who, session=session, type=T.FACT_RETRACTED, key=fact_id, body=rb)
        if not (set(body) - {"reason"}):
            raise InvalidEvent("nothing to change: give content, value, status or evidence")
        if expected == 0:
            if not body.get("content"):
                raise InvalidEvent("creating a fact (expected version 0) needs content")
            if _SYNTH_ID.fullmatch(fact_id):
                raise InvalidEvent(
                    f"fact id {fact_id!r} is reserved for the synthesizer (f<seq>); pick another"
                )
        if "evidence" in body:
            body["evidence"] = list(body["evidence"])
        body["base"] = expected  # the CAS expectation, checked by the fold (authz)
        return Event(agent=who, session=session, type=T.FACT_UPDATED, key=fact_id, body=body)

    def _cas(
        self,
        fact_id: str,
        expected: int,
        change: Mapping[str, Any],
        agent: str | None,
        session: str | None,
        carry: builtins.list[Event] | None,
        check: bool,
    ) -> int:
        """One CAS attempt. ``carry`` (update's loop) holds conflict records to write with
        the next winning batch; without it a conflict record is appended at once."""
        ev = self._event(fact_id, expected, change, agent, session)
        if check and expected > 0 and fact_id not in self.refresh().facts:
            raise UnknownFact(fact_id)
        batch = [*carry, ev] if carry else [ev]
        try:  # idempotent: a retry after an unanswered append reuses these event ids
            stored = self.appends.append_many(batch, expect={fact_id: expected})
        except VersionConflict as e:
            rec = Event(
                agent=ev.agent,
                session=session,
                type=T.BOARD_CONFLICT,
                body={"target": fact_id, "expected": expected, "actual": e.actual},
            )
            if carry is not None:
                carry.append(rec)
                raise
            if self.record_conflicts:
                self._record(rec)
            events = self.events_since(fact_id, expected, e.actual)
            raise VersionConflict(fact_id, expected, e.actual, events) from None
        if carry:
            carry.clear()
        return stored[-1].seq or 0

    def _record(self, *events: Event) -> None:
        """Append conflict records (unconditionally; a failure here is not the caller's)."""
        try:
            self.appends.append_many(events)
        except SwarmlogError:
            pass

    def update(
        self,
        fact_id: str,
        fn: Callable[[Fact], Mapping[str, Any] | None],
        *,
        retries: int | None = None,
        agent: str | None = None,
        session: str | None = None,
        on_attempt: Callable[[Attempt], None] | None = None,
    ) -> int:
        """Read-modify-write: ``fn(fact)`` returns a dict of ``cas`` keyword arguments;
        on conflict re-read and retry after exponential backoff with full jitter.

        Returns the new version (the current one when ``fn`` returns nothing to change).
        Raises BoardContention after ``retries`` retries (``retries + 1`` attempts).
        """
        budget = self.retries if retries is None else retries
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise InvalidEvent(f"retries must be an integer >= 0, got {budget!r}")
        carry: list[Event] | None = [] if self.record_conflicts else None
        last: VersionConflict | None = None
        try:
            for attempt in range(budget + 1):
                fact = self.get(fact_id)
                change = fn(fact)
                if not change:
                    return fact.version
                t0 = time.monotonic_ns()
                try:
                    v = self._cas(
                        fact_id,
                        fact.version,
                        change,
                        agent,
                        session,
                        carry=carry if carry is not None else _NO_RECORD,
                        check=False,
                    )
                except VersionConflict as e:
                    if on_attempt is not None:
                        on_attempt(
                            Attempt(
                                fact_id,
                                fact.version,
                                False,
                                e.actual,
                                t0,
                                time.monotonic_ns(),
                                change,
                            )
                        )
                    last = e
                    if attempt < budget:
                        time.sleep(self.backoff(attempt))
                    continue
                if on_attempt is not None:
                    on_attempt(
                        Attempt(fact_id, fact.version, True, v, t0, time.monotonic_ns(), change)
                    )
                return v
            raise BoardContention(fact_id, budget + 1, last)
        finally:
            if carry:
                self._record(*carry)

    def backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(max_delay, base_delay * 2**attempt)] seconds."""
        cap = min(self.max_delay, self.base_delay * (2.0 ** min(attempt, 30)))
        return self._rng.uniform(0.0, cap)


class _Discard(list[Event]):
    """A carry list that forgets what is put in it (update with record_conflicts off)."""

    def append(self, item: Event) -> None:
        pass


_NO_RECORD: list[Event] = _Discard()


__all__ = ["Attempt", "Board", "BoardContention", "HistoryEntry", "snapshot"]
