"""The judge worker: answers the open questions of the state, off the decision path.

Why a worker of its own: a judge is slow (a model call: seconds) and may misbehave
(hang, trickle, fail); the synthesizer's decisions must never wait for it. The
synthesizer records each question as ``judge.asked`` (possible duplicates, linked at
once); this worker reads the open ones from a folded state, asks the configured judge
(``synthesizer.judge``: see ``synthesizer.merge.judge``) a batch at a time and appends
the answers as ``judge.answered``, which the fold acts on (``synthesizer.state.judging``).

``Swarm.synthesize()`` runs one pass after its decisions (so an in-process judge's merges
show after one call); ``swarmlog synth --follow`` runs ``JudgeThread`` beside the
decision loop. A question without a usable answer (a hedge, a failure) stays open and is
asked again only after ``retry_s``; after ``trip_after`` consecutive failures the judge is
left alone for a back-off that doubles up to ``max_backoff_s`` (a circuit breaker).
Answering twice is harmless: the fold ignores an answer to a closed question.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from swarmlog import Event, Log
from synthesizer import events as T
from synthesizer.merge.judge import Judge, judge_for
from synthesizer.replay import fold_into
from synthesizer.state import SwarmState

__all__ = ["JudgeThread", "JudgeWorker"]

LOG = logging.getLogger("synthesizer.judge")


class JudgeWorker:
    """Asks the judge about open questions and appends ``judge.answered`` events.

    ``judge``: a fixed judge (default: the one the folded configuration names, rebuilt
    when it changes); ``agent``: the writer of the answers (the synthesizer by default;
    another name must be listed in ``synthesizer.judges`` or ``operators`` for the fold
    to honour it); ``clock``: monotonic seconds (tests pass a fake one).
    """

    def __init__(
        self,
        log: Log,
        judge: Judge | None = None,
        *,
        agent: str = T.SYNTH_AGENT,
        batch: int = 16,
        trip_after: int = 3,
        backoff_s: float = 1.0,
        max_backoff_s: float = 300.0,
        retry_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.log = log
        self.agent = agent
        self.batch = batch
        self.trip_after = trip_after
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.retry_s = retry_s
        self.clock = clock
        self._fixed = judge
        self._spec: tuple[str, str] | None = None
        self._judge: Judge | None = None
        self.failures = 0  # consecutive
        self.trips = 0
        self.closed_until = 0.0  # the breaker: no call before this time
        self._retry_at: dict[str, float] = {}
        self.answered = 0
        self.in_call = False
        """Whether a judge call is in flight now (a stop need not wait for it)."""

    def judge_of(self, state: SwarmState) -> Judge | None:
        """The judge to ask under ``state``'s configuration (None: none configured)."""
        if self._fixed is not None:
            return self._fixed
        cfg = state.config.synthesizer
        spec = (cfg.judge, cfg.judge_model)
        if spec != self._spec:
            self._spec = spec
            try:
                self._judge = judge_for(*spec)
            except ValueError as e:  # no judge, not a stopped worker: questions stay open
                LOG.warning("synthesizer.judge ignored: %s", e)
                self._judge = None
        return self._judge

    def due(self, state: SwarmState) -> list[tuple[str, str, str]]:
        """Open questions to ask now: (question, statement a, statement b), oldest first;
        both facts live, not waiting for a retry."""
        now = self.clock()
        out: list[tuple[str, str, str]] = []
        facts = state.facts
        for qid, (a, b, *_) in list(state.judging.open.items()):  # (a snapshot: another
            # thread may be folding into ``state``)
            if self._retry_at.get(qid, 0.0) > now:
                continue
            fa, fb = facts.get(a), facts.get(b)
            if fa is None or fb is None:
                continue
            out.append((qid, fa.content, fb.content))
            if len(out) >= self.batch:
                break
        return out

    def run_once(self, state: SwarmState, stop: Callable[[], bool] | None = None) -> int:
        """Ask about one batch of ``state``'s open questions; append the answers in one
        batch; return how many were appended (0 with no judge or while the breaker is open)."""
        judge = self.judge_of(state)
        if judge is None or self.clock() < self.closed_until:
            return 0
        out: list[Event] = []
        for qid, a, b in self.due(state):
            if stop is not None and stop():
                break
            self.in_call = True
            try:
                answer = judge.answer(a, b)
            except Exception as e:  # a judge is advice: its failure leaves the question open
                self._failed(judge, qid, e)
                if self.clock() < self.closed_until:
                    break
                continue
            finally:
                self.in_call = False
            self.failures = 0
            self.trips = 0  # a call that returned: the back-off starts over
            if answer is None:  # a hedge or no verdict: ask again later, not in a loop
                self._retry_at[qid] = self.clock() + self.retry_s
                continue
            self._retry_at.pop(qid, None)
            body = {
                "question": qid,
                "answer": answer,
                "judge": judge.name[:200],
                "model": judge.model[:200],
            }
            out.append(Event(agent=self.agent, type=T.JUDGE_ANSWERED, body=body))
        if out:
            self.log.append_many(out)
            self.answered += len(out)
        return len(out)

    def _failed(self, judge: Judge, qid: str, e: Exception) -> None:
        """Count a failure; trip the breaker after ``trip_after`` in a row."""
        self.failures += 1
        now = self.clock()
        self._retry_at[qid] = now + self.retry_s
        LOG.warning("judge %s failed: %s", judge.name, e)
        if self.failures >= self.trip_after:
            wait = min(self.max_backoff_s, self.backoff_s * 2.0**self.trips)
            self.trips += 1
            self.failures = 0
            self.closed_until = now + wait
            LOG.warning(
                "judge %s: %d failures in a row; pausing %.1f s", judge.name, self.trip_after, wait
            )


