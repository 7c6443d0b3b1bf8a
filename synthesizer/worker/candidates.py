"""Candidate generation for the scorer: which memory x fact pairs are scored exactly.

The boundary the decision rule relies on: ``bound_pairs`` returns a SUPERSET of the pairs
whose exact cosine reaches their column's floor (see ``prune`` for the bound and its
slack); every pair is then scored exactly and filtered against the same floors, so how
candidates are found never changes a decision, only what it costs.

What a batch pays here, apart from the bound's product itself, is kept independent of the
number of live facts where it can be:

* ``scoring_masks``: which live rows are claims and which are short/long-term facts,
  from the index's ``tier`` column (kept current by ``FactIndex.prepare``, O(rows changed))
  and the state's ``subjects`` (claims only), instead of a Python pass over every fact
  (two of them per batch: ~30 ms at 50k facts, most of a small batch's time);
* ``bound_pairs``: the bound product without copying the whole augmented fact matrix
  into a widened, transposed block list per call (another O(facts) copy per batch).
"""

from __future__ import annotations

import functools

import numpy as np

from synthesizer.search.factindex import TIER_CODES, FactIndex
from synthesizer.search.prune import DENSE_SHARE, MARGIN, exact_cosines
from synthesizer.state import SwarmState
from synthesizer.state.facts import LONG_TERM, SHORT_TERM
from synthesizer.worker import scan

_BLOCK_ROWS, _BLOCK_COLS = 256, 1024  # as prune's: the block stays in cache
_FACTS_FIRST_BELOW = 64
"""Row blocks of fewer memories take each product facts-first (``_product``)."""
_CELLS = _BLOCK_ROWS * _BLOCK_COLS  # the reused buffer (1 MB of float32)
_RETRO_CODES = (TIER_CODES[SHORT_TERM], TIER_CODES[LONG_TERM])


def scoring_masks(index: FactIndex, state: SwarmState) -> tuple[np.ndarray, np.ndarray]:
    """(is_claim, is_retro) over the index's live rows: a claim (subject set) and a
    short- or long-term fact. Equal to masks built from every fact's ``subject`` and
    ``tier`` (tests/test_candidates.py), at O(claims + rows changed) per batch."""
    if not isinstance(state, SwarmState):  # a stand-in (tests): facts with subject, tier
        return reference_masks(index, state)
    index.prepare(state)
    idx = index.default
    is_claim = idx.mask_for(fid for fids in state.subjects.values() for fid in fids)
    tier = idx.column("tier")
    is_retro = (tier == _RETRO_CODES[0]) | (tier == _RETRO_CODES[1])
    return is_claim, is_retro


def reference_masks(index: FactIndex, state: SwarmState) -> tuple[np.ndarray, np.ndarray]:
    """``scoring_masks`` by a pass over every fact (the former per-batch computation)."""
    facts = state.facts.values()
    is_claim = index.default.mask_for(f.id for f in facts if f.subject is not None)
    is_retro = index.default.mask_for(f.id for f in facts if f.tier in (SHORT_TERM, LONG_TERM))
    return is_claim, is_retro


