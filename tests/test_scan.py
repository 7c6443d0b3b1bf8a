"""The candidate scan spread over threads (``synthesizer.worker.scan``) finds what the
single-threaded scan finds: every pair at its floor, the same verified cosines bit for
bit, and the same decisions on the quality sets and a 3,000-memory swarm."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthesizer.search import prune
from synthesizer.worker import candidates, scan
from tests.test_candidates import _decide, _quality_memories, _swarm_memories


@given(n=st.integers(0, 200_000), threads=st.integers(1, 16))
@settings(max_examples=200, deadline=None)
def test_column_ranges_cover_every_column_once(n: int, threads: int) -> None:
    got = scan.column_ranges(n, threads)
    assert got[0][0] == 0 and got[-1][1] == n
    assert all(a[1] == b[0] for a, b in itertools.pairwise(got))
    assert len(got) <= max(1, threads)
    if len(got) > 1:  # no tile under the least worth a hand-off
        assert all(b - a >= scan.MIN_TILE_COLS for a, b in got)


def test_scan_threads_reads_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "3")
    assert scan.scan_threads() == 3
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "0")
    assert scan.scan_threads() == 1
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "many")
    with pytest.raises(ValueError, match="SWARMLOG_SCAN_THREADS must be a whole number"):
        scan.scan_threads()
    monkeypatch.delenv("SWARMLOG_SCAN_THREADS")
    assert 1 <= scan.scan_threads() <= scan.MAX_THREADS


@pytest.mark.parametrize("floor_lo", [0.3, 0.55, 0.9])
def test_tiles_on_threads_keep_every_pair_and_verify_the_same(
    monkeypatch: pytest.MonkeyPatch, floor_lo: float
) -> None:
    rng = np.random.default_rng(int(floor_lo * 100))
    facts = rng.normal(size=(5000, 64)).astype(np.float32)
    facts[2500:] = facts[:2500] + 0.4 * rng.normal(size=(2500, 64)).astype(np.float32)
    facts /= np.linalg.norm(facts, axis=1, keepdims=True)
    noise = np.where(np.arange(len(facts[::17])) % 2 == 0, 0.3, 0.04)[:, None]
    mem = facts[::17] + noise * rng.normal(size=(len(facts[::17]), 64)).astype(np.float32)
    mem /= np.linalg.norm(mem, axis=1, keepdims=True)
    basis = prune.BoundBasis.fit(facts, k=4)
    floor = np.where(np.arange(len(facts)) % 3 == 0, floor_lo, 0.9)
    left, right = basis.augment(mem), basis.augment(facts)
    one = candidates.bound_pairs(left, right, floor, raw=(mem, facts), threads=1)
    monkeypatch.setattr(scan, "MIN_TILE_COLS", 64)  # many small tiles on 4 threads
    assert len(scan.column_ranges(len(facts), 4)) == 4
    many = candidates.bound_pairs(left, right, floor, raw=(mem, facts), threads=4)
    exact = mem.astype(np.float64) @ facts.astype(np.float64).T
    want = set(zip(*np.nonzero(exact >= floor[None, :]), strict=True))
    got = list(zip(many[0].tolist(), many[1].tolist(), strict=True))
    assert want and want <= set(got) and got == sorted(set(got))  # sorted, no repeats
    ref = candidates.verified(mem, facts, *one, floor)
    par = candidates.verified(mem, facts, *many, floor)
    keep_ref, keep_par = ref[2] >= floor[ref[1]], par[2] >= floor[par[1]]
    for a, b in zip(ref, par, strict=True):
        assert np.array_equal(a[keep_ref], b[keep_par])  # same pairs, same bits


@pytest.mark.slow
@pytest.mark.parametrize(("name", "chunk"), [("quality", 64), ("swarm", 250)])
def test_decisions_equal_on_one_thread_and_on_many(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, chunk: int
) -> None:
    memories = _quality_memories() if name == "quality" else _swarm_memories(3000)
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "1")
    one = _decide(tmp_path / "one", memories, chunk, None)
    monkeypatch.setenv("SWARMLOG_SCAN_THREADS", "4")
    monkeypatch.setattr(scan, "MIN_TILE_COLS", 16)  # tiles even at this size
    calls: list[int] = []
    real = scan.run_tiles

    def counted(tiles, threads):  # type: ignore[no-untyped-def]
        calls.append(len(tiles))
        return real(tiles, threads)

    monkeypatch.setattr(scan, "run_tiles", counted)
    many = _decide(tmp_path / "many", memories, chunk, None)
    assert max(calls) > 1  # the threaded path ran
    assert one == many
