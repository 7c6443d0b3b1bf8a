"""Approximate candidates for recall on large indexes: one-bit codes, then exact re-rank.

At a million facts an exact scan reads 1.5 GB of float32 rows per query. Above
``APPROX_MIN_ROWS`` rows a recall first ranks every row by a cheap estimate and scores
only the best ``candidate_count`` rows exactly (float32 cosine × weight, the exact path's
own arithmetic), so the answer is the exact one whenever the true top rows are among
the candidates (recall@10 is measured against exact in tests and benchmarks).

The estimate is SimHash: each vector is rotated by a fixed seeded random orthogonal
matrix and its signs kept (``bits`` = the dimension rounded up to 64; 48 bytes per 384-d
row, 3 % of the float row). The Hamming distance ``h`` between two codes estimates the
angle (``pi * h / bits``), so ``cos(pi * h / bits) * weight`` estimates a row's score; a
query costs an XOR + popcount pass over the codes, one table lookup and one multiply.

The codes are per-row columns of the ``VectorIndex`` (``b0``.. of uint64, plus ``qok``
marking coded rows), so they move with their rows on removal like the ranking columns;
rows appended since are coded on the next query. A checkpoint stores them beside its
vectors (``bits-<seq>-<sha256>.u64``, named in the checkpoint, ``vectors.py``); a reader maps them
copy-on-write from a read-only open, so N readers share the pages and nothing a reader
does reaches the file. Only recall's queries use this path: the fold and the
synthesizer's decisions never do, and stay exact and deterministic.
"""

from __future__ import annotations

import math
import os
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from swarmlog import sidefile
from swarmlog.checkpoint import prune_side, side_header
from synthesizer.search.prune import one_blas_thread
from synthesizer.search.topk import kth_largest
from synthesizer.search.vindex import VectorIndex

__all__ = ["APPROX_MIN_ROWS", "candidate_count", "candidates", "ensure_codes"]

#: Indexes with fewer live rows are always searched exactly.
APPROX_MIN_ROWS = 200_000
#: Rows re-ranked exactly: at least this many ...
MIN_CANDIDATES = 2048
#: ... and at least this fraction of the rows (1/256: 3,906 at 1M).
CANDIDATE_FRACTION = 1 / 256
#: The first (half-code) pass keeps this many times the candidates (see ``candidates``).
PREFILTER = 16
MAGIC = "swarmbits/1"
HEADER = 4096
_ALIGN = 64
_SEED = 0x5EED_B175
_SAMPLE = 1 << 15  # rows sampled to guess the candidates' score threshold
_ENCODE_CHUNK = 1 << 15
FLAG = "qok"


def _words(dim: int) -> int:
    return max(1, math.ceil(dim / 64))


def _names(dim: int) -> list[str]:
    return [f"b{j}" for j in range(_words(dim))]


_ROTATIONS: dict[int, np.ndarray] = {}
_TABLES: dict[int, np.ndarray] = {}


def rotation(dim: int) -> np.ndarray:
    """The fixed [dim, bits] projection of a dimension: orthonormal columns from a seeded
    Gaussian (the same in every process, so codes written by one are valid in another)."""
    r = _ROTATIONS.get(dim)
    if r is None:
        bits = 64 * _words(dim)
        g = np.random.default_rng(_SEED + dim).standard_normal((max(dim, bits), max(dim, bits)))
        with one_blas_thread():
            q = np.linalg.qr(g)[0]
        r = _ROTATIONS[dim] = np.ascontiguousarray(q[:dim, :bits], dtype=np.float32)
    return r


def _table(bits: int) -> np.ndarray:
    t = _TABLES.get(bits)
    if t is None:
        t = _TABLES[bits] = np.cos(np.pi * np.arange(bits + 1) / bits).astype(np.float64)
    return t


def encode(rows: np.ndarray) -> np.ndarray:
    """Codes of float rows [m, dim]: uint64 [words, m] (one array per 64 bits)."""
    m, dim = rows.shape
    words = _words(dim)
    out = np.zeros((words, m), dtype=np.uint64)
    r = rotation(dim)
    for start in range(0, m, _ENCODE_CHUNK):
        block = np.asarray(rows[start : start + _ENCODE_CHUNK], dtype=np.float32)
        signs = (block @ r) > 0.0  # [b, bits]
        packed = np.packbits(signs, axis=1, bitorder="little")  # [b, bits / 8]
        out[:, start : start + block.shape[0]] = packed.view("<u8").T
    return out


