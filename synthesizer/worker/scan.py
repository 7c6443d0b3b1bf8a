"""Spreading the candidate scan over the machine's cores (``candidates.bound_pairs``).

The scan of a batch of memories against every live fact reads the whole fact matrix
(at 100k facts and the contest floor, 154 MB of float32 per batch): one core's memory
bandwidth and one core's arithmetic bound the synthesizer's rate, while a swarm's
machine has cores to spare. numpy's products and comparisons release the GIL, so the
scan is cut into tiles (a block of memory rows x a range of fact columns), each run on a
pool thread with its own buffers; the pairs are concatenated and sorted as before.

Why the result cannot change: each tile keeps every pair of its rows and columns whose
cosine can reach its floor (``bound_pairs``'s superset contract holds per tile), and
every candidate is then scored exactly and filtered against the same floors. How many
tiles, and in which thread, only changes which extra pairs are verified and dropped.

``SWARMLOG_SCAN_THREADS`` sets the pool's width (1: the single-threaded scan); by default
the cores this process may run on, at most ``MAX_THREADS`` (``search/threads.py`` holds
the pool, shared with recall). BLAS runs on one thread per
tile meanwhile (its own threads on top of ours would oversubscribe the cores).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TypeVar

from synthesizer.search.threads import MAX_THREADS, pool, scan_threads

MIN_TILE_COLS = 8192
"""A tile covers at least this many fact columns: reading them (8,192 x 65 to 384 float32,
2-12 MB) takes a millisecond or so whatever the batch's size, far above a hand-off to a
pool thread. Why columns, not cells: a batch of a few memories (the steady state under
load) is bound by reading the fact matrix, not by arithmetic."""

T = TypeVar("T")


def column_ranges(n: int, threads: int) -> list[tuple[int, int]]:
    """Cut ``n`` fact columns into ranges for ``threads`` workers: at most ``threads``
    ranges per row block, none under ``MIN_TILE_COLS`` columns (unless there is one)."""
    if threads <= 1 or n == 0:
        return [(0, n)]
    parts = max(1, min(threads, n // MIN_TILE_COLS))
    edges = [n * i // parts for i in range(parts + 1)]
    return [(a, b) for a, b in itertools.pairwise(edges) if b > a]


def run_tiles(tiles: Sequence[Callable[[], T]], threads: int) -> list[T]:
    """Each tile's result, in the tiles' order; on the pool when there is more than one
    tile and more than one thread (BLAS on one thread meanwhile), else inline."""
    if threads <= 1 or len(tiles) <= 1:
        return [tile() for tile in tiles]
    from synthesizer.search.prune import one_blas_thread

    with one_blas_thread():
        futures = [pool(threads).submit(tile) for tile in tiles]
        return [f.result() for f in futures]


__all__ = ["MAX_THREADS", "MIN_TILE_COLS", "column_ranges", "run_tiles", "scan_threads"]
