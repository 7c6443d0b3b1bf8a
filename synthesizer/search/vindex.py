"""In-memory vector indexes for similarity search over facts.

One `VectorIndex` holds the vectors of one embedding space — an (embedder id,
dimension) namespace — as rows of a contiguous float32 matrix, with a parallel
array of per-row weights (strength * importance, say) so a search can rank by
`cosine * weight` in one pass of numpy. `VectorSpace` keeps one index per
namespace, so vectors of different embedders or dimensions never mix.

Design: exact (brute-force) search. At the sizes of a swarm's memory pool
(thousands to ~10^5 facts) `matrix @ query` plus `argpartition` is a few
milliseconds, exact, deterministic and dependency-free. Above that (a million
facts), recall's queries — and only they — take candidates from one-bit codes kept
as columns here (``quantindex``) and re-rank them exactly.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import NamedTuple

import numpy as np

from synthesizer.search.embed import check_vector
from synthesizer.search.threads import run_all
from synthesizer.search.topk import kth_largest

__all__ = ["Hit", "VectorIndex", "VectorSpace"]

_MIN_CAPACITY = 16
_UNIT_TOLERANCE = 1e-6  # |norm^2 - 1| below this: stored as given (float32 rounding)
_SEARCH_MANY_CHUNK = 1 << 22  # max score-matrix cells per block of search_many
GATHER_PART = 1024  # rows per task of ``cosines_at`` (a few per recall at 1M facts)


class Hit(NamedTuple):
    """One search result: item id, raw cosine, ranking score (cosine * weight if weighted)."""

    id: str
    cosine: float
    score: float


class VectorIndex:
    """Exact cosine search over the rows of one (embedder id, dimension) namespace.

    Why: the pool needs "top-k facts by cosine * strength * importance" and
    "nearest fact to this new memory" fast, deterministically (ties by id), with
    O(1) insert / remove / re-weight as facts are created, evicted and decay.
    Rows are L2-normalised on insert, so a dot product is a cosine; a zero
    vector is kept as zeros (cosine 0 with everything). Row order is an internal
    detail that changes on removal (swap-with-last); masks from `mask_for` are
    valid until the next `add`/`remove`.
    """

    def __init__(self, embedder_id: str, dim: int, capacity: int = 1024) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        if not embedder_id:
            raise ValueError("embedder_id must be a non-empty string")
        self._embedder_id = embedder_id
        self._dim = dim
        cap = max(int(capacity), _MIN_CAPACITY)
        self._mat = np.empty((cap, dim), dtype=np.float32)  # rows >= len are never read
        self._weights = np.ones(cap, dtype=np.float64)
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        # named per-row columns (ranking fields), moved with their rows
        self._cols: dict[str, np.ndarray] = {}
        self._fill: dict[str, object] = {}
        self._of_vector: set[str] = set()  # columns derived from the vector: reset on replace
        self.version = 0  # bumped whenever rows before the end change (remove, replace)
        # rowwise(): a derived matrix of the first `_derived_n` rows, for `_derived_key`
        self._derived_key: object = None
        self._derived = np.zeros((0, 0), dtype=np.float32)
        self._derived_n = 0

    # -- introspection -----------------------------------------------------------

    @property
    def embedder_id(self) -> str:
        """Embedder id of this namespace."""
        return self._embedder_id

    @property
    def dim(self) -> int:
        """Vector width of this namespace."""
        return self._dim

    @property
    def capacity(self) -> int:
        """Rows allocated (grows by doubling)."""
        return int(self._mat.shape[0])

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._ids))

    def __repr__(self) -> str:
        return f"VectorIndex({self._embedder_id!r}, dim={self._dim}, rows={len(self._ids)})"

    def ids(self) -> list[str]:
        """Item ids in current row order."""
        return list(self._ids)

    def matrix(self) -> tuple[list[str], np.ndarray]:
        """(ids, live rows) in row order — a read-only view for batched scoring.

        Why: the synthesizer scores a whole batch of new memories against every fact
        with one matrix product instead of one search per memory.
        """
        view = self._mat[: len(self._ids)]
        view.flags.writeable = False
        return list(self._ids), view

    def row(self, item_id: str) -> int | None:
        """Current row of `item_id` (valid until the next add/remove), or None."""
        return self._rows.get(item_id)

    def add_column(
        self, name: str, dtype: type | np.dtype, fill: object, *, derived: bool = False
    ) -> None:
        """Declare a per-row column (idempotent); rows get ``fill`` until set.

        Why: ranking fields (strength, status, tier ...) live beside the vectors so a
        search filters and weighs rows with numpy alone; the index keeps them aligned
        as rows are added, moved and removed. A ``derived`` column (computed from the
        vector, like a code) is also reset to ``fill`` when a row's vector is replaced.
        """
        if derived:
            self._of_vector.add(name)
        if name in self._cols:
            return
        col = np.empty(self._mat.shape[0], dtype=dtype)
        col[:] = fill
        self._cols[name] = col
        self._fill[name] = fill

    def adopt_column(self, name: str, arr: np.ndarray) -> None:
        """Use ``arr`` (one value per allocated row, e.g. a copy-on-write memory map of a
        saved column) as the declared column ``name``, without copying it."""
        col = self._cols[name]
        if arr.shape != (self._mat.shape[0],) or arr.dtype != col.dtype:
            raise ValueError(f"column {name!r}: {arr.dtype} {arr.shape} does not fit {self!r}")
        self._cols[name] = arr

    def column(self, name: str) -> np.ndarray:
        """Writable view of a column over the live rows (valid until the next add/remove)."""
        return self._cols[name][: len(self._ids)]

    def weights(self) -> np.ndarray:
        """Writable view of the ranking weights of the live rows."""
        return self._weights[: len(self._ids)]

    def cosines(self, query: object) -> np.ndarray:
        """Cosine of a query with every live row (one matrix-vector product)."""
        q = self._query(query)
        return self._mat[: len(self._ids)] @ q

    def cosines_at(self, query: object, rows: np.ndarray) -> np.ndarray:
        """Cosine of a query with the live rows ``rows``: a gather, then a product, in
        parts of ``GATHER_PART`` rows on the scan threads (``threads.run_all``). Why: at a
        million rows the candidates' rows are scattered over 1.5 GB, and the gather
        waits on memory row by row: two cores halve it. Each row's cosine is its own
        dot product, the same however the rows are cut (tested)."""
        q = self._query(query)
        mat = self._mat.view(np.ndarray)  # (no memmap wrapper)
        n = rows.shape[0]
        if n <= GATHER_PART:
            return mat.take(rows, axis=0) @ q
        parts = [
            partial(_gathered, mat, rows[a : a + GATHER_PART], q) for a in range(0, n, GATHER_PART)
        ]
        return np.concatenate(run_all(parts))

    def top(self, score: np.ndarray, k: int, rows: np.ndarray | None = None) -> list[int]:
        """Rows of the top-``k`` scores (descending, ties by id); ``score`` covers the
        live rows, or the rows ``rows`` when given."""
        _check_k(k)
        if rows is None:
            return self._top_rows(score, k).tolist()
        picked = self._top_rows(score, k, row_of=rows)
        return rows[picked].tolist()

    def id_at(self, row: int) -> str:
        """Item id of a live row."""
        return self._ids[row]

    def attach(
        self,
        ids: list[str],
        mat: np.ndarray,
        weights: np.ndarray,
        columns: dict[str, np.ndarray],
    ) -> None:
        """Take over saved rows: ``mat`` (capacity rows, the first ``len(ids)`` live, already
        normalised — a copy-on-write memory map, say), weights and columns of the live rows.

        Why: a reader opening a checkpoint maps its vectors instead of re-embedding, and
        processes mapping one file share its pages until they write a row.
        """
        n = len(ids)
        if mat.ndim != 2 or mat.shape[1] != self._dim or mat.shape[0] < max(n, 1):
            raise ValueError(f"saved matrix of shape {mat.shape} does not fit {self!r}")
        cap = int(mat.shape[0])
        self._ids = list(ids)
        self._rows = dict(zip(self._ids, range(n), strict=True))
        self._mat = mat
        self._weights = np.ones(cap, dtype=np.float64)
        self._weights[:n] = weights
        for name, col in list(self._cols.items()):
            full = np.empty(cap, dtype=col.dtype)
            full[:] = self._fill[name]
            if name in columns:
                full[:n] = columns[name]
            self._cols[name] = full
        self._stale(0)

    def get(self, item_id: str) -> np.ndarray | None:
        """Copy of the stored (normalised) vector of `item_id`, or None."""
        row = self._rows.get(item_id)
        return None if row is None else self._mat[row].copy()

    def weight(self, item_id: str) -> float | None:
        """Current weight of `item_id`, or None."""
        row = self._rows.get(item_id)
        return None if row is None else float(self._weights[row])

    # -- mutation ------------------------------------------------------------------

    def add(self, item_id: str, vec: object, weight: float = 1.0) -> None:
        """Insert or replace `item_id` with `vec` (normalised here) and `weight`.

        Raises ValueError (one line) for a vector of the wrong dimension or with
        non-finite values, and for a non-finite weight.
        """
        arr = np.asarray(vec, dtype=np.float32)
        if arr.shape != (self._dim,):
            self._checked(arr)  # raises the one-line dimension error
        wide = arr.astype(np.float64)  # float32 input can't overflow a float64 norm
        sq = float(np.dot(wide, wide))
        if not math.isfinite(sq):  # NaN or infinity inside
            self._checked(arr)
        w = float(weight)
        if not math.isfinite(w):
            raise ValueError(f"weight must be finite, got {weight!r}")
        row = self._rows.get(item_id)
        if row is None:
            row = len(self._ids)
            if row == self._mat.shape[0]:
                self._grow(row + 1)
            self._ids.append(item_id)
            self._rows[item_id] = row
            for name, col in self._cols.items():
                col[row] = self._fill[name]
        else:
            self._stale(row)
            for name in self._of_vector:
                self._cols[name][row] = self._fill[name]
        if sq == 0.0 or abs(sq - 1.0) <= _UNIT_TOLERANCE:  # zero, or already unit (common)
            self._mat[row] = arr
        else:
            np.multiply(arr, 1.0 / math.sqrt(sq), out=self._mat[row], casting="unsafe")
        self._weights[row] = w

    def add_many(
        self,
        item_ids: Sequence[str],
        vecs: np.ndarray,
        weights: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        """Insert or replace many rows at once (vectorised validation and copy)."""
        mat = np.asarray(vecs, dtype=np.float32)
        if mat.ndim != 2 or mat.shape[1] != self._dim:
            raise ValueError(
                f"vectors have shape {mat.shape}, index {self._embedder_id!r} "
                f"expects [n, {self._dim}]"
            )
        if mat.shape[0] != len(item_ids):
            raise ValueError(f"{len(item_ids)} ids for {mat.shape[0]} vectors")
        if len(set(item_ids)) != len(item_ids):
            raise ValueError("add_many() ids must be distinct")
        if not np.isfinite(mat).all():
            raise ValueError("vectors contain non-finite values (NaN or infinity)")
        if weights is None:
            w = np.ones(mat.shape[0], dtype=np.float64)
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != (mat.shape[0],):
                raise ValueError(
                    f"{w.shape[0] if w.ndim else 1} weights for {mat.shape[0]} vectors"
                )
            if not np.isfinite(w).all():
                raise ValueError("weights contain non-finite values (NaN or infinity)")
        n = len(self._ids)
        get = self._rows.get
        found = [get(i) for i in item_ids]
        new = [i for i, row in zip(item_ids, found, strict=True) if row is None]
        if len(new) != len(found):
            self._stale(min(row for row in found if row is not None))
        if n + len(new) > self._mat.shape[0]:
            self._grow(n + len(new))
        for item_id in new:
            self._rows[item_id] = len(self._ids)
            self._ids.append(item_id)
        for name, col in self._cols.items():
            col[n : n + len(new)] = self._fill[name]
        norms = np.sqrt(np.einsum("ij,ij->i", mat, mat, dtype=np.float64))
        norms[norms == 0.0] = 1.0
        unit = mat * (1.0 / norms).astype(np.float32)[:, None]
        if len(new) == len(found):  # all new: one contiguous block
            self._mat[n : n + len(new)] = unit
            self._weights[n : n + len(new)] = w
        else:
            rows = np.fromiter(map(self._rows.__getitem__, item_ids), np.int64, len(item_ids))
            for name in self._of_vector:
                self._cols[name][rows] = self._fill[name]
            self._mat[rows] = unit
            self._weights[rows] = w

    def remove(self, item_id: str) -> bool:
        """Remove `item_id` in O(1) (the last row moves into its slot); False if absent."""
        row = self._rows.pop(item_id, None)
        if row is None:
            return False
        last = len(self._ids) - 1
        self._stale(row)
        if row != last:
            moved = self._ids[last]
            self._mat[row] = self._mat[last]
            self._weights[row] = self._weights[last]
            for col in self._cols.values():
                col[row] = col[last]
            self._ids[row] = moved
            self._rows[moved] = row
        self._ids.pop()
        return True

    def clear(self) -> None:
        """Remove every row (keeps the allocation)."""
        self._ids.clear()
        self._rows.clear()
        self._stale(0)

    def rowwise(self, key: object, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``fn`` applied to the live rows (read-only), kept up to date between calls.

        ``fn`` must map each vector to one output row independently of the others (a
        projection, say). Why: a derived matrix of a large index is needed once per
        synthesis batch while only the batch's rows changed; rows appended since the
        last call are mapped, rows replaced or moved since are mapped again (in place: a
        view is valid until the next call). ``key`` stands for ``fn`` (compared by
        identity): a new key starts from scratch.
        """
        n = len(self._ids)
        if key is not self._derived_key:
            self._derived_key, self._derived_n = key, 0
        done = self._derived_n
        if done < n or not done:
            fresh = np.asarray(fn(self._mat[done:n]))
            # spare rows: a batch's appends write only their own rows (a copy of the whole
            # derived matrix per batch was O(facts): 3.5 ms a batch at 50k facts)
            if not done or len(self._derived) < n:
                grown = np.empty((n + n // 4 + 64, *fresh.shape[1:]), dtype=fresh.dtype)
                if done:
                    grown[:done] = self._derived[:done]
                self._derived = grown
            self._derived[done:n] = fresh
            self._derived_n = n
        view = self._derived[:n]
        view.flags.writeable = False
        return view

    def set_weight(self, item_id: str, weight: float) -> None:
        """Set the ranking weight of `item_id` in O(1); KeyError if absent."""
        row = self._rows.get(item_id)
        if row is None:
            raise KeyError(item_id)
        self._weights[row] = _checked_weight(weight)

    def set_weights(self, weights: dict[str, float] | Iterable[tuple[str, float]]) -> None:
        """Set many weights at once: `{id: weight}` or (id, weight) pairs; KeyError if unknown."""
        pairs = list(weights.items() if isinstance(weights, dict) else weights)
        if not pairs:
            return
        rows = np.fromiter((self._rows[i] for i, _ in pairs), dtype=np.int64, count=len(pairs))
        w = np.fromiter((float(x) for _, x in pairs), dtype=np.float64, count=len(pairs))
        if not np.isfinite(w).all():
            raise ValueError("weights contain non-finite values (NaN or infinity)")
        self._weights[rows] = w

    def scale_weights(self, factor: float) -> None:
        """Multiply every weight by `factor` (e.g. one decay step for all rows)."""
        f = _checked_weight(factor)
        self._weights[: len(self._ids)] *= f

    # -- search --------------------------------------------------------------------

    def mask_for(self, item_ids: Iterable[str]) -> np.ndarray:
        """Boolean mask over the live rows, True for the given ids (unknown ids ignored).

        Valid for `search(..., mask=...)` until the next add/remove.
        """
        mask = np.zeros(len(self._ids), dtype=bool)
        rows = [r for r in map(self._rows.get, item_ids) if r is not None]
        if rows:
            mask[rows] = True
        return mask

    def search(
        self,
        query: object,
        k: int = 10,
        *,
        weighted: bool = True,
        mask: np.ndarray | None = None,
        min_score: float | None = None,
    ) -> list[Hit]:
        """Top-`k` rows by score, descending, ties by id ascending.

        score = cosine * weight when `weighted`, else the cosine. `mask` (bool,
        one per live row, see `mask_for`) keeps only the True rows; `min_score`
        drops rows scoring below it. A query of another dimension raises
        ValueError; an empty index returns [].
        """
        _check_k(k)
        q = self._query(query)
        n = len(self._ids)
        if n == 0:
            return []
        cos = self._mat[:n] @ q
        score = cos * self._weights[:n] if weighted else cos
        keep = self._keep(score, mask, min_score)
        if keep is None:
            top = self._top_rows(score, k)
        else:  # rank the surviving rows only; ids still come from the index rows
            top = keep[self._top_rows(score[keep], k, row_of=keep)]
        return [Hit(self._ids[r], float(cos[r]), float(score[r])) for r in top.tolist()]

    def best(self, query: object, *, mask: np.ndarray | None = None) -> tuple[str, float] | None:
        """Nearest row by raw cosine as (id, cosine) — ties by id — or None if empty.

        Why: near-duplicate detection compares a new memory with every live fact
        regardless of strength.
        """
        hits = self.search(query, 1, weighted=False, mask=mask)
        return (hits[0].id, hits[0].cosine) if hits else None

    def search_many(
        self,
        queries: object,
        k: int = 10,
        *,
        weighted: bool = True,
        mask: np.ndarray | None = None,
        min_score: float | None = None,
    ) -> list[list[Hit]]:
        """`search` for each row of `queries` [m, dim], sharing one matrix product per block."""
        _check_k(k)
        qs = np.asarray(queries, dtype=np.float32)
        if qs.ndim != 2 or qs.shape[1] != self._dim:
            raise ValueError(
                f"queries have shape {qs.shape}, index {self._embedder_id!r} "
                f"expects [m, {self._dim}]"
            )
        if not np.isfinite(qs).all():
            raise ValueError("queries contain non-finite values (NaN or infinity)")
        n = len(self._ids)
        m = qs.shape[0]
        if n == 0:
            return [[] for _ in range(m)]
        keep_mask = self._mask_rows(mask)
        live = self._mat[:n] if keep_mask is None else self._mat[:n][keep_mask]
        live_w = self._weights[:n] if keep_mask is None else self._weights[:n][keep_mask]
        row_of = None if keep_mask is None else np.flatnonzero(keep_mask)
        out: list[list[Hit]] = []
        block = max(1, _SEARCH_MANY_CHUNK // max(live.shape[0], 1))
        for start in range(0, m, block):
            cos_block = qs[start : start + block] @ live.T
            for cos in cos_block:
                score = cos * live_w if weighted else cos
                if min_score is not None:
                    sel = np.flatnonzero(score >= min_score)
                    top = sel[self._top_rows(score[sel], k, row_of=_take(row_of, sel))]
                else:
                    top = self._top_rows(score, k, row_of=row_of)
                rows = top if row_of is None else row_of[top]
                out.append(
                    [
                        Hit(self._ids[r], float(cos[t]), float(score[t]))
                        for r, t in zip(rows.tolist(), top.tolist(), strict=True)
                    ]
                )
        return out

    # -- internals -----------------------------------------------------------------

    def _stale(self, row: int) -> None:
        """Rows from ``row`` on changed: ``rowwise`` must map them again."""
        self._derived_n = min(self._derived_n, row)
        self.version += 1

    def _checked(self, vec: object) -> np.ndarray:
        """Validate one vector for this namespace, naming the index in the error."""
        try:
            return check_vector(vec, self._dim)
        except ValueError as exc:
            raise ValueError(f"index {self._embedder_id!r}: {exc}") from None

    def _query(self, query: object) -> np.ndarray:
        """Validated, normalised float32 query."""
        q = self._checked(query)
        wide = q.astype(np.float64)
        norm = math.sqrt(float(np.dot(wide, wide)))
        return (wide / norm).astype(np.float32) if norm > 0.0 else q

    def _grow(self, needed: int) -> None:
        """Double the capacity until `needed` rows fit (amortised O(1) per add)."""
        cap = self._mat.shape[0]
        while cap < needed:
            cap *= 2
        n = len(self._ids)
        mat = np.empty((cap, self._dim), dtype=np.float32)  # rows >= len are never read
        mat[:n] = self._mat[:n]
        weights = np.ones(cap, dtype=np.float64)
        weights[:n] = self._weights[:n]
        self._mat, self._weights = mat, weights
        for name, col in list(self._cols.items()):
            grown = np.empty(cap, dtype=col.dtype)
            grown[:n] = col[:n]
            self._cols[name] = grown

    def _mask_rows(self, mask: np.ndarray | None) -> np.ndarray | None:
        """Validate a row mask against the live rows."""
        if mask is None:
            return None
        arr = np.asarray(mask)
        if arr.dtype != np.bool_ or arr.shape != (len(self._ids),):
            raise ValueError(
                f"mask must be a bool array of shape ({len(self._ids)},), "
                f"got {arr.dtype} {arr.shape}; build it with mask_for()"
            )
        return arr

    def _keep(
        self, score: np.ndarray, mask: np.ndarray | None, min_score: float | None
    ) -> np.ndarray | None:
        """Row numbers passing the mask and min_score, or None when nothing filters."""
        rows_mask = self._mask_rows(mask)
        if min_score is not None:
            passing = score >= min_score
            rows_mask = passing if rows_mask is None else rows_mask & passing
        return None if rows_mask is None else np.flatnonzero(rows_mask)

    def _top_rows(self, score: np.ndarray, k: int, row_of: np.ndarray | None = None) -> np.ndarray:
        """Positions of the top-k of `score`: descending, ties by id ascending.

        `row_of` maps positions in `score` to index rows (for ids) when `score`
        covers a subset of the rows.
        """
        n = score.shape[0]
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if k < n:
            threshold = kth_largest(score, k)  # (argpartition crawls over runs of ties)
            above = np.flatnonzero(score > threshold)
            tied = np.flatnonzero(score == threshold)  # every row at the cut-off
            cand = np.concatenate([above, tied])
        else:
            cand = np.arange(n)
        ids = self._ids

        def key(pos: int) -> tuple[float, str]:
            row = pos if row_of is None else int(row_of[pos])
            return (-float(score[pos]), ids[row])

        if cand.shape[0] > 4 * k + 64:
            chosen = heapq.nsmallest(k, cand.tolist(), key=key)
        else:
            chosen = sorted(cand.tolist(), key=key)[:k]
        return np.asarray(chosen, dtype=np.int64)


def _gathered(mat: np.ndarray, rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The cosines of ``q`` with the rows ``rows`` of ``mat`` (one part of ``cosines_at``)."""
    return mat.take(rows, axis=0) @ q


def _take(row_of: np.ndarray | None, sel: np.ndarray) -> np.ndarray:
    """Compose a subset selection with an optional row mapping."""
    return sel if row_of is None else row_of[sel]


def _check_k(k: int) -> None:
    """Reject a non-positive or non-integer result count."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _checked_weight(weight: float) -> float:
    """A finite float weight, or ValueError."""
    w = float(weight)
    if not math.isfinite(w):
        raise ValueError(f"weight must be finite, got {weight!r}")
    return w


class VectorSpace:
    """Registry of vector indexes, one per (embedder id, dimension) namespace.

    Why: agents may bring vectors from their own embedders; a cosine between
    vectors of different models (or widths) is meaningless, so each namespace
    gets its own index and a search only ever sees its own.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._capacity = capacity
        self._indexes: dict[tuple[str, int], VectorIndex] = {}

    def index(self, embedder_id: str, dim: int) -> VectorIndex:
        """The index of namespace (embedder_id, dim), created empty on first use."""
        key = (embedder_id, dim)
        found = self._indexes.get(key)
        if found is None:
            found = VectorIndex(embedder_id, dim, self._capacity)
            self._indexes[key] = found
        return found

    def get(self, embedder_id: str, dim: int) -> VectorIndex | None:
        """The index of namespace (embedder_id, dim) if it exists."""
        return self._indexes.get((embedder_id, dim))

    def drop(self, embedder_id: str, dim: int) -> None:
        """Forget namespace (embedder_id, dim) and its rows (a side file that failed its
        check: factindex.py rebuilds them)."""
        self._indexes.pop((embedder_id, dim), None)

    def namespaces(self) -> list[tuple[str, int]]:
        """Existing namespaces, sorted."""
        return sorted(self._indexes)

    def __iter__(self) -> Iterator[VectorIndex]:
        return iter([self._indexes[key] for key in sorted(self._indexes)])

    def __len__(self) -> int:
        return len(self._indexes)

    def add(self, embedder_id: str, item_id: str, vec: object, weight: float = 1.0) -> VectorIndex:
        """Add `vec` to the namespace of (embedder_id, len(vec)); returns that index."""
        arr = np.asarray(vec, dtype=np.float32)
        if arr.ndim != 1 or arr.shape[0] < 1:
            raise ValueError(f"vector must be 1-D and non-empty, got shape {arr.shape}")
        index = self.index(embedder_id, int(arr.shape[0]))
        index.add(item_id, arr, weight)
        return index

    def remove(self, item_id: str) -> bool:
        """Remove `item_id` from every namespace; True if it was anywhere."""
        removed = False
        for index in self._indexes.values():
            removed = index.remove(item_id) or removed
        return removed

    def set_weight(self, item_id: str, weight: float) -> None:
        """Set `item_id`'s weight in every namespace that holds it."""
        for index in self._indexes.values():
            if item_id in index:
                index.set_weight(item_id, weight)

    def search(
        self,
        embedder_id: str,
        query: object,
        k: int = 10,
        *,
        weighted: bool = True,
        mask: np.ndarray | None = None,
        min_score: float | None = None,
    ) -> list[Hit]:
        """Search the namespace (embedder_id, len(query)); [] if it does not exist."""
        _check_k(k)
        arr = np.asarray(query, dtype=np.float32)
        if arr.ndim != 1:
            raise ValueError(f"query must be 1-D, got shape {arr.shape}")
        index = self._indexes.get((embedder_id, int(arr.shape[0])))
        if index is None:
            return []
        return index.search(arr, k, weighted=weighted, mask=mask, min_score=min_score)
