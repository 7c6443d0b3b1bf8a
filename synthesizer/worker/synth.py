"""The synthesizer worker: turns raw memories into facts, exactly once.

One pass (``run_once``): fold everything new; decide, for each raw ``memory.shared`` not
yet decided, whether it is an exact duplicate (same normalised-content signature, even of
an evicted fact), a near duplicate (cosine >= threshold against live facts), a claim on a
subject already claimed with the same value (corroboration) or a different one
(contest, then resolution by evidence), or new; then append all decisions plus a
``synth.progress`` mark in ONE atomic batch that expects the ``synthesizer`` key (the
lease, see ``lease``) at the version this worker has folded. A second worker therefore
gets VersionConflict, or sees a live holder, and stands by until the holder releases the
lease or its batches stop for the lease timeout; a worker killed anywhere leaves either
the whole batch or nothing, so a restart re-decides exactly the undecided raws.

Decisions inside one batch see each other through a small overlay (new signatures, new
vectors, new evidence per subject), so batch boundaries do not change the outcome.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from swarmlog import Event, Log, SwarmlogError, VersionConflict
from swarmlog.envelope import prime_checks
from swarmlog.file import compactable
from synthesizer import events as T
from synthesizer.checkpoints import vectors, writer
from synthesizer.config import SynthConfig
from synthesizer.configlog import settle_config
from synthesizer.errors import SynthInterrupted
from synthesizer.heapfreeze import freeze_heap
from synthesizer.replay import fold_into, load_checkpoint, load_checkpoint_info, stamp
from synthesizer.retention import NoLoadableCheckpoint, compact_by
from synthesizer.search import prune
from synthesizer.search.embed import Embedder, embedder_for, near_duplicate_of
from synthesizer.search.factindex import FactIndex
from synthesizer.state import SwarmState, fold_dicts
from synthesizer.state.digests import facts_digest
from synthesizer.state.facts import RETRACTED, RawMemory
from synthesizer.worker.claims import Claim, resolve
from synthesizer.worker.contest import Choice, TextContests
from synthesizer.worker.lease import LEASE_KEY, Holder, Lease
from synthesizer.worker.pace import GATHER_S, Pace
from synthesizer.worker.scorer import BatchScorer
from synthesizer.worker.signature import signature
from synthesizer.worker.wake import LogWaiter

MAX_BATCH = 2000
FACTS_PER_CHECKPOINT_EVENT = 20
"""A periodic checkpoint waits for at least one event per this many live facts."""
LOG = logging.getLogger("synthesizer.worker")
"""Lease changes (standing by, taking over) are logged here; ``synth --follow`` shows them."""


@dataclass
class _Overlay:
    """Effects of this batch's decisions that later decisions in the batch must see."""

    signatures: dict[str, str] = field(default_factory=dict)
    revived: set[str] = field(default_factory=set)
    added: list[str] = field(default_factory=list)
    claims: dict[str, dict[str, Claim]] = field(default_factory=dict)
    new_in_subject: dict[str, list[str]] = field(default_factory=dict)
    contents: dict[str, str] = field(default_factory=dict)


@dataclass
class _Batch:
    """One ``decide`` call's working set: its scorer, the scorer's row of each raw's seq,
    the events so far and the subjects whose claims it touched."""

    scorer: BatchScorer | None
    row_of: dict[int, int]
    out: list[Event] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)


def _with_lease(e: Event, lease: int) -> Event:
    """The event with the lease version it is appended under in its body (``authz``)."""
    d = e.to_dict()
    d["body"] = {**d["body"], "lease": lease}
    return Event(**d)


def warm() -> None:
    """Load now what a synthesizer's first pass would load lazily: the body models of the
    events it appends and the BLAS thread controller. Why: the per-action CLI keeps them
    lazy, but a worker that builds them in its first pass holds up every memory shared
    meanwhile (share -> visible p99 went from ~30 to ~150 ms)."""
    prime_checks(T.MODELLED)
    with prune.one_blas_thread():
        pass