class _Coded:
    """What has been coded of one index: rows below ``done`` as of ``version``."""

    __slots__ = ("done", "version")

    def __init__(self) -> None:
        self.done = 0
        self.version = -1


_STATE: weakref.WeakKeyDictionary[VectorIndex, _Coded] = weakref.WeakKeyDictionary()


def declare(idx: VectorIndex) -> list[str]:
    """Declare the code columns of ``idx`` (idempotent); return their names."""
    names = _names(idx.dim)
    for name in names:
        idx.add_column(name, np.uint64, 0, derived=True)
    idx.add_column(FLAG, np.uint8, 0, derived=True)
    return names


def ensure_codes(idx: VectorIndex) -> list[np.ndarray]:
    """Code every live row not coded yet; return the code columns over the live rows.

    Rows appended since the last call are coded; after a removal or replacement (the
    index's ``version`` moved) the flag column says which rows still need it.
    """
    names = declare(idx)
    st = _STATE.get(idx)
    if st is None:
        st = _STATE[idx] = _Coded()
    n = len(idx)
    flag = idx.column(FLAG)
    if st.version != idx.version:
        todo = np.flatnonzero(flag == 0)
    else:
        start = min(st.done, n)
        todo = start + np.flatnonzero(flag[start:] == 0)
    if todo.shape[0]:
        _, mat = idx.matrix()
        contiguous = todo.shape[0] == int(todo[-1]) - int(todo[0]) + 1
        rows = mat[int(todo[0]) : int(todo[-1]) + 1] if contiguous else mat[todo]
        codes = encode(rows)
        for j, name in enumerate(names):
            idx.column(name)[todo] = codes[j]
        flag[todo] = 1
    st.done, st.version = n, idx.version
    return [idx.column(name) for name in names]


def candidate_count(n: int, selective: bool = False) -> int:
    """Rows to re-rank exactly out of ``n`` (4x when filters will drop many of them)."""
    c = max(MIN_CANDIDATES, int(n * CANDIDATE_FRACTION))
    return min(n, 4 * c if selective else c)


def candidates(idx: VectorIndex, query: np.ndarray, want: int) -> np.ndarray:
    """Rows (ascending) of about the ``want`` best estimated scores, cosine × weight.

    Two passes: the first half of the code words ranks every row and keeps the best
    ``PREFILTER`` × ``want`` of them; the whole code then ranks only those. Why: the
    XOR/popcount passes over every row are most of a query's cost at a million rows,
    and a half-length code already puts the true best rows far inside a 16x wider cut
    (benchmark: recall@10 against exact is unchanged, the scan costs about half).
    """
    n = len(idx)
    cols = ensure_codes(idx)
    with one_blas_thread():
        q = encode(np.asarray(query, dtype=np.float32)[None, :])[:, 0]
    weights = idx.weights()
    first = (len(cols) + 1) // 2
    keep = PREFILTER * want
    if first == len(cols) or keep >= n:
        first, keep = len(cols), n
    h = _hamming(cols[:first], q[:first], None, n)
    if keep < n:
        rows = _top_rows(_table(64 * first).take(h.astype(np.intp)) * weights, keep)
        h = h[rows]
        h += _hamming(cols[first:], q[first:], rows, len(rows))
        est = _table(64 * len(cols)).take(h.astype(np.intp)) * weights[rows]
        return rows[_top_rows(est, want)]
    est = _table(64 * len(cols)).take(h.astype(np.intp))  # an intp index: 10x faster than uint16
    est *= weights
    return _top_rows(est, want)


def _hamming(cols: list[np.ndarray], q: np.ndarray, rows: np.ndarray | None, n: int) -> np.ndarray:
    """Hamming distances (uint16) between ``q`` and the codes in ``cols`` (of ``rows``, or
    of every row): whole-column passes, ~1.5 ms per 64 bits at 1M rows (chunked loops
    were slower)."""
    x = np.empty(n, dtype=np.uint64)
    c = np.empty(n, dtype=np.uint8)
    h = np.zeros(n, dtype=np.uint16)
    for j, col in enumerate(cols):
        np.bitwise_xor(col if rows is None else col[rows], q[j], out=x)
        np.bitwise_count(x, out=c)
        np.add(h, c, out=h)
    return h


