"""Synthesizer benchmarks, each beside a baseline measured in the same run.

    .venv/bin/python scripts/bench/synth_bench.py [--quick]

1. fold throughput vs plain orjson parsing of the same segment file;
2. synthesis decisions per second with 10,000 live facts;
3. recall top-10 over 100,000 facts vs a bare numpy matmul + argpartition;
4. checkpoint load at 100,000 facts; memory of that state;
5. replay from a checkpoint 1,000 events behind on a 1,000,000-event log vs full replay.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import sentence
from _table import best_of, write_table

from swarmlog import Event, open_log
from synthesizer.config import SynthConfig
from synthesizer.configlog import record_config
from synthesizer.replay import save_checkpoint, state_at
from synthesizer.search.factindex import FactIndex
from synthesizer.search.recall import recall
from synthesizer.state import SwarmState
from synthesizer.worker.synth import Synthesizer

BIG = SynthConfig.model_validate({"pool": {"capacity": 10_000_000}})


def raw_events(n: int, rng: random.Random, dup_rate: float = 0.3) -> list[Event]:
    out = []
    pool: list[str] = []
    for i in range(n):
        if pool and rng.random() < dup_rate:
            content = rng.choice(pool)
        else:
            content = sentence(rng, i)
            pool.append(content)
        out.append(
            Event(
                agent=f"agent-{i % 8}",
                session="s1",
                type="memory.shared",
                body={"content": content, "importance": 0.5},
            )
        )
    return out


def fact_log(
    path: Path, n_facts: int, extra_events: int = 0, config: SynthConfig | None = None
) -> None:
    """A log holding ``n_facts`` facts (raw + fact.created pairs) written in big batches,
    after a ``swarm.configured`` recording ``config`` (if given)."""
    log = open_log(path, segment_bytes=256 << 20)
    if config is not None:
        record_config(log, config, expect=0)
    rng = random.Random(1)
    seq = log.last_seq
    batch: list[Event] = []
    for i in range(n_facts):
        seq += 1
        batch.append(
            Event(
                agent=f"agent-{i % 8}",
                session="s1",
                type="memory.shared",
                body={"content": sentence(rng, i), "importance": 0.5},
            )
        )
        seq += 1
        batch.append(
            Event(
                agent="synthesizer",
                type="fact.created",
                key=f"f{seq - 1}",
                body={"evidence": seq - 1, "signature": f"sig{i}", "related": [], "lease": 0},
            )
        )
        if len(batch) >= 20_000:
            log.append_many(batch)
            batch = []
    kinds = ["memory.recalled", "memory.reinforced", "memory.feedback"]
    for j in range(extra_events):
        k = kinds[j % 3]
        target = f"f{2 * rng.randrange(max(1, n_facts)) + 1}"
        body: dict[str, object] = {"target": target}
        if k == "memory.recalled":
            body = {"query": "cache", "hits": [target]}
        elif k == "memory.feedback":
            body["usefulness"] = 0.5
        batch.append(Event(agent=f"agent-{j % 8}", session="s1", type=k, body=body))
        if len(batch) >= 20_000:
            log.append_many(batch)
            batch = []
    if batch:
        log.append_many(batch)
    log.close()


def plain_parse(path: Path) -> int:
    n = 0
    for seg in sorted((path / "segments").glob("*.jsonl")):
        for line in seg.read_bytes().splitlines():
            orjson.loads(line)
            n += 1
    return n


def bench_fold(tmp: Path, n: int) -> list[str]:
    p = tmp / "fold"
    fact_log(p, n // 4, n // 2, config=BIG)
    log = open_log(p)
    events = log.last_seq
    base = best_of(lambda: plain_parse(p))
    fold = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        state = state_at(log, from_start=True)
        fold = min(fold, time.perf_counter() - t0)
        del state  # tearing the state down is not part of the fold
    log.close()
    return [
        "fold (read + apply)",
        f"{events / fold:,.0f} events/s",
        f"{events / base:,.0f} lines/s (orjson.loads)",
        f"{base / fold:.2f}x",
        ">= 0.33x",
    ]


def bench_decisions(tmp: Path, live: int, n: int) -> list[str]:
    p = tmp / "decide"
    fact_log(p, live, config=BIG)
    log = open_log(p)
    w = Synthesizer(log)
    w.catch_up()
    rng = random.Random(5)
    log.append_many(raw_events(n, rng))
    t0 = time.perf_counter()
    made = w.run_once()
    took = time.perf_counter() - t0
    log.close()
    return [
        f"synthesis decisions ({live:,} live facts)",
        f"{made / took:,.0f} decisions/s",
        "-",
        "-",
        ">= 20,000/s",
    ]


def bench_recall(tmp: Path, n: int) -> tuple[list[str], SwarmState]:
    p = tmp / "recall"
    fact_log(p, n, config=BIG)
    log = open_log(p)
    state = state_at(log, from_start=True)
    index = FactIndex()
    index.sync(state)
    index.refresh_weights(state)
    q = index.embedder.embed(["cache proxy timeout in the upload worker"])[0]
    mat = index.default._mat[: len(index.default)].copy()
    weights = np.ones(len(mat), dtype=np.float32)

    def bare() -> None:
        s = (mat @ q) * weights
        top = np.argpartition(-s, 10)[:10]
        top[np.argsort(-s[top])]

    reps = 50
    base = best_of(lambda: [bare() for _ in range(reps)]) / reps
    ours = best_of(lambda: [recall(state, index, q, limit=10) for _ in range(reps)]) / reps
    log.close()
    row = [
        f"recall top-10 over {n:,} facts",
        f"{ours * 1e3:.2f} ms",
        f"{base * 1e3:.2f} ms (matmul + argpartition)",
        f"{ours / base:.2f}x time",
        "<= 1.5x",
    ]
    return row, state


def bench_checkpoint(state: SwarmState) -> list[list[str]]:
    data = state.to_bytes()
    load = best_of(lambda: SwarmState.from_bytes(data))
    gc.collect()
    tracemalloc.start()
    s = SwarmState.from_bytes(data)
    cur, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del s
    n = len(state.facts)
    return [
        [
            f"checkpoint load ({n:,} facts, {len(data) / 1e6:.1f} MB)",
            f"{load:.3f} s",
            "-",
            "-",
            "<= 1 s",
        ],
        [f"state memory per {n:,} facts", f"{cur / 1e6:.0f} MB", "-", "-", "stated"],
    ]


def bench_replay(tmp: Path, n: int) -> list[str]:
    """Default config (capacity 1,000: the pool evicts as it goes, as in a real swarm)."""
    p = tmp / "replay"
    fact_log(p, n // 8, n - 2 * (n // 8))
    log = open_log(p)
    last = log.last_seq
    st = state_at(log, at_seq=last - 1000, from_start=True)
    save_checkpoint(log, st)
    t0 = time.perf_counter()
    full = state_at(log, from_start=True)
    t_full = time.perf_counter() - t0
    t_ck = best_of(lambda: state_at(log))
    assert state_at(log).digest() == full.digest()
    log.close()
    return [
        f"replay from a checkpoint 1,000 behind ({last:,} events, default config)",
        f"{t_ck:.3f} s",
        f"{t_full:.2f} s (full replay)",
        f"{t_ck / t_full * 100:.1f}%",
        "<= 2%",
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    args = ap.parse_args()
    q = args.quick
    rows = []
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as d:
        tmp = Path(d)
        rows.append(bench_fold(tmp, 50_000 if q else 200_000))
        print(rows[-1], flush=True)
        rows.append(bench_decisions(tmp, 10_000, 5_000 if q else 20_000))
        print(rows[-1], flush=True)
        row, state = bench_recall(tmp, 20_000 if q else 100_000)
        rows.append(row)
        print(rows[-1], flush=True)
        rows += bench_checkpoint(state)
        print(rows[-2:], flush=True)
        del state
        rows.append(bench_replay(tmp, 100_000 if q else 1_000_000))
        print(rows[-1], flush=True)
    block = write_table(
        "synth",
        "Synthesizer",
        ["what", "swarmlog", "baseline (same run)", "ratio", "goal"],
        rows,
        "Run: `.venv/bin/python scripts/bench/synth_bench.py`. Load average when it ended: "
        f"{os.getloadavg()[2]:.1f} (15 min) on {os.cpu_count()} CPUs; absolute figures "
        "fall with load, the ratios to the same run's baselines much less.",
    )
    print(block)


if __name__ == "__main__":
    main()
