"""Small passes (fewer than 64 memories) take the scan's products facts-first
(``candidates._product``): the same superset of the pairs at their floors as a large
pass, with per-row floors, on one thread and on two."""

from __future__ import annotations

import numpy as np
import pytest

from synthesizer.search import prune
from synthesizer.worker import candidates


def _clustered(seed: int, n: int, m: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    facts = rng.normal(size=(n, dim)).astype(np.float32)
    facts[n // 2 :] = facts[: n - n // 2] + 0.04 * rng.normal(size=(n - n // 2, dim)).astype(
        np.float32
    )
    facts /= np.linalg.norm(facts, axis=1, keepdims=True)
    mem = facts[:: n // m][:m] + 0.05 * rng.normal(size=(m, dim)).astype(np.float32)
    mem /= np.linalg.norm(mem, axis=1, keepdims=True)
    return mem, facts


@pytest.mark.parametrize(("m", "threads"), [(1, 1), (8, 1), (8, 2), (63, 2)])
def test_a_small_pass_keeps_every_pair_at_its_floor(m: int, threads: int) -> None:
    mem, facts = _clustered(m, 20_000, m, 384)
    basis = prune.BoundBasis.fit(facts, k=16)
    floor = np.where(np.arange(len(facts)) % 3 == 0, 0.45, 0.6)
    row = np.linspace(0.4, 0.7, m)  # per-memory floors, capped per column
    cap = np.where(np.arange(len(facts)) % 5 == 0, 0.5, 3.0)
    left, right = basis.augment(mem), basis.augment(facts)
    rows, cols = candidates.bound_pairs(
        left, right, floor, raw=(mem, facts), rows_floor=(row, cap), threads=threads
    )
    pairs = list(zip(rows.tolist(), cols.tolist(), strict=True))
    assert pairs == sorted(set(pairs))
    exact = mem.astype(np.float64) @ facts.astype(np.float64).T
    pf = np.minimum(np.maximum(floor[None, :], row[:, None]), cap[None, :])
    want = set(zip(*(a.tolist() for a in np.nonzero(exact >= pf)), strict=True))
    assert want and want <= set(pairs)
    # the same pairs a large pass finds for these memories (rows in blocks of 256)
    big = np.vstack([mem, *[mem] * (64 // m + 1)])
    big_row = np.concatenate([row] * (64 // m + 2))
    br, bc = candidates.bound_pairs(
        basis.augment(big), right, floor, raw=(big, facts), rows_floor=(big_row, cap)
    )
    keep = br < m
    near = pf - prune.MARGIN / 2  # every superset holds all of these
    exact_kept = {p for p in pairs if exact[p] >= near[p]}
    big_kept = {
        (r, c)
        for r, c in zip(br[keep].tolist(), bc[keep].tolist(), strict=True)
        if exact[r, c] >= near[r, c]
    }
    assert exact_kept == big_kept
