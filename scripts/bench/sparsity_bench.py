"""Is an exact inverted index over the hashing embedder's buckets worth it? (synthesizer-load work)

    .venv/bin/python scripts/bench/sparsity_bench.py [--facts 20000] [--queries 500]

For the benchmarks' synthetic texts (``scale_bench``'s 100k swarm, ``load_bench``'s
agents, ``_corpus``'s one-topic sentences), hashing embedder, dim 384, it measures what an
All-Pairs / PPJoin-style prefix-filtering index would do at the contest floor (0.55) and
at the near-duplicate floor (0.9):

* nonzero buckets per vector;
* the index: buckets in a global order (most frequent first), each fact indexed from the
  bucket where the norm of its prefix reaches the floor (before it, Cauchy-Schwarz bounds
  the prefix's dot with any unit query below the floor), so a fact at the floor shares an
  indexed bucket with the query: indexed entries per fact, postings a query walks (in
  units of live facts), and the share of live facts it must then verify;
* pairs at the floor per query (exact), and the largest cosine of a pair that shares no
  rare word (one in fewer than 5 % of the facts): what the texts' template words and
  bucket collisions reach without lexical overlap. An index over words or features would
  need a bound on that part, and none follows from the vectors (a collision of two stems
  alone puts ~1.4 of a word's ~2.5 squared norm into one shared bucket);
* the share of memories whose contest floor ``topk.row_floors`` raises (11th-best plain
  cosine over a 2,048-fact seed above 0.55).
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from _corpus import sentence
from scale_bench import content

from synthesizer.search import topk
from synthesizer.search.embed import HashingEmbedder


def _load_text(i: int, rng: random.Random) -> str:
    w = [f"w{rng.randrange(5000)}" for _ in range(4)]
    return f"agent {i % 8} note {i}: {' '.join(w)} case {i * 7919}"


CORPORA: dict[str, Callable[[int, random.Random], str]] = {
    "scale_bench (100k swarm)": content,
    "load_bench agents": _load_text,
    "_corpus one topic": lambda i, rng: sentence(rng, i),
}


def measure(make: Callable[[int, random.Random], str], n: int, q: int) -> dict[str, float]:
    rng = random.Random(n)
    texts = [make(i, rng) for i in range(n + q)]
    vec = HashingEmbedder().embed(texts)
    facts, queries = vec[:n], vec[n:]
    out: dict[str, float] = {"nnz": float((facts != 0).sum(1).mean())}
    sims = queries @ facts.T
    order = np.argsort((facts != 0).sum(0))[::-1]
    fo, qo = facts[:, order], queries[:, order] != 0
    for t in (0.55, 0.9):
        prefix = np.sqrt(np.cumsum(fo.astype(np.float64) ** 2, axis=1))
        indexed = (prefix >= t - 1e-3) & (fo != 0)
        posting = indexed.sum(0)
        cand = (qo.astype(np.float32) @ indexed.T.astype(np.float32)) > 0
        out[f"indexed@{t}"] = float(indexed.sum(1).mean())
        out[f"walked@{t}"] = float((qo * posting).sum(1).mean() / n)
        out[f"verify@{t}"] = float(cand.mean())
        out[f"hits@{t}"] = float((sims >= t).sum(1).mean())
    words = [frozenset(re.findall(r"\w+", s.casefold())) for s in texts]
    df: dict[str, int] = {}
    for ws in words[:n]:
        for w in ws:
            df[w] = df.get(w, 0) + 1
    rare = [frozenset(w for w in ws if df.get(w, 0) < n // 20) for ws in words]
    apart = [
        float(sims[i, j])
        for i in range(q)
        for j in np.flatnonzero(sims[i] >= 0.2)
        if not (rare[n + i] & rare[j])
    ]
    out["max_apart"] = max(apart, default=float("nan"))
    floors = topk.row_floors(queries, facts, np.ones(n, dtype=bool), 11, 0.55)
    out["raised"] = float((floors > 0.55).mean())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=500)
    args = ap.parse_args()
    print(
        "| texts | nonzero buckets of 384 | floor | indexed per fact | postings walked (x facts)"
        " | facts to verify | pairs at the floor per memory | max cosine, no rare word shared"
        " | memories whose floor top-k raises |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, make in CORPORA.items():
        r = measure(make, args.facts, args.queries)
        for t in (0.55, 0.9):
            print(
                f"| {name} | {r['nnz']:.0f} | {t} | {r[f'indexed@{t}']:.0f} | "
                f"{r[f'walked@{t}']:.1f} | {100 * r[f'verify@{t}']:.1f} % | "
                f"{r[f'hits@{t}']:.3g} | {r['max_apart']:.2f} | {100 * r['raised']:.0f} % |"
            )


if __name__ == "__main__":
    main()