class Synthesizer:
    """The worker (see module docstring). ``state`` is always the exact fold of the log."""

    def __init__(
        self,
        log: Log,
        config: SynthConfig | None = None,
        embedder: Embedder | None = None,
        state: SwarmState | None = None,
        index: FactIndex | None = None,
        batch_size: int = MAX_BATCH,
        pruned: bool = True,
        name: str | None = None,
        lease_timeout_s: float | None = None,
        background_checkpoints: bool = False,
        gather_s: float = GATHER_S,
    ) -> None:
        """A worker on ``log``; ``pruned`` (the default) chooses the exact-pruning scorer.

        ``name`` identifies the worker in its progress marks (default: host, pid and a
        random tag); ``lease_timeout_s`` overrides ``synthesizer.lease_timeout_s``, how
        long a holder's batches may stop before another worker takes the lease over;
        ``background_checkpoints`` lets a forked child write periodic checkpoints while
        this worker decides (``writer``; for processes that own their threads: the
        CLI worker, ``worker/main.py``); ``gather_s``: ``run``'s batching while busy (``pace``).

        Pruned scoring computes only the memory x fact cosines whose bound can reach a
        threshold, as canonical float32 values (see ``prune``): same facts, ids and
        merges for a fraction of the dense product's cost, but a recorded similarity
        may differ from the dense one in the sixth decimal (the dense float32 product's
        last bits depend on BLAS blocking and matrix shapes, so pruned values are also the
        more reproducible ones: the same on every machine and for any batch split).
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if log.max_batch is not None:  # room for the contest/resolve events and the mark
            batch_size = min(batch_size, max(1, log.max_batch // 4))
        self.batch_size = batch_size
        self.log = log
        if config is not None:  # recorded on an empty log; else must be the log's
            settle_config(log, config)
        loaded = load_checkpoint_info(log) if state is None else None
        if state is None:
            state = SwarmState() if loaded is None else loaded[0]
        self.state = state
        self._auto_embedder = embedder is None and index is None  # the configuration's
        self._embedder_name = state.config.embedder
        if index is None:
            local = embedder if embedder is not None else embedder_for(self._embedder_name)
            index = FactIndex(local)
            if loaded is not None:  # the checkpoint's vectors, mapped: not re-embedded
                vectors.attach(log, loaded[1], index)
        self.index = index
        self._lease_timeout = lease_timeout_s
        self.lease = Lease(log, self._lease_timeout_s(), name)
        self.standing_by = False
        self.decisions = 0
        self.last_checkpoint = state.last_seq
        self.pruned = pruned
        self._basis: prune.BoundBasis | None = None
        self._basis_rows = 0
        self._contests = TextContests(self, lambda: self.index.embedder)
        self.background_checkpoints = background_checkpoints
        self.bg_checkpoint = writer.BackgroundCheckpoint()
        self.pace = Pace(gather_s)

    @property
    def config(self) -> SynthConfig:
        """The configuration the worker decides under: the log's, as far as it has folded."""
        return self.state.config

    def _follow_embedder(self) -> None:
        """When the folded configuration names another embedder: a fresh, empty index."""
        name = self.state.config.embedder
        if self._auto_embedder and name != self._embedder_name:
            self._embedder_name = name
            self.index = FactIndex(embedder_for(name))

    # ------------------------------------------------------------------ folding

    def reload(self) -> None:
        """Drop the folded state and the vector index and fold anew from the newest
        checkpoint and the log: after an erasure rewrote records this worker had folded
        (its state may hold their words), before it checkpoints again."""
        self.state = load_checkpoint(self.log) or SwarmState()
        self.index = FactIndex(self.index.embedder)
        self._basis, self._basis_rows = None, 0
        self.last_checkpoint = self.state.last_seq
        self.catch_up()

    def catch_up(self) -> int:
        """Fold every event appended since the state's last seq; return how many."""
        before = self.state.last_seq
        st = self.state
        stamp(st, self.log)
        for batch in self.log.read_batches(before + 1):  # stored mappings: no Event per record
            fold_dicts(st, batch)
            self.index.observe(batch)
        self._follow_embedder()
        self.index.sync(st)
        return st.last_seq - before

    def sync_lease(self) -> int:
        """Learn the lease version from the log, folding up to it first; return it.

        Why from the log: a worker that starts from a checkpoint has not seen the marks
        before it, and the version it expects must be one its state has folded (else it
        would decide raws another worker already decided).
        """
        while True:
            v = self.log.version(LEASE_KEY)
            if v <= self.state.last_seq:
                self.lease.observe(v)
                self.lease.timeout_s = self._lease_timeout_s()
                return v
            self.catch_up()

    def _lease_timeout_s(self) -> float:
        """The lease timeout: the worker's own override, else the folded configuration's."""
        if self._lease_timeout is not None:
            return self._lease_timeout
        return self.config.synthesizer.lease_timeout_s

    @property
    def holder(self) -> Holder | None:
        """Who holds the lease as far as this worker has folded (None: nobody yet)."""
        return self.lease.holder()

    def standby_note(self) -> str:
        """Why this worker is standing by: who holds the lease and when it may be retaken."""
        conflict = self.lease.lexicon_conflict()
        if conflict is not None:
            return conflict
        h = self.lease.holder()
        if h is None:
            return "another synthesizer wrote first; standing by"
        wait = self.lease.retake_in()
        return (
            f"{h.describe()}; standing by, retaken after {self.lease.timeout_s:g} s "
            f"without batches (in {wait:.1f} s)"
        )

    def release(self) -> bool:
        """Give up the lease on a clean stop, so the next worker starts at once."""
        return self.lease.release(self.state.progress)

    # ------------------------------------------------------------------ one pass

    def run_once(self, gather: bool = False) -> int:
        """Fold, decide every undecided raw memory, append the decisions; return their count
        (``gather``: see ``decide_pending``)."""
        self.catch_up()
        n = self.decide_pending(gather)
        self.maybe_checkpoint()
        return n

    def decide_pending(self, gather: bool = False) -> int:
        """Decide the raws pending in the folded state and append the decisions under the lease.

        Raws arriving meanwhile are decided too; with ``gather`` (``pace``) only while a
        full batch of them is pending, fewer are left for the next pass's one batch.

        While another worker holds the lease (its last batch is newer than the lease
        timeout) nothing is decided: the worker stands by. On VersionConflict (another
        worker wrote first) nothing is written: the worker folds the winner's batch and
        stands by.
        """
        total = batches = 0
        upto = self.state.progress
        began = max(self.state.pending, default=0)  # the newest raw pending at the start
        if self.state.pending:
            self.sync_lease()
            if not self.lease.may_write():
                if not self.standing_by:
                    LOG.info("%s: %s", self.lease.worker, self.standby_note())
                self.standing_by = True
                return 0
            before = self.lease.holder()
            if before is not None and before.worker != self.lease.worker and not before.released:
                LOG.info(
                    "%s: taking the lease over (%s; %s)",
                    self.lease.worker,
                    before.describe(),
                    self.lease.why_free(),
                )
        while self.state.pending:
            raws = [self.state.pending[s] for s in sorted(self.state.pending)[: self.batch_size]]
            batch = self.decide(raws)
            batch.append(self.lease.mark(raws[-1].seq))
            batch = [_with_lease(e, self.lease.version) for e in batch]
            try:
                stored = self.log.append_many(batch, expect={LEASE_KEY: self.lease.version})
            except VersionConflict:
                self._undo()
                self.standing_by = True
                self.lease.lost()
                self.catch_up()
                return total
            except SwarmlogError as e:
                self._undo()
                left = -(-len(self.state.pending) // self.batch_size)
                raise SynthInterrupted(batches, batches + left, upto, e) from e
            batches += 1
            upto = raws[-1].seq
            self.standing_by = False
            self.lease.won(stored[-1])
            self._overlay = _Overlay()
            total += len(batch) - 1
            self.decisions += len(batch) - 1
            self._fold_own(stored)
            self.catch_up()
            pending = self.state.pending
            if gather and len(pending) < self.batch_size and min(pending, default=0) > began:
                break  # only newer raws, less than a batch: the next pass gathers them
        return total

    def _fold_own(self, stored: Sequence[Event]) -> None:
        """Fold the batch just appended from the stored events ``append_many`` returned.

        Why: reading it back would parse and CRC-check bytes this process just wrote. Only
        when the batch directly follows the folded state (no other writer got in between,
        whose events must be folded first); ``catch_up`` reads anything else. The stored
        dicts are the ones a reader would get (same values; the fold never mutates them).
        """
        st = self.state
        first = st.last_seq + 1
        if stored and stored[0].seq == first and stored[-1].seq == first + len(stored) - 1:
            dicts = [e.envelope for e in stored]
            fold_dicts(st, dicts)
            self.index.observe(dicts)

    def run(
        self,
        stop: Callable[[], bool] | None = None,
        poll: float = 0.5,
        idle_exit: float | None = None,
    ) -> None:
        """Run passes until ``stop()`` is true (or nothing happened for ``idle_exit`` s)."""
        warm()
        idle_since = time.monotonic()
        frozen = not self.background_checkpoints  # only a process of its own freezes
        pace = self.pace
        with LogWaiter(self.log) as waiter:  # one notifier: appends made mid-pass are seen
            while not (stop and stop()):
                pace.begin()
                n = self.run_once(gather=pace.gather_s > 0)
                if not frozen:  # the first pass built the state: keep the GC off it
                    freeze_heap(collect=True)
                    frozen = True
                if n or (self.standing_by and self.state.pending):  # waiting is not idling
                    idle_since = time.monotonic()
                if n:  # busy: let the stream gather into the next batch (pace)
                    time.sleep(pace.rest(n))
                    continue
                if idle_exit is not None and time.monotonic() - idle_since >= idle_exit:
                    return
                wait = poll
                if self.standing_by:
                    wait = min(poll, max(0.01, self.lease.retake_in()))
                waiter.wait(wait)

    def maybe_checkpoint(self, force: bool = False) -> bool:
        """Checkpoint the state every ``checkpoint_every`` events (or now, if forced): at
        most once per ``len(facts) // FACTS_PER_CHECKPOINT_EVENT`` events, and with
        ``background_checkpoints`` written by a forked child (see ``writer.cadence``)."""
        return writer.cadence(self, force, FACTS_PER_CHECKPOINT_EVENT)

    def after_checkpoint(self) -> None:
        """What follows a checkpoint written: compaction under an active retention (a
        retention point no checkpoint supports deletes nothing: warned, tried again later)."""
        if self.config.retention.active and compactable(self.log):
            try:
                compact_by(self.log, self.config.retention)  # bounded growth (retention.py)
            except NoLoadableCheckpoint as e:  # nothing deleted; the next one may load
                LOG.warning("swarmlog: %s", e)

    # ------------------------------------------------------------------ decisions

    @property
    def near_duplicate(self) -> float:
        """The near-duplicate cosine: the configuration's, else the embedder's own."""
        near = self.config.synthesizer.near_duplicate
        return near_duplicate_of(self.index.embedder) if near is None else near

    @property
    def candidate_floor(self) -> float:
        """The cosine from which a plain fact is a candidate (merge or contest)."""
        return self._contests.floor()

    def bound_basis(self, mat: np.ndarray) -> prune.BoundBasis:
        """The pruning basis, refitted when the fact count has grown or shrunk 4-fold.

        Why: fitting costs an eigen-decomposition (slow when BLAS threads must wait for
        a busy CPU); any orthonormal basis gives exact results, a fresh one prunes more.
        """
        n = len(mat)
        if (
            self._basis is None
            or not self._basis_rows // 4 <= n <= 4 * self._basis_rows
            or self._basis.q.shape[0] != mat.shape[1]  # another embedder's width
        ):
            self._basis = prune.BoundBasis.fit(mat, k=prune.DEFAULT_K)
            self._basis_rows = max(n, 1)
        return self._basis

    _overlay: _Overlay = _Overlay()

    def _undo(self) -> None:
        for fid in self._overlay.added:
            if fid not in self.state.facts:
                self.index.remove(fid)
        self._overlay = _Overlay()

    def decide(self, raws: list[RawMemory]) -> list[Event]:
        """The decision events for ``raws`` (in seq order), without appending them.

        Vectors of the whole batch come from one embedder call and are scored against
        every live fact and against each other in bulk (dense products, or pruned ones:
        see ``BatchScorer``), so a decision costs a few dictionary lookups, not a search.
        """
        self._overlay = ov = _Overlay()
        self._contests.begin()
        sigs = [signature(r.content) for r in raws]
        b = self._batch(raws, sigs)
        for r, sig in zip(raws, sigs, strict=True):
            self._decide_one(b, r, sig)
        if b.scorer is not None:
            ov.added.extend(b.scorer.commit())
        for subject in dict.fromkeys(b.touched):
            b.out.extend(
                resolve(subject, self._claims(subject), ov.new_in_subject.get(subject, []))
            )
        b.out.extend(self._contests.resolve())
        return b.out

    def _batch(self, raws: list[RawMemory], sigs: list[str]) -> _Batch:
        """The batch's scorer, over the vectors of the raws that need one.

        Those are local-embedder raws that are not a duplicate of a live fact by signature
        (a revival needs one: later memories of the batch compare with it).
        """
        st = self.state
        need = [
            i
            for i, r in enumerate(raws)
            if r.embedding is None
            and (r.subject is not None or st.signatures.get(sigs[i]) not in st.facts)
        ]
        scorer = None
        if need:
            # one BLAS thread: the worker shares the machine with agents, and OpenBLAS's
            # second thread turns every product into a wait for a busy core (1.5x slower
            # with one agent process running, measured)
            with prune.one_blas_thread():
                scorer = BatchScorer(self, [raws[i].content for i in need], self.pruned)
        return _Batch(scorer, {raws[i].seq: k for k, i in enumerate(need)})

    def _decide_one(self, b: _Batch, r: RawMemory, sig: str) -> None:
        """Decide one raw, by the first step that applies: a claim already made, an exact
        duplicate, the same statement as a fact (merge rule), else a new fact."""
        k = b.row_of.get(r.seq)
        if r.subject is not None:
            if self._decide_claim(b, r, sig, k):
                return
        elif self._decide_exact(b, r, sig, k):
            return
        related: list[list[object]] = []
        choice = Choice()
        vec_eid: tuple[np.ndarray, str] | None = None
        if r.embedding is None and b.scorer is not None and k is not None:
            if r.subject is None:
                choice = self._contests.choose(b.scorer.candidates(k), r.content, self._content_of)
                if choice.same is not None:
                    b.out.append(self._corroborate(*choice.same, r=r))
                    return
            related = b.scorer.related(k)
            b.scorer.created(k, "f" + str(r.seq), r.subject is not None)
        else:
            choice, vec_eid = self._match_given(r)
            if choice.same is not None:
                b.out.append(self._corroborate(*choice.same, r=r))
                return
        self._create(b, r, sig, related, choice, vec_eid)

    def _content_of(self, fid: str) -> str | None:
        """A fact's content, live or new in this batch: what a merge guard compares with."""
        st = self.state
        return st.facts[fid].content if fid in st.facts else self._overlay.contents.get(fid)

    def _decide_claim(self, b: _Batch, r: RawMemory, sig: str, k: int | None) -> bool:
        """A claim on a subject: evidence for a claim already made (or retracted) with the
        same value, or the revival of an evicted one; False when it is a new claim."""
        assert r.subject is not None
        same = self._claim_with_value(r.subject, r.value)
        dead = None if same is not None else self._retracted_claim(r.subject, r.value)
        if dead is not None:  # a board-retracted claim stays retracted: the repeat is evidence
            b.out.append(self._evidence(b, r, sig, k, dead))
            return True
        if same is not None:
            b.out.append(self._evidence(b, r, sig, k, same))
            b.touched.append(r.subject)
            return True
        back = self._revivable(sig, r)
        if back is None:
            return False
        old = self.state.evicted[back]  # an evicted claim comes back, to be resolved
        b.out.append(self._revive(back, r, k, b.scorer))
        if old.status != RETRACTED:
            fb = old.feedback
            agents = {*old.agents, r.agent}
            claim = Claim(
                back, old.value, agents, old.importance, fb[0] if fb else 0.0, r.seq, "active"
            )
            self._claims(r.subject)[back] = claim
            self._overlay.new_in_subject.setdefault(r.subject, []).append(back)
            b.touched.append(r.subject)
        return True

    def _evidence(self, b: _Batch, r: RawMemory, sig: str, k: int | None, fid: str) -> Event:
        """Claim ``r`` corroborates fact ``fid``: exactly when its signature is the fact's."""
        ov, st = self._overlay, self.state
        if ov.signatures.get(sig, st.signatures.get(sig)) == fid:
            return self._corroborate(fid, 1.0, r, "exact")
        sim = b.scorer.cosine_to(k, fid) if b.scorer and k is not None else 0.0
        return self._corroborate(fid, sim, r, "near")

    def _decide_exact(self, b: _Batch, r: RawMemory, sig: str, k: int | None) -> bool:
        """An exact duplicate by signature: of a live fact, or of an evicted one (revived).

        False also for a fact evicted beyond what the state keeps: the rediscovery is new.
        """
        ov, st = self._overlay, self.state
        dup = ov.signatures.get(sig) or st.signatures.get(sig)
        if dup is None:
            return False
        if sig in ov.signatures or dup in st.facts or dup in ov.revived:
            b.out.append(self._corroborate(dup, 1.0, r, "exact"))
            return True
        if self._revivable(sig, r) is not None:
            b.out.append(self._revive(dup, r, k, b.scorer))
            return True
        return False

    def _match_given(self, r: RawMemory) -> tuple[Choice, tuple[np.ndarray, str]]:
        """A raw with its own vector (or none in this batch's scorer): the plain fact it
        states (merge rule) among the index's nearest, and the vector to index it under."""
        vec = np.asarray(r.embedding, dtype=np.float32)
        eid = r.embedder or self.index.embedder.id
        idx = self.index.space.get(eid, int(vec.shape[0]))
        choice = Choice()
        if r.subject is None and idx is not None and len(idx):
            hit = idx.best(vec)
            if hit is not None and not self._is_claim(hit[0]):
                choice = self._contests.choose([hit], r.content, self._content_of)
        return choice, (vec, eid)

    def _create(
        self,
        b: _Batch,
        r: RawMemory,
        sig: str,
        related: list[list[object]],
        choice: Choice,
        vec_eid: tuple[np.ndarray, str] | None,
    ) -> None:
        """A new fact from ``r``, seen by the rest of the batch (signature, content, vector,
        claim); a plain one may contest the rivals ``choice`` found."""
        ov, fid = self._overlay, "f" + str(r.seq)
        body: dict[str, object] = {"evidence": r.seq, "signature": sig, "related": related}
        b.out.append(Event(agent=T.SYNTH_AGENT, type=T.FACT_CREATED, key=fid, body=body))
        ov.signatures.setdefault(sig, fid)
        ov.contents[fid] = r.content
        if r.subject is None:
            b.out.extend(self._contests.created(fid, r, choice))
        if vec_eid is not None:
            self.index.add(fid, vec_eid[0], vec_eid[1])
            ov.added.append(fid)
        if r.subject is not None:
            claim = Claim(fid, r.value, {r.agent}, r.importance, 0.0, r.seq, "active")
            self._claims(r.subject)[fid] = claim
            ov.new_in_subject.setdefault(r.subject, []).append(fid)
            b.touched.append(r.subject)

    def _corroborate(self, fid: str, sim: float, r: RawMemory, kind: str = "near") -> Event:
        sim = max(-1.0, min(1.0, round(float(sim), 6)))
        if r.subject is not None:
            c = self._claims(r.subject).get(fid)
            if c is not None:
                c.agents.add(r.agent)
                c.last_seq = max(c.last_seq, r.seq)
        else:
            self._contests.corroborated(fid, r)
        body: dict[str, object] = {"evidence": r.seq, "kind": kind, "similarity": sim}
        return Event(agent=T.SYNTH_AGENT, type=T.FACT_CORROBORATED, key=fid, body=body)

    def _revivable(self, sig: str, r: RawMemory) -> str | None:
        """The evicted fact (kept in the state) that memory ``r`` brings back, if any.

        A plain memory revives the plain fact of its signature; a claim revives the
        claim of its signature with the same subject and value.
        """
        fid = self.state.signatures.get(sig)
        if fid is None or fid in self._overlay.revived:
            return None
        f = self.state.evicted.get(fid)
        if f is None or f.subject != r.subject:
            return None
        if r.subject is not None and f.value != r.value:
            return None
        return fid

    def _revive(self, fid: str, r: RawMemory, k: int | None, scorer: BatchScorer | None) -> Event:
        """``fact.revived``: memory ``r`` brings evicted fact ``fid`` back (see revival).

        Later memories of the batch see the fact as a new one with ``r``'s vector (the
        vector the index gives it once folded: the same normalised words).
        """
        self._overlay.revived.add(fid)
        if scorer is not None and k is not None:
            scorer.created(k, fid, r.subject is not None)
        return Event(
            agent=T.SYNTH_AGENT,
            type=T.FACT_REVIVED,
            key=fid,
            body={"evidence": r.seq, "kind": "exact", "similarity": 1.0},
        )

    def _is_claim(self, fid: str) -> bool:
        f = self.state.facts.get(fid)
        return f is not None and f.subject is not None

    def _claims(self, subject: str) -> dict[str, Claim]:
        """Live claims on a subject (state + this batch), loaded once per batch."""
        ov = self._overlay
        got = ov.claims.get(subject)
        if got is None:
            got = {}
            for fid in self.state.subjects.get(subject, ()):
                f = self.state.facts.get(fid)
                if f is None or f.status == RETRACTED:
                    continue
                fb = f.feedback
                got[fid] = Claim(
                    fid,
                    f.value,
                    set(f.agents),
                    f.importance,
                    fb[0] if fb else 0.0,
                    max((e.seq for e in f.evidence), default=f.created_seq),
                    f.status,
                )
            ov.claims[subject] = got
        return got

    def _claim_with_value(self, subject: str, value: str | None) -> str | None:
        for fid, c in sorted(self._claims(subject).items(), key=lambda kv: kv[1].last_seq):
            if c.value == value:
                return fid
        return None

    def _retracted_claim(self, subject: str, value: str | None) -> str | None:
        """The newest retracted live fact claiming ``subject`` = ``value``, if any.

        Why: claims skip retracted facts, so without this a repeat of a retracted claim
        would come back as a new active fact (a revival under a new id).
        """
        st = self.state
        for fid in reversed(st.subjects.get(subject, ())):
            f = st.facts.get(fid)
            if f is not None and f.status == RETRACTED and f.value == value:
                return fid
        return None


__all__ = ["Synthesizer", "facts_digest", "fold_into"]
