"""Exact top-k candidates (``synthesizer.search.topk``): a memory's floor raised to its
k-th best cosine never changes a decision, and never drops a pair at or above its floor.

Decisions with the raised floors equal those with every candidate from the floor
(``scorer.TOP_K = None``) on the quality sets and on a 20k-memory swarm of one narrow
topic (where the contest floor finds dozens of candidates per memory, so floors rise)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthesizer.search import prune, topk
from synthesizer.worker import candidates, scorer
from tests.test_candidates import _decide, _quality_memories, _swarm_memories


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    raised: list[int] = []
    real = topk.row_floors

    def spy(vecs: np.ndarray, mat: np.ndarray, eligible: np.ndarray, k: int, base: float):  # type: ignore[no-untyped-def]
        out = real(vecs, mat, eligible, k, base)
        raised.append(int((out > base).sum()))
        return out

    monkeypatch.setattr(topk, "row_floors", spy)
    return raised


@pytest.mark.parametrize(
    ("name", "n", "chunk"),
    [
        ("quality", 0, 64),
        ("swarm", 4000, 500),
        # 20,000 memories decided twice (~5 min on 2 idle cores): its own time limit
        pytest.param("swarm", 20_000, 2000, marks=pytest.mark.timeout(1500)),
    ],
)
@pytest.mark.slow
@pytest.mark.soak  # a minute or more
def test_decisions_equal_with_and_without_top_k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, n: int, chunk: int
) -> None:
    memories = _quality_memories() if name == "quality" else _swarm_memories(n)
    with monkeypatch.context() as m:
        raised = _spy(m)
        fast = _decide(tmp_path / "fast", memories, chunk, None)
    with monkeypatch.context() as m:
        m.setattr(scorer, "TOP_K", None)
        ref = _decide(tmp_path / "ref", memories, chunk, None)
    assert fast == ref
    if name == "swarm":
        assert sum(raised) > n // 4  # the floors did rise: the test is not vacuous


def _cloud(seed: int, n: int, dim: int, spread: float) -> np.ndarray:
    """Unit rows in clusters (many near neighbours, as a narrow topic has)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(1, n // 40), dim))
    x = centres[rng.integers(0, len(centres), n)] + spread * rng.normal(size=(n, dim))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    k=st.integers(1, 15),
    base=st.sampled_from([0.3, 0.55, 0.7, 0.9]),
    spread=st.sampled_from([0.3, 0.6, 1.0]),
)
def test_row_floors_keep_each_memorys_top_k(seed: int, k: int, base: float, spread: float) -> None:
    facts = _cloud(seed, 600, 48, spread)
    mem = _cloud(seed + 1, 40, 48, spread)
    eligible = np.random.default_rng(seed).random(600) < 0.8
    floor = topk.row_floors(mem, facts, eligible, k, base)
    assert (floor >= base).all()
    rows, cols = (a.ravel() for a in np.meshgrid(np.arange(40), np.arange(600), indexing="ij"))
    exact = prune.exact_cosines(mem, facts, rows, cols).reshape(40, 600)
    for i in range(40):
        good = np.sort(exact[i][eligible])[::-1]
        if len(good) >= k and floor[i] > base:
            # k eligible facts at the raised floor or above: the first k never fall below
            assert good[k - 1] >= floor[i]
        top = good[:k]
        assert (top[top >= base] >= floor[i]).all()


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    base=st.sampled_from([0.3, 0.55, 0.9]),
    kk=st.sampled_from([2, 8]),
    m=st.sampled_from([3, 40, 300]),
)
def test_bound_pairs_with_row_floors_equal_brute_force(
    seed: int, base: float, kk: int, m: int
) -> None:
    """Every pair at or above min(max(column floor, row floor), column cap) is found, on
    random clustered vectors at several floors; the verified pairs are exactly those."""
    rng = np.random.default_rng(seed)
    facts = _cloud(seed, 1500, 64, 0.6)
    mem = _cloud(seed + 7, m, 64, 0.6)
    col = np.where(rng.random(1500) < 0.1, 3.0, base)  # claims: never
    cap = np.where(rng.random(1500) < 0.2, 0.7, 3.0)  # short/long-term: the retro floor
    col = np.minimum(col, cap)
    row = np.maximum(base, rng.choice([base, 0.6, 0.8, 0.95], size=m))
    basis = prune.BoundBasis.fit(facts, k=kk)
    own = (row, cap)
    r, c = candidates.bound_pairs(
        basis.augment(mem), basis.augment(facts), col, raw=(mem, facts), rows_floor=own
    )
    pf = candidates.pair_floors(col, own, r, c)
    r, c, v = candidates.verified(mem, facts, r, c, col, pf)
    rows, cols = (a.ravel() for a in np.meshgrid(np.arange(m), np.arange(1500), indexing="ij"))
    exact = prune.exact_cosines(mem, facts, rows, cols)
    want_floor = np.minimum(np.maximum(col[cols], row[rows]), cap[cols])
    want = set(
        zip(rows[exact >= want_floor].tolist(), cols[exact >= want_floor].tolist(), strict=True)
    )
    got = {
        (a, b)
        for a, b, x in zip(r.tolist(), c.tolist(), v.tolist(), strict=True)
        if x >= candidates.pair_floors(col, own, np.array([a]), np.array([b]))[0]
    }
    assert got == want


