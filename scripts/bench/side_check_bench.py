"""What checking a checkpoint's side files costs a reader (faults work item 3).

    .venv/bin/python scripts/bench/side_check_bench.py [--facts 20000] [--runs 5]
        [--baseline /path/to/a/checkout/of/main]

Builds a swarm of N facts (hashing embedder) with each checkout's own code, checkpoints
it with its vectors, then in fresh processes times ``Swarm.open`` + the index mapped
("open"), the first recall and the second. Written for the branch that began hashing
the vector file (SHA-256, in a background thread) before the first recall uses it, against
a baseline that mapped it unchecked; since then a file hashed once (by its writer, or the
first reader) carries a stamp and later processes skip the hash (swarmlog/sidefile.py):
the first reader here runs right after the checkpoint, so it meets the writer's stamp.
Also times the checkpoint itself (the side file is hashed as it is written). Medians.
readpath_bench.py measures the whole read path of a fresh process at 50k and 1M facts.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]

BUILD = textwrap.dedent(
    """
    import json, sys, time
    from swarmlog import Event, FileLog
    from synthesizer import Swarm
    from synthesizer.configlog import change_config
    root, n = sys.argv[1], int(sys.argv[2])
    words = ["cache", "queue", "shard", "index", "deploy", "schema", "tenant", "quota"]
    log = FileLog(root)
    change_config(log, {"pool.capacity": str(2 * n)})
    for lo in range(0, n, 5000):
        log.append_many(
            Event(agent=f"a{i % 7}", type="memory.shared",
                  body={"content": f"{words[i % 8]} finding {i} about {words[i * 3 % 8]} {i * 7}"})
            for i in range(lo, min(n, lo + 5000)))
    log.close()
    with Swarm.open(root) as sw:
        while sw.synthesize():
            pass
        t = time.perf_counter()
        sw.checkpoint()
        print(json.dumps({"checkpoint_s": time.perf_counter() - t, "facts": len(sw.state().facts)}))
    """
)

READ = textwrap.dedent(
    """
    import json, sys, time
    t0 = time.perf_counter()
    from synthesizer import Swarm
    sw = Swarm.open(sys.argv[1])
    sw.index
    t1 = time.perf_counter()
    a = sw.agent("r")
    a.recall("cache finding about deploy", limit=10, log=False)
    t2 = time.perf_counter()
    a.recall("queue finding about schema", limit=10, log=False)
    t3 = time.perf_counter()
    print(json.dumps({"open": t1 - t0, "first": t2 - t1, "second": t3 - t2}))
    """
)


def run(repo: Path, code: str, *args: str) -> dict[str, float]:
    r = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=repo, capture_output=True, text=True, check=True
    )
    return dict(json.loads(r.stdout.strip().splitlines()[-1]))


def measure(repo: Path, facts: int, runs: int, base: Path) -> dict[str, float]:
    root = base / f"swarm-{abs(hash(str(repo)))}"
    built = run(repo, BUILD, str(root), str(facts))
    rows = [run(repo, READ, str(root)) for _ in range(runs)]
    out = {k: statistics.median(r[k] for r in rows) for k in ("open", "first", "second")}
    shutil.rmtree(root, ignore_errors=True)
    return {**built, **out}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--facts", type=int, default=20_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline", type=Path, help="a checkout of main to compare with")
    a = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="swarmlog-sidecheck-"))
    try:
        repos = [("this branch", HERE)] + ([("baseline", a.baseline)] if a.baseline else [])
        for name, repo in repos:
            m = measure(repo, a.facts, a.runs, base)
            print(
                f"{name:12} {int(m['facts']):>7} facts"
                f"  checkpoint {m['checkpoint_s'] * 1000:7.0f} ms"
                f"  open {m['open'] * 1000:6.0f} ms  first recall {m['first'] * 1000:6.0f} ms"
                f"  second {m['second'] * 1000:5.1f} ms"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
