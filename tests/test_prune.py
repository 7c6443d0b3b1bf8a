"""Exact pruning of the synthesizer's scoring: no pair above a threshold may be lost."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from swarmlog import Event, open_log
from synthesizer.config import SynthConfig
from synthesizer.search import prune
from synthesizer.search.factindex import FactIndex
from synthesizer.state.facts import LONG_TERM, SHORT_TERM, WORKING
from synthesizer.worker.scorer import BatchScorer
from synthesizer.worker.synth import Synthesizer, facts_digest

DIM = 64


def unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return (x / np.where(n == 0, 1, n)).astype(np.float32)


def at_cosine(rng: np.random.Generator, q: np.ndarray, cos: float) -> np.ndarray:
    """A unit vector at (float64) cosine ``cos`` from unit ``q``."""
    q64 = q.astype(np.float64)
    r = rng.normal(size=q.shape)
    r -= (r @ q64) * q64
    r /= np.linalg.norm(r)
    return (cos * q64 + np.sqrt(1 - cos * cos) * r).astype(np.float32)


def adversarial(rng: np.random.Generator, n_facts: int = 600, n_queries: int = 80) -> tuple:
    """Facts dominated by a few directions, queries that hide in the residual."""
    topics = unit(rng.normal(size=(4, DIM)))
    facts = unit(topics[rng.integers(0, 4, n_facts)] + 0.3 * rng.normal(size=(n_facts, DIM)))
    queries = unit(rng.normal(size=(n_queries, DIM)))  # mostly outside the facts' top space
    extra = []
    for i, q in enumerate(queries[:40]):
        # straddle both floors by a hair, and plant exact duplicates (ties)
        for c in (0.9 + 2e-6, 0.9 - 2e-6, 0.7 + 2e-6, 0.7 - 2e-6, 0.95):
            extra.append(at_cosine(rng, q, c))
        if i % 5 == 0:
            extra.extend([queries[i], queries[i]])
    facts = np.vstack([facts, np.array(extra), np.zeros((1, DIM), np.float32)])
    return facts, np.vstack([queries, np.zeros((1, DIM), np.float32)])


def test_bound_is_an_upper_bound_and_no_pair_is_lost() -> None:
    rng = np.random.default_rng(3)
    facts, queries = adversarial(rng)
    for basis in (prune.BoundBasis.fit(facts, k=8), prune.BoundBasis.fit(queries, k=16)):
        left, right = basis.augment(queries), basis.augment(facts)
        exact = queries.astype(np.float64) @ facts.astype(np.float64).T
        assert (left.astype(np.float64) @ right.astype(np.float64).T >= exact - 1e-6).all()
        for floor in (0.9, 0.7):
            rows, cols = prune.bound_pairs(left, right, np.full(len(facts), floor))
            got = set(zip(rows.tolist(), cols.tolist(), strict=True))
            want = set(zip(*map(np.ndarray.tolist, np.nonzero(exact >= floor - 1e-5)), strict=True))
            assert want <= got
        never = np.full(len(facts), 3.0)
        assert len(prune.bound_pairs(left, right, never)[0]) == 0


@pytest.mark.parametrize("floor", [0.2, 0.7, 0.9])
def test_dense_thinning_keeps_every_pair_at_its_floor(
    floor: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A block the bound barely prunes is thinned by its float32 product: still no pair
    at or above its floor is lost, and only pairs the bound passed come out."""
    rng = np.random.default_rng(11)
    facts, queries = adversarial(rng)
    basis = prune.BoundBasis.fit(facts, k=4)  # a poor basis: dense blocks
    left, right = basis.augment(queries), basis.augment(facts)
    floors = np.where(rng.random(len(facts)) < 0.3, 3.0, floor)
    exact = (queries.astype(np.float64) @ facts.astype(np.float64).T).astype(np.float32)
    want = set(zip(*map(np.ndarray.tolist, np.nonzero(exact >= floors - 1e-6)), strict=True))
    plain = set(zip(*map(np.ndarray.tolist, prune.bound_pairs(left, right, floors)), strict=True))
    monkeypatch.setattr(prune, "DENSE_SHARE", 0.0)  # thin every block with a candidate
    rows, cols = prune.bound_pairs(left, right, floors, raw=(queries, facts))
    thinned = set(zip(rows.tolist(), cols.tolist(), strict=True))
    assert want <= thinned <= plain
    assert len(thinned) < len(plain)  # the float32 check did drop candidates
    assert np.array_equal(np.lexsort((cols, rows)), np.arange(len(rows)))  # sorted


