"""recall's candidate rows: the approximate path's and the lexical ones, merged as
``np.union1d`` merged them (sorted, distinct), without its first-call import."""

from __future__ import annotations

import numpy as np

from synthesizer.search.recall import _union


def test_union_is_numpys() -> None:
    rng = np.random.default_rng(7)
    for size_a, size_b in [(0, 0), (0, 5), (5, 0), (300, 40), (1000, 1000)]:
        a = rng.integers(0, 500, size_a).astype(np.int64)
        b = rng.integers(0, 500, size_b).astype(np.int64)
        got = _union(a, b)
        assert got.dtype == np.int64
        assert np.array_equal(got, np.union1d(a, b))