def bound_pairs(
    left: np.ndarray,
    right: np.ndarray,
    floor: np.ndarray,
    raw: tuple[np.ndarray, np.ndarray] | None = None,
    rows_floor: tuple[np.ndarray, np.ndarray] | None = None,
    threads: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols), sorted, of every pair whose bound ``left[i] . right[j]`` reaches
    ``floor[j] - MARGIN``: ``prune.bound_pairs``'s contract, without its per-call copy of
    ``right`` (widened by the cut column and transposed block by block).

    ``rows_floor`` = (``row``, ``cap``) makes the floor of a pair
    ``min(max(floor[j], row[i]), cap[j])`` (``pair_floors``): a memory's own floor
    (``topk.row_floors``), capped per column (short/long-term facts keep the retro one).

    The bound is the float32 product minus the cut (prune's folds the cut into the
    product): the two differ by float32 rounding, far inside ``MARGIN``, so both keep
    every pair whose exact cosine reaches its floor. ``raw`` thins dense blocks by their
    float32 cosines, as there.

    Two costs kept in check (the result is the same superset contract either way):

    * a batch of a few memories (the steady state under load) takes column blocks as
      wide as the reused buffer allows (``_CELLS`` cells), not 1,024: at 50k facts a
      batch of 15 made ~50 blocks of a dozen numpy calls each;
    * where the bound does not prune (a low floor: at the contest floor 0.55 the k = 64
      bound on hashing-embedder facts passes ~99.7 % of the pairs), every block would pay
      the bound's product AND the dense float32 product that thins it. Once nearly all
      rows of a row block were thinned in one block, the rest of that row block takes the
      float32 product directly (``raw_direct``): pairs whose float32 cosine reaches the cut, a
      superset of those whose exact cosine reaches the floor (its error, < 2.5e-4 at dim
      <= 4096, is inside ``MARGIN``).

    The scan runs in tiles on ``threads`` pool threads (default ``scan.scan_threads()``;
    see ``scan``): the same superset contract, every core's memory bandwidth.
    """
    m, n = left.shape[0], right.shape[0]
    if not m or not n:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty.copy()
    cut = (np.asarray(floor, dtype=np.float64) - MARGIN).astype(np.float32)
    row_cut = cap_cut = None
    if rows_floor is not None:
        row_cut = (np.asarray(rows_floor[0], dtype=np.float64) - MARGIN).astype(np.float32)
        cap_cut = (np.asarray(rows_floor[1], dtype=np.float64) - MARGIN).astype(np.float32)
    width = scan.scan_threads() if threads is None else max(1, threads)
    tiles = [
        functools.partial(
            _tile, left, right, cut, raw, row_cut, cap_cut, r0, min(m, r0 + _BLOCK_ROWS), c0, c1
        )
        for r0 in range(0, m, _BLOCK_ROWS)
        for c0, c1 in scan.column_ranges(n, width)
    ]
    found = scan.run_tiles(tiles, width)
    r = np.concatenate([t[0] for t in found])
    c = np.concatenate([t[1] for t in found])
    order = np.lexsort((c, r))
    return r[order], c[order]


def _tile(
    left: np.ndarray,
    right: np.ndarray,
    cut: np.ndarray,
    raw: tuple[np.ndarray, np.ndarray] | None,
    row_cut: np.ndarray | None,
    cap_cut: np.ndarray | None,
    r0: int,
    r1: int,
    lo: int,
    hi: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``bound_pairs`` over memory rows ``r0:r1`` and fact columns ``lo:hi`` (one tile, with
    buffers of its own): (rows, cols) in any order."""
    rows: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    cols: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
    part = left[r0:r1]
    height = part.shape[0]
    step = max(_BLOCK_COLS, _CELLS // height)
    facts_first = height < _FACTS_FIRST_BELOW
    shape = (min(step, hi - lo), height)
    buf = np.empty(shape if facts_first else shape[::-1], dtype=np.float32)
    dense = None if raw is None else np.empty_like(buf)
    direct = False  # this row block takes the float32 product, not the bound
    # the first block narrow: it tells whether the bound prunes before a wide one pays
    starts = [lo, *range(min(lo + _BLOCK_COLS, hi), hi, step)]
    for c0, c1 in zip(starts, [*starts[1:], hi], strict=True):
        width = c1 - c0
        if direct and raw is not None:
            over = _product(raw[0][r0:r1], raw[1][c0:c1], buf, facts_first)
        else:
            over = _product(part, right[c0:c1], buf, facts_first)
        if row_cut is None or cap_cut is None:
            block_cut = cut[c0:c1][None, :]
        else:
            block_cut = np.minimum(np.maximum(cut[c0:c1], row_cut[r0:r1, None]), cap_cut[c0:c1])
        over -= block_cut  # bound (or float32 cosine) - cut
        hit = np.flatnonzero(over.max(axis=1) >= 0.0)
        if not len(hit):
            continue
        passing = over[hit] >= 0.0
        if (
            not direct
            and raw is not None
            and dense is not None
            and np.count_nonzero(passing) > DENSE_SHARE * passing.size
        ):
            exact = _product(raw[0][hit + r0], raw[1][c0:c1], dense, facts_first)
            passing &= exact >= (block_cut if block_cut.shape[0] == 1 else block_cut[hit])
            direct = raw_direct(len(hit), height)
        flat = np.flatnonzero(passing)
        rows.append(hit[flat // width] + r0)
        cols.append(flat % width + c0)
    return np.concatenate(rows), np.concatenate(cols)


def _product(rows: np.ndarray, facts: np.ndarray, buf: np.ndarray, facts_first: bool) -> np.ndarray:
    """``rows @ facts.T`` (float32) into ``buf``: a (len(rows), len(facts)) view of it.

    Why ``facts_first``: for a few memories (the steady state under load) OpenBLAS reads
    the fact block 1.5-4 times faster as ``facts @ rows.T`` (one tall product) than as
    ``rows @ facts.T`` (8 x 384 @ 384 x 50,000: ~23 ms against ~15 ms of one core; the
    k = 65 bound ~4.4 against ~1.1 ms). The values may differ in float32 rounding only,
    far inside ``MARGIN``: the superset contract holds either way."""
    m, n = len(rows), len(facts)
    if facts_first:
        if m != buf.shape[1]:  # some of the block's rows (the thinning): a product of its own
            return np.matmul(facts, rows.T).T
        out = buf[:n]
        np.matmul(facts, rows.T, out=out)
        return out.T
    out = buf[:m, :n]
    np.matmul(rows, facts.T, out=out)
    return out


def pair_floors(
    floor: np.ndarray,
    rows_floor: tuple[np.ndarray, np.ndarray] | None,
    rows: np.ndarray,
    cols: np.ndarray,
) -> np.ndarray:
    """The floor of each pair (``rows[i]``, ``cols[i]``), as ``bound_pairs`` applies it."""
    col = np.asarray(floor, dtype=np.float64)[cols]
    if rows_floor is None:
        return col
    row, cap = rows_floor
    return np.minimum(np.maximum(col, np.asarray(row, dtype=np.float64)[rows]), cap[cols])


def raw_direct(thinned: int, rows: int) -> bool:
    """Whether a row block whose bound let ``thinned`` of its ``rows`` rows into the dense
    thinning should skip the bound for its remaining columns: when nearly all did (7 in
    8). The thinning pays the float32 product for the rows let in, so bound-then-thin
    costs about ``k + 1 + dim * thinned / rows`` per pair against ``dim`` directly: at
    k = 64, dim = 384 the direct product is cheaper from ~83 % of the rows on."""
    return 8 * thinned >= 7 * rows


VERIFY_SLACK = 1e-4
"""Float32 prefilter margin: a float32 dot of unit rows (dim <= 4096) is within
``dim * 2^-24`` (< 2.5e-4 at 4096, 2.3e-5 at 384) of the exact one."""


def verified(
    left: np.ndarray,
    right: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    floor: np.ndarray,
    pair_floor: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, canonical cosines) of the candidate pairs whose cosine may reach their
    column's floor (or ``pair_floor[i]``, one per pair, when given); every pair whose
    exact cosine reaches it is among them.

    Why: most pairs the bound lets through are far below their floor, and the canonical
    cosine (``prune.exact_cosines``: both rows gathered and widened to float64) costs
    three copies of each row per pair. A float32 dot of the gathered rows first drops the
    pairs more than ``VERIFY_SLACK`` below the floor (its error is far smaller), so only
    the pairs that can matter get the canonical value. The values returned are exactly
    ``exact_cosines``'s.
    """
    if len(left) and left.shape[1] > 4096:  # the slack's argument needs dim <= 4096
        return rows, cols, exact_cosines(left, right, rows, cols)
    if pair_floor is None:
        pair_floor = np.asarray(floor, dtype=np.float64)[cols]
    keep = approx_cosines(left, right, rows, cols) >= pair_floor - VERIFY_SLACK
    rows, cols = rows[keep], cols[keep]
    return rows, cols, exact_cosines(left, right, rows, cols)


def approx_cosines(
    left: np.ndarray, right: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> np.ndarray:
    """Float32 dots of the pairs (within ``VERIFY_SLACK`` of the exact ones at dim <= 4096)."""
    out = np.empty(len(rows), dtype=np.float32)
    step = 1 << 14
    for lo in range(0, len(rows), step):
        r, c = rows[lo : lo + step], cols[lo : lo + step]
        out[lo : lo + step] = np.einsum("ij,ij->i", left[r], right[c])
    return out


__all__ = [
    "VERIFY_SLACK",
    "approx_cosines",
    "bound_pairs",
    "pair_floors",
    "raw_direct",
    "reference_masks",
    "scoring_masks",
    "verified",
]