def test_blocks_do_not_change_the_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(6)
    facts, queries = adversarial(rng)
    basis = prune.BoundBasis.fit(facts, k=8)
    left, right = basis.augment(queries), basis.augment(facts)
    floor = np.where(rng.random(len(facts)) < 0.5, 0.7, 0.9)
    whole = prune.bound_pairs(left, right, floor)
    monkeypatch.setattr(prune, "_BLOCK_ROWS", 7)
    monkeypatch.setattr(prune, "_BLOCK_COLS", 13)
    blocked = prune.bound_pairs(left, right, floor)
    assert np.array_equal(whole[0], blocked[0]) and np.array_equal(whole[1], blocked[1])
    assert len(whole[0]) > 0


def test_bound_prunes_vectors_like_the_facts() -> None:
    rng = np.random.default_rng(5)
    facts, _ = adversarial(rng)
    basis = prune.BoundBasis.fit(facts[:600], k=8)
    side = basis.augment(facts[:600])
    rows, _ = prune.bound_pairs(side[:100], side, np.full(600, 0.9))
    assert 100 <= len(rows) < 100 * 600 // 10


def test_exact_cosines_are_canonical() -> None:
    rng = np.random.default_rng(4)
    a, b = unit(rng.normal(size=(50, 384))), unit(rng.normal(size=(70, 384)))
    rows, cols = np.nonzero(np.ones((50, 70), dtype=bool))
    got = prune.exact_cosines(a, b, rows, cols)
    want = (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32).ravel()
    assert np.array_equal(got, want)
    # independent of which pairs are asked together
    assert np.array_equal(prune.exact_cosines(a, b, rows[7:9], cols[7:9]), want[7:9])


class _Embedder:
    """Hands out fixed vectors for texts "q<i>"."""

    def __init__(self, vecs: np.ndarray) -> None:
        self.vecs = vecs

    id = "fixed"

    @property
    def dim(self) -> int:
        return int(self.vecs.shape[1])

    def embed(self, texts: Any) -> np.ndarray:
        return self.vecs[[int(t[1:]) for t in texts]]


def _stub_worker(facts: np.ndarray, queries: np.ndarray, rng: np.random.Generator) -> Any:
    index = FactIndex(_Embedder(queries))
    ids = [f"f{i}" for i in range(len(facts))]
    index.default.add_many(ids, facts)
    tiers = [WORKING, SHORT_TERM, LONG_TERM]
    state_facts = {
        fid: SimpleNamespace(
            id=fid,
            subject="s" if rng.random() < 0.1 else None,
            tier=tiers[int(rng.integers(0, 3))],
        )
        for fid in ids
    }
    worker = SimpleNamespace(
        index=index,
        state=SimpleNamespace(facts=state_facts),
        config=SynthConfig(),
        near_duplicate=0.9,
        candidate_floor=0.9,
    )
    box: dict[str, Any] = {"basis": None}

    def bound_basis(mat: np.ndarray) -> prune.BoundBasis:
        if box["basis"] is None:
            box["basis"] = prune.BoundBasis.fit(mat, k=8)
        basis: prune.BoundBasis = box["basis"]
        return basis

    worker.bound_basis = bound_basis
    return worker


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pruned_scorer_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    facts, queries = adversarial(rng)
    worker = _stub_worker(facts, queries, rng)
    texts = [f"q{i}" for i in range(len(queries))]
    scorer = BatchScorer(worker, texts, pruned=True)
    cfg = worker.config
    near, thr = worker.near_duplicate, cfg.tiers.retro_similarity
    ids = worker.index.default.ids()
    mat = worker.index.default.matrix()[1]
    rows, cols = np.nonzero(np.ones((len(queries), len(ids)), dtype=bool))
    sims = prune.exact_cosines(queries, mat, rows, cols).reshape(len(queries), len(ids))
    info = worker.state.facts
    plain = np.array([info[f].subject is None for f in ids])
    retro = np.array([info[f].tier in (SHORT_TERM, LONG_TERM) for f in ids])
    hits = 0
    for k in range(len(queries)):
        row = sims[k]
        top = row[plain].max()
        want: tuple[str, float] | None = None
        if round(float(top), 6) >= near:
            tied = [f for f, v, p in zip(ids, row, plain, strict=True) if p and v == top]
            want = (min(tied), round(float(top), 6))
            hits += 1
        got = scorer.best(k)
        assert (got if got is not None and got[1] >= near else None) == want
        want_rel = sorted(
            ([ids[c], round(float(row[c]), 6)] for c in np.flatnonzero(retro & (row > thr))),
            key=lambda p: (-p[1], p[0]),
        )
        assert scorer.related(k) == want_rel[:8]
    assert hits >= 30  # the planted near duplicates were found


