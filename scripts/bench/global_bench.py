"""Global memory at size (global-memory work): promote 10,000 facts into a 100,000-fact global
memory, and bootstrap 200 facts from it, each as the user's command in a fresh process.

* **promote**: ``swarmlog promote --to GLOBAL --tier working`` from a task swarm of N
  facts (``--no-synth``-free: the command also runs the global synthesizer's pass that
  decides the promoted memories, as a user without a running worker gets). Reported
  twice: appending the promotions alone (``Swarm.promote(..., synthesize=False)`` in a
  fresh process) and the whole command.
* **baseline, same run**: the same N statements shared by one agent into an empty swarm
  (``agent.share`` in a loop, fresh process), and a synthesizer pass deciding N memories
  against the same 100k-fact swarm (what the promote command's pass costs by itself).
* **bootstrap**: ``swarmlog init --bootstrap GLOBAL --limit 200`` with and without
  ``--query`` into a new swarm (fresh process, ms).

The 100k global is scale_bench's cached swarm, copied (never changed in place).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import cached_bytecode, write_table
from scale_bench import build

CLI = [sys.executable, "-m", "dashboards"]


def _run(*args: str) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(args, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"global_bench: {' '.join(args)} failed: {r.stderr.strip()}")
    return dt


def _py(code: str, *argv: str) -> float:
    return _run(sys.executable, "-c", code, *argv)


SHARE = """
import sys
from synthesizer import Swarm
sys.path.insert(0, sys.argv[3])
from _corpus import sentence
import random
rng = random.Random(7)
from synthesizer.config import PoolConfig, SynthConfig
cap = int(sys.argv[4]) if len(sys.argv) > 4 else 0
config = SynthConfig(pool=PoolConfig(capacity=cap)) if cap else None
with Swarm.open(sys.argv[1], config=config) as sw:
    a = sw.agent("ana", session="s1")
    for i in range(int(sys.argv[2])):
        a.share(sentence(rng, i), importance=0.9)
"""

SYNTH = """
import sys
from synthesizer import Swarm
with Swarm.open(sys.argv[1]) as sw:
    sw.synthesize()
"""

PROMOTE_APPEND = """
import sys
from synthesizer import Swarm
from synthesizer.promotion.promote import promote
with Swarm.open(sys.argv[1]) as sw:
    r = promote(sw, sys.argv[2], tier="working", synthesize=False)
    assert r.promoted == int(sys.argv[3]), r
"""


CHECKPOINT = """
import sys
from synthesizer import Swarm
with Swarm.open(sys.argv[1]) as sw:
    sw.checkpoint()
"""


def copy_global(src: Path, dst: Path) -> None:
    """A private copy of the cached global, checkpointed under this tree's state format
    (untimed: a running synthesizer keeps its swarm checkpointed)."""
    shutil.copytree(src, dst)
    _py(CHECKPOINT, str(dst))


def task_swarm(path: Path, n: int) -> None:
    """A task swarm of ``n`` decided facts (shared, then one synthesizer pass)."""
    here = str(Path(__file__).resolve().parent)
    _py(SHARE, str(path), str(n), here, str(2 * n))
    _py(SYNTH, str(path))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--global-size", type=int, default=100_000)
    ap.add_argument("--promote", type=int, default=10_000)
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    cached_bytecode()
    n, g_n = a.promote, a.global_size
    src = build(g_n)
    work = Path(tempfile.mkdtemp(prefix="swarmlog-global-bench-"))
    try:
        here = str(Path(__file__).resolve().parent)
        # baseline: the same statements shared into an empty swarm
        share_s = _py(SHARE, str(work / "plain"), str(n), here, str(2 * n))
        task = work / "task"
        task_swarm(task, n)
        # baseline: a synthesizer pass of n memories against the same 100k facts
        copy_global(src, work / "g0")
        _py(SHARE, str(work / "g0"), str(n), here)
        synth_s = _py(SYNTH, str(work / "g0"))
        # promote: appends alone, then the whole command (appends + the global's pass)
        copy_global(src, work / "g1")
        append_s = _py(PROMOTE_APPEND, str(task), str(work / "g1"), str(n))
        copy_global(src, work / "g2")
        g2 = str(work / "g2")
        promote = (*CLI, "--root", str(task), "promote", "--to", g2, "--tier", "working")
        promote_s = _run(*promote)
        again_s = _run(*promote)
        # bootstrap from the 100k global (the promoted one)
        limit = ("--limit", str(a.bootstrap))
        query = ("--query", "cache timeout in the proxy")
        boot_q = _run(*CLI, "init", "--root", str(work / "b1"), "--bootstrap", g2, *query, *limit)
        boot_all = _run(*CLI, "init", "--root", str(work / "b2"), "--bootstrap", g2, *limit)
        empty = _run(*CLI, "init", "--root", str(work / "b3"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    res = {
        "share_per_s": n / share_s,
        "append_per_s": n / append_s,
        "promote_per_s": n / promote_s,
        "synth_per_s": n / synth_s,
        "again_s": again_s,
        "boot_q_ms": boot_q * 1000,
        "boot_all_ms": boot_all * 1000,
        "init_ms": empty * 1000,
        "load": load,
    }
    print(json.dumps(res, indent=1))
    if a.no_write:
        return
    rows = [
        [
            f"promote {n:,} facts into {g_n:,}: appends only",
            f"{res['append_per_s']:,.0f} facts/s",
            f"the same {n:,} shared into an empty swarm: {res['share_per_s']:,.0f}/s",
        ],
        [
            "`swarmlog promote` (appends + global synth pass)",
            f"{res['promote_per_s']:,.0f} facts/s",
            f"synth pass of {n:,} memories on the {g_n:,}-fact swarm alone: "
            f"{res['synth_per_s']:,.0f}/s",
        ],
        ["`swarmlog promote` again (nothing new)", f"{again_s:.2f} s", "—"],
        [
            f"`init --bootstrap --query … --limit {a.bootstrap}` from {g_n + n:,}",
            f"{res['boot_q_ms']:,.0f} ms",
            f"`init` alone: {res['init_ms']:,.0f} ms",
        ],
        [
            f"`init --bootstrap --limit {a.bootstrap}` (strongest) from {g_n + n:,}",
            f"{res['boot_all_ms']:,.0f} ms",
            f"`init` alone: {res['init_ms']:,.0f} ms",
        ],
    ]
    write_table(
        "global",
        "Global memory: promotion and bootstrap at size (global-memory work)",
        ["what (fresh process, end to end)", "figure", "same-run baseline"],
        rows,
        f"2-core machine, load {load:.1f} during the run (other work on the machine). "
        "`scripts/bench/global_bench.py`; the global is scale_bench's cached 100k swarm, copied.",
    )


if __name__ == "__main__":
    main()
