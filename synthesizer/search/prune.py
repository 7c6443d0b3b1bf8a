"""Exact candidate pruning for high-threshold cosine search (no pair above a floor is lost).

The synthesizer only acts on cosines at or above a floor (near duplicate 0.9, retro
strengthening 0.7); most memory x fact pairs are far below it, yet scoring them densely
costs a full 384-wide matrix product per batch. Here each unit vector ``a`` is split by an
orthonormal basis ``Q_k`` (top principal directions of the live facts) into its
projection ``p = Q_k^T a`` and a residual of norm ``r = sqrt(|a|^2 - |p|^2)``; by
Cauchy-Schwarz on the residual

    a . b  <=  p_a . p_b + r_a r_b,

which is one (k+1)-wide product of the augmented rows ``[p, r]``. Only pairs whose bound
reaches the floor are scored exactly. The bound holds for any orthonormal basis, so the
basis only changes speed, never results.

Exact scores are canonical: the float64 dot of the float32 vectors (each product is exact
in float64) rounded to float32 — a value that does not depend on matrix shapes or BLAS
blocking, unlike the elements of a float32 matrix product (whose last bits change with
the block a pair falls in).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from threadpoolctl import ThreadpoolController

__all__ = ["DEFAULT_K", "DENSE_SHARE", "BoundBasis", "bound_pairs", "exact_cosines"]

# Rows are unit (or zero) float32 vectors. The bound is computed in float32, so it
# carries explicit slack for rounding, sized above the worst case (a few 1e-4 for dim
# 384 and k = 32; typical errors are ~100x smaller):
# - each projected coordinate is off by <= dim * 2^-24 * |a| |q_j| (~2.3e-5), so |p| by
#   <= sqrt(k) times that, p_a . p_b and squared norms by a few 1e-4 at most;
# - the float32 basis is orthonormal only to ~1e-6.
RESIDUAL_SLACK = 1e-3  # added to every squared residual norm (times |a|^2)
MARGIN = 1e-3  # subtracted from every floor: errors of p_a . p_b and of the bound product
# Bound-matrix blocks of 256 x 1024 (1 MB of float32), written into one reused buffer:
# the block stays in cache between the product and the scans that follow it, and no
# fresh allocation (page faults) per block; 2048 x 2048 blocks were ~15% slower.
_BLOCK_ROWS, _BLOCK_COLS = 256, 1024
# A block whose bound passes more than this share of its pairs is thinned by its float32
# product (see ``bound_pairs``): scoring 1/16 of a block pair by pair already costs more.
DENSE_SHARE = 1 / 16
# Width of the basis the synthesizer fits: on hashing-embedder facts (100k, dim 384) the
# k = 64 bound at 0.9 keeps ~0.1% of the pairs (k = 32: 1.9%, whose one-by-one exact
# scoring cost 4x a dense product), and its product is still ~1/6 of the dense one.
DEFAULT_K = 64


_CONTROLLER: ThreadpoolController | None = None


def one_blas_thread() -> Any:
    """A context that runs BLAS/LAPACK on one thread.

    Why: an eigendecomposition is hundreds of small BLAS calls, and with two OpenBLAS
    threads each call waits for both; when the other core is busy (agents, the fold) the
    wait is a scheduler time slice, and a 30 ms ``eigh`` takes one to three seconds.
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController  # only when BLAS runs (CLI start)

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


