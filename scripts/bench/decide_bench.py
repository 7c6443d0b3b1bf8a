"""A synthesizer pass at scale, cold and warm, against another tree in the same run.

    .venv/bin/python scripts/bench/decide_bench.py [--facts 100000] [--memories 2000]
        [--runs 3] [--compare DIR] [--config KEY=VALUE ...] [--floor] [--no-write]

Each run is a fresh process on a fresh copy of ``scale_bench``'s cached swarm of
``--facts`` live facts (hashing embedder), run by this tree's code or by ``--compare``'s
(e.g. an export of main), alternating, so both see the same machine:

* *cold*: ``--memories`` shared, then one ``Swarm.synthesize()`` pass timed, as
  ``scale_bench``'s ``decide`` child does. It includes what a fresh process pays once
  (imports on first use, WordNet's index, hashing the mapped vector file, the basis fit);
* *warm*: in the same process, a first pass of 50 memories decided untimed, then
  ``--memories`` more shared and that pass timed: a following worker's steady state.

``--config`` settings (``synthesizer.contest_floor=0.9``, say) are recorded in each copy
before the memories. Reported: decisions/s, median of ``--runs``, and the load average.
``--floor`` also times, in a fresh process after the runs, the bare float32 product of
``--memories`` rows against ``--facts`` (dim 384): the ceiling of any pass that scores
every live fact, whatever it does besides.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import cached_bytecode, write_table

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def child(path: str, memories: int, settings: list[str]) -> dict[str, Any]:
    """One fresh process: (cold, warm) decisions/s on a copy of the swarm at ``path``."""
    import scale_bench

    from synthesizer import Swarm

    out: dict[str, Any] = {}
    for mode in ("cold", "warm"):
        work = Path(tempfile.mkdtemp(prefix="swarmlog-decide-")) / "s"
        shutil.copytree(path, work)
        if settings:
            subprocess.run(
                [PY, "-m", "dashboards", "config", "set", "--root", str(work), *settings],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        rng = random.Random(7)
        with Swarm.open(work) as sw:
            agent = sw.agent("x")
            base = 10_000_000
            if mode == "warm":
                for i in range(50):
                    agent.share(scale_bench.content(base + i, rng))
                sw.synthesize()
                base += 50
            for i in range(memories):
                agent.share(scale_bench.content(base + i, rng))
            sw.refresh()
            n, dt = 0, float("nan")
            for _ in range(2):  # a reopened swarm's worker may first catch up on the lease
                t0 = time.perf_counter()
                n = sw.synthesize()
                dt = time.perf_counter() - t0
                if n:
                    break
            out[mode] = n / dt if n else float("nan")
            out[mode + "_n"] = n
        shutil.rmtree(work.parent, ignore_errors=True)
    return out


def floor_child(facts: int, memories: int) -> dict[str, Any]:
    """The floor of any exact-cosine scan: the bare float32 product of ``memories`` unit
    rows against ``facts`` (dim 384, numpy's BLAS on every core it uses), best of 3."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((facts, 384), dtype=np.float32)
    q = rng.standard_normal((memories, 384), dtype=np.float32)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        _ = q @ x.T
        best = min(best, time.perf_counter() - t0)
    return {"product_s": best, "ceiling": memories / best}


def run(tree: Path, path: Path, memories: int, settings: list[str]) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{ROOT / 'scripts' / 'bench'}"}
    cmd = [PY, __file__, "--child", str(path), str(memories), json.dumps(settings)]
    res = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if res.returncode:
        raise SystemExit(f"decide_bench: the child failed:\n{res.stderr[-2000:]}")
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]))))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--floor-child":
        print(json.dumps(floor_child(int(sys.argv[2]), int(sys.argv[3]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--memories", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--compare", default=None, help="another source tree (baseline)")
    ap.add_argument("--compare-label", default="main")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="also time the bare product of the pass's memories against the facts",
    )
    args = ap.parse_args()
    cached_bytecode()
    import scale_bench

    swarm = scale_bench.build(args.facts)
    trees: list[tuple[str, Path]] = [("this tree", ROOT)]
    if args.compare:
        trees.append((args.compare_label, Path(args.compare).resolve()))
    got: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
    loads = [os.getloadavg()[0]]
    for _ in range(args.runs):
        for label, tree in trees:
            r = run(tree, swarm, args.memories, args.config)
            got[label].append(r)
            print(label, json.dumps(r), flush=True)
    loads.append(os.getloadavg()[0])
    if args.floor:  # a fresh process, after the runs: the same machine, the same minutes
        cmd = [PY, __file__, "--floor-child", str(args.facts), str(args.memories)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        fl = json.loads(out.strip().splitlines()[-1])
        print(
            f"floor: the bare {args.memories:,} x {args.facts:,} x 384 float32 product takes "
            f"{fl['product_s'] * 1e3:,.0f} ms: at most {fl['ceiling']:,.0f} decisions/s "
            "for any pass that scores every live fact",
            flush=True,
        )
    where = f"{args.facts:,} facts, {args.memories:,} memories" + "".join(
        f", {c}" for c in args.config
    )
    rows = []
    for label, _ in trees:
        cold = [r["cold"] for r in got[label]]
        warm = [r["warm"] for r in got[label]]
        rows.append(
            [
                where,
                label,
                f"{statistics.median(cold):,.0f} ({min(cold):,.0f}-{max(cold):,.0f})",
                f"{statistics.median(warm):,.0f} ({min(warm):,.0f}-{max(warm):,.0f})",
                f"{loads[0]:.1f}-{loads[1]:.1f}",
            ]
        )
    header = ["pass", "synthesizer", "cold decisions/s", "warm decisions/s", "load avg"]
    print("\n".join(" | ".join(r) for r in rows))
    if not args.no_write:
        write_table(
            "decide",
            "One synthesizer pass at scale, cold and warm"
            " (decide_bench, the synthesizer-load work)",
            header,
            rows,
            notes=(
                f"Median (min-max) of {args.runs} fresh processes per tree, alternating; "
                "hashing embedder; 2 CPUs shared with other jobs. Cold: the pass of a "
                "fresh process (imports, WordNet, the vector file's hash, the basis fit "
                "included); warm: the same after a first pass of 50. Run: "
                "`.venv/bin/python scripts/bench/decide_bench.py --compare DIR`."
            ),
        )


if __name__ == "__main__":
    main()
