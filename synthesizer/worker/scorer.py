"""Scoring one batch of new memories against live facts and each other (the worker's hot path).

Kept apart from the worker's decisions (``worker``): what is scored, and how exactly
(dense float32 products, or pruned exact cosines: see ``prune``).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from synthesizer.config import SynthConfig
from synthesizer.search import prune, topk
from synthesizer.search.factindex import FactIndex
from synthesizer.state import SwarmState
from synthesizer.worker import candidates
from synthesizer.worker.contest import MAX_CANDIDATES, MAX_RIVALS

TOP_K: int | None = MAX_CANDIDATES + MAX_RIVALS
"""Candidates a decision reads per memory at most (``TextContests.choose``: the first
``MAX_CANDIDATES``, then ``MAX_RIVALS`` more): the pruned scorer keeps every live plain
fact at or above each memory's ``k``-th best cosine (``topk``), not every one from the
floor. None: every one from the floor (the reference, tests/test_topk.py)."""
SEED_FROM = 256
"""Batches from this many memories raise floors from a seed before the bound
(``topk.row_floors``); smaller ones only from their candidate pairs (``_verified_top``):
on an 8-memory pass at 50k facts the seed cost ~1.7 ms of ~28 ms and the bound cannot
prune at the floors it finds there."""


class ScoringWorker(Protocol):
    """What the scorer reads of the worker: its index, state, configuration and basis."""

    index: FactIndex
    state: SwarmState

    @property
    def config(self) -> SynthConfig: ...

    @property
    def near_duplicate(self) -> float: ...

    @property
    def candidate_floor(self) -> float: ...

    def bound_basis(self, mat: np.ndarray) -> prune.BoundBasis: ...


class _Pairs:
    """In-batch pairs (rows ascending, then columns), listed per row on demand.

    Why: a batch of 2,000 memories on one topic has ~50k pairs at the contest floor;
    building a Python list per row for all of them cost ~0.3 s, and their canonical
    cosines (float64 gathers) as much again, while a decision reads its own row only.
    With ``exact`` = (vecs, floor), ``sims`` are float32 dots within ``VERIFY_SLACK``
    of the canonical ones: a row's canonical cosines are taken when it is read, and its
    pairs below ``floor`` dropped then (the same pairs and values as verifying all)."""

    def __init__(
        self,
        rows: np.ndarray,
        cols: np.ndarray,
        sims: np.ndarray,
        exact: tuple[np.ndarray, float] | None = None,
    ) -> None:
        keep = rows != cols
        self.rows, self.cols, self.sims = rows[keep], cols[keep], sims[keep]
        self._exact = exact
        self._seen: dict[int, list[tuple[int, float]]] = {}

    @classmethod
    def empty(cls) -> _Pairs:
        """No pairs."""
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none, np.zeros(0, dtype=np.float32))

    def get(self, k: int, default: tuple[()] = ()) -> list[tuple[int, float]] | tuple[()]:
        """Row ``k``'s (column, cosine) pairs, or ``default``."""
        got = self._seen.get(k)
        if got is None:
            lo, hi = np.searchsorted(self.rows, [k, k + 1])
            cols, sims = self.cols[lo:hi], self.sims[lo:hi]
            if self._exact is not None and hi > lo:
                vecs, floor = self._exact
                sims = prune.exact_cosines(vecs, vecs, self.rows[lo:hi], cols)
                cols, sims = cols[sims >= floor], sims[sims >= floor]
            got = self._seen[k] = list(zip(cols.tolist(), sims.tolist(), strict=True))
        return got if got else default


