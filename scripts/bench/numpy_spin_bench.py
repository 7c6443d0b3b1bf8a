"""OpenBLAS's idle spin in a writer process: the CPU a fresh process's first append costs.

Usage: ``.venv/bin/python scripts/bench/numpy_spin_bench.py [--records 30000] [--runs 8]
[--baseline DIR]``.

A fresh process (``python -c``) opens a log of ``--records`` records that has a view
snapshot and appends one event, which loads numpy (the snapshot's tables); it then
sleeps 0.3 s and reports the CPU time of its main thread and of its other threads
(OpenBLAS's workers: swarmlog never runs a BLAS routine, so whatever they used is
spin). The tree and ``--baseline`` (an export of another commit) take turns, one
process at a time, on the same log. Figures go to the terminal (docs/benchmarks.md
quotes them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, os, sys, time
t0 = time.perf_counter()
from swarmlog import Event
from swarmlog.file.log import FileLog
log = FileLog(sys.argv[1])
log.append(Event(agent="fresh", session="s", type="t", body={"n": 1}))
first = time.perf_counter() - t0
loaded = "numpy" in sys.modules
time.sleep(0.3)
me, tick = os.getpid(), os.sysconf("SC_CLK_TCK")
main = other = 0.0
for t in os.listdir(f"/proc/{me}/task"):
    f = open(f"/proc/{me}/task/{t}/stat").read().rsplit(")", 1)[1].split()
    cpu = (int(f[11]) + int(f[12])) / tick
    if int(t) == me:
        main += cpu
    else:
        other += cpu
print(json.dumps({"first": first, "main": main, "other": other, "numpy": loaded}))
"""


def _log(records: int) -> str:
    """A log of ``records`` records written by two alternating handles (the shared
    index's path), with a view snapshot."""
    sys.path.insert(0, str(ROOT))
    from swarmlog import Event
    from swarmlog.file.log import FileLog

    d = tempfile.mkdtemp(prefix="numpy-spin-")
    a, b = FileLog(d), FileLog(d)
    for i in range(records):
        (a if i % 2 else b).append(Event(agent="w", session="s", type="t", body={"i": i}))
    a.close()
    b.close()
    return d


def _one(tree: str, where: str) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    env["PYTHONPATH"] = tree
    out = subprocess.run(
        [sys.executable, "-c", CHILD, where],
        env=env,
        cwd=tree,  # (``-c`` puts the working directory first on sys.path)
        capture_output=True,
        text=True,
        check=True,
    )
    got: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--records", type=int, default=30000)
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--baseline", default=None)
    a = ap.parse_args()
    where = _log(a.records)
    trees = {"this tree": str(ROOT)}
    if a.baseline:
        trees["baseline"] = a.baseline
    rows: dict[str, list[dict[str, float]]] = {k: [] for k in trees}
    for _ in range(a.runs):
        for name, tree in trees.items():
            rows[name].append(_one(tree, where))
    load = os.getloadavg()[0]
    print(f"{a.records:,} records, {a.runs} fresh processes per tree, load {load:.1f}")
    print(
        "| tree | numpy loaded | first append (ms, p50) | main thread CPU (ms) "
        "| other threads' CPU (ms) |"
    )
    print("|---|---|---|---|---|")
    for name, rs in rows.items():
        med = statistics.median
        print(
            f"| {name} | {sum(bool(r['numpy']) for r in rs)}/{len(rs)} "
            f"| {1e3 * med(r['first'] for r in rs):.0f} "
            f"| {1e3 * statistics.mean(r['main'] for r in rs):.0f} "
            f"| {1e3 * statistics.mean(r['other'] for r in rs):.0f} |"
        )


if __name__ == "__main__":
    main()
