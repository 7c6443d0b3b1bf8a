"""Erasure benchmark (trust work): ``forget`` of one agent in a 100,000-event log.

Builds a FileLog swarm of about N events (50 agents sharing and recalling varied text,
the synthesizer's decisions, a checkpoint), then times on copies of it:

* baseline: a plain copy of every segment the crash-safe way (read, write a temporary
  file, fsync, rename, fsync the directory): the I/O floor of any rewrite;
* baseline: a replay of the whole log from the start (what rebuilding a checkpoint folds);
* ``Swarm.forget(agent=…)`` end to end (intent, plan, redaction, checkpoints dropped and
  rebuilt), and its plan alone.

    .venv/bin/python scripts/bench/forget_bench.py [--events 100000] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _table import write_table

from swarmlog import Event, FileLog
from swarmlog.file.fsguard import fsync_dir
from synthesizer import Swarm
from synthesizer.forget.erase import Identity, plan
from synthesizer.replay import state_at

WORDS = [
    *("cache", "port", "login", "crash", "export", "retry", "token", "proxy", "locale"),
    *("dataset", "cycle", "index", "query", "latency", "timeout", "build", "deploy"),
    *("schema", "user", "error", "migration", "config", "flaky", "test", "safari"),
]
AGENTS = 50


def build(root: Path, n: int) -> int:
    """About ``n`` events: agents' shares and recalls, then the synthesizer's decisions."""
    rng = random.Random(16)
    sw = Swarm.open(root)
    try:
        raw = int(n * 0.55)
        for i in range(0, raw, 2000):
            evs = []
            for _ in range(min(2000, raw - i)):
                a = f"agent-{rng.randrange(AGENTS)}"
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(6, 20)))
                if rng.random() < 0.6:
                    evs.append(
                        Event(
                            agent=a,
                            session=f"s{rng.randrange(200)}",
                            type="memory.shared",
                            body={
                                "content": f"{text} #{rng.randrange(10**6)}",
                                "category": "note",
                                "importance": 0.5,
                            },
                        )
                    )
                else:
                    evs.append(
                        Event(agent=a, type="memory.recalled", body={"query": text, "hits": []})
                    )
            sw.log.append_many(evs)
        while sw.synthesize():
            pass
        while sw.log.last_seq < n:
            sw.log.append_many(
                [
                    Event(agent=f"agent-{rng.randrange(AGENTS)}", type="pool.tick", body={})
                    for _ in range(min(2000, n - sw.log.last_seq))
                ]
            )
        sw.checkpoint()
        return sw.log.last_seq
    finally:
        sw.close()


def copy_segments(root: Path) -> None:
    """Baseline: rewrite every segment crash-safely, unchanged."""
    segdir = root / "segments"
    for p in sorted(segdir.glob("*.jsonl")):
        data = p.read_bytes()
        tmp = segdir / f".{p.name}.bench.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, p)
        fsync_dir(segdir)


def timed(fn: object) -> float:
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="forget-bench-"))
    try:
        base = work / "base"
        t0 = time.perf_counter()
        total = build(base, args.events)
        print(f"built {total} events in {time.perf_counter() - t0:.1f}s")
        victim = "agent-7"
        log = FileLog(base)
        mine = sum(1 for ev in log.read() if ev.agent == victim)
        size = sum(p.stat().st_size for p in (base / "segments").glob("*.jsonl"))
        segs = len(list((base / "segments").glob("*.jsonl")))
        log.close()

        copy = work / "copy"
        shutil.copytree(base, copy)
        t_copy = timed(lambda: copy_segments(copy))
        rlog = FileLog(copy)
        t_replay = timed(lambda: state_at(rlog, from_start=True))
        t_plan = timed(lambda: plan(rlog, Identity(agent=victim)))
        rlog.close()

        run = work / "run"
        shutil.copytree(base, run)
        sw = Swarm.open(run)
        try:
            sw.refresh()
            res = None

            def go() -> None:
                nonlocal res
                res = sw.forget(agent=victim)

            t_forget = timed(go)
            assert res is not None and sw.log.verify().ok
        finally:
            sw.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [
        ["baseline: copy every segment (read, tmp, fsync, rename)", f"{t_copy:.2f}", "1.0x"],
        ["baseline: replay the log from the start", f"{t_replay:.2f}", f"{t_replay / t_copy:.1f}x"],
        ["forget: plan only (one pass over the log)", f"{t_plan:.2f}", f"{t_plan / t_copy:.1f}x"],
        [
            f"forget --agent (end to end; {res.redacted} records rewritten)",
            f"{t_forget:.2f}",
            f"{t_forget / t_copy:.1f}x",
        ],
    ]
    for r in rows:
        print(" | ".join(r))
    if not args.no_write:
        write_table(
            "forget",
            f"Erasure: forget one agent in a {total:,}-event log",
            ["what", "seconds", "vs copy"],
            rows,
            f"One run on a shared, loaded 2-core machine (figures are ratios against the copy"
            f" baseline of the same run; rows taken apart under varying load need not add"
            f" up). {total:,} events ({size / 2**20:.1f} MiB in {segs}"
            f" segment(s)) from {AGENTS} agents; the forgotten agent wrote {mine:,} of them."
            " End to end = the intent, two planning passes at most, the rewrite of every"
            " affected segment (tmp, fsync, rename, directory fsync), and the checkpoints after"
            " the first affected seq dropped and rebuilt from a replay (with the vector index"
            " the checkpoint saves). `scripts/bench/forget_bench.py`.",
        )


if __name__ == "__main__":
    main()
