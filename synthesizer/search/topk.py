"""Per-memory candidate floors from the k-th best cosine (exact top-k candidates).

Why: the worker's decisions read at most the first ``k`` candidates of a memory, best
first (``contest.MAX_CANDIDATES`` at the near-duplicate cosine, then
``contest.MAX_RIVALS`` more: ``k = min(8, candidates at the near cosine) + 3``, 11 at
most). In a swarm of statements on one narrow topic the contest floor (cosine 0.55)
finds a hundred candidates per memory, and the bound cannot prune at that floor, so every
one of them was scored, verified and sorted.

The proof: if ``k`` live plain facts have cosine >= ``c`` with a memory, its ``k``-th
best live fact is at ``c`` or above, so every live fact among its first ``k`` is too.
The list a decision reads merges live facts with the batch's own new facts, sorted by
(cosine, id); keeping every live fact at ``c`` or above (ties included) keeps every live
member of the merged list's first ``k``, and dropping entries below them cannot move
anything into those first ``k``: the first ``k`` entries, hence the decision, are the
same. Only floors are raised; no cosine is approximated (``c`` comes from float32 dots,
less ``SLACK``), and memories with fewer than ``k`` candidates keep the base floor.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SEED", "SLACK", "kth_by_row", "kth_largest", "row_floors"]

SEED = 2048
"""Live facts each memory is compared with densely to find its k-th best (the newest
rows, eligible or not: rewordings and follow-ups of recent notes are what a memory meets
first, and a slice of the matrix costs no copy)."""
SLACK = 1e-4
"""Below the seed's float32 cosine: a float32 dot of unit rows (dim <= 4096) is within
``dim * 2^-24`` (< 2.5e-4 at 4096, 2.3e-5 at 384) of the exact one; at dim > 4096 no
floor is raised."""


def row_floors(
    vecs: np.ndarray, mat: np.ndarray, eligible: np.ndarray, k: int, base: float
) -> np.ndarray:
    """For each row of ``vecs``: ``base``, or higher where at least ``k`` eligible rows of
    ``mat`` reach a higher cosine (float32 ``k``-th best of a seed, minus ``SLACK``).

    Every eligible fact among a memory's ``k`` best (ties included) has an exact cosine
    at or above the floor returned (tests/test_topk.py)."""
    out = np.full(len(vecs), base, dtype=np.float64)
    ok = np.asarray(eligible[-SEED:], dtype=bool)  # the newest rows: a view, no gather
    if k < 1 or int(ok.sum()) < k or not len(vecs) or vecs.shape[1] > 4096:
        return out
    sims = np.asarray(vecs, dtype=np.float32) @ np.asarray(mat[-SEED:], dtype=np.float32).T
    sims[:, ~ok] = -np.inf
    kth = np.partition(sims, len(ok) - k, axis=1)[:, len(ok) - k].astype(np.float64)
    return np.maximum(out, kth - SLACK)


def kth_by_row(rows: np.ndarray, values: np.ndarray, m: int, k: int | np.ndarray) -> np.ndarray:
    """The ``k``-th largest of ``values`` per row index (``rows`` in 0..m-1; ``k`` one for
    all rows or one per row); -inf for a row with fewer than ``k`` values."""
    out = np.full(m, -np.inf)
    kk = np.broadcast_to(np.asarray(k, dtype=np.int64), (m,))
    if not len(rows):
        return out
    vals = np.asarray(values, dtype=np.float64)
    order = np.lexsort((-vals, rows))
    r = rows[order]
    starts = np.searchsorted(r, np.arange(m))
    counts = np.bincount(r, minlength=m)
    have = np.flatnonzero((kk >= 1) & (counts >= kk))
    out[have] = vals[order[starts[have] + kk[have] - 1]]
    return out


_SAMPLE = 4096  # values sampled to guess a cut below the k-th largest


def kth_largest(values: np.ndarray, k: int) -> float:
    """The ``k``-th largest of ``values`` (1 <= k <= len), exactly ``np.sort(values)[-k]``.

    Why not ``np.partition``: on scores with few distinct values, where the cut falls in a
    long run of ties (BM25 over short facts: a 160,000-score query took 12-16 ms, a sort
    1.6 ms), its selection degrades. Here a strided sample's value a little above the
    ``k``-th rank bounds the cut from below, and only the values at or above it are
    sorted; when fewer than ``k`` pass (a sample off the mark), every value is."""
    n = values.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in 1..{n}, got {k}")
    if n > 4 * _SAMPLE and k * 8 < n:
        step = n // _SAMPLE
        sample = np.sort(values[::step])
        m = sample.shape[0]
        guess = sample[max(0, m - 1 - int(2 * k * m / n) - 8)]
        above = values[values >= guess]
        if above.shape[0] >= k:
            return float(np.sort(above)[above.shape[0] - k])
    return float(np.sort(values)[n - k])
