"""VectorIndex / VectorSpace: exact, deterministic, namespace-separated search."""

from __future__ import annotations

import numpy as np
import pytest

from synthesizer.search.vindex import Hit, VectorIndex, VectorSpace

DIM = 16


def unit(rng: np.random.Generator, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def reference(
    mat: np.ndarray, ids: list[str], weights: np.ndarray, q: np.ndarray, k: int
) -> list[str]:
    """Brute-force ranking: score desc, then id asc."""
    qn = q / np.linalg.norm(q)
    scores = (mat / np.linalg.norm(mat, axis=1, keepdims=True)) @ qn * weights
    order = sorted(range(len(ids)), key=lambda i: (-float(scores[i]), ids[i]))
    return [ids[i] for i in order[:k]]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def test_empty_index(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    assert len(idx) == 0
    assert idx.search(unit(rng), 5) == []
    assert idx.best(unit(rng)) is None
    assert idx.search_many(np.stack([unit(rng), unit(rng)]), 3) == [[], []]


def test_add_get_contains_and_normalises(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    idx.add("a", np.full(DIM, 3.0), weight=0.5)
    assert "a" in idx
    assert "b" not in idx
    assert len(idx) == 1
    got = idx.get("a")
    assert got is not None
    assert np.isclose(np.linalg.norm(got), 1.0)
    assert idx.weight("a") == 0.5
    assert idx.get("missing") is None
    idx.add("a", unit(rng), weight=2.0)  # replace, not duplicate
    assert len(idx) == 1
    assert idx.weight("a") == 2.0


def test_search_matches_brute_force(rng: np.random.Generator) -> None:
    n = 500
    mat = rng.standard_normal((n, DIM)).astype(np.float32)
    ids = [f"id{i:04d}" for i in rng.permutation(n)]
    weights = rng.random(n)
    idx = VectorIndex("e", DIM)
    for i in range(n):
        idx.add(ids[i], mat[i], float(weights[i]))
    for _ in range(10):
        q = unit(rng)
        hits = idx.search(q, 7)
        assert [h.id for h in hits] == reference(mat, ids, weights, q, 7)
        for h in hits:
            assert isinstance(h, Hit)
            w = idx.weight(h.id)
            assert w is not None
            assert h.score == pytest.approx(h.cosine * w, rel=1e-6)
        raw = idx.search(q, 7, weighted=False)
        assert [h.id for h in raw] == reference(mat, ids, np.ones(n), q, 7)
        assert all(h.score == h.cosine for h in raw)


def test_dims_never_mix() -> None:
    idx = VectorIndex("hash-v1-384", 384)
    idx.add("x", np.ones(384))
    with pytest.raises(ValueError) as info:
        idx.search(np.ones(256), 5)
    message = str(info.value)
    assert "256" in message
    assert "384" in message
    assert "hash-v1-384" in message
    assert "\n" not in message
    with pytest.raises(ValueError, match="dimension 256"):
        idx.add("y", np.ones(256))
    with pytest.raises(ValueError):
        idx.best(np.ones(383))
    with pytest.raises(ValueError):
        idx.search_many(np.ones((2, 256)), 3)


def test_space_keeps_namespaces_apart(rng: np.random.Generator) -> None:
    space = VectorSpace()
    space.add("hash-v1", "a384", unit(rng, 384))
    space.add("hash-v1", "a256", unit(rng, 256))
    space.add("agent-model", "b384", unit(rng, 384))
    assert space.namespaces() == [("agent-model", 384), ("hash-v1", 256), ("hash-v1", 384)]
    assert [h.id for h in space.search("hash-v1", unit(rng, 256), 10)] == ["a256"]
    assert [h.id for h in space.search("hash-v1", unit(rng, 384), 10)] == ["a384"]
    assert [h.id for h in space.search("agent-model", unit(rng, 384), 10)] == ["b384"]
    assert space.search("agent-model", unit(rng, 256), 10) == []
    assert space.search("unknown", unit(rng, 384), 10) == []
    assert space.index("hash-v1", 384) is space.get("hash-v1", 384)
    assert space.remove("a256") is True
    assert space.remove("a256") is False
    assert len(space.index("hash-v1", 256)) == 0


def test_removal_keeps_others_findable(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    vecs = {f"v{i:03d}": unit(rng) for i in range(200)}
    for key, vec in vecs.items():
        idx.add(key, vec, weight=1.0 + int(key[1:]) / 1000)
    removed = {"v000", "v199", "v100", "v057", "v058"}
    for key in sorted(removed):
        assert idx.remove(key) is True
    assert idx.remove("v000") is False
    assert len(idx) == 195
    for key, vec in vecs.items():
        if key in removed:
            assert key not in idx
            assert idx.get(key) is None
            continue
        best = idx.best(vec)
        assert best is not None
        assert best[0] == key
        assert best[1] == pytest.approx(1.0, abs=1e-5)
        assert idx.weight(key) == pytest.approx(1.0 + int(key[1:]) / 1000)
    found = {h.id for h in idx.search(unit(rng), 1000)}
    assert found == set(vecs) - removed


def test_ties_broken_by_id_ascending(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    same = unit(rng)
    names = [f"t{i:02d}" for i in range(40)]
    for name in reversed(names):  # insertion order must not matter
        idx.add(name, same)
    idx.add("zzz-better", same + 0.01 * unit(rng))  # slightly different cosine
    q = same
    hits = idx.search(q, 5, weighted=False)
    assert [h.id for h in hits] == names[:5]  # all tied at cosine 1.0; smallest ids
    assert idx.best(q) == (names[0], hits[0].cosine)
    hits_all = idx.search(q, 100, weighted=False)
    assert [h.id for h in hits_all[:40]] == names
    assert hits_all[-1].id == "zzz-better"
    # weights change the order; equal weights keep id order among ties
    idx.set_weight("t39", 2.0)
    assert [h.id for h in idx.search(q, 3)] == ["t39", "t00", "t01"]


def test_weights_single_bulk_and_scale(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    q = unit(rng)
    idx.add("near", q, weight=0.1)
    idx.add("far", q + 0.5 * unit(rng), weight=1.0)
    assert idx.search(q, 1, weighted=False)[0].id == "near"
    assert idx.search(q, 1)[0].id == "far"
    idx.set_weights({"near": 5.0, "far": 1.0})
    assert idx.search(q, 1)[0].id == "near"
    idx.set_weights([("near", 0.0)])
    assert idx.search(q, 1)[0].id == "far"
    idx.scale_weights(0.5)
    assert idx.weight("far") == 0.5
    with pytest.raises(KeyError):
        idx.set_weight("missing", 1.0)
    with pytest.raises(KeyError):
        idx.set_weights({"missing": 1.0})
    with pytest.raises(ValueError):
        idx.set_weight("far", float("nan"))
    with pytest.raises(ValueError):
        idx.add("x", q, weight=float("inf"))


def test_mask_restricts_results(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    for i in range(100):
        idx.add(f"m{i:03d}", unit(rng))
    allowed = {f"m{i:03d}" for i in range(0, 100, 3)}
    mask = idx.mask_for([*allowed, "unknown-id"])
    assert mask.dtype == np.bool_
    assert int(mask.sum()) == len(allowed)
    q = unit(rng)
    hits = idx.search(q, 10, mask=mask)
    assert len(hits) == 10
    assert {h.id for h in hits} <= allowed
    sub = VectorIndex("e", DIM)
    for key in allowed:
        vec = idx.get(key)
        assert vec is not None
        sub.add(key, vec)
    assert [h.id for h in hits] == [h.id for h in sub.search(q, 10)]
    empty = idx.mask_for([])
    assert idx.search(q, 10, mask=empty) == []
    assert idx.best(q, mask=empty) is None
    with pytest.raises(ValueError, match="mask"):
        idx.search(q, 10, mask=np.ones(3, dtype=bool))


def test_min_score(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    for i in range(300):
        idx.add(f"s{i:03d}", unit(rng), weight=0.8)
    q = unit(rng)
    everything = idx.search(q, 300)
    hits = idx.search(q, 300, min_score=0.2)
    assert hits == [h for h in everything if h.score >= 0.2]
    assert 0 < len(hits) < 300
    assert idx.search(q, 5, min_score=2.0) == []
    raw = idx.search(q, 300, weighted=False, min_score=0.2)
    assert all(h.cosine >= 0.2 for h in raw)
    assert len(raw) > len(hits)  # weight 0.8 pushes some scores under the bar


def test_growth_beyond_initial_capacity(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM, capacity=16)
    assert idx.capacity == 16
    vecs = [unit(rng) for _ in range(1000)]
    for i, vec in enumerate(vecs):
        idx.add(f"g{i:04d}", vec, weight=float(i))
    assert len(idx) == 1000
    assert idx.capacity >= 1000
    for i in (0, 15, 16, 17, 511, 999):
        best = idx.best(vecs[i])
        assert best is not None
        assert best[0] == f"g{i:04d}"
        assert idx.weight(f"g{i:04d}") == float(i)


def test_add_many_equals_add(rng: np.random.Generator) -> None:
    mat = rng.standard_normal((50, DIM)).astype(np.float32)
    mat[3] = 0.0
    ids = [f"b{i:02d}" for i in range(50)]
    weights = rng.random(50)
    one = VectorIndex("e", DIM, capacity=16)
    for i in range(50):
        one.add(ids[i], mat[i], float(weights[i]))
    bulk = VectorIndex("e", DIM, capacity=16)
    bulk.add_many(ids[:20], mat[:20], weights[:20])
    bulk.add_many(ids[10:], mat[10:], weights[10:])  # overlap: replaces 10..19
    assert len(bulk) == 50
    q = unit(rng)
    assert [h.id for h in bulk.search(q, 50)] == [h.id for h in one.search(q, 50)]
    for i in range(50):
        a, b = one.get(ids[i]), bulk.get(ids[i])
        assert a is not None and b is not None
        assert np.allclose(a, b, atol=1e-6)
    with pytest.raises(ValueError):
        bulk.add_many(["x", "x"], mat[:2])
    with pytest.raises(ValueError):
        bulk.add_many(["x"], np.ones((1, DIM + 1)))
    with pytest.raises(ValueError):
        bulk.add_many(["x"], np.full((1, DIM), np.nan))


def test_search_many_matches_search(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    for i in range(400):
        idx.add(f"q{i:03d}", unit(rng), weight=float(rng.random()))
    queries = np.stack([unit(rng) for _ in range(9)])
    mask = idx.mask_for(f"q{i:03d}" for i in range(0, 400, 2))
    for kwargs in ({}, {"weighted": False}, {"mask": mask}, {"min_score": 0.3}):
        batch = idx.search_many(queries, 6, **kwargs)
        assert len(batch) == 9
        for q, hits in zip(queries, batch, strict=True):
            single = idx.search(q, 6, **kwargs)
            assert [h.id for h in hits] == [h.id for h in single]
            assert [h.score for h in hits] == pytest.approx([h.score for h in single])


def test_zero_vectors_and_zero_query(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    idx.add("zero", np.zeros(DIM))
    idx.add("real", unit(rng))
    hits = idx.search(np.zeros(DIM), 2, weighted=False)
    assert [h.id for h in hits] == ["real", "zero"]  # all cosines 0: ties by id
    assert all(h.cosine == 0.0 for h in hits)


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_bad_k_rejected(rng: np.random.Generator, k: object) -> None:
    idx = VectorIndex("e", DIM)
    idx.add("a", unit(rng))
    with pytest.raises(ValueError):
        idx.search(unit(rng), k)  # type: ignore[arg-type]


def test_non_finite_inputs_rejected(rng: np.random.Generator) -> None:
    idx = VectorIndex("e", DIM)
    bad = unit(rng)
    bad[2] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        idx.add("a", bad)
    with pytest.raises(ValueError, match="non-finite"):
        idx.search(bad, 3)
    huge = np.full(DIM, 1e30, dtype=np.float32)  # finite, but its norm overflows float32
    idx.add("huge", huge)
    got = idx.get("huge")
    assert got is not None
    assert np.isclose(np.linalg.norm(got), 1.0)

