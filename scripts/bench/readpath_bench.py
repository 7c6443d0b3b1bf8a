"""The read path of a fresh agent process, this tree beside a baseline tree, same run.

    .venv/bin/python scripts/bench/readpath_bench.py --sizes 50000,1000000 --rounds 3
        --baseline /tmp/basehead [--recalls 200]

On scale_bench.py's cached swarms (built there; never rebuilt or re-checkpointed here),
each round starts one fresh process per tree, alternating, and times what an agent
meets: open (import + Swarm ready + index), the first ``agent.recall`` (hybrid, the
default: side files checked, lexical index read) and the second, unlogged, then the
first logged one (the process's first append to the log: the FileLog writer's view
catching up, apart from the read path); then ``--recalls``
logged recalls in hybrid and in dense mode (p50 / p99), and the floor: a bare numpy
top-10 over the same matrix (``mat @ q``, argpartition, sort) for the same queries.
From 1M facts up also recall@10 of the approximate path against the exact one (dense
and hybrid). One unmeasured process per tree first: it pays what a swarm's first reader
pays once (the baseline hashes the side files in every process anyway), and the page
cache is warm for both. Medians over rounds; the load average beside each round.

Where ``<swarm dir>-main`` exists (a copy of the cached swarm as main checkpointed it),
the baseline reads that copy, and this tree ``<swarm dir>-this`` where it exists (a copy
checkpointed again by this tree; else the original): each reads side files in its own
format, as after an upgrade's first checkpoint, and no other run's ``scale_bench``
re-checkpoints them under it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[3])
from scale_bench import QUERIES
import numpy as np
from synthesizer import Swarm
path, recalls = sys.argv[1], int(sys.argv[2])
sw = Swarm.open(path)
state = sw.refresh()
index = sw.index
t_open = time.perf_counter() - t0
agent = sw.agent("reader")
def timed(query, **kw):
    t1 = time.perf_counter()
    agent.recall(query, limit=10, **kw)
    return time.perf_counter() - t1
first, second = timed(QUERIES[0], log=False), timed(QUERIES[1], log=False)
logged = timed(QUERIES[2])
def lat(mode):
    xs = []
    for i in range(recalls):
        t1 = time.perf_counter()
        agent.recall(QUERIES[i % len(QUERIES)], limit=10, mode=mode)
        xs.append(time.perf_counter() - t1)
    return sorted(xs)
hy, de = lat("hybrid"), lat("dense")
_, mat = index.default.matrix()
qs = index.embedder.embed(QUERIES)
bare = []
for i in range(min(recalls, 30 if len(state.facts) > 200_000 else recalls)):
    q = qs[i % len(qs)]
    t1 = time.perf_counter()
    s = mat @ q
    top = np.argpartition(s, -10)[-10:]
    top[np.argsort(-s[top])]
    bare.append(time.perf_counter() - t1)
bare.sort()
pct = lambda xs, p: xs[min(len(xs) - 1, int(len(xs) * p / 100))]
out = {"facts": len(state.facts), "open": t_open, "first": first, "second": second,
       "first_logged": logged,
       "hybrid_p50": pct(hy, 50), "hybrid_p99": pct(hy, 99), "dense_p50": pct(de, 50),
       "dense_p99": pct(de, 99), "floor_p50": pct(bare, 50)}
if len(state.facts) >= 500_000:
    from synthesizer.search import quantindex
    for mode in ("dense", "hybrid"):
        approx = [agent.recall(q, limit=10, log=False, mode=mode) for q in QUERIES]
        saved, quantindex.APPROX_MIN_ROWS = quantindex.APPROX_MIN_ROWS, 1 << 60
        exact = [agent.recall(q, limit=10, log=False, mode=mode) for q in QUERIES]
        quantindex.APPROX_MIN_ROWS = saved
        found = total = 0
        for got, want in zip(approx, exact):
            if want:
                cut, ids = want[-1].relevance, {h.fact.id for h in want}
                hit = sum(1 for h in got if h.fact.id in ids or h.relevance >= cut)
                found += min(len(want), hit)
                total += len(want)
        out[f"{mode}_recall10"] = found / max(total, 1)
out["load"] = os.getloadavg()[0]
print(json.dumps(out))
"""


def child(tree: Path | None, path: Path, recalls: int) -> dict[str, Any]:
    """One fresh reader process on ``tree``'s code (None: this tree)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(recalls), str(HERE)],
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
    )
    if r.returncode:
        raise SystemExit(f"readpath_bench: a reader failed: {r.stderr.strip()[-400:]}")
    return dict(json.loads(r.stdout.strip().splitlines()[-1]))


def main() -> None:
    from scale_bench import swarm_dir

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="50000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--recalls", type=int, default=200)
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout of main")
    ap.add_argument(
        "--one-copy",
        action="store_true",
        help="both trees read the cached swarm itself (same file formats: no -main / -this)",
    )
    a = ap.parse_args()
    trees: list[tuple[str, Path | None]] = [("this", None), ("main", a.baseline)]
    for n in (int(x) for x in a.sizes.split(",")):
        path = swarm_dir(n)
        if not (path / "READY").exists():
            raise SystemExit(f"readpath_bench: no cached swarm of {n} (scale_bench --build-only)")
        main_copy, this_copy = (path.with_name(path.name + s) for s in ("-main", "-this"))
        paths = {
            "this": this_copy if this_copy.is_dir() and not a.one_copy else path,
            "main": main_copy if main_copy.is_dir() and not a.one_copy else path,
        }
        for name, tree in trees:
            child(tree, paths[name], 2)  # the swarm's first reader of this tree, unmeasured
        got: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
        for i in range(a.rounds):
            for name, tree in trees if i % 2 == 0 else trees[::-1]:
                r = child(tree, paths[name], a.recalls)
                got[name].append(r)
                print(n, name, json.dumps({k: round(v, 5) for k, v in r.items()}), flush=True)
        for name, rows in got.items():
            med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
            print(f"{n} {name} median", json.dumps({k: round(v, 5) for k, v in med.items()}))


if __name__ == "__main__":
    main()