class BatchScorer:
    """Cosines of one batch of new memories against live facts and against each other.

    Only cosines that can change a decision are kept: the nearest plain fact per memory,
    short/long-term facts above the retro threshold, and pairs of this batch's memories
    at or above the near-duplicate floor. Dense mode scores every pair with float32
    matrix products (the historical values); pruned mode (``Synthesizer(pruned=True)``)
    scores only the pairs whose Cauchy-Schwarz bound can reach a threshold (see
    ``prune``), with canonical float32 cosines that do not depend on matrix shapes.
    """

    CHUNK = 8_000_000  # matrix cells per product block (~32 MB of float32)

    def __init__(self, worker: ScoringWorker, texts: list[str], pruned: bool = False) -> None:
        self.worker = worker
        fi = worker.index
        self.vecs = fi.embedder.embed(texts)
        self.ids, mat = fi.default.matrix()
        m, n = len(texts), len(self.ids)
        is_claim, is_retro = candidates.scoring_masks(fi, worker.state)
        # nearest plain (non-claim) live fact per memory: claims merge by value, not cosine
        self.best_plain_val = np.full(m, -2.0, dtype=np.float32)
        self.best_plain_col = np.full(m, -1, dtype=np.int64)
        self.plain_near: dict[int, list[tuple[int, float]]] = {}  # memory -> (col, cos)
        self.retro: dict[int, list[list[object]]] = {}  # memory -> [fact id, cosine]s
        self._thr = worker.config.tiers.retro_similarity
        self._near = worker.near_duplicate
        # candidates that may matter (a merge from ``near``, a contest from the lower
        # candidate floor): round(cos, 6) >= floor needs cos >= floor - 5e-7
        self._floor = min(self._near, worker.candidate_floor) - 1e-5
        self.close = _Pairs.empty()
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
        mat = np.asarray(mat)  # a mapped index: plain ndarray views (no memmap per gather)
        basis = self.worker.bound_basis(mat)
        left = basis.augment(vecs)
        if len(vecs) > 1:
            near = np.full(len(vecs), self._floor)
            rows, cols = candidates.bound_pairs(left, left, near, raw=(vecs, vecs))
            if len(vecs) < SEED_FROM or vecs.shape[1] > 4096:  # few rows: all at once
                rows, cols, sims = candidates.verified(vecs, vecs, rows, cols, near)
                keep = sims >= self._floor
                self.close = _Pairs(rows[keep], cols[keep], sims[keep])
            else:  # each row's canonical cosines when it is read
                approx = candidates.approx_cosines(vecs, vecs, rows, cols)
                keep = approx >= self._floor - candidates.VERIFY_SLACK
                self.close = _Pairs(rows[keep], cols[keep], approx[keep], (vecs, self._floor))
        if len(ids):
            # a plain fact matters from the near floor, a short/long-term one from retro
            floor = np.where(is_claim, 3.0, self._floor)
            floor[is_retro] = np.minimum(floor[is_retro], self._thr)
            right = self.worker.index.default.rowwise(basis, basis.augment)  # cached
            own = self._row_floors(vecs, mat, is_claim, is_retro)
            if own is None:  # the former call (tests swap in prune.bound_pairs)
                rows, cols = candidates.bound_pairs(left, right, floor, raw=(vecs, mat))
            else:
                rows, cols = candidates.bound_pairs(
                    left, right, floor, raw=(vecs, mat), rows_floor=own
                )
            if TOP_K is None or vecs.shape[1] > 4096:
                pf = None if own is None else candidates.pair_floors(floor, own, rows, cols)
                rows, cols, sims = candidates.verified(vecs, mat, rows, cols, floor, pf)
            else:
                rows, cols, sims = self._verified_top(
                    vecs, mat, rows, cols, floor, own, is_claim, is_retro
                )
            retro = np.flatnonzero(is_retro[cols] & (sims > self._thr))
            found = zip(
                rows[retro].tolist(), cols[retro].tolist(), sims[retro].tolist(), strict=True
            )
            for r, c, v in found:
                self.retro.setdefault(r, []).append([ids[c], round(v, 6)])
            best_val, best_col = self.best_plain_val, self.best_plain_col
            # only plain pairs at the near floor matter (the bound's other candidates are
            # dropped here, in numpy: at 100k facts they outnumber these 1000 to 1)
            plain = np.flatnonzero(~is_claim[cols] & (sims >= self._floor))
            for r, c, v in zip(
                rows[plain].tolist(), cols[plain].tolist(), sims[plain], strict=True
            ):
                b = best_col[r]
                if b < 0 or v > best_val[r] or (v == best_val[r] and ids[c] < ids[b]):
                    best_val[r], best_col[r] = v, c
                self.plain_near.setdefault(r, []).append((c, float(v)))

    def _row_floors(
        self, vecs: np.ndarray, mat: np.ndarray, is_claim: np.ndarray, is_retro: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """(each memory's floor, each column's cap) where a memory's ``TOP_K``-th best
        plain fact is above the floor (``topk.row_floors``); None where none is.

        The first ``TOP_K`` entries of ``candidates(k)`` are unchanged (``topk``); the
        retro floor of short/long-term facts is kept (``related`` reads them all)."""
        if TOP_K is None or len(vecs) < SEED_FROM:
            return None
        row = topk.row_floors(vecs, mat, ~is_claim, TOP_K, self._floor)
        if not (row > self._floor).any():
            return None
        cap = np.where(is_retro, min(self._thr, 3.0), 3.0)
        return row, cap

    def _verified_top(
        self,
        vecs: np.ndarray,
        mat: np.ndarray,
        rows: np.ndarray,
        cols: np.ndarray,
        floor: np.ndarray,
        own: tuple[np.ndarray, np.ndarray] | None,
        is_claim: np.ndarray,
        is_retro: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``candidates.verified`` with each memory's floor raised once more to the
        ``TOP_K``-th best float32 cosine among its plain candidate pairs (all of its live
        facts that can reach the floor are among them), before the canonical cosines:
        the first ``TOP_K`` candidates are unchanged (``topk``)."""
        if own is None:
            own = np.full(len(vecs), self._floor), np.where(is_retro, self._thr, 3.0)
        approx = candidates.approx_cosines(vecs, mat, rows, cols)
        slack = candidates.VERIFY_SLACK
        keep = approx >= candidates.pair_floors(floor, own, rows, cols) - slack
        plain = keep & ~is_claim[cols]
        most = np.bincount(rows[plain], minlength=len(vecs)).max(initial=0)
        if most > min(MAX_RIVALS, TOP_K or 0):  # a row with more than it may read: raise
            kth = topk.kth_by_row(
                rows[plain], approx[plain], len(vecs), self._reads(rows, approx, plain)
            )
            own = np.maximum(own[0], kth - topk.SLACK), own[1]
            keep &= approx >= candidates.pair_floors(floor, own, rows, cols) - slack
        rows, cols = rows[keep], cols[keep]
        return rows, cols, prune.exact_cosines(vecs, mat, rows, cols)

    def _reads(self, rows: np.ndarray, approx: np.ndarray, plain: np.ndarray) -> np.ndarray:
        """Per memory, at least as many candidates as its decision reads: the first
        ``MAX_CANDIDATES`` at the near-duplicate cosine, then ``MAX_RIVALS`` more
        (``TextContests.choose``), counting every live pair whose float32 cosine may
        reach ``near`` and every in-batch pair that does (whether or not it becomes a
        fact); never more than ``TOP_K``."""
        assert TOP_K is not None
        m, cut = len(self.vecs), self._near - 1e-5 - candidates.VERIFY_SLACK
        live = np.bincount(rows[plain & (approx >= cut)], minlength=m)
        close = self.close
        inb = np.bincount(close.rows[close.sims >= cut], minlength=m)
        k = np.minimum(MAX_CANDIDATES, live + inb) + MAX_RIVALS
        return np.minimum(k, TOP_K)

    def _add_close(self, rows: np.ndarray, cols: np.ndarray, sims: np.ndarray) -> None:
        """Record in-batch pairs (row, col, float32 cosine) at or above the near floor
        (rows in ascending order, as both scorers find them)."""
        self.close = _Pairs(rows, cols, sims)

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
        """Plain facts (live and new) at or above the candidate floor for memory ``k``: (id,
        cosine to 6 places), best first (ties by id); the merge rule may reject the nearest,
        not the next."""
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


__all__ = ["BatchScorer", "ScoringWorker"]
