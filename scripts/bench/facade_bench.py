#!/usr/bin/env python3
"""Facade benchmark: the seeds' interfaces per call at 10,000 entries, beside LangGraph.

``MemoryStore.put`` / ``get`` / ``search`` and ``SharedMemoryPool.share`` / ``search`` over
a FileLog (every call an event appended and folded; ``get`` appends an access event),
beside LangGraph's ``InMemoryStore`` put / get / search (a plain in-process dict, no log)
on the same texts and the same embedder (the swarm's default hashing embedder, 384
dimensions), in the same run. Vectors are embedded inside the timed loop on both sides.

    .venv/bin/python scripts/bench/facade_bench.py [--n 10000] [--queries 200]

Writes a table between ``<!-- bench:facades -->`` markers in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _table import write_table  # noqa: E402

WORDS = [
    "seasonal",
    "cycle",
    "revenue",
    "latency",
    "cache",
    "eviction",
    "retry",
    "timeout",
    "schema",
    "index",
    "shard",
    "replica",
    "quorum",
    "lease",
    "ticket",
    "invoice",
    "churn",
    "cohort",
    "funnel",
    "anomaly",
    "drift",
    "label",
]


def texts(n: int, salt: int = 0) -> list[str]:
    """Deterministic varied sentences."""
    out = []
    for i in range(n):
        k = i * 7919 + salt
        ws = [WORDS[(k >> s) % len(WORDS)] for s in (0, 3, 6, 9, 12)]
        out.append(f"note {i}: the {ws[0]} of {ws[1]} affects {ws[2]} {ws[3]} and {ws[4]}")
    return out


def per_call(fn: Callable[[int], Any], n: int) -> float:
    """Mean microseconds per call of ``fn(i)`` for i in range(n)."""
    t0 = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - t0) / n * 1e6


def bench(n: int, queries: int) -> dict[str, float]:
    from langgraph.store.memory import InMemoryStore

    from synthesizer import MemoryEntry, MemoryStore, SharedMemoryPool
    from synthesizer.search.embed import HashingEmbedder

    emb = HashingEmbedder()
    docs = texts(n)
    qs = texts(queries, salt=1)
    ident = {"tenant": "bench", "principal": "p"}
    ns = ("bench", "p")
    res: dict[str, float] = {}

    def embed_many(xs: list[str]) -> list[list[float]]:
        return [[float(v) for v in row] for row in emb.embed(xs)]

    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(os.path.join(tmp, "store"), embedder=emb)

        def put(i: int) -> None:
            vec = tuple(float(v) for v in emb.embed([docs[i]])[0])
            store.put(
                ident, MemoryEntry(f"k{i}", {"text": docs[i]}, embedding=vec, embedder_id="hash")
            )

        res["store.put"] = per_call(put, n)
        res["store.get"] = per_call(lambda i: store.get(ident, f"k{(i * 37) % n}"), queries)
        store.search(ident, emb.embed([qs[0]])[0], k=10)  # warm the matrix cache

        def s_search(i: int) -> None:
            store.search(ident, emb.embed([qs[i]])[0], k=10)

        res["store.search"] = per_call(s_search, queries)
        store.close()

        pool = SharedMemoryPool(os.path.join(tmp, "pool"), embedder=emb, max_capacity=n + 10)
        res["pool.share"] = per_call(lambda i: pool.share(f"a{i % 8}", docs[i]), n)
        pool.search(qs[0], 10)  # builds the index once (embeds every memory)
        res["pool.search"] = per_call(lambda i: pool.search(qs[i], 10), queries)
        pool.close()

    lg = InMemoryStore(index={"dims": emb.dim, "embed": embed_many, "fields": ["text"]})
    res["lg.put"] = per_call(lambda i: lg.put(ns, f"k{i}", {"text": docs[i]}), n)
    res["lg.get"] = per_call(lambda i: lg.get(ns, f"k{(i * 37) % n}"), queries)
    res["lg.search"] = per_call(lambda i: lg.search(ns, query=qs[i], limit=10), queries)
    return res


def ratio(a: float, b: float) -> str:
    """``a / b`` with two significant digits, never in exponent form."""
    x = a / b
    return f"{x:.2g}×" if x < 10 else f"{round(x, -1 if x < 1000 else -2):,.0f}×"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    r = bench(args.n, args.queries)

    def us(x: float) -> str:
        return f"{x:,.0f} µs"

    rows = [
        [
            "put",
            "MemoryStore.put",
            us(r["store.put"]),
            us(r["lg.put"]),
            ratio(r["store.put"], r["lg.put"]),
        ],
        [
            "get",
            "MemoryStore.get",
            us(r["store.get"]),
            us(r["lg.get"]),
            ratio(r["store.get"], r["lg.get"]),
        ],
        [
            "search (k=10)",
            "MemoryStore.search",
            us(r["store.search"]),
            us(r["lg.search"]),
            ratio(r["store.search"], r["lg.search"]),
        ],
        [
            "put",
            "SharedMemoryPool.share",
            us(r["pool.share"]),
            us(r["lg.put"]),
            ratio(r["pool.share"], r["lg.put"]),
        ],
        [
            "search (limit 10)",
            "SharedMemoryPool.search",
            us(r["pool.search"]),
            us(r["lg.search"]),
            ratio(r["pool.search"], r["lg.search"]),
        ],
    ]
    header = [
        "operation",
        "facade call",
        "facade per call",
        "LangGraph InMemoryStore per call",
        "ratio",
    ]
    notes = (
        f"{args.n:,} entries, {args.queries} gets/searches, one run on a shared 2-core machine"
        " (other jobs running): read the ratios, not the absolute figures. Facades on a FileLog"
        " (each call an event appended, durability `process`, and folded; `get` appends an"
        " access event); LangGraph's InMemoryStore is a process-local dict with no log. Same"
        " texts, same hashing embedder (384 dims), embedding inside the timed loop on both sides."
        " Ratio = facade time / LangGraph time (below 1: the facade is faster)."
    )
    if args.no_write:
        for row in rows:
            print(" | ".join(row))
        return
    print(write_table("facades", "Seed facades vs LangGraph InMemoryStore", header, rows, notes))


if __name__ == "__main__":
    main()
