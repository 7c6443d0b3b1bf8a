"""SwarmStore against LangGraph's InMemoryStore (the baseline), same operations, same run.

Puts (one op per call, each a log append for SwarmStore), gets, filtered searches and
semantic searches (a toy embedding, so the embedder's cost is not what is measured),
then reopening the store (replaying its log). Writes the table to docs/benchmarks.md.

    .venv/bin/python scripts/bench/store_bench.py [--items 2000] [--no-write]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _table import write_table
from langgraph.store.memory import InMemoryStore

from synthesizer.integrations.langgraph import SwarmStore

WORDS = ["cache", "login", "deploy", "flaky", "ttl", "arm64", "runner", "db", "token", "queue"]


def embed(texts: list[str]) -> list[list[float]]:
    """Word counts over WORDS: cheap and deterministic."""
    return [[float(t.split().count(w)) for w in WORDS] for t in texts]


INDEX: Any = {"dims": len(WORDS), "embed": embed, "fields": ["text"]}


def timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def workload(store: Any, n: int, seed: int = 7) -> dict[str, float]:
    """Per-operation seconds of each phase on ``store``."""
    r = random.Random(seed)
    items = [
        (("team", f"u{i % 20}"), f"k{i}", {"text": " ".join(r.choices(WORDS, k=4)), "n": i % 10})
        for i in range(n)
    ]
    searches = max(1, n // 10)

    def puts() -> None:
        for ns, k, v in items:
            store.put(ns, k, v)

    def gets() -> None:
        for ns, k, _ in items:
            store.get(ns, k)

    def filtered() -> None:
        for i in range(searches):
            store.search(("team", f"u{i % 20}"), filter={"n": {"$gte": 5}}, limit=10)

    def semantic() -> None:
        for i in range(searches):
            store.search(("team",), query=f"{WORDS[i % 10]} cache", limit=10)

    return {
        "put": timed(puts) / n,
        "get": timed(gets) / n,
        "search (filter)": timed(filtered) / searches,
        "search (query)": timed(semantic) / searches,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    base = workload(InMemoryStore(index=INDEX), a.items)
    with tempfile.TemporaryDirectory() as d:
        store = SwarmStore(Path(d) / "s", index=INDEX)
        ours = workload(store, a.items)
        store.close()
        reopen = timed(lambda: SwarmStore(Path(d) / "s", index=INDEX).close())
    rows = [
        [op, f"{base[op] * 1e6:.0f}", f"{ours[op] * 1e6:.0f}", f"{ours[op] / base[op]:.1f}x"]
        for op in base
    ]
    rows.append(["reopen (replay the log)", "-", f"{reopen * 1e3:.0f} ms total", "-"])
    block = "\n".join(" | ".join(r) for r in rows)
    print(block)
    if not a.no_write:
        write_table(
            "store",
            f"LangGraph store: SwarmStore vs InMemoryStore ({a.items} items, µs per operation)",
            ["operation", "InMemoryStore", "SwarmStore (file log)", "ratio"],
            rows,
            "Same operations in the same run on a shared 2-core machine; a SwarmStore put is "
            "one durable-to-process log append, and reads fold what other processes wrote "
            "first. Toy 10-dim embedding, so the embedder's own cost is left out.",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
