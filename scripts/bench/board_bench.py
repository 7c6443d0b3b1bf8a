#!/usr/bin/env python3
"""Board benchmark: accepted CAS writes per second and conflict rate under contention.

Writers are separate processes, each running ``board.update`` increments (read-modify-
write with backoff) for a fixed time, on one hot fact or spread over 100 facts, with 1, 2,
4 and 8 writers. The baseline beside each row is raw ``log.append`` with ``expect`` on the
same keys (no fold, no board), measured in the same run: the ceiling the board sits on.

    .venv/bin/python scripts/bench/board_bench.py [--seconds 3] [--readme docs/benchmarks.md]

Writes a table between ``<!-- bench:board -->`` and ``<!-- /bench:board -->`` in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

START, END = "<!-- bench:board -->", "<!-- /bench:board -->"


def _writer(target: str, keys: list[str], seconds: float, mode: str, go: Any, q: Any) -> None:
    """One writer process: increments for ``seconds``; reports (accepted, conflicts)."""
    from swarmlog import Event, VersionConflict
    from synthesizer.board import Attempt, Board
    from synthesizer.swarm import Swarm

    swarm = Swarm.open(target)
    board = Board(swarm.log, swarm.refresh, agent=f"w{os.getpid()}")
    log = swarm.log
    rnd = random.Random(os.getpid())
    swarm.refresh()
    stats = [0, 0]

    def note(a: Attempt) -> None:
        stats[0 if a.ok else 1] += 1

    go.wait()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        key = keys[0] if len(keys) == 1 else rnd.choice(keys)
        if mode == "board":
            board.update(
                key,
                lambda f: {"value": str(int(f.value or "0") + 1)},
                retries=1_000_000,
                on_attempt=note,
            )
        else:  # raw log CAS: read the version, append expecting it
            v = log.version(key)
            try:
                log.append(Event(agent="raw", type="bench.cas", key=key, body={}), expect={key: v})
                stats[0] += 1
            except VersionConflict:
                stats[1] += 1
    swarm.close()
    q.put(tuple(stats))


def run(writers: int, nkeys: int, seconds: float, mode: str) -> tuple[float, float]:
    """One configuration in a fresh log: (accepted per second, conflict rate)."""
    from synthesizer.swarm import Swarm

    tmp = tempfile.mkdtemp(prefix="board-bench-")
    target = os.path.join(tmp, "swarm")
    keys = [f"k{i}" for i in range(nkeys)]
    with Swarm.open(target) as sw:
        for k in keys:
            sw.board.cas(k, 0, content=f"counter {k}", value="0", agent="setup")
    ctx = mp.get_context("fork")
    go = ctx.Event()
    q = ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(target, keys, seconds, mode, go, q))
        for _ in range(writers)
    ]
    for p in procs:
        p.start()
    time.sleep(0.5 + 0.1 * writers)
    t0 = time.monotonic()
    go.set()
    res = [q.get(timeout=seconds + 120) for _ in procs]
    elapsed = time.monotonic() - t0
    for p in procs:
        p.join()
    shutil.rmtree(tmp, ignore_errors=True)
    ok = sum(r[0] for r in res)
    bad = sum(r[1] for r in res)
    return ok / elapsed, bad / max(1, ok + bad)


def table(seconds: float) -> str:
    """Run every configuration and render the markdown table."""
    rows = [
        "| facts | writers | board accepted CAS/s | board conflict rate "
        "| raw log CAS/s (baseline) | raw conflict rate |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for nkeys, label in ((1, "1 hot fact"), (100, "100 facts")):
        for w in (1, 2, 4, 8):
            b_rate, b_conf = run(w, nkeys, seconds, "board")
            r_rate, r_conf = run(w, nkeys, seconds, "raw")
            line = (
                f"| {label} | {w} | {b_rate:,.0f} | {b_conf:.0%} | {r_rate:,.0f} | {r_conf:.0%} |"
            )
            print(line, flush=True)
            rows.append(line)
    cores = os.cpu_count()
    rows.append("")
    rows.append(
        f"`scripts/bench/board_bench.py --seconds {seconds:g}` on {cores} cores: each writer "
        "process runs `board.update` increments (read, fold, CAS with backoff and full "
        "jitter, conflicts recorded as `board.conflict`); the baseline is bare "
        "`log.append(expect=…)` on the same keys."
    )
    return "\n".join(rows)


def write_readme(readme: Path, text: str) -> None:
    """Replace the text between the bench:board markers (adding them if missing)."""
    s = readme.read_text()
    block = f"{START}\n{text}\n{END}"
    if START in s and END in s:
        a = s.index(START)
        b = s.index(END) + len(END)
        s = s[:a] + block + s[b:]
    else:
        s = s.rstrip("\n") + "\n\n" + block + "\n"
    readme.write_text(s)


def main() -> None:
    """Parse arguments, run, print and (optionally) write the benchmarks table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--seconds", type=float, default=3.0, help="duration of each run")
    ap.add_argument(
        "--readme", default=str(ROOT / "docs" / "benchmarks.md"), help="markdown file to update"
    )
    ap.add_argument("--no-readme", action="store_true", help="only print")
    a = ap.parse_args()
    text = table(a.seconds)
    print(text)
    if not a.no_readme:
        write_readme(Path(a.readme), text)


if __name__ == "__main__":
    main()
