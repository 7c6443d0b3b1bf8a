"""Hybrid recall against dense-only and lexical-only, on the labelled retrieval set.

    .venv/bin/python scripts/bench/retrieval_bench.py [--embedders hash,minilm] [--scale 50000]

Quality: the set (``retrieval_set.jsonl``, from make_retrieval_set.py) is shared into a
real swarm (FileLog in a temporary directory, one agent per team), synthesized, and
every query asked through the public ``agent.recall(query, limit=10, mode=...)``; a
query's relevant fact counts as found at a hit that is it or names it in ``also``
(possible duplicates show as one hit). MRR@10 and recall@1/@5, overall and per kind.

Latency: ``agent.recall`` p50/p99 at ``--scale`` facts (the cached synthetic swarm of
scale_bench.py, hash embedder), hybrid beside dense-only in the same process, after
one warm recall each. Apart: the first hybrid recall of a fresh process (the lexical
index read from the checkpoint's file) beside the first dense one, and the lexical
index built from the facts' contents (what a checkpoint without the file costs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

SET = Path(__file__).resolve().parent / "retrieval_set.jsonl"
MODES = ("dense", "lexical", "hybrid")
KINDS = ("identifier", "keyword", "question", "paraphrase")


def load() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(facts, queries) of the set."""
    rows = [json.loads(line) for line in SET.read_text().splitlines() if line.strip()]
    return [r for r in rows if r["kind"] == "fact"], [r for r in rows if r["kind"] == "query"]


def quality(embedder: str) -> dict[str, Any]:
    """MRR@10, R@1, R@5 per mode, overall and per query kind, for one embedder."""
    from synthesizer import Swarm, SynthConfig

    facts, queries = load()
    with (
        tempfile.TemporaryDirectory() as d,
        Swarm.open(d, config=SynthConfig(embedder=embedder)) as sw,
    ):
        seq_key = {}
        for f in facts:
            ev = sw.agent(f"{f['team']}-1").share(f["text"], category=f["team"])
            seq_key[ev.seq] = f["key"]
        sw.synthesize()
        state = sw.refresh()
        key_fact: dict[str, str] = {}
        for fact in state.facts.values():
            for e in fact.evidence:
                if e.seq in seq_key:
                    key_fact[seq_key[e.seq]] = fact.id
        merged = len(facts) - len(set(key_fact.values()))
        agent = sw.agent("asker")
        out: dict[str, Any] = {"facts": len(state.facts), "merged": merged}
        for mode in MODES:
            ranks: dict[str, list[int | None]] = {k: [] for k in KINDS}
            for q in queries:
                want = {key_fact[k] for k in q["relevant"] if k in key_fact}
                hits = agent.recall(q["text"], limit=10, log=False, mode=mode)
                rank = None
                for i, h in enumerate(hits, 1):
                    if h.fact.id in want or any(a in want for a, _ in h.also):
                        rank = i
                        break
                ranks[q["type"]].append(rank)
            out[mode] = {k: _scores(v) for k, v in ranks.items()}
            out[mode]["all"] = _scores([r for v in ranks.values() for r in v])
        return out


def _scores(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks) or 1
    return {
        "mrr10": sum(1.0 / r for r in ranks if r is not None) / n,
        "r1": sum(1 for r in ranks if r == 1) / n,
        "r5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "n": len(ranks),
    }


def latency(n: int, rounds: int) -> dict[str, float]:
    """Recall p50/p99 (ms) at ``n`` facts, hybrid beside dense; the lexical build (s)."""
    from scale_bench import QUERIES, build

    from synthesizer import Swarm
    from synthesizer.search.lexical import LexicalIndex

    queries = [
        *QUERIES,
        "case 7919 w42",
        "note 4711 queue",
        "w1234 deploy rollback",
        "billing-quota w77",
    ]
    path = build(n)
    with Swarm.open(path) as sw:  # a checkpoint of before the lexical file: write one
        from synthesizer.checkpoints.vectors import lexical_name

        infos = sw.log.checkpoints.list()
        if not infos or lexical_name(max(infos, key=lambda i: i.seq)) is None:
            sw.checkpoint()
    with Swarm.open(path) as sw:
        agent = sw.agent("bench")
        t0 = time.perf_counter()
        agent.recall(queries[0], limit=10, log=False, mode="dense")  # vectors ready
        first_dense = time.perf_counter() - t0
        t0 = time.perf_counter()
        agent.recall(queries[0], limit=10, log=False, mode="hybrid")
        first = time.perf_counter() - t0
        lex = sw.index.lexical
        from_file = lex is not None and lex.frozen > 0
        times: dict[str, list[float]] = {"dense": [], "hybrid": []}
        for i in range(rounds):
            for mode in ("dense", "hybrid"):
                q = queries[i % len(queries)]
                t0 = time.perf_counter()
                agent.recall(q, limit=10, log=False, mode=mode)
                times[mode].append(time.perf_counter() - t0)
        state = sw.refresh()
        facts = len(state.facts)
        t0 = time.perf_counter()
        LexicalIndex().sync(state.facts)
        built = time.perf_counter() - t0
    res = {
        "facts": float(facts),
        "first_dense_recall_s": first_dense,
        "first_hybrid_recall_s": first,
        "lexical_from_checkpoint_file": float(from_file),
        "lexical_build_from_facts_s": built,
    }
    for mode, ts in times.items():
        ts.sort()
        res[f"{mode}_p50_ms"] = statistics.median(ts) * 1000
        res[f"{mode}_p99_ms"] = ts[min(len(ts) - 1, int(0.99 * len(ts)))] * 1000
    return res


def main() -> None:
    """Run the measures asked for and print them as JSON (the docs take them from it)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedders", default="hash,minilm")
    ap.add_argument("--scale", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=300)
    args = ap.parse_args()
    report: dict[str, Any] = {}
    for emb in [e for e in args.embedders.split(",") if e]:
        t0 = time.perf_counter()
        report[emb] = quality(emb)
        report[emb]["seconds"] = round(time.perf_counter() - t0, 1)
        _print_quality(emb, report[emb])
    if args.scale:
        report["latency"] = latency(args.scale, args.rounds)
        print(json.dumps(report["latency"], indent=1))
    out = Path(tempfile.gettempdir()) / "retrieval_bench.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"-> {out}")


def _print_quality(emb: str, r: dict[str, Any]) -> None:
    print(f"{emb}: {r['facts']} facts ({r['merged']} labelled facts merged into others)")
    for mode in MODES:
        cells = []
        for k in (*KINDS, "all"):
            s = r[mode][k]
            cells.append(f"{k} {s['mrr10']:.3f}/{s['r1']:.2f}/{s['r5']:.2f}")
        print(f"  {mode:8s} MRR@10/R@1/R@5  " + "  ".join(cells))


if __name__ == "__main__":
    main()