class JudgeThread:
    """A ``JudgeWorker`` on its own thread (``synth --follow``).

    It reads open questions and the two facts' words from a state it is given, either a
    copy it folds from the log itself (``state``), or the decision loop's own state
    (``source``, called each round: nothing is folded twice, which in one process would
    make the decision loop share the interpreter with a second fold of every event). A
    snapshot of the open questions is taken at each round; answers go to the log and
    the decision loop folds them, so neither waits for the other.
    """

    def __init__(
        self,
        log: Log,
        state: SwarmState | None = None,
        *,
        source: Callable[[], SwarmState] | None = None,
        judge: Judge | None = None,
        active: Callable[[], bool] | None = None,
        poll_s: float = 0.5,
    ) -> None:
        """Judge over ``log`` from ``state`` (a copy folded here) or from ``source()``
        (a state folded elsewhere, read only); ``active`` says whether to answer now
        (the CLI: while its worker holds the lease)."""
        if (state is None) == (source is None):
            raise ValueError("JudgeThread needs a state to fold or a source to read, not both")
        self.worker = JudgeWorker(log, judge)
        self.log = log
        self.state = state
        self.source = source
        self.active = active
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="swarmlog-judge", daemon=True)

    def start(self) -> JudgeThread:
        """Start the thread; return self."""
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.state is not None:
                    fold_into(self.state, self.log)
                state = self.state if self.state is not None else self.source()  # type: ignore[misc]
                if self._wanted(state):
                    self.worker.run_once(state, stop=self._stop.is_set)
            except Exception as e:  # keep judging after a transient log error
                LOG.warning("judge worker: %s", e)
            self._stop.wait(self.poll_s)

    def _wanted(self, state: SwarmState) -> bool:
        """Whether to ask now: answering, a judge configured, questions open."""
        if self.active is not None and not self.active():
            return False
        return bool(state.judging.open) and self.worker.judge_of(state) is not None

    def stop(self, timeout: float = 5.0) -> bool:
        """Ask the thread to stop and wait up to ``timeout`` s; True when it stopped. A
        judge call in flight is not waited for (it ends at its own deadline, up to
        ``merge.judge.TIMEOUT_S``; the thread is a daemon): a hanging judge once held
        ``synth --follow``'s exit for the whole of ``timeout``."""
        self._stop.set()
        end = time.monotonic() + timeout
        while self._thread.is_alive() and not self.worker.in_call:
            left = end - time.monotonic()
            if left <= 0:
                break
            self._thread.join(min(left, 0.05))
        return not self._thread.is_alive()
