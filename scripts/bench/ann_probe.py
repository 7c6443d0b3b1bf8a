"""Would an HNSW index give the synthesizer's candidates? Agreement and cost against the scan.

    .venv/bin/python scripts/bench/ann_probe.py [--facts 100000] [--queries 500]
        [--traffic mixed|one-topic] [--ef 64,256] [--k 32,64] [--lib DIR]

A decision reads at most a memory's first 11 plain candidates at or above the contest
floor, best first (``TextContests.choose``: 8, then 3 rivals; ``scorer.TOP_K``), so a
candidate source gives the exhaustive scan's decisions wherever those first 11 (ids and
order) are the same. This probe embeds ``--facts`` texts of the traffic (hashing
embedder), builds a usearch HNSW index over them (inner product, M = 16,
ef_construction = 128, one thread), and for ``--queries`` new memories of the same
traffic compares, per ``ef`` x ``k``: the first 11 candidates the index returns after
exact re-scoring (float32 cosine, ties by id) with the first 11 of the exhaustive
float32 product. Reported: lists identical (%), CPU ms per added row, per query, and
per query of the exhaustive product in one batch (one BLAS thread), so both sides are
the same arithmetic on the same core.

usearch is not a dependency of the project: ``--lib DIR`` names a folder it was
installed into (``pip install --target DIR usearch``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

FLOOR = 0.55  # the contest floor (synthesizer.config.CONTEST_FLOOR)
READS = 11  # candidates a decision reads at most (scorer.TOP_K)


def texts(traffic: str, n: int, seed: int) -> list[str]:
    """``n`` texts of the traffic (facts: seed 0; memories: another seed)."""
    import _one_topic
    import scale_bench

    rng = random.Random(seed)
    if traffic == "one-topic":
        return [_one_topic.statement(rng) for _ in range(n)]
    return [scale_bench.content(seed * 10_000_000 + i, rng) for i in range(n)]


def first_reads(sims: np.ndarray, ids: np.ndarray) -> list[int]:
    """The first ``READS`` ids at or above ``FLOOR``, best first, ties by id."""
    keep = sims >= FLOOR
    sims, ids = sims[keep], ids[keep]
    order = np.lexsort((ids, -sims))[:READS]
    return [int(i) for i in ids[order]]


def probe(traffic: str, facts: int, queries: int, efs: list[int], ks: list[int]) -> dict[str, Any]:
    """The figures of one traffic (see the module docstring)."""
    from usearch.index import Index

    from synthesizer.search.embed import embedder_for
    from synthesizer.search.prune import one_blas_thread

    emb = embedder_for("hash")
    x = np.asarray(emb.embed(texts(traffic, facts, 0)), dtype=np.float32)
    q = np.asarray(emb.embed(texts(traffic, queries, 1)), dtype=np.float32)
    out: dict[str, Any] = {"traffic": traffic, "facts": facts, "queries": queries}
    with one_blas_thread():
        t = time.process_time()
        exact = q @ x.T
        out["exhaustive_ms_per_query"] = round((time.process_time() - t) / queries * 1e3, 3)
    every = np.arange(facts, dtype=np.int64)
    want = [first_reads(exact[i], every) for i in range(queries)]
    out["queries_with_candidates"] = sum(1 for w in want if w)
    ix = Index(ndim=x.shape[1], metric="ip", dtype="f32", connectivity=16, expansion_add=128)
    t = time.process_time()
    ix.add(every, x, threads=1)
    out["add_ms_per_row"] = round((time.process_time() - t) / facts * 1e3, 3)
    runs = []
    for ef in efs:
        ix.expansion_search = ef
        for k in ks:
            t = time.process_time()
            got = ix.search(q, k, threads=1)
            cpu = time.process_time() - t
            same = 0
            for i in range(queries):
                keys = np.asarray(got.keys[i][: got.counts[i]], dtype=np.int64)
                sims = np.einsum("ij,j->i", x[keys], q[i])  # exact re-scoring
                same += first_reads(sims, keys) == want[i]
            runs.append(
                {
                    "ef": ef,
                    "k": k,
                    "identical_pct": round(100 * same / queries, 2),
                    "search_ms_per_query": round(cpu / queries * 1e3, 3),
                }
            )
            print(json.dumps({**out, **runs[-1]}), flush=True)
    out["runs"] = runs
    out["load"] = round(os.getloadavg()[0], 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--traffic", default="mixed,one-topic")
    ap.add_argument("--ef", default="64,256")
    ap.add_argument("--k", default="32,64")
    ap.add_argument("--lib", default=None, help="a folder usearch was installed into")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.lib:
        sys.path.insert(0, args.lib)
    try:
        import usearch.index  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"ann_probe: usearch is not importable ({e}); see --lib") from None
    try:
        efs = [int(v) for v in args.ef.split(",")]
        ks = [int(v) for v in args.k.split(",")]
    except ValueError:
        raise SystemExit("ann_probe: --ef and --k are comma-separated whole numbers") from None
    load0 = os.getloadavg()[0]
    res = [probe(t, args.facts, args.queries, efs, ks) for t in args.traffic.split(",")]
    for r in res:
        r["load_start"] = round(load0, 1)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
