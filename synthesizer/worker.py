"""The synthesizer worker: turns raw memories into facts, exactly once.

One pass (``run_once``): fold everything new; decide, for each raw ``memory.shared`` not
yet decided, whether it is an exact duplicate (same normalised-content signature, even of
an evicted fact), a near duplicate (cosine >= threshold against live facts), a claim on a
subject already claimed with the same value (corroboration) or a different one
(contest, then resolution by evidence), or new; then append all decisions plus a
``synth.progress`` mark in ONE atomic batch that expects the ``synthesizer`` key at the
version this worker last folded. A second worker therefore gets VersionConflict and
stands by; a worker killed anywhere leaves either the whole batch or nothing, so a
restart re-decides exactly the undecided raws.

Decisions inside one batch see each other through a small overlay (new signatures, new
vectors, new evidence per subject), so batch boundaries do not change the outcome.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from swarmlog import CheckpointNotWritten, Event, Log, SwarmlogError, VersionConflict

from . import events as T
from . import prune
from .config import SynthConfig
from .configlog import settle_config
from .embed import Embedder, embedder_for, near_duplicate_of
from .errors import SynthInterrupted
from .factindex import FactIndex
from .facts import LONG_TERM, RETRACTED, SHORT_TERM, Fact, RawMemory
from .guards import first_unguarded
from .replay import fold_into, load_checkpoint, save_checkpoint
from .signature import signature
from .state import SwarmState, fold_dicts

LEASE_KEY = "synthesizer"
_log = logging.getLogger("synthesizer.worker")
MAX_BATCH = 2000


@dataclass
class _Claim:
    """What resolution needs to know of one fact claiming a subject."""

    fid: str
    value: str | None
    agents: set[str]
    importance: float
    feedback: float
    last_seq: int
    status: str


@dataclass
class _Overlay:
    """Effects of this batch's decisions that later decisions in the batch must see."""

    signatures: dict[str, str] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    claims: dict[str, dict[str, _Claim]] = field(default_factory=dict)
    new_in_subject: dict[str, list[str]] = field(default_factory=dict)
    contents: dict[str, str] = field(default_factory=dict)


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
    ) -> None:
        """A worker on ``log``; ``pruned`` (the default) chooses the exact-pruning scorer.

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
        if state is None:
            state = load_checkpoint(log) or SwarmState()
        self.state = state
        self._auto_embedder = embedder is None and index is None  # the configuration's
        self._embedder_name = state.config.embedder
        if index is None:
            local = embedder if embedder is not None else embedder_for(self._embedder_name)
            index = FactIndex(local)
        self.index = index
        self.lease = getattr(state, "progress_seq", 0)
        self.standing_by = False
        self.decisions = 0
        self._last_checkpoint = state.last_seq
        self.pruned = pruned
        self._basis: prune.BoundBasis | None = None
        self._basis_rows = 0

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

    def catch_up(self) -> int:
        """Fold every event appended since the state's last seq; return how many."""
        before = self.state.last_seq
        st = self.state
        progress = T.SYNTH_PROGRESS
        for batch in self.log.read_batches(before + 1):  # stored mappings: no Event per record
            fold_dicts(st, batch)
            for d in [d for d in batch if d["type"] == progress]:
                if d.get("key") == LEASE_KEY:
                    self.lease = d["seq"]
        self._follow_embedder()
        self.index.sync(st)
        return st.last_seq - before

    # ------------------------------------------------------------------ one pass

    def run_once(self) -> int:
        """Fold, decide every undecided raw memory, append the decisions; return their count."""
        self.catch_up()
        n = self.decide_pending()
        self.maybe_checkpoint()
        return n

    def decide_pending(self) -> int:
        """Decide the raws pending in the folded state and append the decisions under the lease.

        On VersionConflict (another worker wrote first) nothing is written: the worker
        folds the winner's batch and stands by.
        """
        total = batches = 0
        upto = self.state.progress
        while self.state.pending:
            raws = [self.state.pending[s] for s in sorted(self.state.pending)[: self.batch_size]]
            batch = self.decide(raws)
            batch.append(
                Event(
                    agent=T.SYNTH_AGENT,
                    type=T.SYNTH_PROGRESS,
                    key=LEASE_KEY,
                    body={"upto": raws[-1].seq},
                )
            )
            try:
                stored = self.log.append_many(batch, expect={LEASE_KEY: self.lease})
            except VersionConflict as e:
                self._undo()
                self.standing_by = True
                self.lease = e.actual
                self.catch_up()
                return total
            except SwarmlogError as e:
                self._undo()
                left = -(-len(self.state.pending) // self.batch_size)
                raise SynthInterrupted(batches, batches + left, upto, e) from e
            batches += 1
            upto = raws[-1].seq
            self.standing_by = False
            self._overlay = _Overlay()
            total += len(batch) - 1
            self.decisions += len(batch) - 1
            self._fold_own(stored)
            self.catch_up()
        return total

    def _fold_own(self, stored: list[Event]) -> None:
        """Fold the batch just appended from the stored events ``append_many`` returned.

        Why: reading it back would parse and CRC-check bytes this process just wrote. Only
        when the batch directly follows the folded state (no other writer got in between,
        whose events must be folded first); ``catch_up`` reads anything else. The stored
        dicts are the ones a reader would get (same values; the fold never mutates them).
        """
        st = self.state
        first = st.last_seq + 1
        if stored and stored[0].seq == first and stored[-1].seq == first + len(stored) - 1:
            fold_dicts(st, [e.envelope for e in stored])
            self.lease = stored[-1].seq  # the batch ends with its progress mark

    def run(
        self,
        stop: Callable[[], bool] | None = None,
        poll: float = 0.5,
        idle_exit: float | None = None,
    ) -> None:
        """Run passes until ``stop()`` is true (or nothing happened for ``idle_exit`` s)."""
        idle_since = time.monotonic()
        while not (stop and stop()):
            n = self.run_once()
            if n:
                idle_since = time.monotonic()
                continue
            if idle_exit is not None and time.monotonic() - idle_since >= idle_exit:
                return
            if self.standing_by:
                time.sleep(min(poll, 0.05))
            self.log.wait_for_change(poll)

    def maybe_checkpoint(self, force: bool = False) -> bool:
        """Checkpoint the state every ``checkpoint_every`` events (or now, if forced)."""
        every = self.config.synthesizer.checkpoint_every
        st = self.state
        due = force or st.last_seq - self._last_checkpoint >= every
        if st.last_seq and due:
            try:
                save_checkpoint(self.log, st)
            except CheckpointNotWritten as e:
                if force:
                    raise
                _log.warning("swarmlog: %s", e)  # a periodic one: the next is tried later
                self._last_checkpoint = st.last_seq
                return False
            self._last_checkpoint = st.last_seq
            return True
        return False

    # ------------------------------------------------------------------ decisions

    @property
    def near_duplicate(self) -> float:
        """The near-duplicate cosine: the configuration's, else the embedder's own."""
        near = self.config.synthesizer.near_duplicate
        return near_duplicate_of(self.index.embedder) if near is None else near

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
            self._basis = prune.BoundBasis.fit(mat)
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
        see ``_BatchScorer``), so a decision costs a few dictionary lookups, not a search.
        """
        self._overlay = ov = _Overlay()
        st = self.state
        near = self.near_duplicate

        def content_of(fid: str) -> str | None:  # what a guard compares with
            return st.facts[fid].content if fid in st.facts else ov.contents.get(fid)

        out: list[Event] = []
        local = self.index.embedder.id
        sigs = [signature(r.content) for r in raws]
        # local-embedder raws that need a vector (not already known by signature)
        need = [
            i
            for i, r in enumerate(raws)
            if r.embedding is None and (r.subject is not None or sigs[i] not in st.signatures)
        ]
        texts = [raws[i].content for i in need]
        scorer = None
        if need:
            # one BLAS thread: the worker shares the machine with agents, and OpenBLAS's
            # second thread turns every product into a wait for a busy core (1.5x slower
            # with one agent process running, measured)
            with prune.one_blas_thread():
                scorer = _BatchScorer(self, texts, self.pruned)
        row_of = {raws[i].seq: k for k, i in enumerate(need)}
        touched: list[str] = []
        for r, sig in zip(raws, sigs, strict=True):
            fid = "f" + str(r.seq)
            k = row_of.get(r.seq)
            # 1. a structured claim on a subject
            if r.subject is not None:
                same = self._claim_with_value(r.subject, r.value)
                dead = None if same is not None else self._retracted_claim(r.subject, r.value)
                if dead is not None:
                    # a board-retracted claim stays retracted: the repeat is evidence for it
                    if ov.signatures.get(sig, st.signatures.get(sig)) == dead:
                        out.append(self._corroborate(dead, r, "exact", 1.0))
                    else:
                        sim = scorer.cosine_to(k, dead) if scorer and k is not None else 0.0
                        out.append(self._corroborate(dead, r, "near", sim))
                    continue
                if same is not None:
                    known = ov.signatures.get(sig, st.signatures.get(sig))
                    if known == same:
                        out.append(self._corroborate(same, r, "exact", 1.0))
                    else:
                        sim = scorer.cosine_to(k, same) if scorer and k is not None else 0.0
                        out.append(self._corroborate(same, r, "near", sim))
                    touched.append(r.subject)
                    continue
            # 2. exact duplicate by signature (remembered after eviction)
            dup = ov.signatures.get(sig) or st.signatures.get(sig)
            if dup is not None and r.subject is None:
                out.append(self._corroborate(dup, r, "exact", 1.0))
                continue
            related: list[list[object]] = []
            if r.embedding is None and scorer is not None and k is not None:
                # 3. near duplicate among live and new facts that no guard tells apart
                if r.subject is None:
                    best = first_unguarded(scorer.candidates(k), r.content, near, content_of)
                    if best is not None:
                        out.append(self._corroborate(best[0], r, "near", best[1]))
                        continue
                related = scorer.related(k)
                scorer.created(k, fid, r.subject is not None)
                vec_eid: tuple[np.ndarray, str] | None = None
            else:
                vec = np.asarray(r.embedding, dtype=np.float32)
                eid = r.embedder or local
                idx = self.index.space.get(eid, int(vec.shape[0]))
                if r.subject is None and idx is not None and len(idx):
                    hit = idx.best(vec)
                    if hit is not None and not self._is_claim(hit[0]):
                        hit = first_unguarded([hit], r.content, near, content_of)
                    if hit is not None and not self._is_claim(hit[0]):
                        out.append(self._corroborate(hit[0], r, "near", hit[1]))
                        continue
                vec_eid = (vec, eid)
            # 4. a new fact
            out.append(
                Event(
                    agent=T.SYNTH_AGENT,
                    type=T.FACT_CREATED,
                    key=fid,
                    body={"evidence": r.seq, "signature": sig, "related": related},
                )
            )
            ov.signatures.setdefault(sig, fid)
            ov.contents[fid] = r.content
            if vec_eid is not None:
                self.index.add(fid, vec_eid[0], vec_eid[1])
                ov.added.append(fid)
            if r.subject is not None:
                self._claims(r.subject)[fid] = _Claim(
                    fid, r.value, {r.agent}, r.importance, 0.0, r.seq, "active"
                )
                ov.new_in_subject.setdefault(r.subject, []).append(fid)
                touched.append(r.subject)
        if scorer is not None:
            ov.added.extend(scorer.commit())
        for subject in dict.fromkeys(touched):
            out.extend(self._resolve(subject))
        return out

    def _corroborate(self, fid: str, r: RawMemory, kind: str, sim: float) -> Event:
        sim = max(-1.0, min(1.0, round(float(sim), 6)))
        if r.subject is not None:
            c = self._claims(r.subject).get(fid)
            if c is not None:
                c.agents.add(r.agent)
                c.last_seq = max(c.last_seq, r.seq)
        return Event(
            agent=T.SYNTH_AGENT,
            type=T.FACT_CORROBORATED,
            key=fid,
            body={"evidence": r.seq, "kind": kind, "similarity": sim},
        )

    def _is_claim(self, fid: str) -> bool:
        f = self.state.facts.get(fid)
        return f is not None and f.subject is not None

    def _claims(self, subject: str) -> dict[str, _Claim]:
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
                got[fid] = _Claim(
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

    def _resolve(self, subject: str) -> list[Event]:
        """Contest and resolve a subject whose claims disagree (reversible on new evidence)."""
        claims = self._claims(subject)
        values = {c.value for c in claims.values()}
        if len(claims) < 2 or len(values) < 2:
            return []
        out = []
        for fid in self._overlay.new_in_subject.get(subject, []):
            rivals = sorted(f for f in claims if f != fid)
            out.append(
                Event(
                    agent=T.SYNTH_AGENT,
                    type=T.FACT_CONTESTED,
                    key=fid,
                    body={"subject": subject, "rivals": rivals},
                )
            )
        ranked = sorted(
            claims.values(),
            key=lambda c: (len(c.agents), c.importance, c.feedback, c.last_seq),
            reverse=True,
        )
        winner = ranked[0]
        losers = sorted(c.fid for c in ranked[1:])
        settled = winner.status == "active" and all(
            claims[f].status == "superseded" for f in losers
        )
        if out or not settled:
            top, second = ranked[0], ranked[1]
            reason = (
                f"{len(top.agents)} agent(s) vs {len(second.agents)}"
                if len(top.agents) != len(second.agents)
                else "tie on agents; decided by importance, feedback, then recency"
            )
            out.append(
                Event(
                    agent=T.SYNTH_AGENT,
                    type=T.FACT_RESOLVED,
                    key=winner.fid,
                    body={
                        "subject": subject,
                        "winner": winner.fid,
                        "losers": losers,
                        "reason": reason,
                    },
                )
            )
            winner.status = "active"
            for f in losers:
                claims[f].status = "superseded"
        return out


class _BatchScorer:
    """Cosines of one batch of new memories against live facts and against each other.

    Only cosines that can change a decision are kept: the nearest plain fact per memory,
    short/long-term facts above the retro threshold, and pairs of this batch's memories
    at or above the near-duplicate floor. Dense mode scores every pair with float32
    matrix products (the historical values); pruned mode (``Synthesizer(pruned=True)``)
    scores only the pairs whose Cauchy-Schwarz bound can reach a threshold (see
    ``prune``), with canonical float32 cosines that do not depend on matrix shapes.
    """

    CHUNK = 8_000_000  # matrix cells per product block (~32 MB of float32)

    def __init__(self, worker: Synthesizer, texts: list[str], pruned: bool = False) -> None:
        self.worker = worker
        fi = worker.index
        self.vecs = fi.embedder.embed(texts)
        self.ids, mat = fi.default.matrix()
        m, n = len(texts), len(self.ids)
        retro_tiers = (SHORT_TERM, LONG_TERM)
        facts = worker.state.facts.values()
        is_claim = fi.default.mask_for(f.id for f in facts if f.subject is not None)
        is_retro = fi.default.mask_for(f.id for f in facts if f.tier in retro_tiers)
        # nearest plain (non-claim) live fact per memory: claims merge by value, not cosine
        self.best_plain_val = np.full(m, -2.0, dtype=np.float32)
        self.best_plain_col = np.full(m, -1, dtype=np.int64)
        self.plain_near: dict[int, list[tuple[int, float]]] = {}  # memory -> (col, cos)
        self.retro: dict[int, list[list[object]]] = {}  # memory -> [fact id, cosine]s
        self._thr = worker.config.tiers.retro_similarity
        self._near = worker.near_duplicate
        # in-batch neighbours that may matter: round(cos, 6) >= near needs cos >= near - 5e-7
        self._floor = self._near - 1e-5
        self.close: dict[int, list[tuple[int, float]]] = {}
        self.gram: np.ndarray | None = None
        if pruned:
            self._score_pruned(mat, is_claim, is_retro)
        else:
            if n:
                self._score_dense(mat, is_claim, is_retro)
            if m > 1:
                self.gram = self.vecs @ self.vecs.T
                rows, cols = np.nonzero(self.gram >= self._floor)
                self._add_close(rows, cols, self.gram[rows, cols])
        self.new_rows: list[int] = []
        self.new_ids: list[str] = []
        self.fid_of_row: dict[int, str] = {}
        self.row_of_fid: dict[str, int] = {}
        self.new_plain = np.zeros(m, dtype=bool)

    def _score_dense(self, mat: np.ndarray, is_claim: np.ndarray, is_retro: np.ndarray) -> None:
        """Every memory x fact cosine by float32 products, one block of rows at a time."""
        retro_cols = np.flatnonzero(is_retro)
        claim_cols = np.flatnonzero(is_claim)
        thr = self._thr
        step = max(1, self.CHUNK // len(self.ids))
        for lo in range(0, len(self.vecs), step):
            sims = self.vecs[lo : lo + step] @ mat.T
            if len(retro_cols):
                sub = sims[:, retro_cols]
                for r, c in zip(*np.nonzero(sub > thr), strict=True):
                    self.retro.setdefault(lo + int(r), []).append(
                        [self.ids[retro_cols[c]], round(float(sub[r, c]), 6)]
                    )
            if len(claim_cols):
                sims[:, claim_cols] = -2.0
            self._take(sims, lo, self.best_plain_val, self.best_plain_col)
            rows, cols = np.nonzero(sims >= self._floor)
            for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
                self.plain_near.setdefault(lo + r, []).append((c, float(sims[r, c])))

    def _score_pruned(self, mat: np.ndarray, is_claim: np.ndarray, is_retro: np.ndarray) -> None:
        """Exact cosines of the pairs whose bound can reach a threshold (see ``prune``)."""
        vecs, ids = self.vecs, self.ids
        basis = self.worker.bound_basis(mat)
        left = basis.augment(vecs)
        if len(ids):
            # a plain fact matters from the near floor, a short/long-term one from retro
            floor = np.where(is_claim, 3.0, self._floor)
            floor[is_retro] = np.minimum(floor[is_retro], self._thr)
            right = self.worker.index.default.rowwise(basis, basis.augment)  # cached
            rows, cols = prune.bound_pairs(left, right, floor)
            sims = prune.exact_cosines(vecs, mat, rows, cols)
            retro = np.flatnonzero(is_retro[cols] & (sims > self._thr))
            found = zip(
                rows[retro].tolist(), cols[retro].tolist(), sims[retro].tolist(), strict=True
            )
            for r, c, v in found:
                self.retro.setdefault(r, []).append([ids[c], round(v, 6)])
            best_val, best_col = self.best_plain_val, self.best_plain_col
            plain = np.flatnonzero(~is_claim[cols])
            for r, c, v in zip(
                rows[plain].tolist(), cols[plain].tolist(), sims[plain], strict=True
            ):
                b = best_col[r]
                if b < 0 or v > best_val[r] or (v == best_val[r] and ids[c] < ids[b]):
                    best_val[r], best_col[r] = v, c
                if v >= self._floor:
                    self.plain_near.setdefault(r, []).append((c, float(v)))
        if len(vecs) > 1:
            rows, cols = prune.bound_pairs(left, left, np.full(len(vecs), self._floor))
            sims = prune.exact_cosines(vecs, vecs, rows, cols)
            keep = sims >= self._floor
            self._add_close(rows[keep], cols[keep], sims[keep])

    def _add_close(self, rows: np.ndarray, cols: np.ndarray, sims: np.ndarray) -> None:
        """Record in-batch pairs (row, col, float32 cosine) at or above the near floor."""
        close = self.close
        for r, c, v in zip(rows.tolist(), cols.tolist(), sims.tolist(), strict=True):
            if r != c:
                close.setdefault(r, []).append((c, v))

    def _take(self, sims: np.ndarray, lo: int, val: np.ndarray, col: np.ndarray) -> None:
        best = sims.argmax(axis=1)
        bv = sims[np.arange(len(sims)), best]
        # equal cosines: the smallest fact id wins — checked only where the winner matters
        # (at or above the near-duplicate threshold), so row order never decides
        near = np.nonzero(bv >= self._near - 1e-6)[0]
        for r in near[(sims[near] == bv[near, None]).sum(axis=1) > 1]:
            cols = np.nonzero(sims[r] == bv[r])[0]
            best[r] = min(cols, key=lambda c: self.ids[c])
        val[lo : lo + len(sims)] = bv
        col[lo : lo + len(sims)] = best

    def best(self, k: int) -> tuple[str, float] | None:
        """Nearest plain fact to memory ``k``: live facts, then this batch's new ones.

        Exact (id, cosine to 6 places, ties to the smallest id) whenever the answer
        reaches the near-duplicate floor — the only case a decision uses; below it,
        in-batch facts are not considered (and pruned mode may return None).
        """
        out: tuple[str, float] | None = None
        col = int(self.best_plain_col[k])
        if col >= 0 and self.best_plain_val[k] > -2.0:
            out = (self.ids[col], float(self.best_plain_val[k]))
        fid_of_row, new_plain = self.fid_of_row, self.new_plain
        for j, v in self.close.get(k, ()):
            if new_plain[j]:
                cand = (fid_of_row[j], v)
                if out is None or v > out[1] or (v == out[1] and cand[0] < out[0]):
                    out = cand
        if out is None:
            return None
        return out[0], max(-1.0, min(1.0, round(out[1], 6)))

    def candidates(self, k: int) -> list[tuple[str, float]]:
        """Plain facts (live and new) at or above the near floor for memory ``k``: (id, cosine
        to 6 places), best first (ties by id); a guard may reject the nearest, not the next."""
        ids = self.ids
        found = [(ids[c], v) for c, v in self.plain_near.get(k, ())]
        fid_of_row, new_plain = self.fid_of_row, self.new_plain
        found += [(fid_of_row[j], v) for j, v in self.close.get(k, ()) if new_plain[j]]
        found.sort(key=lambda p: (-p[1], p[0]))
        return [(fid, max(-1.0, min(1.0, round(v, 6)))) for fid, v in found]

    def related(self, k: int) -> list[list[object]]:
        """Short/long-term facts similar enough to be strengthened by memory ``k``."""
        rel = sorted(self.retro.get(k, []), key=lambda p: (-float(p[1]), str(p[0])))  # type: ignore[arg-type]
        return rel[:8]

    def cosine_to(self, k: int, fid: str) -> float:
        """Cosine of memory ``k`` with a fact (live or new in this batch)."""
        row = self.row_of_fid.get(fid)
        if row is not None:
            if self.gram is not None:
                return round(float(self.gram[k, row]), 6)
            pair = np.array([k]), np.array([row])
            return round(float(prune.exact_cosines(self.vecs, self.vecs, *pair)[0]), 6)
        other = self.worker.index.default.get(fid)
        return 0.0 if other is None else round(float(np.dot(other, self.vecs[k])), 6)

    def created(self, k: int, fid: str, claim: bool) -> None:
        """Memory ``k`` became fact ``fid``: later memories of the batch compare with it."""
        self.new_plain[k] = not claim
        self.fid_of_row[k] = fid
        self.row_of_fid[fid] = k
        self.new_rows.append(k)
        self.new_ids.append(fid)

    def commit(self) -> list[str]:
        """Add the batch's new facts to the index; return their ids."""
        if self.new_ids:
            self.worker.index.add_local(self.new_ids, self.vecs[self.new_rows])
        return list(self.new_ids)


def facts_digest(state: SwarmState) -> str:
    """A digest of the facts' meaning (ids, content, status, evidence, support).

    Unlike ``state.digest()`` it leaves out seqs of the synthesizer's own events (fact
    versions), which depend on how its work was split into batches.
    """
    import hashlib

    import orjson

    rows: list[object] = []
    for fid in sorted(state.facts):
        f: Fact = state.facts[fid]
        rows.append(
            [
                fid,
                f.content,
                f.status,
                f.value,
                f.subject,
                [e.seq for e in f.evidence],
                f.support,
                f.tier,
            ]
        )
    rows.append(sorted(state.signatures.items()))
    return hashlib.blake2b(orjson.dumps(rows), digest_size=16).hexdigest()


__all__ = ["Synthesizer", "facts_digest", "fold_into"]
