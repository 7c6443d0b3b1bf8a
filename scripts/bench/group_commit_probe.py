"""Where a durable append's CPU goes at N fsync writers: swarmlog beside the bare loop.

Usage: ``.venv/bin/python scripts/bench/group_commit_probe.py [--writers 16] [--rounds 3]
[--seconds 2]``.

Each round runs ``FileLog.append(durability="fsync")`` and then the bare loop (orjson
line + flock + write + fdatasync, as in ``concurrency_bench``) in N forked writer
processes started together, and prints per system: appends/s, appends per fdatasync,
CPU per append (thread CPU time: user + system) and voluntary context switches per
append. For swarmlog the CPU is split by timing the group commit's own methods in each
writer: outside ``_group_sync`` (event, serialization, index, write), and inside it the
fdatasync calls, the rest of the leader's work (``_lead`` less its fdatasync) and the
waiters' part (flock waits and wake-ups). On a machine whose cores are all busy,
throughput is about cores / CPU per append, so this says which part to make cheaper.
Compare only the rows of one run (a shared machine: the load is printed).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).parents[2]))

import orjson
from concurrency_bench import FORK, Start, _event, _loop

from swarmlog.file import sync
from swarmlog.file.log import FileLog

_ACC = {"group": 0, "fsync": 0, "lead": 0, "leads": 0}


def _timed(name: str, key: str, count: str | None = None) -> None:
    """Wrap GroupSync.``name`` to add its thread CPU time to ``_ACC[key]``."""
    orig: Callable[..., Any] = getattr(sync.GroupSync, name)

    def wrapped(self: Any, *a: Any) -> Any:
        t = time.thread_time_ns()
        try:
            return orig(self, *a)
        finally:
            _ACC[key] += time.thread_time_ns() - t
            if count:
                _ACC[count] += 1

    setattr(sync.GroupSync, name, wrapped)


def _switches() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches"):
                return int(line.split()[1])
    return 0


def w_append(where: str, wid: int, start: Start, seconds: float, out: Any) -> None:
    _timed("group", "group")
    _timed("fsync", "fsync")
    _timed("_lead", "lead", "leads")
    log = FileLog(where, durability="fsync", notify=False)
    log.append(_event(wid, -1))
    for k in _ACC:
        _ACC[k] = 0
    s0, c0, t0 = log.sync_count, _switches(), time.thread_time_ns()
    n, span = _loop(lambda i: log.append(_event(wid, i)), start, seconds)
    cpu = time.thread_time_ns() - t0
    out.put((n, span, log.sync_count - s0, cpu, _switches() - c0, dict(_ACC)))
    log.close()


def w_bare(where: str, wid: int, start: Start, seconds: float, out: Any) -> None:
    lock = os.open(where + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fd = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def step(i: int) -> None:
        line = orjson.dumps({"seq": 0, **_event(wid, i).to_dict()}) + b"\n"
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.write(fd, line)
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.fdatasync(fd)

    c0, t0 = _switches(), time.thread_time_ns()
    n, span = _loop(step, start, seconds)
    out.put((n, span, n, time.thread_time_ns() - t0, _switches() - c0, {}))
    os.close(fd)
    os.close(lock)


def run(target: Any, where: str, writers: int, seconds: float) -> str:
    start = Start(writers)
    out = FORK.Queue()
    procs = [
        FORK.Process(target=target, args=(where, w, start, seconds, out)) for w in range(writers)
    ]
    for p in procs:
        p.start()
    start.go()
    res = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
    n = sum(r[0] for r in res)
    rate = n / max(r[1] for r in res)
    syncs = sum(r[2] for r in res)
    cpu = sum(r[3] for r in res) / n / 1e3
    line = (
        f"{rate:8,.0f}/s  {n / max(1, syncs):5.1f} per fdatasync  CPU/append {cpu:4.0f} us"
        f"  switches/append {sum(r[4] for r in res) / n:.2f}"
    )
    if res[0][5]:
        a = {k: sum(r[5][k] for r in res) for k in _ACC}
        group, fsync, lead = a["group"] / n / 1e3, a["fsync"] / n / 1e3, a["lead"] / n / 1e3
        line += (
            f"\n           outside group sync {cpu - group:.0f} us; group sync {group:.0f} us ="
            f" fdatasync {fsync:.0f} + leader rest {lead - fsync:.0f} + waiters {group - lead:.0f}"
        )
    return line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, {args.writers} writers")
    with tempfile.TemporaryDirectory(prefix="gcprobe-") as tmp:
        for r in range(args.rounds):
            for name, target in (("swarmlog", w_append), ("bare", w_bare)):
                where = os.path.join(tmp, f"{name}-{r}")
                print(f"{name:9}  {run(target, where, args.writers, args.seconds)}", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
