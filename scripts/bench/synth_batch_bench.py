"""Log events per shared memory under a steady stream (write-path work item 2), from the log itself.

    .venv/bin/python scripts/bench/synth_batch_bench.py [--agents 8] [--rate 25]
        [--seconds 10] [--compare DIR] [--no-write]

A fresh swarm (hashing embedder), one ``swarmlog synth --follow`` process of this tree
(and, with ``--compare DIR``, afterwards one of another source tree, e.g. an export of
main, on a fresh swarm with the same agents: the baseline of the same run), then
``--agents`` processes appending ``memory.shared`` at ``--rate``/s each (paced on a
common clock, evenly spread; every 10th an exact repeat, every 10th a reworded one) for
``--seconds``.
When every memory is decided the worker is stopped and the log read:

* events per shared memory: everything the log grew by after the warm-up, per
  ``memory.shared`` (the memory itself and its decision make 2.0);
* progress marks per decision (``synth.progress``: one per batch the worker appended);
* decisions per batch, and the decision latency (log ts of a memory -> of its decision).

The machine's load average is given beside each run: on a shared machine compare only
the rows of one run.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import write_table

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
PY = sys.executable
DECISIONS = ("fact.created", "fact.corroborated", "fact.revived")


def agent(path: str, idx: int, rate: float, seconds: float, start: float, agents: int) -> None:
    """Append ``memory.shared`` at ``rate``/s from ``start`` (wall clock) for ``seconds``,
    agent ``idx`` of ``agents`` shifted by ``idx / agents`` of a period (a steady stream,
    not bursts of one memory per agent at the same instant)."""
    from swarmlog import Event, open_log

    rng = random.Random(1000 + idx)
    log = open_log(path)
    sent: list[str] = []
    while time.time() < start:
        time.sleep(min(0.05, max(0.0, start - time.time())))
    for k in range(int(rate * seconds)):
        wait = start + (k + idx / agents) / rate - time.time()
        if wait > 0:
            time.sleep(wait)
        if sent and k % 10 == 3:
            text = rng.choice(sent).upper()
        elif sent and k % 10 == 7:
            text = rng.choice(sent) + " again"
        else:
            words = " ".join(f"w{rng.randrange(5000)}" for _ in range(4))
            text = f"agent {idx} note {k}: {words} case {idx * 1_000_003 + k * 7919}"
            sent.append(text)
        body = {"content": text, "category": "discovery", "importance": 0.5}
        log.append(Event(agent=f"agent{idx}", type="memory.shared", body=body))
    log.close()


def _scan(path: Path, after: int) -> tuple[Counter[str], dict[int, float], dict[int, float]]:
    """(event types after ``after``, memory seq -> ts, memory seq -> ts of its decision)."""
    from swarmlog import open_log

    log = open_log(path)
    types: Counter[str] = Counter()
    mem: dict[int, float] = {}
    dec: dict[int, float] = {}
    try:
        for batch in log.read_batches(after + 1):
            for d in batch:
                t = d["type"]
                types[t] += 1
                if t == "memory.shared":
                    mem[d["seq"]] = d["ts"]
                elif t in DECISIONS:
                    ev = d["body"].get("evidence")
                    if isinstance(ev, int) and ev > after:
                        dec.setdefault(ev, d["ts"])
    finally:
        log.close()
    return types, mem, dec


def _pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))] if s else float("nan")


def run_one(tree: Path, agents: int, rate: float, seconds: float) -> dict[str, Any]:
    """One synthesizer of ``tree`` under ``agents`` x ``rate``/s on a fresh swarm."""
    from swarmlog import Event, open_log

    tmp = Path(tempfile.mkdtemp(prefix="synthbatch-"))
    work = tmp / "s"
    load0 = os.getloadavg()[0]
    log = open_log(work)  # (created by this tree: both workers get the same fresh log)
    log.close()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    err_path = tmp / "synth.err"
    cmd = [PY, "-m", "dashboards", "synth", "--follow", "--root", str(work)]
    with open(err_path, "w") as err:
        synth = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.time() + 120
        while "following" not in err_path.read_text():
            if synth.poll() is not None or time.time() > deadline:
                raise SystemExit(f"synth_batch_bench: no worker: {err_path.read_text()}")
            time.sleep(0.1)
        log = open_log(work)
        warm = log.append(Event(agent="warmup", type="memory.shared", body={"content": "zz0"}))
        log.close()
        while warm.seq not in _scan(work, warm.seq - 1)[2]:
            time.sleep(0.1)
        time.sleep(0.5)  # (the worker's pass after the warm-up ends)
        with open_log(work) as lg:
            seq0 = lg.last_seq
        start = time.time() + 1.0
        ctx = mp.get_context("fork")
        kids = [
            ctx.Process(target=agent, args=(str(work), i, rate, seconds, start, agents))
            for i in range(agents)
        ]
        for k in kids:
            k.start()
        for k in kids:
            k.join()
        deadline = time.time() + 120
        while time.time() < deadline:
            types, mem, dec = _scan(work, seq0)
            if len(dec) >= len(mem):
                break
            time.sleep(0.5)
        time.sleep(0.3)
    finally:
        synth.send_signal(signal.SIGTERM)
        try:
            synth.wait(timeout=60)
        except subprocess.TimeoutExpired:
            synth.kill()
    types, mem, dec = _scan(work, seq0)
    shutil.rmtree(tmp, ignore_errors=True)
    types.pop("checkpoint.stored", None)  # (a stop's checkpoint note, if any: not a decision)
    shared = types["memory.shared"]
    decisions = sum(types[t] for t in DECISIONS)
    marks = types["synth.progress"]
    lat = [(dec[s] - t) * 1000 for s, t in mem.items() if s in dec]
    return {
        "shared": shared,
        "events_per_shared": sum(types.values()) / max(1, shared),
        "marks_per_decision": marks / max(1, decisions),
        "per_batch": decisions / max(1, marks),
        "p50": _pct(lat, 50),
        "p99": _pct(lat, 99),
        "load": (load0, os.getloadavg()[0]),
        "types": dict(types),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--rate", type=float, default=25.0)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--compare", default=None, help="another source tree (baseline)")
    ap.add_argument("--compare-label", default="main")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    trees = [("this tree", ROOT)]
    if args.compare:
        trees.append((args.compare_label, Path(args.compare).resolve()))
    rows = []
    for label, tree in trees:
        r = run_one(tree, args.agents, args.rate, args.seconds)
        row = [
            f"{args.agents} x {args.rate:g}/s",
            label,
            f"{r['shared']:,}",
            f"{r['events_per_shared']:.2f}",
            f"{r['marks_per_decision']:.2f}",
            f"{r['per_batch']:.1f}",
            f"{r['p50']:.0f} / {r['p99']:.0f} ms",
            f"{r['load'][0]:.1f}-{r['load'][1]:.1f}",
        ]
        rows.append(row)
        print(" | ".join(row), r["types"], flush=True)
    header = [
        "agents x rate",
        "worker",
        "memories shared",
        "log events per shared memory",
        "progress marks per decision",
        "decisions per batch",
        "decision latency p50 / p99",
        "load",
    ]
    notes = (
        f"{os.cpu_count()} cores; {args.seconds:g} s of agents; "
        "`scripts/bench/synth_batch_bench.py` (write-path work item 2)."
    )
    if args.no_write:
        return
    title = "Events per shared memory (write-path work)"
    print(write_table("synthbatch", title, header, rows, notes))


if __name__ == "__main__":
    main()