def test_the_equality_above_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeping only each memory's best candidate (k = 1, below what a decision reads)
    changes decisions on the quality sets: the comparison above is not vacuous."""
    memories = _quality_memories()
    with monkeypatch.context() as m:
        m.setattr(scorer, "TOP_K", 1)
        one = _decide(tmp_path / "one", memories, 64, None)
    with monkeypatch.context() as m:
        m.setattr(scorer, "TOP_K", None)
        ref = _decide(tmp_path / "ref", memories, 64, None)
    assert one != ref


@settings(max_examples=60, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 5), st.floats(-1, 1, width=32)), max_size=60),
    k=st.lists(st.integers(0, 6), min_size=6, max_size=6),
)
def test_kth_by_row_equals_sorting_each_row(pairs: list[tuple[int, float]], k: list[int]) -> None:
    rows = np.array([r for r, _ in pairs], dtype=np.int64)
    vals = np.array([v for _, v in pairs], dtype=np.float32)
    got = topk.kth_by_row(rows, vals, 6, np.array(k))
    for r in range(6):
        mine = sorted((float(v) for q, v in pairs if q == r), reverse=True)
        want = mine[k[r] - 1] if 1 <= k[r] <= len(mine) else -np.inf
        assert got[r] == np.float64(np.float32(want)) if want != -np.inf else got[r] == -np.inf


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 60_000),
    distinct=st.sampled_from([1, 2, 5, 200, 0]),
    k=st.integers(1, 700),
    seed=st.integers(0, 2**32 - 1),
)
def test_kth_largest_equals_a_sort(n: int, distinct: int, k: int, seed: int) -> None:
    """The sampled cut gives exactly the sort's k-th largest: distinct values, a few
    values in long runs of ties (BM25 of short facts), constant and sorted arrays."""
    rng = np.random.default_rng(seed)
    vals = rng.random(n) if distinct == 0 else rng.integers(0, distinct, n).astype(np.float64)
    if seed % 3 == 0:
        vals = np.sort(vals)
    k = min(k, n)
    assert topk.kth_largest(vals, k) == np.sort(vals)[n - k]


def test_kth_largest_refuses_a_rank_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"k must be in 1\.\.3"):
        topk.kth_largest(np.zeros(3), 4)
    with pytest.raises(ValueError, match=r"k must be in 1\.\.3"):
        topk.kth_largest(np.zeros(3), 0)