def test_pruned_scorer_sees_this_batch() -> None:
    rng = np.random.default_rng(9)
    base = unit(rng.normal(size=(1, DIM)))[0]
    queries = np.array([base, at_cosine(rng, base, 0.93), at_cosine(rng, base, 0.5)])
    facts = unit(rng.normal(size=(20, DIM)))
    for pruned in (False, True):
        worker = _stub_worker(facts, queries, rng)
        scorer = BatchScorer(worker, ["q0", "q1", "q2"], pruned=pruned)
        scorer.created(0, "f900", claim=False)
        got = scorer.best(1)
        assert got is not None and got[0] == "f900" and got[1] == pytest.approx(0.93, abs=1e-6)
        assert scorer.cosine_to(2, "f900") == pytest.approx(0.5, abs=1e-6)


WORDS = ["cache", "proxy", "login", "export", "token", "retry",
         "locale", "upload", "webhook", "crash", "leak", "timeout"]  # fmt: skip


def _sentence(rng: random.Random, i: int) -> str:
    return f"{' '.join(rng.choices(WORDS, k=5))} fails in module {i % 40}"


def test_pruned_worker_makes_the_same_decisions(tmp_path: Any) -> None:
    rng = random.Random(11)
    texts = [_sentence(rng, i) for i in range(600)]
    texts += [t + " again" for t in texts[:100]]  # near duplicates
    texts += texts[:100]  # exact repeats
    rng.shuffle(texts)
    digests = []
    for pruned in (False, True):
        log = open_log(tmp_path / f"log{pruned}")
        log.append_many(
            [
                Event(agent=f"a{i % 3}", type="memory.shared", body={"content": t})
                for i, t in enumerate(texts)
            ]
        )
        w = Synthesizer(log, batch_size=150, pruned=pruned)
        w.run_once()
        digests.append(facts_digest(w.state))
        assert w.state.metrics.duplicates.get("near", 0) > 20
        log.close()
    assert digests[0] == digests[1]


def test_rowwise_cache_follows_every_change() -> None:
    from synthesizer.search.vindex import VectorIndex

    rng = np.random.default_rng(12)
    idx = VectorIndex("e", 8, capacity=4)
    proj = unit(rng.normal(size=(8, 3)))

    def fn(rows: np.ndarray) -> np.ndarray:
        return rows @ proj

    for step in range(300):
        op = rng.integers(0, 6)
        ids = idx.ids()
        if op == 0 or not ids:
            idx.add(f"x{step}", rng.normal(size=8))
        elif op == 1:
            idx.add(ids[int(rng.integers(0, len(ids)))], rng.normal(size=8))  # replace
        elif op == 2:
            pick = [ids[int(rng.integers(0, len(ids)))], f"y{step}"]
            idx.add_many(pick, rng.normal(size=(2, 8)))
        elif op == 3:
            idx.remove(ids[int(rng.integers(0, len(ids)))])
        elif op == 4 and step % 50 == 0:
            idx.clear()
        key = fn if step % 97 else (lambda rows: rows @ proj)  # a new key now and then
        got = idx.rowwise(key, key)
        # same values up to float32 rounding (a product's bits depend on its shape)
        np.testing.assert_allclose(got, fn(idx.matrix()[1]), rtol=0, atol=1e-5, err_msg=str(step))