def _top_rows(est: np.ndarray, want: int) -> np.ndarray:
    """Ascending rows of the ``want`` largest ``est`` (ties at the cut all kept)."""
    n = est.shape[0]
    if want >= n:
        return np.arange(n)
    # a threshold from a strided sample of ~32k rows, then one comparison pass; an exact
    # partition when the sample's guess was far off
    step = max(1, n // _SAMPLE)
    sample = est[::step]
    m = sample.shape[0]
    k = max(1, min(m - 1, int(want * m / n * 1.25)))
    thr = np.partition(sample, m - k)[m - k]
    rows = np.flatnonzero(est >= thr)
    if rows.shape[0] < want or rows.shape[0] > 4 * want:
        thr = kth_largest(est, want)  # (np.partition crawls over runs of tied estimates)
        rows = np.flatnonzero(est >= thr)
    return rows


# ---------------------------------------------------------------- persistence


PREFIX, SUFFIX = "bits-", ".u64"


def file_prefix(seq: int) -> str:
    """The start of a code file's name (then its SHA-256 and ``SUFFIX``)."""
    return f"{PREFIX}{seq:020d}-"


def _aligned(x: int) -> int:
    return (x + _ALIGN - 1) // _ALIGN * _ALIGN


def save(d: Path, seq: int, idx: VectorIndex, cap: int) -> tuple[str, str] | None:
    """Write the codes of ``idx``'s live rows for the checkpoint at ``seq``, laid out for
    ``cap`` rows (the vector file's capacity); (name, SHA-256), or None: skipped well
    below the threshold."""
    n = len(idx)
    if n < APPROX_MIN_ROWS // 2 or cap < n:
        return None
    cols = ensure_codes(idx)
    flag = idx.column(FLAG)
    at = HEADER
    offsets: dict[str, int] = {}
    for name in [*_names(idx.dim), FLAG]:
        at = _aligned(at)
        offsets[name] = at
        at += cap * (1 if name == FLAG else 8)
    header = {
        "magic": MAGIC,
        "seq": seq,
        "embedder": idx.embedder_id,
        "dim": idx.dim,
        "n": n,
        "cap": cap,
        "offsets": offsets,
        "size": at,
    }
    raw = orjson.dumps(header)
    with sidefile.write(d, file_prefix(seq), SUFFIX) as w:
        f = w.file
        f.write(raw.ljust(HEADER - 1) + b"\n")
        for name, arr in zip([*_names(idx.dim), FLAG], [*cols, flag], strict=True):
            f.seek(offsets[name])
            f.write(np.ascontiguousarray(arr).tobytes())
        f.truncate(at)  # rows past n: a hole, filled by appends in the readers' copies
    return w.name, w.digest


def attach(d: Path, name: str, seq: int, idx: VectorIndex) -> bool:
    """Map a checkpoint's code file ``name`` into ``idx`` (just attached from the same
    checkpoint's vectors); False, leaving ``idx`` as it was, when it does not fit. Its
    SHA-256 is checked with the vectors' (``vectors.attach``) before a recall uses it."""
    path = d / name
    h = _header(path)
    n, cap = len(idx), idx.capacity
    if (
        h is None
        or h.get("seq") != seq
        or h.get("embedder") != idx.embedder_id
        or h.get("dim") != idx.dim
        or h.get("n") != n
        or h.get("cap") != cap
    ):
        return False
    try:
        if os.path.getsize(path) != h["size"]:
            return False
        maps: dict[str, np.ndarray] = {}
        for name, off in h["offsets"].items():
            dtype = np.uint8 if name == FLAG else np.uint64
            mapped = np.memmap(path, dtype=dtype, mode="c", offset=int(off), shape=(cap,))
            # a plain ndarray view of the map (which it keeps alive): slicing a memmap
            # builds a memmap per slice, ~0.2 ms each, a dozen per query at 1M rows
            maps[name] = mapped.view(np.ndarray)
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if set(maps) != {*_names(idx.dim), FLAG}:
        return False
    declare(idx)
    for name, arr in maps.items():
        idx.adopt_column(name, arr)
    st = _STATE[idx] = _Coded()
    st.done, st.version = n, idx.version
    return True


def _header(path: Path) -> dict[str, Any] | None:
    return side_header(path, MAGIC, HEADER)


def prune(d: Path, keep: set[str]) -> int:
    """Unlink code files not named in ``keep``; return how many."""
    return prune_side(d, "bits-*.u64", keep)