class BoundBasis:
    """An orthonormal basis whose first ``k`` directions carry most of the facts' energy.

    Why: the tighter ``p_a . p_b`` approximates ``a . b``, the fewer pairs survive; the
    principal directions of a sample of fact vectors minimise the residual norms.
    """

    def __init__(self, sample: np.ndarray, k: int = DEFAULT_K) -> None:
        dim = int(sample.shape[1])
        self.k = max(1, min(k, dim))
        x = np.asarray(sample, dtype=np.float32)
        if x.shape[0]:
            with one_blas_thread():
                _, vecs = np.linalg.eigh((x.T @ x).astype(np.float64))
            basis = vecs[:, ::-1][:, : self.k]
        else:
            basis = np.eye(dim)[:, : self.k]
        # re-orthonormalised in float64, then used in float32 (slack covers the rounding)
        with one_blas_thread():
            self.q = np.ascontiguousarray(np.linalg.qr(basis)[0], dtype=np.float32)

    @classmethod
    def fit(cls, mat: np.ndarray, k: int = DEFAULT_K, sample: int = 2048) -> BoundBasis:
        """A basis from evenly strided rows of ``mat`` (at most ``sample`` of them)."""
        step = max(1, len(mat) // max(1, sample))
        return cls(mat[::step], k)

    def augment(self, vecs: np.ndarray) -> np.ndarray:
        """Rows ``[p, r]`` (float32, width k+1) whose dot products bound the cosines."""
        x = np.asarray(vecs, dtype=np.float32)
        p = x @ self.q
        norm2 = np.einsum("ij,ij->i", x, x)
        sq = np.maximum(norm2 - np.einsum("ij,ij->i", p, p), 0.0) + RESIDUAL_SLACK * norm2
        return np.hstack([p, np.sqrt(sq)[:, None]])


def bound_pairs(
    left: np.ndarray,
    right: np.ndarray,
    floor: np.ndarray,
    raw: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of every pair whose bound ``left[i] . right[j]`` reaches ``floor[j] - MARGIN``.

    ``left``/``right`` come from ``BoundBasis.augment``; ``floor`` holds one threshold per
    column (above 2 for columns that never matter). The floors ride in the product as
    one more column (``[p, r, -1] . [p, r, cut]``), so a block needs one row maximum to
    skip the rows with no candidate. Pairs come out sorted by row, then column.

    ``raw`` (the unit rows ``left``/``right`` were augmented from) thins a block where
    the bound passes more than ``DENSE_SHARE`` of the pairs (a low floor, vectors the
    basis fits badly): the block's float32 product is taken too, and only pairs whose
    float32 cosine also reaches the cut are kept. Why: gathering and scoring that many
    pairs one by one costs several times the block product; the float32 cosine of unit
    rows is off by at most ``dim * 2^-24`` (< 3e-5 for dim 384), far inside ``MARGIN``,
    so no pair at or above its floor is dropped.
    """
    m, n = left.shape[0], right.shape[0]
    rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    cols: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    if not m or not n:
        return rows[0], cols[0]
    cut = (np.asarray(floor, dtype=np.float64) - MARGIN).astype(np.float32)
    lhs = np.hstack([left, np.full((m, 1), -1.0, dtype=np.float32)])
    rhs = np.hstack([right, cut[:, None]])
    blocks = [
        (lo, np.ascontiguousarray(rhs[lo : lo + _BLOCK_COLS].T)) for lo in range(0, n, _BLOCK_COLS)
    ]
    buf = np.empty((min(_BLOCK_ROWS, m), min(_BLOCK_COLS, n)), dtype=np.float32)
    top = np.empty(min(_BLOCK_ROWS, m), dtype=np.float32)
    dense = None if raw is None else np.empty_like(buf)
    for r0 in range(0, m, _BLOCK_ROWS):
        part = lhs[r0 : r0 + _BLOCK_ROWS]
        best = top[: part.shape[0]]
        for c0, rhs_t in blocks:
            over = buf[: part.shape[0], : rhs_t.shape[1]]
            np.matmul(part, rhs_t, out=over)  # bound - cut
            np.max(over, axis=1, out=best)
            hit = np.flatnonzero(best >= 0.0)
            if len(hit):
                width = rhs_t.shape[1]
                passing = over[hit] >= 0.0
                if (
                    raw is not None
                    and dense is not None
                    and (np.count_nonzero(passing) > DENSE_SHARE * passing.size)
                ):
                    exact = dense[: len(hit), :width]
                    rv = raw[1][c0 : c0 + width]
                    np.matmul(raw[0][hit + r0], rv.T, out=exact)
                    passing &= exact >= cut[c0 : c0 + width]
                flat = np.flatnonzero(passing)
                rows.append(hit[flat // width] + r0)
                cols.append(flat % width + c0)
    r, c = np.concatenate(rows), np.concatenate(cols)
    order = np.lexsort((c, r))
    return r[order], c[order]


def exact_cosines(
    left: np.ndarray, right: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Canonical float32 cosines of the pairs ``(left[rows[i]], right[cols[i]])``.

    Each float32 x float32 product is exact in float64 and the float64 sum's rounding
    is far below float32 resolution, so the result is the float32 nearest the true dot
    product (barring a tie within ~1e-16), whatever the batch or matrix shapes.
    """
    out = np.empty(len(rows), dtype=np.float32)
    step = 1 << 14
    for lo in range(0, len(rows), step):
        a = left[rows[lo : lo + step]].astype(np.float64)
        b = right[cols[lo : lo + step]].astype(np.float64)
        out[lo : lo + step] = np.einsum("ij,ij->i", a, b)
    return out
